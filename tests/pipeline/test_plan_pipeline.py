"""The pipeline's plan path with a scripted retriever: what the path predictor and the plan ranker
say is fixed (by keywords), so what is tested is how the pipeline builds, ranks, executes and shows
a plan on the built-in KG."""
from __future__ import annotations

import math
import re

import pytest

from rra.data.builtin import load_builtin_graph
from rra.data.records import QAExample
from rra.graph import NetworkXGraph, Triple
from rra.models.path_search import PathPrediction
from rra.pipeline.answer import GraphScorer, candidate_entities
from rra.pipeline.method import RRAPipeline
from rra.pipeline import plans
from rra.pipeline.plans import readings_of
from rra.pipeline.retrieve import PathRetrieval
from rra.pipeline.rewrite import TemplateRewriter

WRITER = "person/marit_lindgrave"
KG = load_builtin_graph()
BOOKS = {b: int(KG.label(KG.neighbors(b, "published_in")[0])) for b in KG.neighbors(WRITER, "^written_by")}
FIRST = min(BOOKS, key=BOOKS.get)
AFTER_1980 = {b for b, y in BOOKS.items() if y > 1980}
IN_MIREVAL = [b for b in BOOKS if "city/mireval" in KG.neighbors(b, "set_in")]
# the relation a question asks for, by the words before its focused anchor "[E]" (or its marked mention)
PATTERNS = [(r"(written by|books did|books? by|did|has) (\[|\[E\])", "^written_by"), (r"set in (\[|\[E\])", "^set_in")]


def kind_of(question: str) -> str:
    """The plan kind the scripted ranker prefers for a question."""
    q = question.lower()
    if q.startswith("how many"):
        return "count"
    if q.startswith(("did ", "was ", "is ")):
        return "yes_no"
    if "first" in q:
        return "order"
    if "after" in q:
        return "comparison"
    return "conjunction" if q.count("[e]") > 1 else "chain"


def kind_of_plan(text: str) -> str:
    if text.startswith("how many"):
        return "count"
    if text.startswith("yes or no"):
        return "yes_no"
    if " with the lowest" in text:
        return "order"
    if " where " in text:
        return "comparison"
    return "conjunction" if " and [E]" in text else "chain"


class Scripted:
    """predict(): the path named by the words before the focused anchor; rank_plans(): 5 for a
    plan of the kind the question's keywords ask for (kind_of), 0 else; `ranker=None`: a retriever
    trained on chains only."""

    def __init__(self, ranker: bool = True):
        self.ranker = object() if ranker else None

    def predict(self, questions, topk=3, try_second_hop=False, **graph):
        out = []
        for q in questions:
            path = next((p for pat, p in PATTERNS if re.search(pat, q)), "^published_by")
            out.append([PathPrediction([path], 0.9, 1, 1.0), PathPrediction(["^published_by"], 0.05, 1, 1.0)])
        return out

    def rank_plans(self, questions, plans, parts=None, kinds=None):
        return [[5.0 * (kind_of_plan(t) == kind_of(q)) for t in texts] for q, texts in zip(questions, plans)]


def pipeline(ranker: bool = True) -> RRAPipeline:
    return RRAPipeline(load_builtin_graph(), PathRetrieval(Scripted(ranker)), TemplateRewriter(), GraphScorer())


@pytest.fixture(scope="module")
def rra():
    return pipeline()


def test_two_anchors_are_intersected_and_both_chains_shown(rra):
    ex = QAExample("which books set in [Mireval] were written by [Marit Lindgrave]", [WRITER, "city/mireval"],
                   IN_MIREVAL, qid="c")
    pred = rra.answer(ex)
    assert pred.status == "ok" and pred.answers == IN_MIREVAL and len(IN_MIREVAL) == 1
    plan = pred.extra["plan"]
    assert plan["shape"] == "conjunction" and pred.extra["plan_kind"] == "conjunction"
    assert dict(zip(plan["anchors"], map(tuple, plan["paths"]))) == {WRITER: ("^written_by",), "city/mireval": ("^set_in",)}
    assert {"written_by", "set_in"} <= {t.relation for t in pred.triples}  # evidence of both chains
    assert "Query plan" in pred.knowledge and "Mireval" in pred.knowledge
    assert pred.extra["plan_text"] in pred.knowledge  # what the page shows beside the answers


def test_conditions_and_orders_filter_by_an_attribute_of_the_answers(rra):
    first = rra.answer(QAExample("what is the first book by [Marit Lindgrave]", [WRITER], [FIRST]))
    assert first.answers == [FIRST] and first.extra["plan"]["shape"] == "order"
    assert any(t.relation == "published_in" for t in first.triples)  # the condition's facts are evidence
    after = rra.answer(QAExample("which books by [Marit Lindgrave] came out after 1980", [WRITER], sorted(AFTER_1980)))
    assert set(after.answer_set) == AFTER_1980 and 0 < len(AFTER_1980) < len(BOOKS)
    assert after.extra["plan"]["constraint"]["relation"] == "published_in" and after.extra["plan"]["shape"] == "comparison"


def test_count_answers_a_number_and_yes_no_a_yes_or_no(rra):
    count = rra.answer(QAExample("how many books did [Marit Lindgrave] write", [WRITER], [str(len(BOOKS))]))
    assert count.answers == [str(len(BOOKS))] and count.extra["plan"]["aggregate"] == "count"
    assert "how many there are" in count.knowledge
    book = sorted(BOOKS)[0]
    yes = rra.answer(QAExample(f"did [Marit Lindgrave] write [{KG.label(book)}]", [WRITER, book], ["yes"]))
    assert yes.answers == ["yes"] and yes.extra["plan"]["ask"] in (book, WRITER)
    other = next(b for b in sorted(KG.neighbors("publisher/lamplight_press", "^published_by")) if b not in BOOKS)
    no = rra.answer(QAExample(f"did [Marit Lindgrave] write [{KG.label(other)}]", [WRITER, other], ["no"]))
    assert no.answers == ["no"]
    # the entity asked about is named by its label, though no triple the plan walked holds it
    asked = no.extra["plan"]["ask"]
    assert f"the answer is yes if {KG.label(asked)} is one of them" in no.knowledge, no.knowledge


def test_chain_questions_take_the_chain_path_unchanged():
    ex = QAExample("what books did [Marit Lindgrave] write", [WRITER], [])
    with_ranker, without = pipeline(True).answer(ex), pipeline(False).answer(ex)
    assert "plan" not in with_ranker.extra and with_ranker.extra["plan_kind"] == "chain"
    keep = ("answers", "answer_set", "triples", "knowledge", "status")
    assert {k: getattr(with_ranker, k) for k in keep} == {k: getattr(without, k) for k in keep}
    assert [p["path"] for p in with_ranker.paths] == [p["path"] for p in without.paths]


class ReadsWholePaths(Scripted):
    """The path predictor's first path stops at the books; the ranker, reading each chain whole,
    prefers the one that walks on to where they are set."""

    def predict(self, questions, topk=3, try_second_hop=False, **graph):
        return [[PathPrediction(["^written_by"], 0.9, 1, 1.0), PathPrediction(["^written_by", "set_in"], 0.08, 2, 1.0)]
                for _ in questions]

    def rank_plans(self, questions, plans, parts=None, kinds=None):
        return [[8.0 * (kind_of_plan(t) == "chain") + 4.0 * ("set in" in t) for t in texts] for texts in plans]


def test_a_chain_walks_the_anchors_paths_in_the_rankers_order():
    """`plans.rank_chains` (default): the chain the ranker put first is walked first and the graph
    scorer ranks answers by the ranker's shares; off, by the path predictor's order and scores."""
    from rra.pipeline.plans import PlanSettings

    ex = QAExample("in which cities are the books by [Marit Lindgrave] set", [WRITER], [])
    cities = {c for b in BOOKS for c in KG.neighbors(b, "set_in")}
    on = RRAPipeline(KG, PathRetrieval(ReadsWholePaths()), TemplateRewriter(), GraphScorer()).answer(ex)
    assert on.pred_path == ["^written_by", "set_in"] and on.answers[0] in cities
    assert on.paths[0]["score"] > 0.5 > on.paths[1]["score"] and abs(sum(p["score"] for p in on.paths) - 1.0) < 1e-6
    off = RRAPipeline(KG, PathRetrieval(ReadsWholePaths()), TemplateRewriter(), GraphScorer(),
                      plans=PlanSettings(rank_chains=False)).answer(ex)
    assert off.pred_path == ["^written_by"] and set(off.answers) == set(BOOKS) and off.paths[0]["score"] == 0.9


def test_a_chain_from_another_anchor_walks_from_that_anchor(rra):
    """The anchors' order is the chosen plan's, not the linker's: the books set in Mireval are
    asked with the writer linked first, and answered from the city."""
    pred = rra.answer(QAExample("name the books set in [Mireval], [Marit Lindgrave]", [WRITER, "city/mireval"], []))
    assert pred.extra["plan_kind"] == "chain" and pred.topic_entities[0] == "city/mireval"
    assert set(pred.answers) == set(KG.neighbors("city/mireval", "^set_in"))


def test_no_plan_with_an_answer_says_so(rra):
    pred = rra.answer(QAExample("which books by [Marit Lindgrave] came out after 2990", [WRITER], []))
    conditions = [c for p in pred.extra["plans"] for c in (p.get("constraints") or [p.get("constraint")]) if c]
    assert conditions and all(c["value"] == 2990 for c in conditions)
    # `> 2990` keeps no book: not a candidate; `< 2990` keeps all of them and is one (the question wrote 2990)
    assert {c["op"] for c in conditions} == {"<", "<="}
    empty = rra.answer(QAExample("what books did [Mireval] write", ["city/mireval"], []))
    assert empty.status == "no_path" and empty.extra["plan_candidates"] == 0 and empty.answers == []


def test_infer_prints_the_plan(rra):
    from rra.eval.run import format_prediction

    pred = rra.answer(QAExample("which books set in [Mireval] were written by [Marit Lindgrave]", [], []))
    text = format_prediction(pred)
    assert "plan:     conjunction" in text and "^set_in" in text and "^written_by" in text


def test_a_plan_offers_its_answers_not_its_anchors_or_values_as_choices(rra):
    after = rra.answer(QAExample("which books by [Marit Lindgrave] came out after 1980", [WRITER], []))
    assert WRITER in {t.tail for t in after.triples} and any(t.tail.startswith("year/") for t in after.triples)
    assert set(after.answers) == AFTER_1980  # the evidence shows anchors and values; the answers are the plan's


def test_candidates_come_from_the_plan(rra):
    from rra.pipeline.plans import PlanChoice, ScoredPlan, retrieve_plan
    from rra.plans.plan import Constraint, QueryPlan

    plan = QueryPlan([WRITER], [["^written_by"]], Constraint("published_in", ">", 1980))
    r = retrieve_plan(rra.kg, PlanChoice([WRITER], [ScoredPlan(plan, 1.0)], {}))
    assert set(candidate_entities(r, {WRITER}, "knowledge")) == AFTER_1980


class ReadsKinds(Scripted):
    """A ranker that prefers a plan said to give a city (and records what it read)."""

    def __init__(self, reads_kinds: bool):
        super().__init__()
        self.hparams = {"plan_reads_kinds": reads_kinds} if reads_kinds else {}
        self.read: list[str] = []

    def predict(self, questions, topk=3, try_second_hop=False, **graph):
        return [[PathPrediction(["headquarters", "^locatedIn"], 0.6, 2, 1.0), PathPrediction(["headquarters"], 0.4, 1, 1.0)]
                for _ in questions]

    def rank_plans(self, questions, plans, parts=None, kinds=None):
        self.read += [t for texts in plans for t in texts]
        return [[4.0 * ("giving city" in t) + 2.0 * (kind_of_plan(t) == "chain") for t in texts] for texts in plans]


def test_a_checkpoint_trained_on_result_kinds_reads_them_and_an_older_one_does_not():

    kg = NetworkXGraph([Triple("Acme", "headquarters", "Oslo"), Triple("Uni1", "locatedIn", "Oslo"),
                        Triple("Uni2", "locatedIn", "Oslo"), Triple("Oslo", "rdf:type", "City"),
                        Triple("Uni1", "rdf:type", "University"), Triple("Uni2", "rdf:type", "University")],
                       labels={"Acme": "Acme", "Oslo": "Oslo", "City": "city"})
    ex = QAExample("in which city is [Acme] based", ["Acme"], ["Oslo"])
    new, old = ReadsKinds(True), ReadsKinds(False)
    kinded = RRAPipeline(kg, PathRetrieval(new), TemplateRewriter(), GraphScorer()).answer(ex)
    assert kinded.pred_path == ["headquarters"] and kinded.answers == ["Oslo"]
    assert kinded.extra["plans"][0]["kind"] == "city"  # the record shows what the ranker read
    assert "[E] headquarters giving city" in new.read and "[E] headquarters then located in (reverse) giving university" in new.read
    plain = RRAPipeline(kg, PathRetrieval(old), TemplateRewriter(), GraphScorer()).answer(ex)
    assert old.read and not any("giving" in t for t in old.read)
    assert plain.pred_path == ["headquarters", "^locatedIn"]  # without kinds, the two chains read alike here

# --- a linked name that several entities share ("A. Wang"): the plans read the question with each
# of them, and the graph decides where it can (rra.pipeline.plans.readings_of, _pick)
# two people named "A. Wang"; the first by id (the one linking puts first) wrote nothing set in Mireval
FACTS = [("book/harbour", "written_by", "person/wang_1"), ("book/harbour", "set_in", "city/ostrava"),
         ("book/lanterns", "written_by", "person/wang_2"), ("book/lanterns", "set_in", "city/mireval"),
         ("book/orchard", "written_by", "person/lind"), ("book/orchard", "set_in", "city/mireval")]
LABELS = {"person/wang_1": "A. Wang", "person/wang_2": "A. Wang", "person/lind": "Marit Lind",
          "city/mireval": "Mireval", "city/ostrava": "Ostrava", "book/harbour": "Harbour Lights",
          "book/lanterns": "Paper Lanterns", "book/orchard": "The Orchard"}


def shared_names_pipeline(kg=None) -> RRAPipeline:
    kg = kg or NetworkXGraph([Triple(*t) for t in FACTS], labels=LABELS)
    return RRAPipeline(kg, PathRetrieval(Scripted()), TemplateRewriter(), GraphScorer(), use_gold_topic=False)


def test_readings_put_each_other_entity_of_a_shared_name_in_its_place():
    assert readings_of(["w1", "c"], {}, 4) == [["w1", "c"]]
    assert readings_of(["w1", "c"], {0: ["w2", "w3"]}, 4) == [["w1", "c"], ["w2", "c"], ["w3", "c"]]
    both = readings_of(["w1", "c1"], {0: ["w2"], 1: ["c2"]}, 8)
    assert both == [["w1", "c1"], ["w2", "c1"], ["w1", "c2"], ["w2", "c2"]]
    assert readings_of(["w1", "c1"], {0: ["w2"], 1: ["c2"]}, 3) == both[:3]  # at most `max_readings`
    assert readings_of(["w1", "c"], {0: ["c"]}, 4) == [["w1", "c"]]  # never one entity twice


def test_the_entity_of_a_shared_name_whose_plan_has_an_answer_is_taken():
    pred = shared_names_pipeline().answer(QAExample("which books set in Mireval were written by A. Wang", [], ["book/lanterns"]))
    assert pred.extra["linking"]["ambiguous"] == {"A. Wang": ["person/wang_1", "person/wang_2"]}
    assert pred.extra["plan_kind"] == "conjunction" and pred.answers == ["book/lanterns"]
    assert "person/wang_2" in pred.topic_entities and "person/wang_1" not in pred.topic_entities
    assert pred.extra["linking"]["chosen_by"] == "plan"


def test_a_chain_from_a_shared_name_stays_with_the_linkers_first():
    """Both people wrote books: the question reads the same for each, and the guess is not changed."""
    pred = shared_names_pipeline().answer(QAExample("what books were written by A. Wang", [], ["book/harbour"]))
    assert pred.extra["plan_kind"] == "chain" and pred.topic_entities[0] == "person/wang_1"
    assert pred.answers == ["book/harbour"] and pred.extra["linking"]["chosen_by"] != "plan"


def test_a_yes_no_on_a_shared_name_asks_whether_any_of_them_is_one():
    pred = shared_names_pipeline().answer(QAExample("did A. Wang write Paper Lanterns", [], ["yes"]))
    assert pred.extra["plan_kind"] == "yes_no" and pred.answers == ["yes"]
    assert "person/wang_2" in pred.topic_entities
    none = shared_names_pipeline().answer(QAExample("did A. Wang write The Orchard", [], ["no"]))
    assert none.answers == ["no"]


def test_a_name_of_one_entity_reads_once(monkeypatch):

    calls = []
    real = plans.enumerate_plans
    monkeypatch.setattr(plans, "enumerate_plans", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    shared_names_pipeline().answer(QAExample("which books set in Mireval were written by Marit Lind", [], ["book/orchard"]))
    assert len(calls) == 1


TYPE = "rdf:type"
SPORTS_TRIPLES = [
    Triple("p", "team", "t"), Triple("t", "ground", "g"), Triple("g", "location", "c"), Triple("t", "league", "l"),
    Triple("p", TYPE, "Person"), Triple("t", TYPE, "SportsTeam"), Triple("g", TYPE, "Stadium"),
    Triple("c", TYPE, "City"), Triple("l", TYPE, "League")]
SPORTS_LABELS = {"p": "Yuki García", "t": "Dún Carrig SC", "g": "Park Marchetti", "c": "Tarnow", "City": "city",
                 "Stadium": "stadium", "SportsTeam": "sports team"}


class StopsAStepShort:
    """A path predictor whose end head stops at the ground (`team, ground` at 0.97); one more step
    from there scores `location` 0.5, the way back `^ground` 0.45 (`continuations`); a ranker with
    no preference; kinds read by a table of cosines."""

    ranker = object()
    hparams = {"plan_reads_kinds": True, "max_hops": 3}
    COS = {("town", "city"): 0.8, ("town", "stadium"): 0.5, ("town", "sports team"): 0.3, ("town", "league"): 0.2}

    def __init__(self):
        self.asked = []  # the prefixes continuations was asked about

    def predict(self, questions, topk=3, try_second_hop=False, **graph):
        return [[PathPrediction(["team", "ground"], 0.97, 2, 1.0), PathPrediction(["team"], 0.02, 1, 1.0),
                 PathPrediction(["team", "league"], 0.01, 2, 1.0)] for _ in questions]

    def rank_plans(self, questions, plans, parts=None, kinds=None):
        return [[0.0] * len(texts) for texts in plans]

    def kind_cosines(self, asked, kinds, reader="trained"):
        return [[self.COS.get((a, k)) if a and k else None for k in row] for a, row in zip(asked, kinds)]

    def continuations(self, questions, prefixes, kg, topics, relation_text=None):
        self.asked += [tuple(p) for p in prefixes]
        lp = {"location": math.log(0.5), "^ground": math.log(0.45), "^location": math.log(0.05)}
        return [{r: (v, math.log(0.9), math.log(0.1)) for r, v in lp.items()} for _ in prefixes]


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_a_question_asking_for_a_kind_its_best_path_stops_short_of_walks_on(backend):
    """`walk_on`: "... is in what town" where the search stopped at the stadium: the best path's
    continuation that gives what is asked (a city; not the step straight back to the team) joins the
    paths, scored as if the end head had gone on, and the ranker's kind reading chooses it. A question
    that names no kind, or `walk_on=0`, is answered as before. The same on an RDF store."""
    from rra.graph import OxigraphGraph

    kg = (NetworkXGraph(SPORTS_TRIPLES, labels=SPORTS_LABELS) if backend == "networkx"
          else OxigraphGraph.from_triples(SPORTS_TRIPLES, SPORTS_LABELS))
    model = StopsAStepShort()
    rra = RRAPipeline(kg, PathRetrieval(model), TemplateRewriter(), GraphScorer())
    town = rra.answer(QAExample("[Yuki García]'s team's home ground is in what town", ["p"], ["c"]))
    assert town.answers == ["c"] and town.paths[0]["path"] == ["team", "ground", "location"]
    assert model.asked == [("team", "ground")]
    assert town.paths[0]["score"] > 0.5  # the ranker's share, the chain walked from the anchor's paths

    model.asked.clear()
    where = rra.answer(QAExample("where is the home ground of [Yuki García]'s team", ["p"], ["g"]))
    assert where.answers == ["g"] and model.asked == []  # "where" names no kind: nothing asked

    rra.plan_search.settings = plans.PlanSettings(walk_on=0)
    assert rra.answer(QAExample("[Yuki García]'s team's home ground is in what town", ["p"], ["c"])).answers == ["g"]


def test_plan_settings_refuse_an_unknown_kind_reader_or_a_negative_walk_on():
    with pytest.raises(ValueError, match="kind_reader='finetuned'"):
        plans.PlanSettings(kind_reader="finetuned")
    with pytest.raises(ValueError, match="walk_on=-1"):
        plans.PlanSettings(walk_on=-1)


# the same graph as a relational export writes it: no classes, each id naming its kind in its path
KIND_IDS = {"p": "person/p", "t": "sports_team/t", "g": "stadium/g", "c": "city/c", "l": "league/l"}
SPORTS_BY_ID = [Triple(KIND_IDS[t.head], t.relation, KIND_IDS[t.tail]) for t in SPORTS_TRIPLES if t.relation != TYPE]


@pytest.mark.parametrize("backend", ["networkx", "oxigraph"])
def test_where_the_graph_gives_no_classes_the_kind_an_id_names_is_read(backend):
    """`kinds_from_ids`: with no rdf:type in the graph, what a plan gives is read from its results'
    ids ("city/c" -> city), so "... is in what town" walks on to the city as where the graph types
    it; with the setting off no kind is known and the stadium is answered."""
    from rra.graph import OxigraphGraph

    labels = {KIND_IDS.get(k, k): v for k, v in SPORTS_LABELS.items()}
    kg = (NetworkXGraph(SPORTS_BY_ID, labels=labels) if backend == "networkx"
          else OxigraphGraph.from_triples(SPORTS_BY_ID, labels))
    rra = RRAPipeline(kg, PathRetrieval(StopsAStepShort()), TemplateRewriter(), GraphScorer())
    question = QAExample("[Yuki García]'s team's home ground is in what town", ["person/p"], ["city/c"])
    town = rra.answer(question)
    assert town.answers == ["city/c"] and town.paths[0]["path"] == ["team", "ground", "location"]

    rra.plan_search.settings = plans.PlanSettings(kinds_from_ids=False)
    assert rra.answer(question).answers == ["stadium/g"]
