"""What every benchmark script records beside its figures: the machine it ran on."""
from __future__ import annotations

import os
import platform


def machine() -> dict:
    """Platform, CPU count, load average (others' jobs slow timings), torch build and threads."""
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "loadavg": [round(x, 2) for x in os.getloadavg()]}
    try:
        import torch

        info.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                    cuda=torch.cuda.is_available())
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


def data_semantics(name: str):
    """The answer rule that conf/data/NAME.yaml sets, so a benchmark scores as infer.py would."""
    from pathlib import Path

    from omegaconf import OmegaConf

    from rra.records import AnswerSemantics

    conf = Path(__file__).resolve().parents[1] / "conf" / "data" / f"{name}.yaml"
    return AnswerSemantics.of(OmegaConf.load(conf).get("semantics"))


def infer_config(overrides: list[str]):
    """conf/infer.yaml composed with `overrides`, as `python infer.py ...` would see it: benchmarks
    build their methods from it (`instantiate(cfg.method, kg=..., llm=...)`) like infer.py does."""
    from pathlib import Path

    from hydra import compose, initialize_config_dir

    import rra.config  # noqa: F401  (registers the ${repo_root:} resolvers)

    with initialize_config_dir(str(Path(__file__).resolve().parents[1] / "conf"), version_base="1.3"):
        return compose("infer", overrides=["logger=none", *overrides])


def build_method(kg, llm, overrides: list[str], **shared):
    """The QA method that `python infer.py <overrides>` builds (conf/method, retriever, rewriter,
    answer groups, through infer.py's own builder), on the graph and LLM the benchmark shares
    between its runs; `shared` passes other shared objects (a sentence encoder)."""
    from rra.eval import run

    return run.build_method(infer_config(overrides), kg, llm, **shared)


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a server a benchmark starts."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oxigraph_binary() -> str | None:
    """The `oxigraph` CLI: on PATH, or next to this interpreter (where `pip install oxigraph` puts it)."""
    import shutil
    import sys
    from pathlib import Path

    return shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))


def wait_http(url: str, proc=None, seconds: float = 600) -> None:
    """Wait until a SPARQL endpoint answers `ASK {}` (or the server process exits)."""
    import time

    import httpx

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server for {url} exited with {proc.returncode}")
        try:
            if httpx.post(url, data={"query": "ASK {}"}, timeout=5, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {seconds} s")
