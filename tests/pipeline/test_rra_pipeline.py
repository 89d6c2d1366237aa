"""End-to-end RRA on the tiny movie KG with a retriever trained in-test (see conftest)."""
import pytest

from rra.pipeline.answer import ChoiceAnswerer, GraphScorer, LLMAnswerer
from rra.graph.base import KnowledgeGraph
from rra.llm import ScriptedLLM
from rra.methods import QAMethod
from rra.pipeline.method import RRAPipeline
from rra.pipeline.retrieve import PathRetrieval
from rra.models.path_search import PathPrediction
from rra.pipeline.rewrite import LLMRewriter, Rewriter, TemplateRewriter


@pytest.fixture(scope="module")
def retrieval(retriever_ckpt):
    return PathRetrieval.from_checkpoint(retriever_ckpt, topk=2, candidates=4, max_triples=20)


def make(kg, retrieval, answerer=None, rewriter=None):
    return RRAPipeline(kg, retrieval, rewriter or TemplateRewriter(), answerer or GraphScorer())


def test_graph_scorer_pipeline_answers_and_keeps_evidence(movie_kg, retrieval, example):
    pipe = make(movie_kg, retrieval)
    assert isinstance(pipe, QAMethod)
    p = pipe.answer(example("what movies did [Ridley Scott] direct", ["Alien", "Gladiator", "Blade Runner"],
                            path=["^directed_by"]))
    assert p.status == "ok", p.errors
    assert p.answers[0] in {"Alien", "Gladiator", "Blade Runner"}
    assert p.paths[0]["path"] == ["^directed_by"] and 0 < p.paths[0]["score"] <= 1
    assert p.pred_path == ["^directed_by"] and p.pred_hop == 1
    assert "was directed by Ridley Scott" in p.knowledge
    assert all(t.relation for t in p.triples) and len(p.extra["evidence_paths"]) == len(p.triples)
    assert p.llm_calls == 0 and p.latency_s > 0


def test_unmarked_question_is_linked_lexically(movie_kg, retrieval, example):
    p = make(movie_kg, retrieval).answer(example("who directed Gladiator?", ["Ridley Scott"]))
    assert p.topic_entities == ["Gladiator"] and p.extra["linking"]["source"] == "lexical"
    assert p.answers[0] == "Ridley Scott"


class ModelPathsOnly(PathRetrieval):
    """Paths as a classifier without graph pruning predicts them: the scorer only walks relations the
    graph has at the topic, so a path without instances comes from a model that never looked."""

    def predict(self, questions, kg=None, topics=None, **kw):
        return [[PathPrediction(["^directed_by"], 0.9, 1, 1.0)] for _ in questions]


def test_every_failure_is_a_status(movie_kg, retrieval, example):
    narrow = ModelPathsOnly(retrieval.model, topk=1, candidates=1, graph_pruning=False)
    pipe = make(movie_kg, narrow)
    out = pipe.answer_batch([
        example("who directed [Nobody Known]", ["x"], qid="a"),
        example("who is this about", ["x"], qid="b"),
        example("what movies did [Esperanto] direct", ["x"], qid="c"),  # no ^directed_by from a language
    ])
    assert [p.status for p in out] == ["unknown_entity", "no_topic_entity", "no_path"]
    assert all(p.errors and p.answers == [] for p in out)


def test_llm_answerer_counts_calls_and_survives_llm_down(movie_kg, retrieval, example):
    llm = ScriptedLLM(default="It was Michael Mann.")
    pipe = make(movie_kg, retrieval, LLMAnswerer(llm))
    p = pipe.answer(example("who directed [Heat]", ["Michael Mann"]))
    assert p.status == "ok" and p.answers == ["Michael Mann"] and p.reply == "It was Michael Mann."
    assert p.llm_calls == 1 and p.llm_prompt_tokens > 0 and p.llm_completion_tokens > 0
    down = ScriptedLLM(default=ScriptedLLM.timeout("30 s"))
    p = make(movie_kg, retrieval, LLMAnswerer(down)).answer(example("who directed [Heat]", ["Michael Mann"]))
    assert p.status == "llm_error" and "timeout" in p.errors[0]
    assert p.answers[0] == "Michael Mann"  # the graph scorer's answer stands in


def test_llm_rewriter_and_choice_answer_share_one_llm(movie_kg, retrieval, example):
    llm = ScriptedLLM({"Rewrite": "Heat was directed by Michael Mann."}, default="1")
    pipe = make(movie_kg, retrieval, ChoiceAnswerer(llm, mode="number"), LLMRewriter(llm))
    p = pipe.answer(example("who acted in [Heat]", ["Al Pacino", "Robert De Niro"]))
    assert p.knowledge == "Heat was directed by Michael Mann."
    assert p.llm_calls == 2 and p.status == "ok" and p.answers[0] in {"Al Pacino", "Robert De Niro"}


def test_batch_equals_one_by_one(movie_kg, retrieval, example):
    pipe = make(movie_kg, retrieval)
    exs = [example("who directed [Alien]", ["Ridley Scott"], qid="1"),
           example("when was [Witness] released", ["1985"], qid="2")]
    batch = pipe.answer_batch(exs)
    single = [pipe.answer(e) for e in exs]
    assert [p.answers for p in batch] == [p.answers for p in single]
    # padding in a batch changes the last float digits, not the paths
    assert [[d["path"] for d in p.paths] for p in batch] == [[d["path"] for d in p.paths] for p in single]
    assert batch[0].paths[0]["score"] == pytest.approx(single[0].paths[0]["score"], rel=1e-4)


def test_broken_model_costs_the_batch_a_status_not_a_crash(movie_kg, example):
    class Broken:
        def predict(self, *a, **k):
            raise RuntimeError("CUDA out of memory")

    p = make(movie_kg, PathRetrieval(Broken())).answer(example("who directed [Alien]", ["Ridley Scott"]))
    assert p.status == "no_path" and "out of memory" in p.errors[0]


def test_answers_of_a_batch_go_in_one_llm_call_and_usage_is_per_question(movie_kg, retrieval, example):
    class CountingLLM(ScriptedLLM):
        batches = 0

        def generate(self, prompts, **kw):
            CountingLLM.batches += 1
            return super().generate(prompts, **kw)

    llm = CountingLLM(default="Ridley Scott")
    pipe = make(movie_kg, retrieval, LLMAnswerer(llm))
    out = pipe.answer_batch([example("who directed [Alien]", ["Ridley Scott"], qid="1"),
                             example("who directed [Gladiator]", ["Ridley Scott"], qid="2"),
                             example("who directed [Nobody]", ["x"], qid="3")])
    assert CountingLLM.batches == 1
    assert [p.llm_calls for p in out] == [1, 1, 0]
    assert out[0].llm_prompt_tokens > 0 and out[0].status == "ok" and out[2].status == "unknown_entity"


class BatchRewriter(Rewriter):
    """A rewriter with its own rewrite_many (as TrainedRewriter has): records how it was called."""

    name = "batch"

    def __init__(self, fail: bool = False):
        self.calls, self.fail = [], fail

    def rewrite(self, question, triples):
        raise AssertionError("the pipeline must use rewrite_many when it exists")

    def rewrite_many(self, contexts):
        self.calls.append(len(contexts))
        if self.fail:
            raise RuntimeError("model exploded")
        return [f"{len(c.triples)} facts about {c.question}" for c in contexts]


def test_rewriter_with_rewrite_many_gets_the_whole_batch_once(movie_kg, retrieval, example):
    exs = [example("who directed [Alien]", ["Ridley Scott"], qid="1"),
           example("when was [Witness] released", ["1985"], qid="2"),
           example("who directed [Nobody Knows]", ["x"], qid="3")]  # unknown entity: not rewritten
    rw = BatchRewriter()
    preds = make(movie_kg, retrieval, rewriter=rw).answer_batch(exs)
    assert rw.calls == [2]
    assert preds[0].knowledge == f"{len(preds[0].triples)} facts about who directed [Alien]"
    assert preds[0].answers[0] == "Ridley Scott" and preds[2].status != "ok"


def test_failed_rewrite_many_falls_back_to_triples_and_records_the_error(movie_kg, retrieval, example):
    preds = make(movie_kg, retrieval, rewriter=BatchRewriter(fail=True)).answer_batch(
        [example("who directed [Alien]", ["Ridley Scott"], qid="1")])
    assert "(Alien, directed by, Ridley Scott)" in preds[0].knowledge
    assert any("rewriter batch: RuntimeError: model exploded" in e for e in preds[0].errors)
    assert preds[0].answers[0] == "Ridley Scott"


class PickyRewriter(Rewriter):
    """Writes only `rewrite`; fails on one question (the one-by-one default comes from Rewriter)."""

    name = "picky"

    def rewrite(self, question, triples):
        if "Gladiator" in question:
            raise ValueError("cannot phrase this one")
        return f"{len(triples)} facts"


def test_a_rewriter_failing_on_one_question_costs_only_that_question(movie_kg, retrieval, example):
    preds = make(movie_kg, retrieval, rewriter=PickyRewriter()).answer_batch(
        [example("who directed [Alien]", ["Ridley Scott"], qid="1"),
         example("who directed [Gladiator]", ["Ridley Scott"], qid="2")])
    assert preds[0].knowledge == f"{len(preds[0].triples)} facts" and preds[0].errors == []
    assert "(Gladiator, directed by, Ridley Scott)" in preds[1].knowledge
    assert any("rewriter picky: ValueError: cannot phrase this one" in e for e in preds[1].errors)


def test_a_step_outside_the_protocol_is_refused_with_its_name(movie_kg, retrieval):
    class OnlyRewrite:  # duck-typed: no rewrite_many, no name
        def rewrite(self, question, triples):
            return ""

    with pytest.raises(TypeError, match="OnlyRewrite is not a Rewriter"):
        make(movie_kg, retrieval, rewriter=OnlyRewrite())


def test_llm_rewriter_calls_are_counted_per_question(movie_kg, retrieval, example):
    llm = ScriptedLLM(default="Some facts.")
    preds = make(movie_kg, retrieval, LLMAnswerer(llm), LLMRewriter(llm, chunk_size=1)).answer_batch(
        [example("who directed [Alien]", ["Ridley Scott"], qid="1"),
         example("when was [Witness] released", ["1985"], qid="2")])
    # one rewrite call per triple (chunk_size 1) plus one answer call, for each question alone
    assert [p.llm_calls for p in preds] == [len(p.triples) + 1 for p in preds]
    assert sum(p.llm_calls for p in preds) == llm.usage.calls


class CountingGraph:
    """The movie KG behind a wrapper that counts path queries and fails for chosen entities,
    like a SPARQL store that errs on some requests."""

    def __init__(self, kg, failing=()):
        self.kg, self.failing, self.batch_calls, self.single_calls = kg, set(failing), 0, 0

    def __getattr__(self, name):
        return getattr(self.kg, name)

    def has_entity(self, entity):
        if entity in self.failing:
            from rra.graph.base import GraphError
            raise GraphError(f"HTTP 500 for {entity}")
        return self.kg.has_entity(entity)

    def labels(self, entities):
        entities = list(entities)
        if self.failing & set(entities):  # a batch naming a failing entity fails as a whole
            from rra.graph.base import GraphError
            raise GraphError(f"HTTP 500 for {sorted(self.failing & set(entities))[0]}")
        return self.kg.labels(entities)

    def follow_path(self, entity, path, limit=None):
        self.single_calls += 1
        return self.kg.follow_path(entity, path, limit)

    def follow_path_batch(self, entities, path, limit=None):
        self.batch_calls += 1
        return self.kg.follow_path_batch(entities, path, limit)

    # the protocol's one-by-one batch, so that every path query goes through the counter above
    follow_paths_batch = KnowledgeGraph.follow_paths_batch


def test_a_batch_costs_one_path_query_per_distinct_path(movie_kg, retrieval, example):
    kg = CountingGraph(movie_kg)
    exs = [example(f"who directed [{m}]", [], qid=str(i)) for i, m in enumerate(["Alien", "Heat", "Witness", "Gladiator"])]
    preds = make(kg, retrieval).answer_batch(exs)
    assert [p.status for p in preds] == ["ok"] * 4
    distinct = {tuple(d["path"]) for p in preds for d in p.paths}
    assert kg.batch_calls <= retrieval.topk * len(distinct) + 2 and kg.batch_calls < len(exs) * retrieval.topk
    one_by_one = [make(movie_kg, retrieval).answer(e) for e in exs]
    assert [p.answers for p in preds] == [p.answers for p in one_by_one]


def test_a_graph_failure_costs_one_question_not_the_run(movie_kg, retrieval, example):
    kg = CountingGraph(movie_kg, failing={"Heat"})
    exs = [example("who directed [Alien]", ["Ridley Scott"], qid="1"),
           example("who directed [Heat]", ["Michael Mann"], qid="2")]
    ok, failed = make(kg, retrieval).answer_batch(exs)
    assert ok.status == "ok" and ok.answers[0] == "Ridley Scott"
    assert failed.status == "graph_error" and "HTTP 500 for Heat" in failed.errors[0]
