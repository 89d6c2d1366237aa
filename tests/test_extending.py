"""docs/ARCHITECTURE.md says a new baseline or a new LLM backend is one module plus one config file,
nothing else. This test is that claim: both are written to a temporary folder (a module outside
the package and a yaml in a config dir on Hydra's search path), and a whole `infer` run uses them
with the built-in KG, through the same evaluation loop, metrics and summary as every method."""
import json
from pathlib import Path



MODULE = '''
import re
from dataclasses import dataclass

from rra.baselines.common import BaselineSettings, missing_status, set_answers, topic_entities
from rra.llm.base import LLM, LLMReply, LLMUsage, prompt_to_text


@dataclass(eq=False)
class OneHop(BaselineSettings):
    """Asks the LLM which relation of the topic entity answers the question, returns its ends."""

    name = "one_hop"
    max_relations: int = 40

    def explore(self, example, pred, trace):
        topics = topic_entities(self.kg, example)
        status = missing_status(example, topics)
        if status:
            pred.status = status
            return
        relations = self.kg.relations(topics[0])[: self.max_relations]
        prompt = f"Question: {example.question}\\nOptions: {'; '.join(relations)}\\nThe best option is:"
        reply = trace.ask([prompt])[0]
        pred.reply = reply.text
        chosen = reply.text.strip()
        if reply.ok and chosen not in relations:
            trace.bad_reply("relation", reply)
        ends = self.kg.neighbors(topics[0], chosen) if chosen in relations else []
        pred.paths = [{"path": [chosen], "score": 1.0}] if ends else []
        set_answers(pred, ends, free_form=False)
        pred.status = trace.status("ok" if ends else "no_path")


class WordOverlapLLM(LLM):
    """A stand-in model: replies with the option sharing the most words with the question."""

    def __init__(self, name="word_overlap"):
        self.name, self.model, self.usage = name, "word-overlap", LLMUsage()

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        replies = []
        for p in prompts:
            text = prompt_to_text(p)
            q = set(re.findall(r"[a-z]+", text.split("\\n")[0].lower()))
            options = text.split("Options: ")[1].split("\\n")[0].split("; ")
            best = max(options, key=lambda o: len(q & set(re.split(r"[^a-z]+", o.lower()))))
            reply = LLMReply(best, prompt_tokens=len(text.split()), completion_tokens=1)
            self.usage.record(reply)
            replies.append(reply)
        return replies

    def score(self, prompt, continuations, reduction="sum"):
        raise NotImplementedError("word_overlap does not score continuations")
'''


def test_a_new_baseline_and_llm_backend_are_one_module_and_one_yaml_each(compose_cfg, tmp_path, monkeypatch):
    from rra.eval.run import run_split

    (tmp_path / "my_kgqa.py").write_text(MODULE)
    conf = tmp_path / "conf"
    (conf / "method").mkdir(parents=True)
    (conf / "llm").mkdir()
    (conf / "method" / "one_hop.yaml").write_text("_target_: my_kgqa.OneHop\nmode: llm\nmax_relations: 40\n")
    (conf / "llm" / "word_overlap.yaml").write_text("_target_: my_kgqa.WordOverlapLLM\nname: word_overlap\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    cfg = compose_cfg("infer", [f"hydra.searchpath=[file://{conf}]", "method=one_hop", "llm=word_overlap",
                                "limit=30", "show_summary=false"], output_dir=tmp_path / "run")
    metrics = run_split(cfg, tmp_path / "run")

    assert metrics["method"] == "one_hop" and metrics["n"] == 30
    assert metrics["llm_calls_per_q"] == 1.0 and metrics["llm_usage"]["calls"] == 30
    assert metrics["llm_answered"] == 100.0  # every reply named one of the options
    assert 0 < metrics["hits@1"] < 100  # one hop answers some of the 1-3 hop questions, not all
    preds = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert {p["status"] for p in preds} <= {"ok", "no_path"}
    assert all(p["llm_calls"] == 1 and p["reply"] for p in preds)
    summary = (tmp_path / "run" / "summary.md").read_text()  # markdown-escaped names
    assert "**method**: one\\_hop" in summary and "word\\_overlap (word-overlap)" in summary


# A new question format: a reader returning QAExamples, and a data config naming it. Lines of
# `question | topic | answer; answer`, `#` comments.
READER = '''
from pathlib import Path

from rra.records import DataFormatError, QAExample


def read_pipe_questions(path):
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3:
            raise DataFormatError(f"{path}:{n}", "expected 'question | topic | answer; answer'", line)
        out.append(QAExample(parts[0], [parts[1]], parts[2].split("; "), qid=f"pipe-{n}", source=f"{path}:{n}"))
    return out
'''

# A new graph backend: plain dicts, every query of the KnowledgeGraph base class written out.
BACKEND = '''
from collections import Counter, defaultdict

from rra.graph.base import (GraphStats, KnowledgeGraph, UnknownEntityError, base_relation, is_inverse, sample,
                            walk_path)
from rra.graph.loaders import read_labels, read_triples
from rra.records import Triple


class DictGraph(KnowledgeGraph):
    def __init__(self, path, labels_path=None):
        self.facts, self.names, _ = read_triples(path)
        if labels_path:
            self.names.update(read_labels(labels_path)[0])
        self.out, self.inn = defaultdict(lambda: defaultdict(set)), defaultdict(lambda: defaultdict(set))
        for t in self.facts:
            self.out[t.head][t.relation].add(t.tail)
            self.inn[t.tail][t.relation].add(t.head)
        self.entities = set(self.out) | set(self.inn)

    def has_entity(self, entity):
        return entity in self.entities

    def label(self, entity):
        if entity not in self.entities:
            raise UnknownEntityError(entity)
        return self.names.get(entity, entity)

    def labels(self, entities):
        return {e: self.names.get(e, e) for e in entities if e in self.entities}

    def find_entities(self, text, mode="exact", limit=10):
        match = {"exact": lambda name: name == text, "casefold": lambda name: name.casefold() == text.casefold(),
                 "substring": lambda name: text.casefold() in name.casefold()}[mode]
        hits = [e for e in self.entities if match(self.names.get(e, e))]
        return sorted(hits, key=lambda e: (len(self.names.get(e, e)), self.names.get(e, e), e))[:limit]

    def relations(self, entity, direction="both"):
        self.label(entity)
        out = set(self.out[entity]) if direction in ("out", "both") else set()
        inn = {"^" + r for r in self.inn[entity]} if direction in ("in", "both") else set()
        return sorted(out | inn)

    def neighbors(self, entity, relation):
        side = self.inn if is_inverse(relation) else self.out
        return sorted(side[entity][base_relation(relation)]) if entity in self.entities else []

    def neighbors_batch(self, entities, relation):
        return {e: self.neighbors(e, relation) for e in entities}

    def follow_path(self, entity, path, limit=None):
        return walk_path(self, entity, path, limit)

    def follow_path_batch(self, entities, path, limit=None):
        return {e: walk_path(self, e, path, limit) if e in self.entities else [] for e in dict.fromkeys(entities)}

    def triples(self, entity, limit=None, seed=None, direction="both"):
        self.label(entity)
        out = [Triple(entity, r, t) for r, ts in self.out[entity].items() for t in ts] if direction != "in" else []
        inn = [Triple(h, r, entity) for r, hs in self.inn[entity].items() for h in hs] if direction != "out" else []
        return sample(sorted(set(out + inn)), limit, seed)

    def stats(self):
        rels = Counter(t.relation for t in self.facts)
        return GraphStats(len(self.entities), len(self.facts), dict(rels.most_common()))

    def relation_types(self):
        return sorted({t.relation for t in self.facts})

    def all_triples(self):
        return iter(self.facts)
'''


def infer_with(compose_cfg, tmp_path: Path, conf: Path, overrides: list[str], run: str) -> tuple[dict, list[dict]]:
    from rra.eval.run import run_split

    cfg = compose_cfg("infer", [f"hydra.searchpath=[file://{conf}]", "method=one_hop", "llm=word_overlap",
                                "show_summary=false", *overrides], output_dir=tmp_path / run)
    metrics = run_split(cfg, tmp_path / run)
    lines = (tmp_path / run / "predictions.jsonl").read_text().splitlines()
    return metrics, [json.loads(line) for line in lines]


def extension_dir(tmp_path: Path, monkeypatch) -> Path:
    """The baseline + LLM backend module above and their yaml files, outside rra/ and conf/."""
    (tmp_path / "my_kgqa.py").write_text(MODULE)
    conf = tmp_path / "conf"
    for group in ("method", "llm", "data", "graph"):
        (conf / group).mkdir(parents=True)
    (conf / "method" / "one_hop.yaml").write_text("_target_: my_kgqa.OneHop\nmode: llm\nmax_relations: 40\n")
    (conf / "llm" / "word_overlap.yaml").write_text("_target_: my_kgqa.WordOverlapLLM\nname: word_overlap\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return conf


def test_a_new_question_format_is_a_reader_and_a_yaml(compose_cfg, tmp_path, monkeypatch):
    """infer.py answers the format's questions and train.py's datamodule trains on them: nothing in
    rra/ or conf/ names the format."""
    from rra.data.builtin import builtin_questions
    from rra.training.run import build_datamodule

    conf = extension_dir(tmp_path, monkeypatch)
    (tmp_path / "pipe_format.py").write_text(READER)
    questions = builtin_questions("test")[:20]
    lines = ["# question | topic | answers"] + [f"{q.question} | {q.topic_entities[0]} | {'; '.join(q.answers)}"
                                                for q in questions]
    (tmp_path / "questions.txt").write_text("\n".join(lines) + "\n")
    (conf / "data" / "pipes.yaml").write_text(
        "kb_path: ${builtin_data:kb.txt}\nlabels_path: ${builtin_data:labels.tsv}\n"
        "semantics: {topic_can_be_answer: true, revisit_topic: true}\n"
        f"question_file: {tmp_path / 'questions.txt'}\n"
        "train: {_target_: pipe_format.read_pipe_questions, _partial_: true, path: '${data.question_file}'}\n"
        "test: {_target_: pipe_format.read_pipe_questions, _partial_: true, path: '${data.question_file}'}\n")

    metrics, preds = infer_with(compose_cfg, tmp_path, conf, ["data=pipes"], "pipes")
    _, same = infer_with(compose_cfg, tmp_path, conf, ["limit=20"], "builtin")  # the same questions, built-in format
    assert metrics["n"] == 20 and [p["qid"] for p in preds] == [f"pipe-{n}" for n in range(2, 22)]
    assert [p["gold_answers"] for p in preds] == [q.answers for q in questions]
    assert [(p["answers"], p["status"]) for p in preds] == [(p["answers"], p["status"]) for p in same]

    cfg = compose_cfg("train", [f"hydra.searchpath=[file://{conf}]", "data=pipes", "datamodule.supervision_cache=false"])
    datamodule = build_datamodule(cfg)
    datamodule.setup("fit")
    coverage = datamodule.summary["coverage"]["train"]
    assert coverage["n"] == coverage["covered"] == 20  # a KG-derived path for every question
    assert datamodule.summary["train_questions"] == 18  # 10% held out for validation


def test_a_new_graph_backend_is_a_module_and_a_yaml(compose_cfg, tmp_path, monkeypatch):
    """The `graph` group alone picks the backend: the same run on it and on NetworkX answers alike."""
    conf = extension_dir(tmp_path, monkeypatch)
    (tmp_path / "dict_graph.py").write_text(BACKEND)
    (conf / "graph" / "dict.yaml").write_text(
        "_target_: dict_graph.DictGraph\npath: ${data.kb_path}\nlabels_path: ${oc.select:data.labels_path,null}\n")

    on_dicts, preds = infer_with(compose_cfg, tmp_path, conf, ["graph=dict", "limit=40"], "dict")
    on_networkx, reference = infer_with(compose_cfg, tmp_path, conf, ["limit=40"], "networkx")
    assert "DictGraph" in (tmp_path / "dict" / "summary.md").read_text()  # the backend that answered
    assert [(p["answers"], p["status"], p["paths"]) for p in preds] == \
        [(p["answers"], p["status"], p["paths"]) for p in reference]
    assert on_dicts["hits@1"] == on_networkx["hits@1"] > 0
