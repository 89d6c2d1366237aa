"""Project-wide fixtures. Area-specific fixtures live in tests/<area>/conftest.py."""
import os
from pathlib import Path

import pytest

# Tests never reach the internet and never log to W&B.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]

from rra.config import register_resolvers  # noqa: E402

register_resolvers(REPO)  # ${repo_root:}, ${builtin_data:...}: what train.py / infer.py register
SHARED_DATA = Path(os.environ.get("RRA_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip: the real datasets are never part of the repository."""
    if not (SHARED_DATA / "metaqa" / "kb.txt").exists():
        pytest.skip(f"real datasets not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def metaqa_root(shared_data: Path) -> Path:
    return shared_data / "metaqa"


def pytest_collection_modifyitems(config, items):
    """Tests that start a real Virtuoso carry the `virtuoso` marker (deselect: -m "not virtuoso").
    They stay in the default run: about 7 s in all (server start ~4 s, the graph contract suite and
    an infer.py run on it), and they skip where virtuoso-t is not installed."""
    for item in items:
        if "virtuoso" in getattr(item, "fixturenames", ()) or "[virtuoso" in item.name:
            item.add_marker(pytest.mark.virtuoso)


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory):
    """A private Virtuoso 7 on 127.0.0.1 (started once, ~5 s), or skip when not installed.
    Tests load their KG into a named graph of their own with `virtuoso.load(nt, iri)`."""
    from rra.graph.virtuoso import VirtuosoServer, binaries

    if binaries() is None:
        pytest.skip("Virtuoso is not installed (apt-get install virtuoso-opensource)")
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    with VirtuosoServer(tmp_path_factory.mktemp("virtuoso"), *ports) as server:
        yield server
