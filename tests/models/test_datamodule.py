import pytest

from rra.data.datamodule import RetrieverDataModule, relation_vocabulary
from rra.data.records import QAExample
from toy_data import toy_kg, toy_questions


def test_vocabulary_has_both_directions():
    rels = relation_vocabulary(toy_kg())
    assert rels[:4] == ["directed_by", "has_genre", "release_year", "starred_actors"]
    assert rels[4:] == ["^" + r for r in rels[:4]]


def test_validation_hold_out_is_fixed_by_seed():
    def split(seed):
        dm = RetrieverDataModule(toy_kg(), train=toy_questions(60), val_fraction=0.25, dedupe=False, seed=seed)
        dm.setup()
        return [x["question"] for x in dm.splits["val"]], [x["question"] for x in dm.splits["train"]]

    val, train = split(0)
    assert len(val) == 15 and len(train) == 45
    assert split(0) == (val, train)
    assert split(1)[0] != val


def test_dedupe_keeps_the_majority_path_per_masked_question():
    qs = [QAExample(f"who wrote [{m}]", [m], [], ["directed_by" if m == "Movie 0" else "release_year"])
          for m in ("Movie 0", "Movie 1", "Movie 2")]
    dm = RetrieverDataModule(toy_kg(), train=qs, val_fraction=0.0)
    dm.setup()
    assert dm.splits["train"] == [{"question": "who wrote [E]", "path": ["release_year"]}]


def test_missing_paths_need_supervision_and_labeller_is_used():
    qs = toy_questions(4)
    qs[2].relation_path = None
    with pytest.raises(ValueError, match="1 of 4 examples have no relation_path"):
        RetrieverDataModule(toy_kg(), train=qs, val_fraction=0.0).setup()

    def label(kg, examples, max_hops):
        for e in examples:
            e.relation_path = ["directed_by"] if kg.has_entity(e.topic_entities[0]) else []

    dm = RetrieverDataModule(toy_kg(), train=qs, val_fraction=0.0, label_paths=label, dedupe=False)
    dm.setup()
    assert dm.splits["train"][2]["path"] == ["directed_by"]


def test_relation_outside_the_kg_is_an_error():
    qs = toy_questions(3)
    qs[1].relation_path = ["written_by"]
    with pytest.raises(ValueError, match="written_by"):
        RetrieverDataModule(toy_kg(), train=qs, val_fraction=0.0).setup()
