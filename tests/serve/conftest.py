"""Fixtures of the serving tests: a tiny retriever trained on the built-in KG (once per session), the
serve config composed around it, a Service, and a real uvicorn server on a free loopback port."""
from pathlib import Path

import pytest

from serve_helpers import LiveServer  # tests/serve is on the path (pytest puts a conftest's folder there)

# the 8 epochs these tests were written against: the budget does not add more (the tiny encoder is
# still rising at its plan, and training on added 188 steps to the 376 planned: fit 142 s against ~100 s)
TINY_TRAIN = ["model=retriever_tiny", "trainer.max_epochs=8", "test=false", "callbacks.progress_bar=null",
              "callbacks.budget.extend=0"]


@pytest.fixture(scope="session")
def builtin_root(compose_cfg, tmp_path_factory) -> Path:
    """`python train.py` with a tiny random encoder on the built-in KG (~30 s): checkpoints/retriever/best.ckpt."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("serve_root")
    train(compose_cfg("train", TINY_TRAIN, root))
    assert (root / "checkpoints" / "retriever" / "best.ckpt").is_file()
    return root


@pytest.fixture(scope="session")
def serve_cfg(compose_serve):
    return compose_serve(["llm=none"])


@pytest.fixture(scope="session")
def compose_serve(compose_cfg, builtin_root):
    """compose_serve(overrides): the serve config around the trained checkpoint, with other groups."""
    return lambda overrides: compose_cfg("serve", overrides, builtin_root)


@pytest.fixture(scope="session")
def service(serve_cfg):
    from rra.serve.service import Service

    return Service.from_config(serve_cfg)


@pytest.fixture
def client(service):
    """FastAPI's in-process client (the app's start-up and shutdown run around the test)."""
    from fastapi.testclient import TestClient

    from rra.serve.app import create_app

    with TestClient(create_app(service)) as c:
        yield c


@pytest.fixture
def live(service):
    from rra.serve.app import create_app

    with LiveServer(create_app(service)) as server:
        yield server
