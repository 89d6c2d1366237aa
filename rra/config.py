"""Hydra glue shared by train.py and infer.py: the config resolvers and the one way a run gets its graph.

The data contract: every data config names its KG file as `kb_path` (plus optional `labels_path`
and `kb_format`) and its question sources; the `graph` group alone decides which backend holds the
KG (NetworkX, embedded Oxigraph, a SPARQL endpoint). Both entry points build the graph here, so
`graph=oxigraph` means Oxigraph for training and inference alike, and a config that cannot build
the chosen backend is an error, never a silent fall-back to another one.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

log = logging.getLogger(__name__)


def register_resolvers(repo_root: str | Path) -> None:
    """`${repo_root:}` (the checkout the script runs from) and `${builtin_data:NAME}` (a file of
    the built-in sample KG shipped inside the package). Registered once per process."""
    from rra.data.builtin import BUILTIN_DIR

    if not OmegaConf.has_resolver("repo_root"):
        OmegaConf.register_new_resolver("repo_root", lambda: str(repo_root))
    if not OmegaConf.has_resolver("builtin_data"):
        OmegaConf.register_new_resolver("builtin_data", lambda name: str(BUILTIN_DIR / name))
    if not OmegaConf.has_resolver("optuna_direction"):
        OmegaConf.register_new_resolver("optuna_direction", optuna_direction)
    if not OmegaConf.has_resolver("run_group"):
        OmegaConf.register_new_resolver("run_group", run_group)
    if not OmegaConf.has_resolver("job_name"):
        OmegaConf.register_new_resolver("job_name", job_name)
    if not OmegaConf.has_resolver("cpu_precision"):
        OmegaConf.register_new_resolver("cpu_precision", cpu_precision)


def _sweep():
    """Hydra's runtime config when this process runs a job of a `-m` sweep, else None."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
        return hc if hc.mode == RunMode.MULTIRUN else None
    except (ValueError, ImportError):  # no Hydra runtime (tests composing a config, notebooks)
        return None


def swept_keys(hc=None, argv: list[str] | None = None) -> list[str]:
    """The config keys a sweep varies: `key=a,b` (or range/choice) on the command line, plus the
    sweeper's own `params` (hparams_search=grid / optuna)."""
    import sys

    from hydra.core.override_parser.overrides_parser import OverridesParser

    keys = []
    args = [a for a in (sys.argv[1:] if argv is None else argv) if "=" in a and not a.startswith("-")]
    try:
        for o in OverridesParser.create().parse_overrides(args):
            if o.is_sweep_override():
                keys.append(o.get_key_element())
    except Exception:  # an argument Hydra itself would have refused: no names from it
        pass
    params = OmegaConf.select(hc, "sweeper.params", default=None) if hc is not None else None
    keys += [str(k) for k in (params or {})]
    return list(dict.fromkeys(k.lstrip("+~") for k in keys))


def run_group(name: str) -> str:
    """The W&B group of a run: its name alone, or for every job of one `-m` sweep the same
    `<name>-<sweep folder>` (e.g. `infer-2026-11-25_10-40-00`), so the grouped view is the sweep."""
    hc = _sweep()
    return f"{name}-{Path(hc.sweep.dir).name}" if hc is not None else str(name)


def job_name(name: str) -> str:
    """The W&B name of a run: its name alone, or for a sweep job what differs between the jobs
    (`method=tog`, `model.lr=3e-05,model.head_lr=0.001`), read from this job's overrides."""
    hc = _sweep()
    if hc is None:
        return str(name)
    varying = set(swept_keys(hc))
    mine = [o for o in hc.overrides.task if o.split("=", 1)[0].lstrip("+~") in varying]
    return ",".join(mine) or hc.job.override_dirname or f"{name}-{hc.job.num}"


NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})  # /proc/cpuinfo: the CPU multiplies bfloat16 itself


def cpu_precision(cpuinfo: str = "/proc/cpuinfo") -> str:
    """`trainer=cpu_bf16`'s precision: bf16-mixed where the CPU multiplies bfloat16 natively (AVX512-BF16 or
    AMX, read from `cpuinfo`), else 32-true: a CPU without them would emulate bfloat16, slower than
    float32. On a 2-core AMD EPYC with AVX512-BF16 a retriever training step took 0.75x the float32
    time (bench/results/bench_training_speed.json). Weights, gradients and the optimizer stay float32
    (autocast), and inference runs in float32 whatever trained the checkpoint."""
    try:
        flags = set(Path(cpuinfo).read_text().split())
    except OSError:
        return "32-true"
    return "bf16-mixed" if flags & NATIVE_BF16_FLAGS else "32-true"


def optuna_direction(mode: str) -> str:
    """A task's checkpoint `mode` (max for accuracies, min for losses) as Optuna's direction."""
    if mode not in ("max", "min"):
        raise ValueError(f"task.mode must be max or min, got {mode!r}")
    return "maximize" if mode == "max" else "minimize"


def build_graph(cfg: DictConfig):
    """The backend of `cfg.graph`, filled from the data config's KG file where it reads one."""
    from hydra.utils import instantiate
    from omegaconf.errors import InterpolationKeyError, InterpolationResolutionError

    target = cfg.graph.get("_target_")
    if "path" in cfg.graph and cfg.graph.get("store_path") is None:
        kb = OmegaConf.select(cfg, "data.kb_path", default=None)
        if kb is None:
            raise ValueError(
                f"graph <{target}> reads the KG file named by data.kb_path, and the data config sets "
                "none: give data.kb_path=FILE "
                "(or graph=sparql for a store that already holds the KG)")
    log.info("graph <%s>", target)
    try:
        return instantiate(cfg.graph)
    except (InterpolationKeyError, InterpolationResolutionError) as err:
        raise ValueError(f"graph <{target}>: {err}") from err


def graph_description(kg) -> str:
    """What a report says about the backend that really answered: class and where it reads from."""
    where = getattr(kg, "endpoint", None) or getattr(getattr(kg, "load_report", None), "path", None)
    graphs = getattr(kg, "graph_iris", None)
    if graphs:
        where = f"{where or 'store'}, graph {', '.join(graphs)}"
    return f"{type(kg).__name__}" + (f" ({where})" if where else "")


def quote_question(argv: list[str]) -> list[str]:
    """`question="what movies did [Ridley Scott] direct"` reaches us without the shell's quotes, and
    Hydra's override grammar reads `[...]` as a list; re-quote the value so it stays one string."""
    out = []
    for arg in argv:
        if arg.startswith("question=") and not arg[len("question="):].startswith(("'", '"')):
            value = arg[len("question="):].replace("\\", "\\\\").replace("'", "\\'")
            arg = f"question='{value}'"
        out.append(arg)
    return out


def compose_config(name: str | None, overrides: Sequence[str] = (), *, config_dir: str | Path,
                   root: str | Path | None = None, output_dir: str | Path | None = None) -> DictConfig:
    """conf/NAME.yaml composed with `overrides` as `python NAME.py OVERRIDES` sees it, outside
    `@hydra.main`: for tests, benchmarks and notebooks. Hydra's runtime config is set too, so code
    that reads it (`${hydra:...}`, HydraConfig.get()) works. `root` moves every path of the run
    (checkpoints, outputs) under one folder, its output directory to ROOT/run unless `output_dir`
    names another. The resolvers must be registered first (`register_resolvers`)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    GlobalHydra.instance().clear()  # a second compose in one process starts afresh
    with initialize_config_dir(config_dir=str(Path(config_dir).resolve()), version_base="1.3"):
        cfg = compose(config_name=name, overrides=list(overrides), return_hydra_config=True)
    HydraConfig().set_config(cfg)
    if root is not None or output_dir is not None:
        with open_dict(cfg):
            if root is not None:
                cfg.paths.root_dir = str(root)
            cfg.paths.output_dir = str(output_dir if output_dir is not None else Path(root) / "run")
    return cfg
