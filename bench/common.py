"""What every benchmark shares: the result record it writes, the config it builds methods from, the
servers it starts.

A benchmark is a module run from the checkout (`python -m bench.bench_graph ...`). Its figures come
from functions a test can call; its `main()` parses the arguments, calls them and writes one record:

    run = Run.start("bench_graph", args)            # the command, config and load at the start
    run.write({"figures": figures})                 # + machine, load at the end, time -> bench/results/bench_graph.json

Every record says what produced it: `benchmark`, `command` (as typed, `python -m bench.<name> ...`),
`config` (the parsed arguments), `machine` (platform, CPUs, torch, load average when written),
`load` (`start` / `end` load averages: the machine is shared, timings move with it) and `timestamp`.
Figures keep the layout each benchmark always had, so older result files read the same way.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
CACHE = REPO / "bench" / "cache"  # resumable per-question outputs (gitignored)
# how a benchmark answers: with the data's own topic entities, or linked from the question text
TOPIC_MODES = {"given": [], "linked": ["method.use_gold_topic=false"]}
# the real datasets, never part of the repository: ../shared/data as conf/paths says, or $RRA_SHARED_DATA
DATA = Path(os.environ.get("RRA_SHARED_DATA", REPO.parent / "shared" / "data"))
METAQA = DATA / "metaqa"
METAQA_CKPT = REPO / "checkpoints" / "metaqa" / "best.ckpt"  # `python train.py experiment=metaqa` (trained on dev)


# -- the result record ----------------------------------------------------------------------
def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def machine() -> dict:
    """Platform, CPU count, load average (others' jobs slow timings), torch build and threads."""
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "loadavg": loadavg()}
    try:
        import torch

        info.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                    cuda=torch.cuda.is_available())
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


@dataclass
class Run:
    """One invocation of a benchmark: what was typed, with which settings, under what load."""

    name: str  # the module under bench/ (bench_graph)
    config: dict
    argv: list[str]
    load_start: list[float] = field(default_factory=loadavg)
    started: str = field(default_factory=now)

    @classmethod
    def start(cls, name: str, args=None, argv: list[str] | None = None) -> "Run":
        """`args`: the argparse namespace (or a dict); `argv`: the arguments as given (default sys.argv[1:])."""
        config = dict(vars(args) if args is not None and not isinstance(args, dict) else args or {})
        config.pop("func", None)  # a subcommand's handler is not a setting
        return cls(name, config, list(sys.argv[1:] if argv is None else argv))

    @property
    def command(self) -> str:
        return shlex.join(["python", "-m", f"bench.{self.name}", *self.argv])

    def record(self, figures: dict) -> dict:
        """`figures` with what every result file says beside them."""
        return {"benchmark": self.name, **figures, "command": self.command, "config": self.config,
                "machine": machine(), "load": {"start": self.load_start, "end": loadavg()},
                "timestamp": self.started}

    def write(self, figures: dict, path: str | Path | None = None) -> dict:
        """Write the record to `path` (default bench/results/<name>.json); returns it."""
        record = self.record(figures)
        write_json(record, path or RESULTS / f"{self.name}.json")
        return record


def write_json(obj, path: str | Path) -> None:
    """A result file, written whole (a temporary file renamed over the old one: a kill never leaves
    half a record). Values JSON lacks (paths) are written as text."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    print(f"wrote {path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path}", flush=True)


def arguments(name: str, doc: str | None) -> "argparse.ArgumentParser":
    """The argument parser of bench/NAME.py: its usage line as typed (`python -m bench.NAME`), its
    module docstring as the help text."""
    import argparse

    return argparse.ArgumentParser(prog=f"python -m bench.{name}", description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def previous(path: str | Path) -> dict:
    """The record a benchmark wrote before to `path` ({} if none): benchmarks that run their parts
    one invocation at a time (systems, configurations, faults) merge into it."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


# -- the config methods are built from --------------------------------------------------------
def compose(name: str, overrides: list[str] = (), root: str | Path | None = None,
            output_dir: str | Path | None = None):
    """conf/NAME.yaml composed as `python NAME.py OVERRIDES` sees it, W&B off (rra.config.compose_config)."""
    from rra.config import compose_config, register_resolvers

    register_resolvers(REPO)
    quiet = ["logger=none"] if name in ("train", "infer") else []
    return compose_config(name, [*quiet, *overrides], config_dir=REPO / "conf", root=root, output_dir=output_dir)


def retriever_and_data(overrides: list[str], seed: int = 0):
    """(model, datamodule) as train.py builds them from `python train.py OVERRIDES`: the datamodule
    set up, the model made from its kwargs with the graph attached (validation decodes on it), torch
    seeded first. For benchmarks that time a training step."""
    import torch
    from hydra.utils import instantiate

    from rra.training.run import build_datamodule

    cfg = compose("train", overrides)
    torch.manual_seed(seed)
    datamodule = build_datamodule(cfg)
    datamodule.setup("fit")
    model = instantiate(cfg.model, **datamodule.model_kwargs())
    if getattr(datamodule, "kg", None) is not None:
        model.attach_graph(datamodule.kg, getattr(datamodule, "relation_text", None))
    return model, datamodule


def parameter_groups(model) -> list[dict]:
    """The retriever's optimizer groups as its configure_optimizers makes them: the heads at
    `head_lr`, the encoder at `lr` (what a benchmark's hand-run training steps use)."""
    hp = model.hparams
    heads = [p for n, p in model.named_parameters() if not n.startswith("encoder.") and p.requires_grad]
    encoder = [p for p in model.encoder.parameters() if p.requires_grad]
    return [{"params": heads, "lr": hp.head_lr}, {"params": encoder, "lr": hp.lr}]


def infer_config(overrides: list[str]):
    """conf/infer.yaml composed with `overrides`: benchmarks build their methods from it
    (`instantiate(cfg.method, kg=..., llm=...)`) as infer.py does."""
    return compose("infer", overrides)


def build_method(kg, llm, overrides: list[str], **shared):
    """The QA method that `python infer.py <overrides>` builds (conf/method, retriever, rewriter,
    answer groups, through infer.py's own builder), on the graph and LLM the benchmark shares
    between its runs; `shared` passes other shared objects (a sentence encoder)."""
    from rra.eval import run

    return run.build_method(infer_config(overrides), kg, llm, **shared)


def run_infer(overrides: list[str], out: Path) -> dict:
    """One `python infer.py OVERRIDES` run into `out`, in this process (compose + run_split): its
    metrics, plus the seconds it took with set-up (loading the KG and the retriever)."""
    import time

    from rra.eval.run import run_split

    cfg = compose("infer", overrides, output_dir=out)
    start = time.perf_counter()
    metrics = run_split(cfg, out)
    metrics["run_seconds_with_setup"] = round(time.perf_counter() - start, 2)
    return metrics


def data_semantics(name: str):
    """The answer rule that conf/data/NAME.yaml sets, so a benchmark scores as infer.py would."""
    from omegaconf import OmegaConf

    from rra.records import AnswerSemantics

    return AnswerSemantics.of(OmegaConf.load(REPO / "conf" / "data" / f"{name}.yaml").get("semantics"))


# -- servers a benchmark starts ----------------------------------------------------------------
def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a server a benchmark starts."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oxigraph_binary() -> str | None:
    """The `oxigraph` CLI: on PATH, or next to this interpreter (where `pip install oxigraph` puts it)."""
    import shutil

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


def oxigraph_serve(nt: Path, store: Path, graph_iri: str | None = None, port: int | None = None):
    """`oxigraph load` of an N-Triples file into `store` (into `graph_iri` when given; once: an
    existing store is served as it is), then `oxigraph serve-read-only` on `port` (default a free
    loopback port): (process, query URL), once it answers. The caller stops the process
    (`terminate()`); None where the CLI is not installed."""
    import subprocess

    binary = oxigraph_binary()
    if binary is None:
        return None
    if not store.exists():
        into = ["--graph", graph_iri] if graph_iri else []
        subprocess.run([binary, "load", "--location", str(store), "--file", str(nt), *into],
                       check=True, capture_output=True)
    port = port or free_port()
    proc = subprocess.Popen([binary, "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/query"
    wait_http(url, proc)
    return proc, url
