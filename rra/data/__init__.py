"""Datasets and supervision: QA records, MetaQA and generic question files, KG-derived relation-path
labels, the built-in sample KG and the template question generator."""
from rra.data.metaqa import load_metaqa, load_metaqa_graph, metaqa_kb_path, qtype_to_path
from rra.data.qa_files import load_qa_file, save_qa_file
from rra.data.supervision import SupervisionConfig, SupervisionReport, label_examples, path_candidates
from rra.records import DataFormatError, QAExample

__all__ = [
    "DataFormatError",
    "QAExample",
    "SupervisionConfig",
    "SupervisionReport",
    "Templates",
    "builtin_kb_path",
    "builtin_questions",
    "export_builtin",
    "generate_questions",
    "label_examples",
    "load_builtin_graph",
    "load_metaqa",
    "load_metaqa_graph",
    "load_qa_file",
    "metaqa_kb_path",
    "path_candidates",
    "qtype_to_path",
    "save_qa_file",
]


def __getattr__(name):
    # Imported on first use, not here: `python -m rra.data.question_generator` must find the
    # module unimported when it runs it as __main__.
    if name in ("Templates", "generate_questions"):
        from rra.data import question_generator

        return getattr(question_generator, name)
    if name in ("builtin_kb_path", "builtin_questions", "load_builtin_graph", "export_builtin"):
        from rra.data import builtin

        return getattr(builtin, name)
    raise AttributeError(f"module 'rra.data' has no attribute {name!r}")
