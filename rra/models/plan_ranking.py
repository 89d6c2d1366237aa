"""How the retriever trains and asks its plan ranker (rra.models.plan_ranker.PlanRanker): the
questions' token vectors, the candidate plans' vectors, their modifiers matched word by word, and what
kind of thing each plan gives. A mixin of rra.models.retriever.Retriever: it reads the retriever's
encoder, ranker, banks and caches.

In training, each ranking item's question and its first positive plan are encoded with gradients;
the other candidates come from banks encoded without gradients once per epoch (the retriever's
`_fresh_banks` says when they are encoded anew). At answering, `rank_plans` gives each candidate
plan's logit, every distinct text encoded once while the weights stay.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Sequence

import torch
from torch.nn import functional as F

from rra.models.encoder import mean_pool
from rra.models.plan_ranker import coverage_features, part_marks, phrase_hits, slot_regions, token_match
from rra.plans.text import KIND_READERS, ROLE_WORDS, THING_WORDS, pooled_plan_text

log = logging.getLogger(__name__)


class PlanRanking:
    """The plan ranker's training step and its answering-time logits; see the module docstring."""

    _kind_reader_warned = False  # kind_cosines has said the pretrained encoder cannot be loaded

    def _ranking_step(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """The plan ranker's loss over the batch's ranking items. Questions and each item's first
        positive (its label) with its modifier texts are encoded with gradients, so both sides of
        the bi-encoder learn. The other candidates and modifiers (most are negatives, repeated
        across the epoch) come from banks encoded without gradients once per epoch (`_plan_bank`,
        `_part_bank`, emptied when an epoch starts unless validation just filled them with the same
        weights: `_fresh_banks`): their backward pass, or an encoder pass per batch, would multiply
        the ranker's cost for little."""
        items = [(q, r) for q, r in zip(batch["question"], batch["ranking"]) if r]
        learnt = sorted({r["positive"][0] for _, r in items})
        banked = sorted({t for _, r in items for t in r["positive"] + r["negative"]} - set(learnt))
        texts = learnt + banked
        index = {t: i for i, t in enumerate(texts)}
        questions, q_tokens, q_mask, q_regions = self._tokens([q for q, _ in items])
        plans = self.encode([self._pooled(t) for t in learnt])
        if banked:
            plans = torch.cat([plans, self._banked(banked).to(plans.dtype)])
        parts_of = {t: ps for _, r in items for t, ps in (r.get("parts") or {}).items()}
        cands = [[index[t] for t in r["positive"] + r["negative"]] for _, r in items]
        positive = [[True] * len(r["positive"]) + [False] * len(r["negative"]) for _, r in items]
        uncovered = coverage_features([q for q, _ in items], texts, self.hparams.mask_token or "[E]")
        parts = self._part_logits(q_tokens, q_mask, q_regions, [parts_of.get(t, []) for t in texts],
                                  learnt={p for t in learnt for p in parts_of.get(t, [])}, bank=self._part_bank,
                                  questions=[q for q, _ in items])
        kind_of = {t: k for _, r in items for t, k in (r.get("kinds") or {}).items()}
        weights = [r.get("weight", 1) for _, r in items]
        typed = self._kind_logits(q_tokens, q_mask, [kind_of.get(t) for t in texts], self._kind_bank)
        type_loss = None
        if typed is not None:
            kind_logits, index, plan_logits = typed
            parts = _plus(parts, plan_logits)
            kinds_in = lambda ts: sorted({index[kind_of[t]] for t in ts if t in kind_of})  # noqa: E731
            type_loss = self.ranker.type_loss(kind_logits, [kinds_in(r["positive"] + r["negative"]) for _, r in items],
                                              [kinds_in(r["positive"]) for _, r in items], weights)
        loss, correct = self.ranker.loss(questions, plans, cands, positive, uncovered, parts, weights)
        return (loss if type_loss is None else loss + type_loss), correct

    def _tokens(self, texts: list[str], regions=slot_regions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                     torch.Tensor]:
        """(pooled vectors, unit token vectors, mask of the real tokens: no padding, no [CLS]/[SEP],
        `regions(text, offsets)` per token: a question's literal-slot regions, a modifier's
        part_marks) of `texts`, in one encoder pass."""
        enc = self.encoder
        fast = getattr(enc.tokenizer, "is_fast", False)  # offsets need a fast tokenizer; else no regions
        tok = enc.tokenizer(texts, padding=True, truncation=True, max_length=enc.max_length, return_tensors="pt",
                            return_special_tokens_mask=True, return_offsets_mapping=fast)
        special = tok.pop("special_tokens_mask").bool()
        offsets = tok.pop("offset_mapping").tolist() if fast else [[(0, 0)] * special.shape[1]] * len(texts)
        marks = torch.tensor([regions(t, o) for t, o in zip(texts, offsets)], dtype=torch.long)
        device = next(enc.model.parameters()).device
        tok = {k: v.to(device) for k, v in tok.items()}
        hidden = enc.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"]).last_hidden_state
        return mean_pool(hidden, tok["attention_mask"]), F.normalize(hidden.float(), dim=-1), \
            tok["attention_mask"].bool() & ~special.to(device), marks

    def _part_logits(self, q_tokens: torch.Tensor, q_mask: torch.Tensor, q_regions: torch.Tensor,
                     parts: list[list[str]], learnt: Sequence[str] = (), bank: dict | None = None,
                     questions: Sequence[str] | None = None) -> torch.Tensor | None:
        """(n, m) logits of the m plans' modifiers (rra.plans.text.plan_parts) against n questions' tokens.
        `learnt`: modifier texts encoded with gradients (training: the labels'); the others' token
        vectors come from `bank` (text -> (tokens, mask, part_marks)), encoded without gradients when
        missing. `questions`: the n texts, for the phrasings written beside a literal (phrase_hits)."""
        distinct = sorted({p for ps in parts for p in ps})
        if not distinct:
            return None
        bank = self._part_cache if bank is None else bank
        grad = [p for p in distinct if p in set(learnt)]
        rest = [p for p in distinct if p not in set(learnt)]
        todo = sorted((p for p in rest if p not in bank), key=len)
        if todo:
            with self._stable_encoder():
                _, tokens, mask, marks = self._tokens(todo, part_marks)
            bank.update({p: (tokens[k], mask[k], marks[k]) for k, p in enumerate(todo)})
        rows: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        if grad:
            _, tokens, mask, marks = self._tokens(grad, part_marks)
            rows += [(tokens[k], mask[k], marks[k]) for k in range(len(grad))]
        rows += [bank[p] for p in rest]
        width = max(int(m.shape[0]) for _, m, _ in rows)
        p_tokens = torch.stack([F.pad(t, (0, 0, 0, width - t.shape[0])) for t, _, _ in rows])
        p_mask = torch.stack([F.pad(m, (0, width - m.shape[0])) for _, m, _ in rows])
        p_marks = torch.stack([F.pad(k, (0, 0, 0, width - k.shape[0])) for _, _, k in rows])
        index = {p: k for k, p in enumerate(grad + rest)}
        uses = torch.zeros(len(parts), len(distinct))
        for j, ps in enumerate(parts):
            for p in ps:
                uses[j, index[p]] += 1
        hits = None
        if questions is not None and self.ranker.phrase_weight is not None:
            order = grad + rest
            hits = torch.tensor([[phrase_hits(q, p) for p in order] for q in questions], dtype=torch.float32)
        return self.ranker.part_logits(token_match(q_tokens, q_mask, p_tokens, p_mask, q_regions, p_marks), uses, hits)

    def _kind_logits(self, q_tokens: torch.Tensor, q_mask: torch.Tensor, kinds: Sequence[str | None],
                     bank: dict | None = None) -> tuple[torch.Tensor, dict[str, int], torch.Tensor] | None:
        """What the n questions ask for against the distinct kinds of m plans (`kinds`, None:
        unknown): ((n, k) logits, kind -> column, (n, m) each plan's logit: its kind's), or None where the
        ranker reads no answer types or no plan has a kind. A kind's vector is the mean of its words'
        unit token vectors, encoded without gradients (a few dozen distinct texts) into `bank`
        (training: one epoch's weights) or the inference cache."""
        if self.ranker is None or self.ranker.type_query is None or not any(kinds):
            return None
        bank = self._kind_cache if bank is None else bank
        distinct = sorted({k for k in kinds if k})
        todo = [k for k in distinct if k not in bank]
        if todo:
            with self._stable_encoder():
                _, tokens, mask, _ = self._tokens(todo)
            for k, kind in enumerate(todo):
                real = mask[k] if mask[k].any() else torch.ones_like(mask[k])
                bank[kind] = F.normalize(tokens[k][real].mean(0), dim=-1)
        index = {k: j for j, k in enumerate(distinct)}
        uses = torch.zeros(len(kinds), len(distinct))
        for j, kind in enumerate(kinds):
            if kind:
                uses[j, index[kind]] = 1.0
        logits = self.ranker.kind_logits(q_tokens, q_mask, torch.stack([bank[k] for k in distinct]))
        return logits, index, logits @ uses.T.to(logits.device)

    @torch.no_grad()
    def kind_cosines(self, asked: Sequence[str | None], kinds: Sequence[Sequence[str | None]],
                     reader: str = "trained") -> list[list[float | None]]:
        """Per question, the cosine of what it asks for (`asked[i]`: words such as "university",
        rra.plans.text.asked_kind; None: it names nothing) with what each of its candidate plans gives
        (`kinds[i][j]`: "city", "year"; None: unknown), both read as sentences by this retriever's
        encoder (`reader` "trained", cached while the weights stay) or by the pretrained encoder it
        was fine-tuned from ("pretrained": fine-tuning on questions and relation names pulls a class
        word towards what it co-occurs with, "record label" towards "album"); None where either is missing.
        Where what is asked reads as a role ("musicians", "directors": nearer the mean of
        rra.plans.text.ROLE_WORDS than of THING_WORDS, and nearest one of ROLE_WORDS), a kind that reads
        as one too ("person") counts at least as the question's best thing kind: an encoder reads a role
        nearer what it goes with ("band") than nearer "person"."""
        if reader not in KIND_READERS:
            raise ValueError(f"kind reader {reader!r}: one of {', '.join(map(repr, KIND_READERS))}")
        words = sorted({w for w in asked if w} | {k for row, w in zip(kinds, asked) if w for k in row if k})
        if not words:
            return [[None] * len(row) for row in kinds]
        asked_or_kinds = set(words)
        words += [w for w in ROLE_WORDS + THING_WORDS if w not in asked_or_kinds]
        if reader == "pretrained":
            try:
                reading = self.pretrained_reader()
            except OSError as e:  # a hub name offline: the trained encoder reads them, said once
                if not self._kind_reader_warned:
                    log.warning("kind_cosines: the pretrained encoder %r cannot be loaded (%s); the retriever's "
                                "own encoder reads the kinds", self.hparams.get("encoder"), e)
                    self._kind_reader_warned = True
                return self.kind_cosines(asked, kinds, "trained")
            vectors = reading.vectors(words)
        else:
            with self._stable_encoder():
                # the question encodings' cache: the same encoder pass, cleared whenever the weights change
                vectors = F.normalize(self.encode_unique(words, cache=self._predict_cache).float(), dim=-1)
        index = {w: i for i, w in enumerate(words)}
        cos = (vectors @ vectors.T).tolist()
        roles, things = vectors[[index[w] for w in ROLE_WORDS]], vectors[[index[w] for w in THING_WORDS]]
        nearer = vectors @ F.normalize(roles.mean(0), dim=0) > vectors @ F.normalize(things.mean(0), dim=0)
        nearest = (vectors @ roles.T).max(1).values > (vectors @ things.T).max(1).values
        is_role = (nearer & nearest).tolist()
        role = lambda w: is_role[index[w]]  # noqa: E731
        out = []
        for w, row in zip(asked, kinds):
            got = [cos[index[w]][index[k]] if w and k else None for k in row]
            if w and role(w):
                best_thing = max((c for k, c in zip(row, got) if c is not None and not role(k)), default=None)
                if best_thing is not None:
                    got = [max(c, best_thing) if c is not None and role(k) else c for k, c in zip(row, got)]
            out.append(got)
        return out

    @contextmanager
    def _stable_encoder(self):
        """Encode without gradients in eval mode (no dropout: one stable vector per text, the
        banks' and caches' contract), then restore the encoder's mode."""
        was = self.encoder.training
        self.encoder.eval()
        try:
            with torch.no_grad():
                yield
        finally:
            self.encoder.train(was)

    def _pooled(self, plan_text: str) -> str:
        return pooled_plan_text(plan_text, self.hparams.get("pooled_operators", True))

    def _banked(self, texts: list[str]) -> torch.Tensor:
        todo = sorted({t for t in texts if t not in self._plan_bank}, key=len)  # chunks of like lengths pad less
        if todo:
            with self._stable_encoder():
                for b in range(0, len(todo), 256):
                    chunk = todo[b:b + 256]
                    self._plan_bank.update(zip(chunk, self.encoder([self._pooled(t) for t in chunk]).detach()))
        return torch.stack([self._plan_bank[t] for t in texts])


    @torch.no_grad()
    def rank_plans(self, questions: Sequence[str], plans: Sequence[Sequence[str]], parts=None, kinds=None,
                   batch_size: int = 256, use_cache: bool = True) -> list[list[float]] | None:
        """The plan ranker's logit of each candidate plan text (rra.plans.text.plan_words) of each question
        (rra.plans.text.ranker_text); `parts[i][j]`: plan j's modifier texts (rra.plans.text.plan_parts), `kinds[i][j]`
        what its results are (rra.plans.reads.KindCheck; None: unknown). None
        when this retriever has no ranker (trained on chains only). Plan texts repeat across
        questions: each is encoded once while the weights stay."""
        if self.ranker is None:
            return None
        was_training = self.training
        if was_training:
            self._plan_cache.clear()
            self._part_cache.clear()
            self._kind_cache.clear()
        self.eval()
        try:
            out = []
            for b in range(0, len(questions), batch_size):
                qs, ps = list(questions[b:b + batch_size]), plans[b:b + batch_size]
                q, q_tokens, q_mask, q_regions = self._tokens(qs)
                texts = sorted({t for row in ps for t in row})
                if not texts:
                    out += [[] for _ in qs]
                    continue
                vectors = self.encode_unique([self._pooled(t) for t in texts], batch_size,
                                             self._plan_cache if use_cache else {})
                index = {t: i for i, t in enumerate(texts)}
                of = {t: p for row, prow in zip(ps, (parts or [])[b:b + batch_size]) for t, p in zip(row, prow)}
                kind_of = {t: k for row, krow in zip(ps, (kinds or [])[b:b + batch_size]) for t, k in zip(row, krow)}
                extra = self._part_logits(q_tokens, q_mask, q_regions, [of.get(t, []) for t in texts], questions=qs)
                typed = self._kind_logits(q_tokens, q_mask, [kind_of.get(t) for t in texts], None if use_cache else {})
                if typed is not None:
                    extra = _plus(extra, typed[2])
                logits = self.ranker.logits(q, vectors, coverage_features(qs, texts, self.hparams.mask_token or "[E]"),
                                            extra)
                out += [[float(logits[i, index[t]]) for t in row] for i, row in enumerate(ps)]
            return out
        finally:
            self.train(was_training)


def _plus(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    """The sum of two optional logit tables (None: none)."""
    return b if a is None else a if b is None else a + b
