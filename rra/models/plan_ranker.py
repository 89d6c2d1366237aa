"""The plan ranker: which candidate query plan (rra.plans.candidates) a question asks for.

A bi-encoder on the retriever's shared encoder, as the relation scorer is: the question (every
named entity masked `[E]`, literals as their slots `[N1]`, rra.plans.text.ranker_text) and each
candidate plan's text (rra.plans.text.plan_words: relations and attributes by their names, operators in
words) are encoded, and a plan's logit is `scale * cos(q, p)` with a learnt scale: the pretrained
encoder already ranks by similarity, and training moves the shared encoder itself (a projection of
its own, at the heads' learning rate, drifted faster than the encoder could follow and dragged the
path predictor down with it).

Beside the cosine, two learnt weights read what a pooled vector blurs: how many of the entities
the question names and of the literals it writes a plan leaves unused (`coverage`, counted from
the two texts: `[E]` marks, `[N1]` slots). "papers by [E] and [E] at [E]" is then not answered by
the intersection of two of its anchors, nor "after [N1]" by the plain chain, whatever the words.
And each of a plan's modifiers is matched word by word (rra.plans.text.plan_parts: an attribute's name
"publication year", an operator "less than, before, fewer than, ... [N1]", an order's direction
"the lowest, the earliest, ...", "how many, the number of"): each of its tokens' best cosine among
the question's tokens, averaged (late interaction), and of a part's ", "-separated alternative
phrasings the best one counts (`part_marks`), so "came out before [N1]" tells `<` from `>`, "an
h-index above [N1]" reads as "more than" would, and "the first paper" argmin from argmax, which a
whole plan's pooled vector barely does (built-in: comparisons 50%, orders 64% on the pooled cosine
alone); a learnt weight and offset turn the match into logits. The operator words of a condition
on literal [Nk] of a question writing two or more are matched only against the words near [Nk]
(`slot_regions`, `part_marks`): in "before [N1] with at least [N2] citations" the "before" belongs
to [N1], so "less than, before, ... [N2]" cannot match as well as "at least" does; the
attribute's name still reads the whole question ("published between [N1] and [N2]").

And one exact reading beside the soft one (`phrase_hits`, `phrase_weight`, on where the checkpoint
says `operator_phrases`): how many words of a condition's operator phrasing are written right beside
its literal in the question ("up to [N1]", "[N1] or earlier", "an h-index under [N1]"). The token
match alone read "publish up to [N1]" as "at least, since, ... [N1]" (1.35 against 0.70 for "at
most, until, up to, ...") and the pooled vector, which learnt the training set's habits, preferred
`>=` by about a logit for "an h-index above [N1]": 9 of the scholarly set's 100 comparisons. The
words come from the plan's own modifier text (rra.plans.text.OPERATOR_PHRASES), so a phrasing the list
lacks, or another language, is read by the soft match alone, as before. Nothing about a plan is a
class: a plan over relations, attributes or shapes never seen in training is scored like any
other, from its words and what it uses.

And what the question asks for against what a plan gives (`answer_types`, where the checkpoint has
them and the KG says what a plan's results are: rra.plans.reads.KindCheck, "city", "stadium"): a
learnt attention over the question's tokens reads the words that name the answer ("in what *town*",
"from which *country*"), and its cosine with the plan's kind (its words' mean token vector) adds
`type_weight * (cos - type_offset)`, trained also on a loss of its own (`type_loss`). The pooled plan vector blurs this: the DBpedia-shaped KG's
"in which city is [E] based" went to `headquarter, ^capital` (giving country) and "[E]'s team's home
ground is in what town" to `team, ground` (giving stadium), since the question's other words match
the shorter chain's relations. The attention starts uniform and learns from every question whose
candidates differ in kind (1-hop ones too); plans without a kind get no such logit, so a KG without
classes or typed values trains and ranks exactly as without it.

Training: each question's candidates are the plans that explain its gold answers (positives, often
several) and other enumerated plans (negatives); the loss is the negative log of the probability
mass on the positives (a softmax over the question's own candidates), so the ranker may settle on
whichever explanation its questions share.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

SLOT = re.compile(r"\[N(\d+)\]")  # a literal slot (rra.plans.text.LITERAL_SLOT); group 1: its k


def _marks(text: str, mask: str) -> tuple[int, frozenset]:
    """(entity marks, literal slots) a text writes."""
    return text.count(mask), frozenset(SLOT.findall(text))


def _unused(question: tuple[int, frozenset], plan: tuple[int, frozenset]) -> tuple[int, int]:
    return max(0, question[0] - plan[0]), len(question[1] - plan[1])


def unused(question: str, plan: str, mask: str = "[E]") -> tuple[int, int]:
    """(named entities, literals) the question has that the plan text does not use."""
    return _unused(_marks(question, mask), _marks(plan, mask))


def coverage_features(questions: Sequence[str], plans: Sequence[str], mask: str = "[E]") -> torch.Tensor:
    """(n, m, 2): `unused` of every question x plan text. Each text is read once (a training batch
    pairs a dozen questions with a thousand banked plans: `unused` per pair was 78 ms a step)."""
    plan_marks = [_marks(p, mask) for p in plans]
    return torch.tensor([[_unused(q, p) for p in plan_marks] for q in (_marks(t, mask) for t in questions)],
                        dtype=torch.float32).reshape(len(questions), len(plans), 2)


def slot_regions(text: str, offsets: Sequence[tuple[int, int]], slack: int = 1) -> list[int]:
    """Per token (its character `offsets`; (0, 0) for special and padding tokens) the literal
    slots [Nk] it reads with, as a bit mask (bit k): the slot it is part of, else every slot at
    most `slack` tokens further than the nearest. "before [N1] with at least [N2]" gives "before"
    and "with" to [N1] alone, "least" to [N2] alone and "at" to both; in "[N1] or more citations
    published before [N2]" "citations" reads with both. All 0 when the text writes fewer than two
    slots: one condition reads the whole question."""
    spans: list[tuple[int, int, int]] = []  # (first token, last token, k)
    for m in SLOT.finditer(text):
        inside = [i for i, (s, e) in enumerate(offsets) if e > s and s < m.end() and m.start() < e]
        if inside:
            spans.append((inside[0], inside[-1], int(m.group(1))))
    if len({k for _, _, k in spans}) < 2:
        return [0] * len(offsets)
    out = []
    for i, (s, e) in enumerate(offsets):
        if e <= s:
            out.append(0)
            continue
        far = [(first - i if i < first else max(0, i - last), k) for first, last, k in spans]
        near = min(d for d, _ in far)
        own = [k for d, k in far if d == 0]
        out.append(sum({1 << k for k in own} if own else {1 << k for d, k in far if d <= near + slack}))
    return out


def part_marks(text: str, offsets: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Per token of a modifier's text (rra.plans.text.plan_parts) (slot, alternative): the literal slot k
    it must be read near (every real token of a part that writes a slot, a condition's operator;
    0 for parts without one, which read the whole question), and which of the part's ", "-separated
    alternative phrasings it belongs to (1, 2, ...; 0 for special tokens, the commas and the slot's
    own tokens, which match any question with that slot alike and would favour short phrasings)."""
    slot = SLOT.search(text)
    k = int(slot.group(1)) if slot else 0
    starts = [0] + [m.end() for m in re.finditer(r", ", text)]
    out = []
    for s, e in offsets:
        if e <= s:
            out.append((0, 0))
            continue
        in_slot = slot is not None and s < slot.end() and slot.start() < e
        alternative = 0 if in_slot or text[s:e] == "," else sum(1 for b in starts if b <= s)
        out.append((k, alternative))
    return out


def token_match(q_tokens: torch.Tensor, q_mask: torch.Tensor, p_tokens: torch.Tensor,
                p_mask: torch.Tensor, q_regions: torch.Tensor | None = None,
                p_marks: torch.Tensor | None = None) -> torch.Tensor:
    """(n, L, d) question tokens, (p, T, d) part tokens (unit vectors; masks of the real tokens) ->
    (n, p): per part, the mean over its tokens of the best cosine among the question's tokens.
    With `p_marks` (p, T, 2: part_marks), a part's score is its best alternative's mean (tokens of
    alternative 0 count in none), and with `q_regions` (n, L: slot_regions bit masks) a part token
    of slot k is matched only against the question tokens whose mask has bit k (slot 0 and region 0
    read the whole question; a slot the question lacks reads all of it)."""
    sims = torch.einsum("nld,ptd->nptl", q_tokens.float(), p_tokens.float())
    allowed = q_mask[:, None, None, :].bool()  # (n, 1, 1, L)
    if q_regions is not None and p_marks is not None:
        r, k = q_regions.to(sims.device)[:, None, None, :], p_marks[..., 0].to(sims.device)[None, :, :, None]
        near = allowed & ((k == 0) | (r == 0) | (((r >> k) & 1) == 1))  # (n, p, T, L)
        allowed = torch.where(near.any(-1, keepdim=True), near, allowed)  # slot not in the question: all of it
    sims = sims.masked_fill(~allowed, -2.0).amax(-1)  # (n, p, T)
    if p_marks is None:
        keep = p_mask[None].float()
        return (sims * keep).sum(-1) / keep.sum(-1).clamp(min=1.0)
    real = p_mask.to(sims.device).long()
    alternatives = p_marks[..., 1].to(sims.device).long() * real  # (p, T)
    unmarked = (alternatives == 0).all(-1, keepdim=True)  # no offsets (a slow tokenizer): one alternative
    alternatives = torch.where(unmarked, real, alternatives)
    member = F.one_hot(alternatives, int(alternatives.max()) + 1)[..., 1:].float()  # (p, T, A)
    sizes = member.sum(1)  # (p, A)
    means = torch.einsum("npt,pta->npa", sims, member) / sizes.clamp(min=1.0)
    return means.masked_fill(sizes[None] == 0, -2.0).amax(-1).clamp(min=-1.0)


_TOKEN = re.compile(r"\[[^\[\]]*\]|\w+")  # a mark ([E], [N1]) or a word


@lru_cache(maxsize=65536)
def _operator_part(part: str) -> tuple[str, tuple[tuple[str, ...], ...]] | None:
    """(its slot, lower-cased; its phrasings as word tuples) of an operator part; None without a slot."""
    slot = SLOT.search(part)
    if not slot:
        return None
    phrasings = (tuple(_TOKEN.findall(p)) for p in part[:slot.start()].lower().split(", "))
    return slot.group(0).lower(), tuple(p for p in phrasings if p)


@lru_cache(maxsize=8192)
def _words(question: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(question.lower()))


def phrase_hits(question: str, part: str, gap: int = 2) -> float:
    """How exactly a condition's operator part ("at most, until, up to, ... [N1]": rra.plans.text.plan_parts)
    is written beside its literal's slot in `question` (rra.plans.text.ranker_text): the most, over its
    ", "-separated phrasings found right before the slot ("up to [N1]") or right after it ("[N1] or
    earlier"), of the phrasing's words / (1 + the words between it and the slot, at most `gap`, none
    of them a mark, and not where it sits right beside another literal). 0 for parts without a slot,
    and where no phrasing is there. "in [N1] or later" gives `=` 1 ("in") and `>=` 2 ("or later");
    "in [E] after [N1]" gives `=` nothing, the mark stands between."""
    parsed = _operator_part(part)
    tokens = _words(question)
    if parsed is None or parsed[0] not in tokens:
        return 0.0
    slot, phrasings = parsed
    best = 0.0
    for at in (i for i, t in enumerate(tokens) if t == slot):
        for side in (-1, 1):  # the words before the slot, read backwards; the words after it
            near = tokens[:at][::-1] if side < 0 else tokens[at + 1:]
            for words in phrasings:
                written = words[::-1] if side < 0 else words
                for g in range(gap + 1):
                    if g > len(near) or g and near[g - 1].startswith("["):
                        break  # a mark ([E], another slot) between: the phrasing is not this literal's
                    k = len(words)
                    if near[g:g + k] == written and not (g and near[g + k:g + k + 1] and near[g + k].startswith("[n")):
                        best = max(best, k / (1 + g))  # (not when it sits right beside another literal)
                        break
    return best


class PlanRanker(nn.Module):
    def __init__(self, dim: int, scale: float = 20.0, coverage: float = -1.0, part_weight: float = 5.0,
                 part_offset: float = 0.5, phrase_weight: float | None = None, answer_types: bool = False,
                 type_weight: float = 5.0, type_offset: float = 0.5):
        super().__init__()
        self.dim = dim
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)))
        # logit per unused named entity, per unused literal: a prior that a question's parts matter
        self.coverage = nn.Parameter(torch.tensor([coverage, coverage]))
        # a modifier's logit: weight x (its word match with the question - offset)
        self.part_weight = nn.Parameter(torch.tensor(part_weight))
        self.part_offset = nn.Parameter(torch.tensor(part_offset))
        # logit per word of an operator phrasing written beside its literal (phrase_hits); None:
        # a checkpoint from before it, which scores as it was trained
        self.phrase_weight = None if phrase_weight is None else nn.Parameter(torch.tensor(phrase_weight))
        # answer types (`asked`, `kind_logits`, `type_loss`); zeros and constants, no random draw, so the other
        # parameters start as they would without them. The weight lives in log space: a type cue
        # must be able to outweigh the pooled cosine's few logits within a short schedule
        self.type_query = nn.Parameter(torch.zeros(dim)) if answer_types else None
        self.log_type_weight = nn.Parameter(torch.tensor(math.log(type_weight))) if answer_types else None
        self.type_offset = nn.Parameter(torch.tensor(type_offset)) if answer_types else None

    def asked(self, q_tokens: torch.Tensor, q_mask: torch.Tensor) -> torch.Tensor:
        """(n, L, d) unit token vectors, (n, L) mask of the real tokens -> (n, d): the unit vector of
        what each question asks for, its tokens weighed by a learnt attention (uniform at first)."""
        q = q_tokens.float()
        att = (q @ self.type_query).masked_fill(~q_mask.bool(), float("-inf"))
        att = torch.where(q_mask.bool().any(-1, keepdim=True), att, torch.zeros_like(att))  # no real token: all
        return F.normalize(torch.einsum("nl,nld->nd", att.softmax(-1), q), dim=-1)

    def kind_logits(self, q_tokens: torch.Tensor, q_mask: torch.Tensor, kinds: torch.Tensor) -> torch.Tensor:
        """(n, k) logits of k kinds (unit vectors) as what each of n questions asks for; a plan's
        answer-type logit is its kind's (plans without one: none)."""
        sims = self.asked(q_tokens, q_mask) @ kinds.to(q_tokens.device).float().T
        return self.log_type_weight.exp().clamp(max=100.0) * (sims - self.type_offset)

    @staticmethod
    def type_loss(kind_logits: torch.Tensor, candidates: list[list[int]], positive: list[list[int]],
                  weights: Sequence[float] | None = None) -> torch.Tensor | None:
        """The answer type's own loss: per question i whose candidates give two or more kinds
        (`candidates[i]`, column indices of `kind_logits`), -log P(the positives' kinds) under a
        softmax over those kinds. Without it the attention barely learnt: the pooled cosine already
        ranks the training questions' plans, so the summed logit gave it little to learn from, and
        the phrasings it is for are the ones training lacks. None where no question has two kinds."""
        losses, w = [], []
        for i, (cands, pos) in enumerate(zip(candidates, positive)):
            if len(cands) < 2 or not pos:
                continue
            row = kind_logits[i]
            losses.append(torch.logsumexp(row[cands], 0) - torch.logsumexp(row[pos], 0))
            w.append(float(weights[i]) if weights is not None else 1.0)
        if not losses:
            return None
        wt = torch.tensor(w, device=kind_logits.device)
        return (torch.stack(losses) * wt).sum() / wt.sum()

    def part_logits(self, matches: torch.Tensor, uses: torch.Tensor, hits: torch.Tensor | None = None) -> torch.Tensor:
        """(n, p) word matches of the parts, (m, p) how often plan j has part k -> (n, m); `hits`:
        (n, p) the parts' phrase_hits in each question, read where the ranker has a phrase weight."""
        matches = matches - self.part_offset
        if hits is not None and self.phrase_weight is not None:
            return (self.part_weight * matches + self.phrase_weight * hits.to(matches.device)) \
                @ uses.to(matches.device).float().T
        return self.part_weight * (matches @ uses.to(matches.device).float().T)

    @property
    def scale(self) -> torch.Tensor:
        return self.log_scale.exp().clamp(max=100.0)

    def logits(self, questions: torch.Tensor, plans: torch.Tensor, uncovered: torch.Tensor | None = None,
               parts: torch.Tensor | None = None) -> torch.Tensor:
        """(n, d) questions x (m, d) plan texts -> (n, m) logits; `uncovered`: (n, m, 2) features;
        `parts`: (n, m) the plans' modifier logits (part_logits)."""
        q = F.normalize(questions.float(), dim=-1)
        out = self.scale * q @ F.normalize(plans.float(), dim=-1).T
        if uncovered is not None:
            out = out + uncovered.to(out.device) @ self.coverage
        if parts is not None:
            out = out + parts
        return out

    def loss(self, questions: torch.Tensor, plans: torch.Tensor, candidates: list[list[int]],
             positive: list[list[bool]], uncovered: torch.Tensor | None = None, parts: torch.Tensor | None = None,
             weights: Sequence[float] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Per question i: `candidates[i]` index rows of `plans`, `positive[i]` marks the right ones;
        `weights[i]`: how many questions item i stands for (merged items weigh as many questions).
        Returns (weighted mean of -log P(positives), per question whether its best candidate is right)."""
        logits = self.logits(questions, plans, uncovered, parts)
        losses, correct = [], []
        for i, (cands, pos) in enumerate(zip(candidates, positive)):
            row = logits[i, torch.tensor(cands, device=logits.device, dtype=torch.long)]
            mask = torch.tensor(pos, device=logits.device, dtype=torch.bool)
            losses.append(torch.logsumexp(row, 0) - torch.logsumexp(row[mask], 0))
            correct.append(mask[int(row.argmax())].float())
        w = torch.tensor(list(weights) if weights is not None else [1.0] * len(losses), device=logits.device)
        return (torch.stack(losses) * w).sum() / w.sum(), torch.stack(correct)
