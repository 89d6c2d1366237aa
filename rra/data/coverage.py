"""Does the encoder read the questions' language? Measured at train and infer time (issue 35).

The packaged encoder (all-MiniLM-L6-v2) was trained on English: it turns most characters of a
Chinese question into `[UNK]`, and questions about different relations then reach the model as the
same token sequence, which no training can tell apart. Two figures say so before anyone reads a
Hits@1:

- **unknown share**: the questions' tokens the tokenizer can only write as its unknown token;
- **shared share**: the questions whose token sequence is also that of another question the encoder
  must answer differently: at train time a training question of another relation path (the test
  split is compared with the training questions too); at infer time another question of the run
  worded differently (the run does not know the training questions).

Above `UNKNOWN_LIMIT` / `SHARED_LIMIT` the log, train_summary.json (`encoder_coverage`) and the
run's summary.md (`metrics.json` `encoder_coverage`) warn, name the figure and say how to switch
the encoder. Measuring is tokenising only (no model run): a few seconds for 100,000 questions.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

UNKNOWN_LIMIT = 0.10
SHARED_LIMIT = 0.10
MULTILINGUAL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
SWITCH = (f"train with an encoder that reads the language: model.encoder=<HF name or local path>, e.g. "
          f"model.encoder={MULTILINGUAL} (downloaded once, when online)")


@dataclass
class EncoderCoverage:
    encoder: str  # the encoder's name (model.encoder), for the message
    split: str  # which questions: "train", "test", ...
    questions: int = 0
    tokens: int = 0  # special tokens ([CLS], [SEP]) not counted
    unknown: int = 0
    shared: int = 0
    shared_with: str = "another relation's training question"
    warnings: list[str] = field(default_factory=list)

    @property
    def unknown_share(self) -> float:
        return self.unknown / self.tokens if self.tokens else 0.0

    @property
    def shared_share(self) -> float:
        return self.shared / self.questions if self.questions else 0.0

    def check(self) -> "EncoderCoverage":
        """Fill `warnings` with what is above its limit."""
        self.warnings = []
        where = f"{self.split} questions" if self.split else "questions"
        if self.tokens and self.unknown_share > UNKNOWN_LIMIT:
            self.warnings.append(
                f"encoder coverage: the encoder {self.encoder} reads {100 * self.unknown_share:.1f}% of the "
                f"{where}' tokens as unknown ({self.unknown} of {self.tokens} tokens): it does not cover their "
                f"language; {SWITCH}")
        if self.questions and self.shared_share > SHARED_LIMIT:
            self.warnings.append(
                f"encoder coverage: {100 * self.shared_share:.1f}% of the {where} ({self.shared} of "
                f"{self.questions}) reach the encoder {self.encoder} as the same token sequence as "
                f"{self.shared_with}, so it cannot tell them apart; {SWITCH}")
        return self

    def to_dict(self) -> dict:
        return {**asdict(self), "unknown_share": round(self.unknown_share, 4),
                "shared_share": round(self.shared_share, 4)}


def token_sequences(tokenizer, texts: Sequence[str], batch: int = 512) -> list[tuple[int, ...]]:
    """Each text's token ids, without special tokens and untruncated."""
    out: list[tuple[int, ...]] = []
    for start in range(0, len(texts), batch):
        ids = tokenizer(list(texts[start:start + batch]), add_special_tokens=False)["input_ids"]
        out += [tuple(x) for x in ids]
    return out


def measure(tokenizer, questions: Sequence[str], labels: Sequence | None = None,
            reference: tuple[Sequence[str], Sequence] | None = None, encoder: str = "", split: str = "",
            shared_with: str | None = None) -> EncoderCoverage:
    """Coverage of `questions` (with their relation paths as `labels`, or None) against `reference`
    (texts, labels) questions, by default the questions themselves. Without labels a question is
    shared when a differently worded question has its token sequence."""
    seqs = token_sequences(tokenizer, questions)
    keys = [tuple(x) if isinstance(x, list) else x for x in labels] if labels is not None else list(questions)
    if reference is None:
        ref_seqs, ref_keys = seqs, keys
    else:
        ref_seqs = token_sequences(tokenizer, reference[0])
        ref_keys = [tuple(x) if isinstance(x, list) else x for x in reference[1]]
    seen: dict[tuple[int, ...], set] = {}
    for s, k in zip(ref_seqs, ref_keys):
        seen.setdefault(s, set()).add(k)
    unk = getattr(tokenizer, "unk_token_id", None)
    report = EncoderCoverage(encoder or "?", split, questions=len(seqs), tokens=sum(map(len, seqs)),
                             shared_with=shared_with or ("another relation's training question" if labels is not None
                                                         else "a differently worded question"))
    report.unknown = sum(t == unk for s in seqs for t in s) if unk is not None else 0
    report.shared = sum(bool(seen.get(s, set()) - {k}) for s, k in zip(seqs, keys))
    return report.check()


def encoder_of(obj) -> tuple[object | None, str]:
    """(tokenizer, encoder name) of a retriever model or of a method that holds one (RRA:
    method.retrieval.model.encoder); (None, "") for a method without an encoder."""
    for name in ("retrieval", "model"):
        inner = getattr(obj, name, None)
        if inner is not None and inner is not obj:
            found = encoder_of(inner)
            if found[0] is not None:
                return found
    encoder = getattr(obj, "encoder", None)
    tokenizer = getattr(encoder, "tokenizer", None)
    if tokenizer is None:
        return None, ""
    hparams = getattr(obj, "hparams", None) or {}
    return tokenizer, str(hparams.get("encoder", "") or type(getattr(encoder, "model", encoder)).__name__)


def training_coverage(model, splits: dict[str, list[dict]]) -> list[EncoderCoverage]:
    """Train time: the training items against each other, and the test items against the training
    items (what the model reads: the question with its topic masked, and its relation path)."""
    tokenizer, name = encoder_of(model)
    train = splits.get("train") or []
    if tokenizer is None or not train:
        return []
    texts, paths = [x["question"] for x in train], [x.get("path") for x in train]
    out = [measure(tokenizer, texts, paths, encoder=name, split="train")]
    test = splits.get("test") or []
    if test:
        out.append(measure(tokenizer, [x["question"] for x in test], [x.get("path") for x in test],
                           reference=(texts, paths), encoder=name, split="test"))
    return out


def question_coverage(method, questions: Sequence[str], split: str = "") -> EncoderCoverage | None:
    """Infer time: the run's questions, as the method's encoder reads them (None: no encoder)."""
    tokenizer, name = encoder_of(method)
    if tokenizer is None or not questions:
        return None
    return measure(tokenizer, list(questions), encoder=name, split=split)
