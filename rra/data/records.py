"""Records shared by loaders, supervision, training and inference."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class QAExample:
    """One question. `topic_entities` are KG entity ids; `relation_path` is the gold (or
    KG-derived) path from the first topic entity, inverse relations written `^r`."""

    question: str
    topic_entities: list[str]
    answers: list[str]
    relation_path: list[str] | None = None
    qid: str = ""
    hops: int | None = None  # dataset's own hop count (e.g. MetaQA 1/2/3-hop split), if known
    source: str = ""  # "file:line" it came from, for error messages and traceability
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "QAExample":
        return cls(**d)


class DataFormatError(ValueError):
    """A malformed input line. The message always names `file:line` and the offending value."""

    def __init__(self, source: str, problem: str, value: object = None):
        self.source, self.problem, self.value = source, problem, value
        shown = "" if value is None else f": {str(value)[:200]!r}"
        super().__init__(f"{source}: {problem}{shown}")


@dataclass(frozen=True)
class AnswerSemantics:
    """What counts as an answer on a dataset: read alike by KG supervision, retrieval, the graph
    scorer and the metrics, and set by the dataset's config (`data.semantics`).

    The defaults are the general rule: a relation path's answers are simply the entities it ends
    at, so "the spouse of X's spouse" may be X, and a self-loop answers with its own entity.
    MetaQA builds its multi-hop answers otherwise ("films by the director of X" are the *other*
    films), so conf/data/metaqa.yaml sets both flags to false.
    """

    topic_can_be_answer: bool = True  # a path that ends at the topic entity answers with it
    revisit_topic: bool = True  # a path may pass through the topic entity on its way

    def keeps(self, entities, topic: str) -> bool:
        """Whether a walk (its entities, topic first) is an answer path under these rules."""
        if not self.revisit_topic and topic in entities[1:-1]:
            return False
        return self.topic_can_be_answer or entities[-1] != topic

    @classmethod
    def of(cls, value) -> "AnswerSemantics":
        """From a config mapping (or None for the defaults, or an instance as it is)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        unknown = set(dict(value)) - {"topic_can_be_answer", "revisit_topic"}
        if unknown:
            raise ValueError(f"unknown answer-semantics keys {sorted(unknown)}; expected "
                             "topic_can_be_answer, revisit_topic")
        return cls(**{k: bool(v) for k, v in dict(value).items()})
