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


@pytest.fixture(autouse=True)
def strict_methods(monkeypatch):
    """A bug inside a method raises in tests instead of becoming a per-question "error" status."""
    from rra.methods import QAMethod

    monkeypatch.setattr(QAMethod, "strict", True)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


# -- the real config, composed as the entry points compose it (lightning-hydra-template's cfg_train) --
@pytest.fixture(scope="session")
def compose_cfg():
    """compose_cfg(name, overrides, root=None, output_dir=None): conf/NAME.yaml as `python NAME.py
    OVERRIDES` composes it, W&B off (`logger=none`, where the config has a logger), every path of the
    run under `root`. Session-scoped, so session fixtures that train a model can use it too."""
    from rra.config import compose_config

    def compose(name: str, overrides=(), root: Path | None = None, output_dir: Path | None = None):
        quiet = ["logger=none"] if name in ("train", "infer") else []
        return compose_config(name, [*quiet, *overrides], config_dir=REPO / "conf", root=root, output_dir=output_dir)

    return compose


# The tiny retriever that serving, sharded answering and the launchers answer with: what it answers
# does not matter to them, only that it is a real train.py checkpoint (the step floor's 150 steps)
TINY_BUILTIN_TRAIN = ["model=retriever_tiny", "trainer.max_epochs=3", "test=false", "callbacks.progress_bar=null",
                      "callbacks.budget.extend=0"]


@pytest.fixture(scope="session")
def builtin_root(compose_cfg, tmp_path_factory) -> Path:
    """`python train.py` with a tiny random encoder on the built-in KG, once per session (~40 s):
    the run's root, holding checkpoints/retriever/best.ckpt. Tests read it and write elsewhere."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("builtin_root")
    train(compose_cfg("train", TINY_BUILTIN_TRAIN, root))
    assert (root / "checkpoints" / "retriever" / "best.ckpt").is_file()
    return root


@pytest.fixture
def cfg_train(compose_cfg, tmp_path):
    """cfg_train(overrides=()): the training config of `python train.py OVERRIDES`, run under tmp_path;
    a test overrides what it needs and nothing else."""
    return lambda overrides=(), root=tmp_path: compose_cfg("train", overrides, root)


@pytest.fixture
def cfg_infer(compose_cfg, tmp_path):
    """cfg_infer(overrides=()): the config of `python infer.py OVERRIDES`, run under tmp_path."""
    return lambda overrides=(), root=tmp_path: compose_cfg("infer", overrides, root)


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


# -- llm-katan: a real OpenAI-compatible server (echo backend, fault injection) on 127.0.0.1 ----------
def katan_binary() -> str | None:
    import shutil
    import sys

    return shutil.which("llm-katan") or shutil.which("llm-katan", path=str(Path(sys.executable).parent))


@pytest.fixture
def katan(tmp_path, monkeypatch):
    """start(**faults) -> base URL of a fresh llm-katan echo server; stopped after the test.
    The key it wants is in $KATAN_API_KEY (the OpenAI backend's api_key_env)."""
    import socket
    import subprocess
    import time

    import httpx

    monkeypatch.setenv("KATAN_API_KEY", "test-key")
    binary = katan_binary()
    if binary is None:
        pytest.skip("llm-katan is not installed (pip install llm-katan)")
    procs = []

    def start(port: int | None = None, **faults) -> str:
        if port is None:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        args = [binary, "--model", "echo", "--backend", "echo", "--host", "127.0.0.1", "--port", str(port),
                "--stats-file", str(tmp_path / f"stats{port}.json"), "--disable-dashboard", "--log-level", "warning"]
        for key, value in faults.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        log = open(tmp_path / f"katan{port}.log", "wb")
        procs.append((subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT), log))
        url = f"http://127.0.0.1:{port}/v1"
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                if httpx.get(f"{url}/models", timeout=1, trust_env=False).status_code < 500:
                    return url
            except httpx.TransportError:
                time.sleep(0.2)
        pytest.fail(f"llm-katan did not start: {(tmp_path / f'katan{port}.log').read_text()[-1500:]}")

    def kill(url: str) -> None:
        """kill -9 the server at `url` (a crash, not a shutdown)."""
        port = url.rsplit(":", 1)[1].split("/")[0]
        for proc, _ in procs:
            if f"--port {port} " in " ".join(proc.args) + " " and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)

    start.kill = kill
    yield start
    for proc, log in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
        log.close()
