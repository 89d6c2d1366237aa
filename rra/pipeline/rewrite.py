"""RRA's Rewrite step: retrieved triples -> the knowledge text the answerer reads.

Every rewriter takes the question and the triples *with labels already in place of entity ids*
(the pipeline maps ids to labels first, so rewriters never touch the KG) and returns plain text:

- `TripleRewriter`: one `(head, relation, tail)` line per triple;
- `TemplateRewriter`: one sentence per (head, relation) group from a relation -> phrase table,
  with a generic fallback (`has_genre` -> "X has genre Y.") for relations not in the table;
- `LLMRewriter`: asks any LLM backend to verbalise the triples; a failed or empty call falls back
  to the template text and the error goes into the question's trace;
- `TrainedRewriter`: a fine-tuned KG-to-text checkpoint (rra.models.rewriter, conf/rewriter/trained.yaml).

The pipeline calls `rewrite_many` with the batch's `QuestionContext`s. A rewriter that subclasses
`Rewriter` and writes only `rewrite(question, triples)` gets the one-by-one `rewrite_many`; one
that generates in batches or calls an LLM overrides `rewrite_many`, records each reply with
`context.trace.record(reply)` and a failure it recovered from in `context.trace.errors`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Mapping, Sequence

from rra.records import Triple
from rra.pipeline.retrieve import QuestionContext
from rra.text.facts import DEFAULT_TEMPLATES, forward, linearise, template_sentence, template_text
from rra.text.relations import relation_words


class Rewriter(ABC):
    """Triples (labelled) -> the knowledge text the answerer reads. `uses_llm`: the pipeline hands
    the run's LLM to the constructor (`llm=`)."""

    name: str
    uses_llm: bool = False

    @abstractmethod
    def rewrite(self, question: str, triples: Sequence[Triple]) -> str:
        """The knowledge text of one question's triples."""

    def rewrite_many(self, contexts: Sequence[QuestionContext]) -> list[str]:
        """The knowledge text of each context (its question and labelled triples); by default
        one `rewrite` at a time."""
        return [self.rewrite(c.question, c.triples) for c in contexts]


class TripleRewriter(Rewriter):
    name = "triple"

    def rewrite(self, question: str, triples: Sequence[Triple]) -> str:
        return "\n".join(f"({t.head}, {relation_words(t.relation)}, {t.tail})"
                         for t in map(forward, triples))


class TemplateRewriter(Rewriter):
    """Group the triples by (head, relation), keep their order, one sentence per group:
    "Alien was directed by Ridley Scott." / "Heat stars Al Pacino, Robert De Niro and Val Kilmer."
    Grouping keeps the text short, which matters for small LMs with short contexts."""

    name = "template"

    def __init__(self, templates: Mapping[str, str] | None = None, use_defaults: bool = True):
        self.templates = dict(DEFAULT_TEMPLATES) if use_defaults else {}
        self.templates.update(templates or {})
        for rel, tpl in self.templates.items():
            if "{head}" not in tpl or "{tail}" not in tpl:
                raise ValueError(f"template for relation {rel!r} must contain {{head}} and {{tail}}: {tpl!r}")

    def sentence(self, head: str, relation: str, tails: Sequence[str]) -> str:
        return template_sentence(self.templates, head, relation, tails)

    def rewrite(self, question: str, triples: Sequence[Triple]) -> str:
        return template_text(triples, self.templates)


LLM_REWRITE_PROMPT = (
    "Rewrite the following knowledge graph triples as short, fluent English sentences. "
    "Keep every name exactly as written and state only the facts given.\n\n"
    "Triples:\n{triples}\n\nSentences:"
)


class LLMRewriter(Rewriter):
    """KG-to-text with a prompted LLM (any backend of rra.llm). Triples are sent in chunks of
    `chunk_size` (small models lose facts in long inputs); a failed or empty chunk uses the
    template text for that chunk and records the error."""

    name = "llm"
    uses_llm = True

    def __init__(self, llm, prompt: str = LLM_REWRITE_PROMPT, chunk_size: int = 10,
                 max_new_tokens: int = 192, fallback: TemplateRewriter | None = None):
        if llm is None:
            raise ValueError("rewriter=llm needs an LLM backend (set llm=... in the config)")
        if "{triples}" not in prompt:
            raise ValueError("the LLM rewriter prompt must contain {triples}")
        self.llm, self.prompt, self.chunk_size = llm, prompt, max(1, chunk_size)
        self.max_new_tokens = max_new_tokens
        self.fallback = fallback or TemplateRewriter()
        self.lines = TripleRewriter()

    def rewrite(self, question: str, triples: Sequence[Triple]) -> str:
        return self.rewrite_many([QuestionContext(question, list(triples))])[0]

    def rewrite_many(self, contexts: Sequence[QuestionContext]) -> list[str]:
        """Every chunk of every context in one `generate` call; each reply is counted in its
        question's trace, and a failed or empty one is replaced by that chunk's template text."""
        owner, chunks = [], []
        for k, c in enumerate(contexts):
            for i in range(0, len(c.triples), self.chunk_size):
                owner.append(k)
                chunks.append(list(c.triples[i:i + self.chunk_size]))
        prompts = [self.prompt.format(triples=self.lines.rewrite(contexts[k].question, chunk),
                                      question=contexts[k].question) for k, chunk in zip(owner, chunks)]
        replies = self.llm.generate(prompts, max_new_tokens=self.max_new_tokens) if prompts else []
        parts: list[list[str]] = [[] for _ in contexts]
        for k, chunk, reply in zip(owner, chunks, replies):
            trace = contexts[k].trace
            trace.record(reply)
            text = (reply.text or "").strip()
            if not reply.ok or not text:
                why = reply.error or "empty reply"
                trace.errors.append(f"rewriter llm failed ({why}); used template text")
                text = self.fallback.rewrite(contexts[k].question, chunk)
            parts[k].append(text)
        return ["\n".join(p) for p in parts]


class NoKnowledge(Rewriter):
    """Rewrites to nothing: the answerer sees only the question (the LLM-only comparison)."""

    name = "none"

    def rewrite(self, question: str, triples: Sequence[Triple]) -> str:
        return ""


class TrainedRewriter(Rewriter):
    """The pipeline's `Rewriter` (rra.pipeline.rewrite): triples -> text with a fine-tuned checkpoint.

    The question is not used: the rewriter was trained question-agnostic (WebNLG has no questions).
    Triples are grouped by head entity and cut into chunks of `chunk_size` (the model was trained on
    1-7 triples; small chunks keep it from dropping facts); chunks are generated in one batch."""

    name = "trained"

    def __init__(self, ckpt: str | None = None, chunk_size: int = 3, num_beams: int | None = None,
                 max_new_tokens: int | None = None, batch_size: int = 8, device: str = "cpu",
                 module=None, pack: bool = False):
        if module is None:
            if ckpt is None:
                raise ValueError("TrainedRewriter needs ckpt=<path to a rewriter checkpoint>")
            from rra.models.rewriter import RewriterModule  # torch + transformers: only when used

            module = RewriterModule.load(ckpt, map_location=device)
        self.module = module.eval()
        self.chunk_size = max(1, chunk_size)
        self.num_beams, self.max_new_tokens, self.batch_size = num_beams, max_new_tokens, batch_size
        # pack: fill each chunk up to chunk_size across head entities (a rewriter trained on the RRA
        # corpus saw several heads per input); else one head's triples per chunk (WebNLG-style)
        self.pack = pack

    def chunks(self, triples: Sequence) -> list[list[tuple[str, str, str]]]:
        by_head: dict[str, list[tuple[str, str, str]]] = {}
        for t in triples:
            t = forward(t if isinstance(t, Triple) else Triple(*t))
            by_head.setdefault(t.head, []).append(t.as_tuple())
        groups = [[t for g in by_head.values() for t in g]] if self.pack else list(by_head.values())
        return [g[i:i + self.chunk_size] for g in groups for i in range(0, len(g), self.chunk_size)]

    def rewrite(self, question: str, triples: Sequence) -> str:
        return self.rewrite_many([QuestionContext(question, list(triples))])[0]

    def generate(self, sources: list[str]) -> list[str]:
        """The model's text for each linearised chunk (a subclass may sample or record them)."""
        return self.module.generate(sources, self.num_beams, self.max_new_tokens, self.batch_size)

    def rewrite_many(self, contexts: Sequence[QuestionContext]) -> list[str]:
        """Texts for many questions at once: every chunk of every context in one batched generate
        call (the pipeline rewrites a whole batch of questions this way)."""
        owner, sources = [], []
        for k, ctx in enumerate(contexts):
            for chunk in self.chunks(ctx.triples):
                owner.append(k)
                sources.append(linearise(chunk))
        texts = self.generate(sources) if sources else []
        parts: list[list[str]] = [[] for _ in contexts]
        for k, t in zip(owner, texts):
            if t:
                parts[k].append(t)
        return [" ".join(p) for p in parts]
