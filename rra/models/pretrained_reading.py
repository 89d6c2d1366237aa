"""A second reading of the trained scorer's paths by the pretrained encoder, for questions worded
unlike any the retriever trained on (`retriever.pretrained_reading`, off by default).

Why: fine-tuning on one KG's training questions teaches the encoder those wordings and unteaches
some of what it knew about others. On the DBpedia-shaped KG (docs/benchmark_kgs.md) the trained
scorer reads "What passport does [E] hold" as `award` and "the author of [E] graduated from where" as
`author, almaMater, city`, both near 1.0, while the pretrained encoder, comparing the question with each
path read as one phrase ("author, alma mater"), ranks the right path first; over the whole test it is
far worse (68.8 Hits@1 against 96.7), so it cannot replace the trained reading, only correct it.

How: the trained search's best paths keep their probability mass, shared anew in proportion to
P(path) * exp(weight * novelty * cos(question, path phrase)), the cosine from the pretrained encoder.
`novelty` is 0 for a question worded as a training question (its masked text among them, or a
pretrained cosine of at least FAMILIAR with one) and rises to 1 as the wording moves away, so
wordings the scorer was trained on keep its reading (ungated, a training wording the scorer had
right at 0.98 was re-read as another path: docs/retriever.md), and a question worded as none of
them leans on the pretrained reading. A checkpoint saved before it kept its training wordings (no `training_wordings`)
re-reads every question. The retriever searches a question it will re-read without pruning
(rra.models.relation_scorer.search_paths' `min_ratio`), so the continuations the trained end head
made unlikely are among the paths re-read.
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch.nn import functional as F

from rra.models.encoder import encode_cached
from rra.models.path_predictor import path_phrase

FAMILIAR = 0.9  # pretrained cosine with the nearest training wording at which a wording counts as trained
CACHE_SIZE = 50_000  # question and path-phrase vectors kept (a server answers for long: bounded, oldest dropped)


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


class PretrainedReading:
    """The pretrained encoder (not a submodule of the retriever: no weights in its checkpoint) with
    the training wordings' vectors (encoded once, when `novelty` first needs them: 489 wordings on the
    DBpedia-shaped KG, about a second on a CPU) and a bounded cache of question and path-phrase vectors."""

    def __init__(self, encoder, training_wordings: Sequence[str] = (), batch_size: int = 256):
        self.encoder = encoder.eval()
        self.batch_size = batch_size
        self.known = {_key(w) for w in training_wordings}
        self.cache: dict[str, torch.Tensor] = {}
        self._wordings = sorted(set(training_wordings))
        self._wording_vectors: torch.Tensor | None = None

    @property
    def wordings(self) -> torch.Tensor | None:
        """The training wordings' unit vectors (None: none kept), encoded when first asked for: the
        kinds a question asks for (Retriever.kind_cosines) read words with this encoder and need none."""
        if self._wording_vectors is None and self._wordings:
            self._wording_vectors = self.vectors(self._wordings, cache=False)
        return self._wording_vectors

    @torch.no_grad()
    def vectors(self, texts: list[str], cache: bool = True) -> torch.Tensor:
        """Unit vectors of `texts`, kept in the bounded cache (cache=False: encoded apart, not kept)."""
        unit = lambda chunk: F.normalize(self.encoder(chunk).float(), dim=-1)  # noqa: E731
        return encode_cached(unit, texts, self.cache if cache else {}, self.batch_size, CACHE_SIZE)[0]

    def novelty(self, masked: Sequence[str]) -> list[float]:
        """Per question, 0 (worded as a training question) .. 1 (unlike any, or no wordings kept)."""
        out = [0.0 if _key(q) in self.known else None for q in masked]
        ask = [i for i, v in enumerate(out) if v is None]
        if ask and self.wordings is None:
            for i in ask:
                out[i] = 1.0
        elif ask:
            nearest = (self.vectors([masked[i] for i in ask]) @ self.wordings.T).max(1).values.tolist()
            for i, c in zip(ask, nearest):
                out[i] = min(1.0, max(0.0, (1.0 - c) / (1.0 - FAMILIAR)))
        return out

    def rerank(self, masked: Sequence[str], found: list[list[tuple[tuple[str, ...], float]]],
               text_of: Callable[[str], str], weight: float,
               novelty: Sequence[float] | None = None) -> list[list[tuple[tuple[str, ...], float]]]:
        """`found[i]`: question i's (path, log score) from the search; the same paths, their log
        scores re-shared as the module says, best first. `novelty`: `self.novelty(masked)` where
        already known."""
        novelty = self.novelty(masked) if novelty is None else novelty
        out = []
        for q, paths, g in zip(masked, found, novelty):
            if len(paths) < 2 or g <= 0:
                out.append(paths)
                continue
            cos = self.vectors([path_phrase(p, text_of) for p, _ in paths]) @ self.vectors([q])[0]
            logs = torch.tensor([s for _, s in paths], dtype=torch.float64)
            moved = logs + weight * g * cos.double()
            moved = moved - torch.logsumexp(moved, 0) + torch.logsumexp(logs, 0)  # the same mass, shared anew
            out.append(sorted(((p, float(s)) for (p, _), s in zip(paths, moved)), key=lambda c: -c[1]))
        return out
