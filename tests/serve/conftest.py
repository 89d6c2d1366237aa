"""Fixtures of the serving tests: a tiny retriever trained on the built-in KG (once per session), the
serve config composed around it, a Service, and a real uvicorn server on a free loopback port."""
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_helpers import LiveServer  # noqa: E402
TINY_TRAIN = ["model=retriever_tiny", "trainer.max_epochs=8", "test=false", "callbacks.progress_bar=null"]


def compose_cfg(name: str, root: Path, overrides: list[str]):
    """A config of conf/NAME.yaml on the built-in KG, every path under `root`."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(name, overrides=["logger=none"] * (name != "serve") + overrides, return_hydra_config=True)
    HydraConfig().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.root_dir = str(root)
        cfg.paths.output_dir = str(root / "run")
    return cfg


@pytest.fixture(scope="session")
def builtin_root(tmp_path_factory) -> Path:
    """`python train.py` with a tiny random encoder on the built-in KG (~30 s): checkpoints/retriever/best.ckpt."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("serve_root")
    train(compose_cfg("train", root, TINY_TRAIN))
    assert (root / "checkpoints" / "retriever" / "best.ckpt").is_file()
    return root


@pytest.fixture(scope="session")
def serve_cfg(builtin_root):
    return compose_cfg("serve", builtin_root, ["llm=none"])


@pytest.fixture(scope="session")
def compose_serve(builtin_root):
    """compose_serve(overrides): the serve config around the trained checkpoint, with other groups."""
    return lambda overrides: compose_cfg("serve", builtin_root, overrides)


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
