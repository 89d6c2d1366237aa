"""Every question's work is bounded on every backend (issue 37 item 5): a walk through a hub stops
growing at its instance limit, answers and evidence are capped, a question past its time budget ends
`over_budget` with what it had, each bound hit is named in the prediction, and the run goes on."""
import json
import time

import pytest

from rra.graph.base import OverBudgetError, check_time, question_budget
from rra.graph.dict_graph import DictGraph
from rra.graph.networkx_graph import NetworkXGraph
from rra.records import QAExample, Status, Triple



def hub_triples(people: int) -> list[tuple[str, str, str]]:
    t = [(f"p{i}", "nationality", "usa") for i in range(people)]
    t += [(f"p{i}", "born_in", f"city{i % 500}") for i in range(people)]
    t += [(f"city{j}", "contained_by", f"state{j % 50}") for j in range(500)]
    return t


@pytest.mark.parametrize("backend", ["dict", "networkx"])
def test_a_walk_through_a_hub_stops_growing_at_its_limit(backend):
    triples = hub_triples(100_000)
    kg = DictGraph(triples) if backend == "dict" else NetworkXGraph([Triple(*t) for t in triples])
    path = ["^nationality", "born_in", "contained_by"]
    with question_budget() as budget:
        walks = kg.follow_path("usa", path, limit=1000)
    assert len(walks) == 1000 and all(len(w.entities) == 4 for w in walks)
    # the first 1000 in walk order, as the cut after a full walk gave them
    assert walks == kg.follow_path("usa", path)[:1000]
    assert budget.hits == ["path instances capped at 1000 (^nationality / born_in / contained_by from usa)"]
    with question_budget() as budget:  # under the limit: nothing to say
        assert len(kg.follow_path("city3", ["contained_by"], limit=1000)) == 1
    assert budget.hits == []


def test_a_question_past_its_time_budget_raises_in_the_graph_layer():
    with question_budget(0.01) as budget:
        time.sleep(0.02)
        with pytest.raises(OverBudgetError, match="time budget of 0.01 s"):
            check_time()
    assert budget.expired
    check_time()  # outside a budget nothing is checked


@pytest.fixture(scope="module")
def hub_run(compose_cfg, tmp_path_factory):
    """A per-question benchmark file with a hub (20,000 people of one country) and an ordinary
    question, and a retriever trained on small countries; hub_run[1](name, overrides) composes
    conf/NAME.yaml around them."""
    from bench.kgs.webqsp_rows import write_jsonl
    from rra.training.run import train

    TRAIN = ["model=retriever_tiny", "trainer.max_epochs=3", "callbacks.early_stopping=null",
             "callbacks.progress_bar=null", "test=false"]

    root = tmp_path_factory.mktemp("hub")

    def rows(country: str, people: int, tag: str) -> list[dict]:
        g = [[f"{country} person {i}", "people.person.nationality", country] for i in range(people)]
        g += [[f"{country} person {i}", "people.person.place_of_birth", f"{country} city {i % 50}"] for i in range(people)]
        return [{"id": f"{tag}-who", "question": f"who is from {country}", "q_entity": [country],
                 "a_entity": [f"{country} person {i}" for i in range(min(people, 3))], "graph": g},
                {"id": f"{tag}-born", "question": f"where were people from {country} born", "q_entity": [country],
                 "a_entity": [f"{country} city {i}" for i in range(min(people, 3))], "graph": g}]

    train_rows = [r for k in range(8) for r in rows(f"Country{k}", 3, f"t{k}")]
    write_jsonl(root / "train.jsonl", train_rows)
    write_jsonl(root / "dev.jsonl", train_rows[:4])
    write_jsonl(root / "test.jsonl", rows("Hubland", 20_000, "hub") + rows("Smallia", 3, "small"))
    subgraphs = lambda name, overrides: compose_cfg(name, ["data=subgraphs", *overrides], root)  # noqa: E731
    train(subgraphs("train", [*TRAIN, "trainer.max_epochs=25", f"data.train_file={root}/train.jsonl",
                               f"data.val_file={root}/dev.jsonl", "name=hub"]))
    return root, subgraphs


def test_a_hub_question_is_bounded_and_says_so_and_the_run_goes_on(hub_run, tmp_path):
    from rra.eval.run import run_split

    root, subgraphs = hub_run
    common = [f"data.test_file={root}/test.jsonl", f"retriever.ckpt={root}/checkpoints/hub/best.ckpt", "llm=none",
              "retriever.max_instances=500", "answer.max_answers=20"]
    metrics = run_split(subgraphs("infer", common), tmp_path / "a")
    preds = {d["qid"]: d for d in map(json.loads, (tmp_path / "a" / "predictions.jsonl").read_text().splitlines())}
    assert metrics["n"] == 4 and set(metrics["status"]) == {"ok"}
    hub = preds["hub-who"]
    assert len(hub["answers"]) == 20 and len(hub["triples"]) <= 50
    assert any(h.startswith("path instances capped at 500") for h in hub["extra"]["bounds"])
    assert "answers capped at 20 of 500 (answer.max_answers)" in hub["extra"]["bounds"]
    assert "bounds" not in preds["small-who"]["extra"]  # an ordinary question hit nothing
    assert metrics["bounds_hit"]["answers capped at 20"] >= 1

    # a time budget too small for anything: every question ends over_budget, none is lost
    metrics = run_split(subgraphs("infer", common + ["bounds.max_seconds=1e-9"]), tmp_path / "b")
    preds = [json.loads(x) for x in (tmp_path / "b" / "predictions.jsonl").read_text().splitlines()]
    assert metrics["n"] == 4 and metrics["status"] == {"over_budget": 4}
    assert all("time budget of 1e-09 s used up" in p["extra"]["bounds"] for p in preds)


@pytest.mark.parametrize("concurrency", [1, 2])
def test_the_budget_in_a_batch_belongs_to_the_question_that_named_the_hub(concurrency):
    from rra.eval.run import answer_all
    from rra.methods import QAMethod
    from rra.records import Prediction

    kg = DictGraph(hub_triples(3000))

    class Walker(QAMethod):
        name = "walker"

        def answer(self, ex):
            walks = kg.follow_path(ex.topic_entities[0], ["^nationality"], limit=100)
            return Prediction(ex.qid, ex.question, [w.end for w in walks], topic_entities=list(ex.topic_entities))

    examples = [QAExample("who is from [usa]", ["usa"], [], qid="a"),
                QAExample("what is in [state3]", ["city3"], [], qid="b")]
    preds = [p for _, p in answer_all(Walker(), examples, batch_size=2, concurrency=concurrency)]
    assert preds[0].extra["bounds"] == ["path instances capped at 100 (^nationality from usa)"]
    assert "bounds" not in preds[1].extra and preds[0].status == Status.OK
