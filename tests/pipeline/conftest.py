"""A tiny movie KG and a tiny retriever trained on it in-test (random 2-layer encoder, ~40 steps),
shared by the pipeline tests. Nothing is read from disk except the packaged tokenizer."""
from __future__ import annotations

import pytest

from rra.graph import NetworkXGraph, Triple
from rra.records import QAExample

FACTS = [
    ("Alien", "directed_by", "Ridley Scott"), ("Alien", "release_year", "1979"),
    ("Alien", "starred_actors", "Sigourney Weaver"), ("Gladiator", "directed_by", "Ridley Scott"),
    ("Gladiator", "release_year", "2000"), ("Gladiator", "starred_actors", "Russell Crowe"),
    ("Blade Runner", "directed_by", "Ridley Scott"), ("Blade Runner", "release_year", "1982"),
    ("Blade Runner", "starred_actors", "Harrison Ford"), ("Witness", "directed_by", "Peter Weir"),
    ("Witness", "starred_actors", "Harrison Ford"), ("Witness", "release_year", "1985"),
    ("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino"),
    ("Heat", "starred_actors", "Robert De Niro"), ("Heat", "release_year", "1995"),
    ("Heat", "written_by", "Michael Mann"), ("Lonely Node", "in_language", "Esperanto"),
]

# (question, relation path): the question templates the tiny retriever learns
TRAIN = [
    ("what movies did [Ridley Scott] direct", ["^directed_by"]),
    ("who directed [Alien]", ["directed_by"]),
    ("when was [Heat] released", ["release_year"]),
    ("who acted in [Heat]", ["starred_actors"]),
    ("what movies did [Al Pacino] act in", ["^starred_actors"]),
    ("who directed the movies [Harrison Ford] acted in", ["^starred_actors", "directed_by"]),
    ("which movies have the same director as [Alien]", ["directed_by", "^directed_by"]),
]
RELATIONS = ["directed_by", "release_year", "starred_actors", "written_by", "in_language"]


@pytest.fixture(scope="session")
def movie_kg() -> NetworkXGraph:
    return NetworkXGraph([Triple(*t) for t in FACTS])


@pytest.fixture(scope="session")
def retriever_ckpt(tmp_path_factory) -> str:
    """Train the tiny retriever once per session and save a real checkpoint."""
    import lightning as L
    import torch
    from torch.utils.data import DataLoader

    from rra.graph.base import inverse
    from rra.models.encoder import TINY_CONFIG
    from rra.models.retriever import Retriever

    torch.manual_seed(0)
    relations = sorted(RELATIONS + [inverse(r) for r in RELATIONS])
    model = Retriever(relations, max_hops=2, encoder_config=TINY_CONFIG, pretrained=False, lr=3e-3,
                      head_lr=3e-2, warmup_ratio=0.0, schedule="constant", max_length=32)
    rows = [{"question": q, "path": p} for q, p in TRAIN] * 8
    loader = DataLoader(rows, batch_size=8, shuffle=True, collate_fn=lambda b: {
        "question": [x["question"] for x in b], "path": [x["path"] for x in b]})
    trainer = L.Trainer(max_epochs=6, logger=False, enable_checkpointing=False, accelerator="cpu",
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    path = tmp_path_factory.mktemp("retriever") / "best.ckpt"
    trainer.save_checkpoint(path)
    return str(path)


def make_example(question: str, answers: list[str], qid: str = "q", path=None, topic=None) -> QAExample:
    return QAExample(question, topic or [], answers, relation_path=path, qid=qid,
                     hops=len(path) if path else None)


@pytest.fixture
def example():
    return make_example
