"""The pretrained encoder's second reading of the scorer's paths (rra/models/pretrained_reading.py):
familiar wordings keep the trained reading, others are re-read with the beam's mass kept; the
training wordings travel in the checkpoint; infer's `retriever.pretrained_reading` reaches the search."""
import math

import lightning as L
import pytest
import torch

from rra.models.encoder import tiny_encoder
from rra.models.pretrained_reading import FAMILIAR, PretrainedReading
from rra.models.retriever import Retriever
from rra.pipeline.retrieve import PathRetrieval
from test_relation_scorer import make, trained  # noqa: F401  (the tiny scorer trained on the toy KG)
from toy_data import toy_kg


@pytest.fixture(scope="module")
def reader():
    torch.manual_seed(0)
    return PretrainedReading(tiny_encoder(), ["who directed [E]", "what films did [E] star in"])


def test_novelty_is_zero_for_a_training_wording_and_grows_away_from_them(reader):
    assert reader.novelty(["who directed [E]", "Who  DIRECTED [E]"]) == [0.0, 0.0]  # case and spaces folded
    other = "which studio released the soundtrack of [E] in europe"
    nearest = float((reader.vectors([other]) @ reader.wordings.T).max())
    want = min(1.0, max(0.0, (1 - nearest) / (1 - FAMILIAR)))
    assert reader.novelty([other]) == [pytest.approx(want)] and 0 <= want <= 1
    assert PretrainedReading(reader.encoder).novelty(["who directed [E]"]) == [1.0]  # no wordings kept: all re-read


def test_rerank_keeps_the_mass_and_leaves_familiar_questions_alone(reader):
    found = [[(("a",), math.log(0.6)), (("b", "c"), math.log(0.3)), (("d",), math.log(0.05))]]
    names = {"a": "directed by", "b": "starred actors", "c": "release year", "d": "written by"}.get
    familiar = reader.rerank(["who directed [E]"], found, names, weight=50.0)
    assert familiar == found  # a training wording: the trained order and scores, untouched
    reader_all = PretrainedReading(reader.encoder)  # no wordings: every question is re-read
    question = "what year were the actors of [E] born"
    moved = reader_all.rerank([question], found, names, weight=50.0)[0]
    cos = {p: float(reader_all.vectors([", ".join(names(r) for r in p)]) @ reader_all.vectors([question])[0])
           for p, _ in found[0]}
    expect = {p: s + 50.0 * cos[p] for p, s in found[0]}
    assert [p for p, _ in moved] == sorted(expect, key=lambda p: -expect[p])  # ordered by score + weight * cosine
    total = lambda paths: torch.logsumexp(torch.tensor([s for _, s in paths]), 0).item()  # noqa: E731
    assert total(moved) == pytest.approx(total(found[0]))  # the beam's probability mass, shared anew
    same = reader_all.rerank([question], found, names, weight=0.0)[0]  # weight 0: the same scores
    assert [p for p, _ in same] == [p for p, _ in found[0]]
    assert [s for _, s in same] == pytest.approx([s for _, s in found[0]])
    assert reader_all.rerank([question], [found[0][:1]], names, 50.0) == [found[0][:1]]  # one path: nothing to re-read


def test_training_wordings_are_the_masked_questions_and_travel_in_the_checkpoint(trained, tmp_path):
    model, batch = trained
    _, dm = make({})
    wordings = dm.training_wordings()
    assert wordings and all("[E]" in w for w in wordings) and wordings == sorted(set(wordings))
    model.training_wordings = wordings
    trainer = L.Trainer(max_steps=0, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        accelerator="cpu")
    trainer.strategy.connect(model)
    trainer.save_checkpoint(tmp_path / "scorer.ckpt")
    loaded = Retriever.load(tmp_path / "scorer.ckpt")
    assert loaded.training_wordings == wordings
    assert "_pretrained_reading" not in "".join(loaded.state_dict())  # the pretrained encoder is not saved
    old = torch.load(tmp_path / "scorer.ckpt", weights_only=False)
    del old["rra"]["training_wordings"]  # a checkpoint from before: every question re-read
    torch.save(old, tmp_path / "old.ckpt")
    assert Retriever.load(tmp_path / "old.ckpt").training_wordings == []


def test_infer_setting_reaches_the_search_and_reorders_an_unfamiliar_question(trained, monkeypatch):
    model, batch = trained
    kg = toy_kg()
    torch.manual_seed(1)
    model.training_wordings = list(batch["question"])
    monkeypatch.setattr(model, "_pretrained_reading", PretrainedReading(tiny_encoder(), model.training_wordings))
    seen = []
    rerank = model._pretrained_reading.rerank
    monkeypatch.setattr(model._pretrained_reading, "rerank", lambda *a, **k: seen.append(a[3]) or rerank(*a, **k))
    plain = PathRetrieval(model)
    reread = PathRetrieval(model, pretrained_reading=20.0)
    questions, topics = batch["question"][:4], batch["anchor"][:4]
    assert [[p.path for p in q] for q in reread.predict(questions, kg, topics)] == \
        [[p.path for p in q] for q in plain.predict(questions, kg, topics)]  # training wordings: the same paths
    assert seen == [20.0]
    odd = ["tell me please which person [Movie 3] was directed by"]
    a, b = plain.predict(odd, kg, ["Movie 3"])[0], reread.predict(odd, kg, ["Movie 3"])[0]
    # a question it re-reads is searched unpruned (a second reading may overrule the end head)
    assert {tuple(p.path) for p in a} <= {tuple(p.path) for p in b}
    scores = {tuple(p.path): p.score for p in a}
    assert any(abs(scores[tuple(p.path)] - p.score) > 1e-6 for p in b if tuple(p.path) in scores)
