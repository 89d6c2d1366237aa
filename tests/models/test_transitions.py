"""What may follow a relation (rra.models.frontier.Transitions): a graph keyed by names merges an
actor with a film of the same title, and the search must not walk that stray edge."""
from __future__ import annotations

import pytest

from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.models.frontier import Transitions
from rra.models.retriever import Retriever


def films(n_actors: int) -> NetworkXGraph:
    """`n_actors` films with an actor each; the actor "Gia" is also the title of a film starring Ann."""
    triples = [Triple(f"Film {i:03d}", "starred_actors", f"Actor {i:03d}") for i in range(n_actors - 1)]
    triples += [Triple(f"Film {i:03d}", "directed_by", f"Director {i % 7}") for i in range(n_actors - 1)]
    triples += [Triple("Film X", "starred_actors", "Gia"), Triple("Gia", "starred_actors", "Ann"),
                Triple("Gia", "directed_by", "Director 1")]
    return NetworkXGraph(triples)


def test_a_composition_under_the_floor_of_many_facts_is_rare():
    kg = films(300)  # 1 of the 300 actors (far ends of starred_actors) holds starred_actors forward
    t = Transitions(kg, floor=0.01)
    assert t.rare("starred_actors", ["^starred_actors", "starred_actors", "directed_by"]) == {"starred_actors",
                                                                                            "directed_by"}
    assert t.rare("^starred_actors", ["starred_actors", "directed_by"]) == set()  # every film has both
    assert Transitions(kg, floor=0.0).rare("starred_actors", ["starred_actors"]) == set()  # off
    assert t.keep("starred_actors", ["^starred_actors", "starred_actors"]) == ["^starred_actors"]
    assert t.keep("starred_actors", ["starred_actors", "directed_by"]) == ["starred_actors", "directed_by"]  # all rare


def test_a_class_reaches_a_few_of_every_typed_entity_but_its_instances_are_typed():
    """From a class, `^type` reaches every typed entity; under 1% of them have a capital, but every
    entity with a capital is typed: a composition left out must barely touch in both directions."""
    triples = [Triple(f"Person {i:03d}", "type", "Person") for i in range(300)]
    triples += [Triple(f"Country {i}", "type", "Country") for i in range(2)]
    triples += [Triple(f"Country {i}", "capital", f"City {i}") for i in range(2)]
    kg = NetworkXGraph(triples)
    t = Transitions(kg, floor=0.01)
    assert kg.relation_ends(["^type"], 256)["^type"][-1].startswith("Person")  # the sample: mostly persons
    assert t.rare("^type", ["capital", "type"]) == set()


def test_a_relation_with_few_facts_is_read_whole_so_a_walked_composition_stays():
    kg = films(40)  # 1 of 40: over the floor, and the sample holds every far end
    assert Transitions(kg, floor=0.01).rare("starred_actors", ["^starred_actors", "starred_actors"]) == set()


def test_no_far_ends_from_the_backend_leaves_nothing_out():
    class NoEnds(NetworkXGraph):
        def relation_ends(self, relations, limit=16):
            return {r: [] for r in relations}

    kg = films(300)
    kg.__class__ = NoEnds
    assert Transitions(kg, floor=0.01).rare("starred_actors", ["starred_actors"]) == set()


@pytest.mark.parametrize("floor", [0.01, 0.0])
def test_the_search_does_not_offer_the_stray_edge(tiny_kwargs, floor):
    kg = films(300)
    model = Retriever(relations=["starred_actors", "^starred_actors", "directed_by", "^directed_by"], max_hops=3,
                      mask_token="[E]", transition_floor=floor, **tiny_kwargs)
    offered: dict[tuple, list[str]] = {}
    vectors = model._relation_vectors

    def record(relations, text_of, batch_size=256, after=()):
        offered.setdefault(len(offered), list(relations))
        return vectors(relations, text_of, batch_size, after)

    model._relation_vectors = record
    model.predict(["which films share actors with [Film X]"], topk=3, kg=kg, topics=["Film X"], hops=2,
                  use_cache=False)
    second = [c for c in offered.values() if "^starred_actors" in c]  # after starred_actors: back to films
    assert second
    assert all(("starred_actors" in c) == (floor == 0) for c in second)


def test_on_by_default_and_for_older_checkpoints(tiny_kwargs):
    model = Retriever(relations=["r"], max_hops=2, mask_token="[E]", **tiny_kwargs)
    assert model._transitions_in(films(10)).floor == 0.01
    hparams = dict(model.hparams)
    hparams.pop("transition_floor")
    assert Retriever(**hparams)._transitions_in(films(10)).floor == 0.01
    assert Retriever(**hparams, transition_floor=0.0)._transitions_in(films(10)) is None


def test_inference_sets_the_floor_over_the_checkpoints(tiny_kwargs, tmp_path):
    import lightning as L

    from rra.pipeline.retrieve import PathRetrieval

    model = Retriever(relations=["r"], max_hops=2, mask_token="[E]", **tiny_kwargs)
    trainer = L.Trainer(max_steps=0, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu")
    trainer.strategy.connect(model)
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    kept = PathRetrieval.from_checkpoint(str(tmp_path / "m.ckpt")).model
    assert kept._transitions_in(films(10)).floor == 0.01
    off = PathRetrieval.from_checkpoint(str(tmp_path / "m.ckpt"), transition_floor=0).model
    assert off.hparams.transition_floor == 0.0 and off._transitions_in(films(10)) is None


def test_the_config_sets_the_floor_and_inference_overrides_it(cfg_train, cfg_infer):
    assert cfg_train().model.transition_floor == 0.01
    assert cfg_train(["experiment=metaqa"]).model.transition_floor == 0.01  # MetaQA merges nodes by name
    assert cfg_infer(["retriever.transition_floor=0"]).retriever.transition_floor == 0
