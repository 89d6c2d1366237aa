"""The default path head: relations read by name over the graph's frontier (rra/models/relation_scorer.py),
the variable-length search, and the training items it needs (rra/data/datamodule.py)."""
import math

import lightning as L
import pytest
import torch

from rra.data.datamodule import RetrieverDataModule, collate
from rra.data.dataset import Dataset
from rra.graph.base import Triple
from rra.graph.networkx_graph import NetworkXGraph
from rra.models.relation_scorer import search_paths
from rra.models.retriever import Retriever
from rra.records import QAExample
from toy_data import toy_kg, toy_questions


def make(tiny_kwargs, **kw):
    dm = RetrieverDataModule(Dataset(train=lambda: toy_questions(24), test=lambda: toy_questions(8, seed=1)), toy_kg,
                             val_fraction=0.0, batch_size=8, dedupe=True, train_paths="given")
    return Retriever(**dm.model_kwargs(), **tiny_kwargs, **kw), dm


@pytest.fixture(scope="module")
def trained():
    """A tiny scorer overfitted on one question per toy template (1-3 hops), as train.py's batches are."""
    from rra.models.encoder import TINY_CONFIG

    L.seed_everything(0)
    model, dm = make(dict(encoder_config=dict(TINY_CONFIG), pretrained=False, dropout=0.0))
    dm.setup()
    batch = collate(dm.splits["train"])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(120):
        loss = model.model_step(batch)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, batch


def test_items_carry_each_steps_frontier_relations(trained):
    _, batch = trained
    kg = toy_kg()
    assert set(batch) >= {"candidates", "anchor", "texts"}
    for path, anchor, cands in zip(batch["path"], batch["anchor"], batch["candidates"]):
        assert len(cands) == len(path)
        frontier = {anchor}
        for rel, step in zip(path, cands):
            assert rel in step
            assert set(step) == {r for e in frontier for r in kg.relations(e)}  # the graph's, nothing else
            frontier = {n for e in frontier for n in kg.neighbors(e, rel)}
    assert batch["texts"]["^directed_by"] == "directed by (reverse)"


def test_overfits_paths_of_every_length_found_by_the_search(trained):
    model, batch = trained
    kg = toy_kg()
    preds = model.predict(batch["question"], topk=3, kg=kg, topics=batch["anchor"])
    assert [p[0].path for p in preds] == batch["path"]  # lengths 1, 2 and 3, no hop count given
    assert {len(p) for p in batch["path"]} == {1, 2, 3}
    for topic, paths in zip(batch["anchor"], preds):
        assert all(kg.follow_path(topic, p.path, limit=1) for p in paths)  # never a path the graph lacks
        assert [p.score for p in paths] == sorted((p.score for p in paths), reverse=True)
        assert all(p.hop == len(p.path) for p in paths)


def test_forced_length_and_topic_count_checked(trained):
    model, batch = trained
    kg = toy_kg()
    forced = model.predict(batch["question"][:3], topk=2, kg=kg, topics=batch["anchor"][:3], hops=2)
    assert all(len(p.path) == 2 for ps in forced for p in ps)
    with pytest.raises(ValueError, match="2 topics for 3 questions"):
        model.predict(batch["question"][:3], kg=kg, topics=batch["anchor"][:2])


def test_a_kg_with_relations_it_never_saw_is_answered_not_refused(trained):
    """Renamed relations: no RelationMismatchError, a warning that names what is missing, and the
    paths it returns are this KG's."""
    model, batch = trained
    renamed = NetworkXGraph([Triple(t.head, {"directed_by": "film_director"}.get(t.relation, t.relation), t.tail)
                             for t in toy_kg().all_triples()])
    warning = model.check_relations(renamed.relation_types())
    assert "directed_by" in warning and "reads this KG's own relations" in warning
    preds = model.predict(["who directed [Movie 3]"], topk=3, kg=renamed, topics=["Movie 3"])
    assert preds[0] and all(renamed.follow_path("Movie 3", p.path, limit=1) for p in preds[0])
    assert any("film_director" in p.path for p in preds[0])


def test_checkpoint_round_trip_and_version_one_is_a_classifier(trained, tmp_path):
    model, batch = trained
    kg = toy_kg()
    trainer = L.Trainer(max_steps=0, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu")
    trainer.strategy.connect(model)
    path = tmp_path / "scorer.ckpt"
    trainer.save_checkpoint(path)
    loaded = Retriever.load(path)
    assert loaded.scorer and loaded.hparams.path_head == "scorer"
    a = loaded.predict(batch["question"], topk=3, kg=kg, topics=batch["anchor"])
    b = model.predict(batch["question"], topk=3, kg=kg, topics=batch["anchor"])
    assert [[p.path for p in q] for q in a] == [[p.path for p in q] for q in b]
    # a checkpoint written before the scorer existed (version 1) names no head: it is a classifier
    old = torch.load(path, weights_only=False)
    del old["rra"]["path_head"], old["hyper_parameters"]["path_head"]
    assert Retriever(**{**old["hyper_parameters"], "path_head": "classifier",
                        "relations": old["rra"]["relations"]}).hparams.path_head == "classifier"


def _steps(table):
    """A step function from {prefix: {relation: (P(r), P(end after r))}}."""
    def step(items):
        out = []
        for _, prefix in items:
            out.append({r: (math.log(p), math.log(e), math.log(1 - e)) for r, (p, e) in table[prefix].items()})
        return out
    return step


def test_search_lets_lengths_compete_by_probability():
    table = {(): {"a": (0.6, 0.2), "b": (0.4, 0.9)},
             ("a",): {"c": (0.9, 0.99), "d": (0.1, 0.99)},
             ("b",): {"e": (1.0, 0.5)}}
    found = search_paths(1, beam=3, max_hops=3, step=_steps(table), min_ratio=0)[0]
    scores = {p: math.exp(s) for p, s in found}
    assert list(scores) == [("a", "c"), ("b",), ("a",)]  # 0.6*0.8*0.9*0.99 = 0.428 > 0.4*0.9 = 0.36 > 0.12
    assert scores[("a", "c")] == pytest.approx(0.6 * 0.8 * 0.9 * 0.99)
    assert scores[("b",)] == pytest.approx(0.36)
    fixed = search_paths(1, beam=2, max_hops=3, step=_steps(table), lengths=[2], min_ratio=0)[0]
    assert [p for p, _ in fixed] == [("a", "c"), ("b", "e")]  # a given length ignores the end head
    assert math.exp(fixed[0][1]) == pytest.approx(0.54)


def test_search_stops_encoding_prefixes_that_cannot_matter():
    table = {(): {"a": (0.999, 0.999), "b": (0.001, 0.5)}, ("a",): {"c": (1.0, 0.5)}, ("b",): {"e": (1.0, 0.5)}}
    asked = []
    step = _steps(table)
    found = search_paths(1, beam=1, max_hops=3, step=lambda items: (asked.extend(p for _, p in items), step(items))[1])
    assert found[0][0][0] == ("a",)
    assert asked == [()]  # ("a",) scores 0.999*0.001 < the finished ("a",): never encoded


def test_the_pruning_ratio_can_differ_by_query():
    # ("a",) ends at 0.99: its continuation ("a", "c") scores 0.0099, under 0.02 of the finished ("a",)
    table = {(): {"a": (1.0, 0.99)}, ("a",): {"c": (1.0, 0.99)}, ("a", "c"): {"d": (1.0, 0.5)}}
    pruned, kept = search_paths(2, beam=3, max_hops=2, step=_steps(table), min_ratio=[0.02, 0.0])
    assert [p for p, _ in pruned] == [("a",)]
    assert [p for p, _ in kept] == [("a",), ("a", "c")]


def test_dedupe_keeps_the_path_each_anchor_can_walk():
    """'the youngest member of [E]': clubs (players via ^plays_for) outnumber countries (via
    ^nationality) in training; a country cannot walk ^plays_for, so its questions keep their own
    path instead of being merged into the majority's."""
    triples = [Triple(f"p{i}", "plays_for", f"club{i % 3}") for i in range(9)]
    triples += [Triple(f"p{i}", "nationality", f"country{i % 2}") for i in range(9)]
    kg = NetworkXGraph(triples)
    qs = []
    for anchor in ["club0", "club1", "club2", "club0", "country0", "country1"]:
        rel = "^plays_for" if anchor.startswith("club") else "^nationality"
        answers = sorted(kg.neighbors(anchor, rel))
        q = QAExample(f"the members of [{anchor}]", [anchor], answers, [rel])
        q.extra["label_source"] = "kg"
        q.extra["path_candidates"] = [{"path": [rel], "f1": 1.0}]
        qs.append(q)
    dm = RetrieverDataModule(Dataset(train=qs), kg, val_fraction=0.0, train_paths="given")
    dm.setup()
    items = dm._items(qs, dedupe=True)
    assert sorted((x["question"], tuple(x["path"])) for x in items) == [
        ("the members of [E]", ("^nationality",)), ("the members of [E]", ("^plays_for",))]
    by_path = {tuple(x["path"]): x for x in items}
    assert by_path[("^nationality",)]["anchor"].startswith("country")
    assert "^plays_for" not in by_path[("^nationality",)]["candidates"][0]


def test_candidates_are_capped_with_the_gold_kept():
    triples = [Triple("hub", f"rel_{i:02d}", f"x{i}") for i in range(40)]
    kg = NetworkXGraph(triples)
    q = QAExample("what is the rel 07 of [hub]", ["hub"], ["x7"], ["rel_07"])
    dm = RetrieverDataModule(Dataset(train=[q]), kg, val_fraction=0.0, train_paths="given", max_candidates=8)
    dm.setup()
    (item,) = dm.splits["train"]
    assert len(item["candidates"][0]) == 8 and "rel_07" in item["candidates"][0]


def test_training_masks_the_topic_by_its_label_when_ids_are_iris():
    """A KG of IRIs: the question names the topic by its label, never by its IRI; training masks it
    as inference does (inference marks the given topic's label), or the model learns titles."""
    paper, person = "http://ex.org/r/Paper_1", "http://ex.org/r/Person_7"
    kg = NetworkXGraph([Triple(paper, "http://ex.org/o/author", person)],
                       {paper: "On Learning: A Survey (Revisited)", person: "Zoë O'Brien"})
    q = QAExample("Whose work is On Learning: A Survey (Revisited)?", [paper], [person], ["http://ex.org/o/author"])
    for head in ("scorer", "classifier"):
        dm = RetrieverDataModule(Dataset(train=[q]), kg, val_fraction=0.0, train_paths="given", path_head=head)
        dm.setup()
        assert [x["question"] for x in dm.splits["train"]] == ["Whose work is [E]?"]


def test_a_deduplicated_item_learns_against_every_anchors_frontier():
    """'who starred in [E]' asked of a film without a rating first and of one with a rating next:
    one item, whose negatives include the rating (else the model never learns to put it below)."""
    kg = NetworkXGraph([Triple("Film A", "starred_actors", "Ann"), Triple("Film B", "starred_actors", "Bob"),
                        Triple("Film B", "has_imdb_rating", "good")])
    qs = [QAExample(f"who starred in [{f}]", [f], [a], ["starred_actors"]) for f, a in (("Film A", "Ann"), ("Film B", "Bob"))]
    dm = RetrieverDataModule(Dataset(train=qs), kg, val_fraction=0.0, train_paths="given")
    dm.setup()
    (item,) = dm.splits["train"]
    assert item["anchor"] == "Film A" and item["candidates"] == [["has_imdb_rating", "starred_actors"]]


def test_the_gold_relation_read_the_other_way_is_a_negative_at_every_step():
    """'who wrote the films [Ann] starred in': at the films, `written_by` is gold and no film here is
    also a writer, so the frontier never offers `^written_by`; at answer time a wide frontier does (a
    film titled like a writer), and the scorer must have learnt which way the step walks. Kept under
    the cap; off (the default) the frontier is as the graph has it."""
    kg = NetworkXGraph([Triple("Film A", "starred_actors", "Ann"), Triple("Film A", "written_by", "Wes")]
                       + [Triple("Film A", f"rel_{i:02d}", f"x{i}") for i in range(20)])
    q = QAExample("who wrote the films [Ann] starred in", ["Ann"], ["Wes"], ["^starred_actors", "written_by"])
    for inverse_negatives, cap in ((True, 64), (True, 4), (False, 64)):
        dm = RetrieverDataModule(Dataset(train=[q]), kg, val_fraction=0.0, train_paths="given", max_candidates=cap,
                                 inverse_negatives=inverse_negatives)
        dm.setup()
        (item,) = dm.splits["train"]
        first, second = item["candidates"]
        assert len(second) == min(cap, 23 if inverse_negatives else 22) and "written_by" in second
        assert ("^written_by" in second) == inverse_negatives and ("starred_actors" in first) == inverse_negatives
        assert "^written_by" not in kg.relations("Film A")  # not from the frontier
        assert set(item["texts"]) >= set(first) | set(second)
    # "after_reversed": only at a step after a reversed one, where the prefix's "(reverse)" draws the
    # candidate that says it too; the first step (and a step after a forward one) keeps its frontier
    dm = RetrieverDataModule(Dataset(train=[q]), kg, val_fraction=0.0, train_paths="given",
                             inverse_negatives="after_reversed")
    dm.setup()
    first, second = dm.splits["train"][0]["candidates"]
    assert "^written_by" in second and "starred_actors" not in first
    with pytest.raises(ValueError, match="inverse_negatives must be true, false or after_reversed, not 'always'"):
        RetrieverDataModule(Dataset(train=[q]), kg, inverse_negatives="always")


def test_validation_accepts_paths_that_explain_the_questions_as_well_as_the_label():
    """A film whose writer is also its director: for 'who wrote [E]' asked only of it, `written_by`
    and `directed_by` explain the answers equally (a KG-derived tie). The item keeps one label and
    carries the other as accepted, so validation does not count the model wrong for the other."""
    kg = NetworkXGraph([Triple("Film A", "written_by", "Wes"), Triple("Film A", "directed_by", "Wes"),
                        Triple("Film B", "written_by", "Ann"), Triple("Film B", "directed_by", "Dan")])
    tie = QAExample("who wrote [Film A]", ["Film A"], ["Wes"])
    clear = QAExample("who is the writer of [Film B]", ["Film B"], ["Ann"])
    dm = RetrieverDataModule(Dataset(train=[tie, clear]), kg, val_fraction=0.0, train_paths="kg",
                             supervision_cache=False)
    dm.setup()
    by_q = {x["question"]: x for x in dm._items([tie, clear], dedupe=True)}
    label, (other,) = by_q["who wrote [E]"]["path"], by_q["who wrote [E]"]["accept"]
    assert sorted([label, other]) == [["directed_by"], ["written_by"]]  # one label, the other accepted
    assert "accept" not in by_q["who is the writer of [E]"]
    batch = collate(list(by_q.values()))
    assert batch["accept"] == [by_q[q].get("accept") for q in batch["question"]]


def test_validation_counts_an_accepted_path_right(trained, monkeypatch):
    """An item whose label is swapped for another path of its length fails validation, unless the path
    the model walks is among its accepted ones (rra.models.retriever._log_decoding)."""
    model, batch = trained
    model.eval()
    seen = {}
    monkeypatch.setattr(model, "_log", lambda split, name, values, n, **_: seen.__setitem__(name, values.clone()))
    monkeypatch.setattr(model, "decoded", [])
    with torch.no_grad():
        out = model.model_step(batch)
    found = model._decode_with_graph(out)  # what validation walks, as inference would
    i = next(k for k, (p, b) in enumerate(zip(out["paths"], found)) if b and len(b[0]) == 1)
    walked = list(found[i][0])
    out["paths"][i] = ["some_other_relation"]  # the label the vote kept; the walked path tied with it
    model._log_decoding(out, "val")
    assert seen["path_acc"][i] == 0.0
    accept = [None] * len(out["paths"])
    accept[i] = [walked]
    model._log_decoding(out, "val", accept)
    assert seen["path_acc"][i] == 1.0 and model.decoded[-len(out["paths"]) + i]["correct"]


@pytest.mark.parametrize("directions", [False, True])
def test_the_walked_prefix_reads_without_direction_marks_unless_the_checkpoint_says(tiny_kwargs, directions):
    """A query whose prefix says "(reverse)" resembles every candidate saying it too (MetaQA: most
    3-hop misses were the last relation reversed after a reversed step). The prefix drops the mark
    where `prefix_directions` is false; the candidates keep it, and a checkpoint from before the
    option (no hparam: true) reads its prefixes as it was trained."""
    model, _ = make(tiny_kwargs, prefix_directions=directions)
    seen: list[str] = []
    encode = model.encode
    model.encode = lambda texts: (seen.extend(texts), encode(texts))[1]
    q = "who starred in films directed by [E]"
    model.model_step({"question": [q], "path": [["^directed_by", "starred_actors"]],
                      "candidates": [[["^directed_by", "^starred_actors"], ["starred_actors", "^directed_by"]]]})
    walked = f"{q} {model.sep} directed by" + (" (reverse)" if directions else "")
    assert walked in seen and "directed by (reverse)" in seen  # the step text, and a candidate's own text
    kg = toy_kg()
    topic = next(t.head for t in kg.all_triples() if t.relation == "directed_by")
    director = next(t.tail for t in kg.all_triples() if t.head == topic and t.relation == "directed_by")
    texts: list[str] = []
    unique = model.encode_unique
    model.encode_unique = lambda t, *a, **k: (texts.extend(t), unique(t, *a, **k))[1]
    model.predict([f"which films did [{director}] direct and who starred in them"], topk=3, kg=kg, topics=[director],
                  use_cache=False)
    prefixes = [t.split(model.sep, 1)[1] for t in texts if model.sep in t]  # a director's relations are all reversed
    assert prefixes and all(("(reverse)" in p) == directions for p in prefixes)
    hparams = dict(model.hparams)
    hparams.pop("prefix_directions")
    assert Retriever(**hparams).hparams.get("prefix_directions", True) is True  # an older checkpoint's hparams


def _words_encoder(model):
    """Replace the encoder by word counts (hashed into its width): cosines then say which texts
    share words, which is what the path_text rule relies on from a pretrained sentence encoder."""
    dim = model.encoder.dim

    def encode(texts):
        out = torch.zeros(len(texts), dim)
        for row, text in enumerate(texts):
            for word in text.replace(",", " ").replace("(", " ").replace(")", " ").split():
                out[row, sum(map(ord, word)) % dim] += 1.0
        return out
    model.encode = encode
    return model


@pytest.mark.parametrize("rule", ["path_text", "end_head"])
def test_an_untrained_end_head_leaves_the_length_to_the_paths_words(tiny_kwargs, rule):
    """retriever=zero_shot: the end head has not learnt when a path ends (P(end) = 0.5 at every
    step), so with end_head the shortest path always won. path_text ranks paths of every length by
    the cosine of the question with the path read as one phrase, less a penalty per relation."""
    model = _words_encoder(Retriever(None, max_hops=3, path_head="scorer", length_rule=rule, length_penalty=0.02,
                                     **tiny_kwargs).eval())  # word counts: cosines coarser than a sentence encoder's
    kg = toy_kg()
    questions = ["[E] directed by whom", "starred actors of films directed by directed by (reverse) [E]"]
    preds = model.predict(questions, topk=3, kg=kg, topics=["Movie 0", "Movie 0"], use_cache=False)
    assert preds[0][0].path == ["directed_by"]  # a relation the question does not ask for costs the 2-hop paths
    two_hop = ["directed_by", "^directed_by", "starred_actors"]
    if rule == "path_text":
        assert preds[1][0].path == two_hop
        assert all(kg.follow_path("Movie 0", p.path, limit=1) for p in preds[1])
        assert [p.score for p in preds[1]] == sorted((p.score for p in preds[1]), reverse=True)
    else:
        assert len(preds[1][0].path) == 1
    with pytest.raises(ValueError, match="length_rule must be one of .*'longest'"):
        Retriever(None, max_hops=3, path_head="scorer", length_rule="longest", **tiny_kwargs)


def test_word_dropout_leaves_words_out_in_training_only(tiny_kwargs):
    """`word_dropout`: training questions lose words at that chance, never the masked topic or a
    literal slot; validation and answering read them whole; at 0 (the default) nothing is drawn."""
    model = Retriever(["written_by"], path_head="scorer", word_dropout=0.5, **tiny_kwargs)
    torch.manual_seed(0)
    q = "which books written after [N1] did the writer of [E] publish with his friends"
    dropped = [model._drop_words(q) for _ in range(50)]
    assert all("[E]" in d and "[N1]" in d for d in dropped)
    assert all(set(d.split()) <= set(q.split()) for d in dropped)
    assert 0.3 < sum(len(d.split()) for d in dropped) / (50 * len(q.split())) < 0.75
    assert model._drop_words("[E] [N1]") == "[E] [N1]"
    seen = []
    model.encode = lambda texts: seen.extend(texts) or torch.zeros(len(texts), model.encoder.dim)
    batch = {"question": [q], "path": [["written_by"]], "candidates": [[["written_by"]]]}
    model.eval()
    with torch.no_grad():
        model._scorer_step(batch)
    assert seen[0] == model.mask(q)
    model.train()
    seen.clear()
    model._scorer_step(batch)
    assert seen[0] != model.mask(q) and "[E]" in seen[0]
    model.hparams.word_dropout = 0.0
    seen.clear()
    state = torch.get_rng_state()
    model._scorer_step(batch)
    assert seen[0] == model.mask(q) and torch.equal(torch.get_rng_state(), state)


def test_validation_reads_relations_with_the_weights_it_validates(tiny_kwargs):
    """Weights loaded in place between validations (the pretrained mix walks its alphas so, and the
    test after training loads the published checkpoint) are validated as a fresh model with those
    weights is: no relation vector encoded with the weights before is reused."""
    L.seed_everything(0)
    dm = RetrieverDataModule(Dataset(train=lambda: toy_questions(24), test=lambda: toy_questions(8, seed=1)), toy_kg,
                             val_fraction=0.5, batch_size=8, dedupe=False, train_paths="given")
    model = Retriever(**dm.model_kwargs(), **tiny_kwargs)
    model.attach_graph(toy_kg(), dm.relation_text)
    trainer = L.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.validate(model, datamodule=dm, verbose=False)  # encodes the relations with the first weights
    torch.manual_seed(1)
    other = {k: v + 0.5 * torch.randn_like(v) if k.startswith("encoder.") and v.is_floating_point() else v
             for k, v in model.state_dict().items()}
    model.load_state_dict(other)
    again = trainer.validate(model, datamodule=dm, verbose=False)[0]
    fresh = Retriever(**dm.model_kwargs(), **tiny_kwargs)
    fresh.load_state_dict(other)
    fresh.attach_graph(toy_kg(), dm.relation_text)
    expected = trainer.validate(fresh, datamodule=dm, verbose=False)[0]
    assert len(model.decoded) == len(fresh.decoded) > 0
    assert [d["pred_path"] for d in model.decoded] == [d["pred_path"] for d in fresh.decoded]
    assert again["val/path_acc"] == expected["val/path_acc"]
