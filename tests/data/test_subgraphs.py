"""Per-question subgraph benchmarks: the generator, the RoG and NSM readers, CVT folding, the
per-question graph backend, per-question supervision and the field's metrics."""
import json

import pytest

from rra.records import DataFormatError, QAExample
from rra.data.subgraph_formats import load_nsm, load_rog, load_subgraph_questions, mark_topic
from rra.data.subgraph_generator import write_all
from rra.data.supervision import SupervisionConfig, label_examples
from rra.eval.metrics import compute_metrics, exact_match, hit
from rra.graph.base import GraphError, Triple
from rra.graph.cvt import CVTRule, fold, unfold
from rra.graph.subgraphs import QuestionGraphs, Subgraph


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_all(tmp_path_factory.mktemp("subgraphs"), questions=60, triples=40, seed=3)


# -- CVT folding ---------------------------------------------------------------------------
TREY = [("Trey Parker", "tv.tv_actor.starring_roles", "m.04j60kc"),
        ("m.04j60kc", "tv.regular_tv_appearance.character", "Phillip"),
        ("m.04j60kc", "tv.regular_tv_appearance.series", "Terrance and Phillip"),
        ("Trey Parker", "people.person.place_of_birth", "Conifer, Colorado")]


def test_fold_joins_the_named_ends_of_a_compound_value_in_one_edge():
    folded = fold(TREY, {"m.04j60kc"})
    assert ("Trey Parker", "tv.tv_actor.starring_roles > tv.regular_tv_appearance.character", "Phillip") in folded
    assert ("Trey Parker", "people.person.place_of_birth", "Conifer, Colorado") in folded
    assert not any("m.04j60kc" in (h, t) for h, _, t in folded)
    # the two values of the CVT are joined too, one edge per pair of named ends
    assert len([t for t in folded if {t[0], t[2]} == {"Phillip", "Terrance and Phillip"}]) == 1


def test_fold_prefers_forward_steps_and_unfold_reads_as_the_papers_corpus():
    # Freebase stores both directions; the folded name is the one with fewest backward (~) steps
    both = TREY[:2] + [("m.04j60kc", "tv.regular_tv_appearance.actor", "Trey Parker")]
    folded = fold(both, {"m.04j60kc"})
    assert [r for _, r, _ in folded] == ["tv.tv_actor.starring_roles > tv.regular_tv_appearance.character"]
    assert unfold([Triple(*t) for t in folded]) == [Triple("Trey Parker", "tv.tv_actor.starring_roles", "CVT1"),
                              Triple("CVT1", "tv.regular_tv_appearance.character", "Phillip")]
    back = fold([("m.1", "r", "A"), ("m.1", "s", "B")], {"m.1"})  # both edges leave the CVT
    assert back == [("A", "~r > s", "B")]
    assert unfold([Triple(*t) for t in back]) == [Triple("CVT1", "r", "A"), Triple("CVT1", "s", "B")]


def test_cvt_rule_by_pattern_without_a_name_or_by_list():
    rule = CVTRule.of({"pattern": r"^[mg]\.[0-9a-z_]+$", "ids": ["cvt/7"]})
    assert rule.is_cvt("m.04j60kc") and rule.is_cvt("cvt/7", named=True)
    assert not rule.is_cvt("m.04j60kc", named=True) and not rule.is_cvt("Trey Parker")
    assert not CVTRule.of({"pattern": None}).is_cvt("m.04j60kc")
    with pytest.raises(ValueError, match="unknown cvt keys"):
        CVTRule.of({"patern": "x"})


# -- the per-question backend --------------------------------------------------------------
def test_question_graphs_answer_inside_a_question_only_and_fold_cvts():
    kg = QuestionGraphs(cache_size=1)
    kg.add("q1", Subgraph(TREY, keep=frozenset({"Trey Parker"})))
    kg.add("q2", lambda: Subgraph([("A", "r", "B")]))
    with pytest.raises(GraphError, match="outside a question"):
        kg.neighbors("Trey Parker", "x")
    with kg.scope("q1"):
        rel = "tv.tv_actor.starring_roles > tv.regular_tv_appearance.character"
        assert kg.neighbors("Trey Parker", rel) == ["Phillip"]
        assert kg.neighbors("Phillip", "^" + rel) == ["Trey Parker"]
        assert not kg.has_entity("m.04j60kc") and not kg.has_entity("A")
    with kg.scope(QAExample("q", ["A"], ["B"], extra={"subgraph": "q2"})):
        assert kg.follow_path("A", ["r"])[0].end == "B"
        with kg.scope("q1"):  # nested: the inner question, then back
            assert kg.has_entity("Phillip")
        assert kg.has_entity("A")
    assert kg.relation_types() == sorted(
        {"r", "people.person.place_of_birth", rel, "~tv.regular_tv_appearance.character > tv.regular_tv_appearance.series",
         "tv.tv_actor.starring_roles > tv.regular_tv_appearance.series"})
    with pytest.raises(GraphError, match="brings no subgraph"):
        with kg.scope(QAExample("q", [], [])):
            pass


# -- readers -------------------------------------------------------------------------------
def test_both_formats_read_to_the_same_questions(files):
    rog_kg, nsm_kg, pq_kg = QuestionGraphs(), QuestionGraphs(), QuestionGraphs()
    rog = load_rog(str(files["rog"]["train"]), kg=rog_kg)
    nsm = load_nsm(str(files["nsm"]["train"]), kg=nsm_kg)
    assert [e.question for e in rog] == [e.question for e in nsm] and len(rog) == 42
    assert [e.answer_labels for e in rog] == [e.answer_labels for e in nsm]
    assert all("[" in e.question for e in rog)  # the topic's mention is marked for masking
    if "rog_parquet" in files:
        parquet = load_rog(str(files["rog_parquet"]["train"]), kg=pq_kg)
        assert [(e.question, e.answers) for e in parquet] == [(e.question, e.answers) for e in rog]
    names = {a for e in rog for a in e.answers} | {t for e in rog for t in e.topic_entities}
    assert any("," in n for n in names) and any("(" in n for n in names)
    # the same subgraph, by names (RoG) or by ids with names (NSM)
    for r, n in zip(rog[:5], nsm[:5]):
        with rog_kg.scope(r) as a, nsm_kg.scope(n) as b:
            assert a.stats().triples == b.stats().triples
            assert sorted(a.relation_types()) == sorted(b.relation_types())
            assert b.label(n.topic_entities[0]) == r.topic_entities[0]


def test_auto_format_and_the_generated_sample(files, tmp_path, monkeypatch):
    kg = QuestionGraphs()
    assert len(load_subgraph_questions(str(files["nsm"]["dev"]), kg=kg)) == 9
    assert load_subgraph_questions(None, kg=kg) is None
    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path))
    sample = load_subgraph_questions(None, kg=kg, sample="test")
    assert sample and all(e.extra["subgraph"] in kg for e in sample)


def test_bad_rows_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"id": "1", "question": "who is [A]", "q_entity": ["A"], "a_entity": ["B"], "graph": [["A", "r", "B"]]}
    bad = dict(good, id="2", graph=[["A", "r"]])
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n{not json\n")
    kg = QuestionGraphs()
    with pytest.raises(DataFormatError, match=r"bad.jsonl:3: invalid JSON"):
        load_rog(str(path), kg=kg)
    # a malformed triple is refused when the file is read, not when its question is reached
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataFormatError, match=r"bad.jsonl:2: graph triple 1 is not \[head, relation, tail\]"):
        load_rog(str(path), kg=kg)
    with pytest.raises(ValueError, match="graph=subgraphs"):
        load_rog(str(path), kg=None)
    nsm = tmp_path / "nsm.jsonl"
    nsm.write_text(json.dumps({"id": "1", "question": "q", "entities": [5], "answers": [], "subgraph": {}}) + "\n")
    with pytest.raises(DataFormatError, match="nsm.jsonl:1: entity 5 is an index, but there is no"):
        load_nsm(str(nsm), kg=kg)


def test_mark_topic_is_case_insensitive_and_whole_word():
    assert mark_topic("what is the name of justin bieber brother", ["Justin Bieber"]) == \
        "what is the name of [justin bieber] brother"
    assert mark_topic("who directed salted fish", ["Salt"]) == "who directed salted fish"


# -- supervision and metrics ---------------------------------------------------------------
def test_supervision_labels_each_question_on_its_own_subgraph(files):
    kg = QuestionGraphs()
    examples = load_rog(str(files["rog"]["train"]), kg=kg)
    report = label_examples(kg, examples, SupervisionConfig(max_hops=2))
    cvt = [e for e in examples if e.question.startswith("what character")]
    assert cvt and all(e.relation_path == ["film.actor.film > film.performance.character"] for e in cvt
                       if e.relation_path)
    unreachable = [e for e in examples if e.extra.get("no_path_reason") == "no answer in KG"]
    assert unreachable and report.covered == len(examples) - len(unreachable) == report.n - report.reasons["no answer in KG"]


def test_hit_em_and_ceiling():
    base = {"gold_answers": ["m.1", "m.2"], "gold_labels": ["Paris, Texas", "Lyon"], "extra": {}}
    p = dict(base, answers=["X", "Paris, Texas"], answer_set=["Paris, Texas", "Lyon"])
    assert hit(p) and exact_match(p)
    assert not exact_match(dict(p, answer_set=["Paris, Texas"])) and not exact_match(dict(p, answer_set=["m.1", "m.2", "X"]))
    assert not hit(dict(p, answers=["X"])) and hit(dict(p, answers=["X"], reply="It is Lyon.", hits_mode="reply"))
    preds = [dict(p, extra={"answer_in_subgraph": True}), dict(base, answers=[], extra={"answer_in_subgraph": False})]
    m = compute_metrics(preds)
    assert m["subgraph_ceiling"] == 50.0 and m["hit"] == 50.0 and m["em"] == 50.0
    assert compute_metrics([dict(base, answers=["m.1"])])["subgraph_ceiling"] is None


def test_rog_shards_by_glob_and_hub_ids_need_datasets(files, tmp_path):
    import shutil

    for i, split in enumerate(("train", "dev")):  # two shards of one split, as a Hub download holds them
        shutil.copy(files["rog"][split], tmp_path / f"train-{i:05d}-of-00002.jsonl")
    kg = QuestionGraphs()
    examples = load_subgraph_questions(str(tmp_path / "train-*.jsonl"), kg=kg, split="train")
    assert len(examples) == 42 + 9 and len(kg) == 51
    with pytest.raises(FileNotFoundError, match="no file matches"):
        load_rog(str(tmp_path / "nothing-*.parquet"), kg=kg)
    try:
        import datasets  # noqa: F401
    except ImportError:  # offline here: the Hub path says what to install (its download is never tested)
        with pytest.raises(ImportError, match="pip install datasets"):
            load_subgraph_questions("rmanluo/RoG-webqsp", kg=kg, split="test")


def test_compressed_subgraph_files_read_as_the_plain_ones(files, tmp_path):
    """A RoG or NSM file as it is downloaded, gzip'd: the same questions, and each question's graph
    (read again from its row when the question is answered) the same as from the plain file."""
    import gzip
    import shutil
    from pathlib import Path

    plain_kg, packed_kg = QuestionGraphs(), QuestionGraphs()
    rog = load_rog(str(files["rog"]["train"]), kg=plain_kg)
    packed = tmp_path / (Path(files["rog"]["train"]).name + ".gz")
    with open(files["rog"]["train"], "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    again = load_subgraph_questions(str(packed), kg=packed_kg)
    assert [(e.question, e.answers) for e in again] == [(e.question, e.answers) for e in rog]
    for a, b in [*zip(rog, again)][::-1][:6]:  # backwards: each row sought before the last one read
        with plain_kg.scope(a) as x, packed_kg.scope(b) as y:
            assert x.stats().triples == y.stats().triples and sorted(x.relation_types()) == sorted(y.relation_types())
