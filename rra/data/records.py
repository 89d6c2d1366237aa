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
