"""Training items written from walks over the graph (rra.data.walk_questions, datamodule.walk_questions)."""
import random

import pytest

from rra.data.datamodule import RetrieverDataModule
from rra.data.dataset import Dataset
from rra.data.walk_questions import phrase_path, walk_questions
from rra.graph import NetworkXGraph, Triple
from toy_data import toy_kg, toy_questions


def test_a_walk_is_asked_by_its_relations_names_inside_out():
    rng = random.Random(0)
    texts = {phrase_path(["directed_by", "^directed_by", "release_year"], lambda r: r.strip("^").replace("_", " "),
                         "[E]", rng) for _ in range(20)}
    # whatever the lead-in, the innermost relation wraps the topic and the last one wraps the rest
    assert all("the release year of what has the directed by of [E] as directed by" in t for t in texts)
    possessive = {phrase_path(["directed_by", "release_year"], lambda r: r.replace("_", " "), "[E]", rng)
                  for _ in range(40)}
    assert any("[E]'s directed by's release year" in t for t in possessive)
    assert any("the release year of the directed by of [E]" in t for t in possessive)


def test_walks_follow_the_graph_and_every_length_is_drawn():
    kg = toy_kg()
    rng = random.Random(0)
    anchors = [f"Movie {m}" for m in range(12)]
    walked = walk_questions(kg, anchors, lambda r: r, 60, 3, rng)
    assert len(walked) == 60
    assert {len(w["path"]) for w in walked} == {1, 2, 3}
    for w in walked:
        assert w["anchor"] in anchors and "[E]" in w["question"]
        ends = {p.end for p in kg.follow_path(w["anchor"], w["path"])}
        assert ends - {w["anchor"]}, w  # the walk exists in the graph and leads somewhere else
    assert walk_questions(kg, anchors, lambda r: r, 60, 3, random.Random(0)) == walked  # seeded


def test_walks_leave_out_class_membership():
    kg = NetworkXGraph([Triple("a", "rdf:type", "Person"), Triple("b", "rdf:type", "Person"),
                        Triple("a", "knows", "b"), Triple("b", "lives_in", "c")])
    walked = walk_questions(kg, ["a"], lambda r: r, 30, 2, random.Random(1))
    assert walked and all("rdf:type" not in r for w in walked for r in w["path"])


def test_walk_items_add_to_the_training_items_and_leave_the_datasets_items_as_they_were():
    def items(walks):
        dm = RetrieverDataModule(Dataset(train=toy_questions(40)), toy_kg(), val_fraction=0.25, train_paths="given",
                                 plans=False, walk_questions=walks)
        dm.setup()
        return dm

    without, with_walks = items(0.0), items(1.0)
    real = without.splits["train"]
    assert with_walks.splits["train"][:len(real)] == real
    walked = with_walks.splits["train"][len(real):]
    assert len(walked) == len(real) == with_walks.summary["walk_items"]
    for x in walked:  # items like the dataset's: each step's frontier relations, the walked one among them
        assert len(x["candidates"]) == len(x["path"])
        assert all(r in step for r, step in zip(x["path"], x["candidates"]))
        assert set(x["path"]) <= set(x["texts"])
    assert with_walks.splits["val"] == without.splits["val"]  # validation is the dataset's alone


def test_walk_questions_must_not_be_negative_and_need_the_relation_scorer():
    with pytest.raises(ValueError, match="walk_questions must be 0 or more"):
        RetrieverDataModule(Dataset(train=toy_questions(4)), toy_kg(), walk_questions=-1)
    with pytest.raises(ValueError, match="relation scorer"):
        RetrieverDataModule(Dataset(train=toy_questions(4)), toy_kg(), walk_questions=0.5, path_head="classifier")
