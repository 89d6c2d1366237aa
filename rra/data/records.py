"""Old home of the question records, kept so existing imports work: they live in `rra.records`."""
from rra.records import AnswerSemantics, DataFormatError, QAExample  # noqa: F401
