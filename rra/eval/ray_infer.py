"""Batch answering on Ray Data: `python infer.py runner=ray runner.num_workers=4`.

The driver (this process) loads the split once, cuts it into `num_shards` shards exactly as
`shard=i num_shards=n` does (rra.eval.shards: one directory each, with its manifest, run.json and
lock), and hands the questions not answered yet to Ray Data. `map_batches` runs them through a pool
of `num_workers` actors (`Answerer`), each of which builds the graph, the LLM and the method once
(or connects to the shared SPARQL store and LLM server the config names) and answers a batch at a
time. The answers come back to the driver, the only writer of the shards' predictions.jsonl, which
appends each one as it arrives; a driver killed mid-way loses only the batches in flight, and a run
started again with the same output dir asks only what is missing (whole shards that are complete
are not touched). At the end `rra.eval.merge` checks the shards and writes the run's
predictions.jsonl, metrics.json and summary.md, as a single-process run does.

On a cluster: `runner.address=auto` joins the running Ray cluster (`ray start --head` on one
machine, `ray start --address=HEAD:6379` on the others); the checkpoint and the KG file must then be
readable at the same path on every machine (a shared file system), or the KG served by one SPARQL
store (`graph=sparql graph.endpoint=...`).
"""
from __future__ import annotations

import json
import logging
import time
from contextlib import ExitStack
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict
from tqdm import tqdm

from rra.config import build_graph
from rra.eval import integrity, merge, report, shards
from rra.eval.run import (INPUT_ERRORS, answer_all, build, check_limit, load_split, oracle_of, question_seconds,
                          save_hydra_record)
from rra.records import QAExample

log = logging.getLogger("infer")


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ImportError("runner=ray needs Ray Data: pip install 'rra[ray]' (or pip install 'ray[data]')") from None
    return ray


class Answerer:
    """One Ray worker: the graph, the LLM and the method, built once from the run's config; then
    `__call__` answers a batch of questions (JSON strings) into predictions (JSON strings)."""

    def __init__(self, config: dict):
        cfg = OmegaConf.create(config)
        self.failed = None
        try:
            self.kg, self.llm, self.method = build(cfg)
        except Exception as err:
            # An input error (no checkpoint, a store down) is raised by the first batch instead: an
            # actor that dies while starting is restarted by Ray again and again, and its error
            # reaches the driver as text only, whereas a batch's error arrives as the exception itself.
            self.failed = input_error(err)
            if self.failed is None:
                raise
            return
        self.oracle = oracle_of(self.llm)
        self.batch_size = int(cfg.get("batch_size", 32))
        self.concurrency = int(cfg.get("concurrency", 1) or 1)
        self.question_seconds = question_seconds(cfg)  # bounds.max_seconds, as in one process

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        if self.failed is not None:  # one row that names the error: Ray would pass it on as text only
            err = self.failed
            return {"shard": np.array([-1]), "prediction": np.array(
                [json.dumps([type(err).__module__, type(err).__qualname__, str(err)])], dtype=object)}
        examples = [QAExample.from_dict(json.loads(s)) for s in batch["example"]]
        if self.oracle is not None:  # llm=oracle answers from the gold labels of what it is asked
            self.oracle.observe(examples, self.kg)
        lines = [report.json_line(pred.to_dict()) for _, pred in
                 answer_all(self.method, examples, self.batch_size, self.concurrency, self.question_seconds)]
        return {"shard": np.asarray(batch["shard"]), "prediction": np.array(lines, dtype=object)}


def worker_config(cfg: DictConfig) -> dict:
    """The config as plain values for the workers: resolved here (the workers have no Hydra
    runtime and no resolvers registered), without Hydra's own node."""
    cfg = cfg.copy()
    with open_dict(cfg):
        cfg.pop("hydra", None)
    return OmegaConf.to_container(cfg, resolve=True)


def shard_count(cfg: DictConfig, out: Path, num_shards: int | None, num_workers: int) -> int:
    """runner.num_shards, else num_shards, else the count of the shards already in `out` (a resumed
    run keeps its slicing), else one shard per worker."""
    if cfg.get("shard") is not None:
        raise shards.ShardError("runner=ray answers every shard; drop shard=..., or use runner=local for one shard")
    given = num_shards or cfg.get("num_shards")
    if given:
        return int(given)
    found = {int(shards.SHARD_DIR.match(d.name).group(2)) for d in shards.shard_dirs(out)}
    if len(found) == 1:
        return found.pop()
    return num_workers


def run_ray(cfg: DictConfig, num_workers: int = 2, num_shards: int | None = None, address: str | None = None,
            num_cpus: int | None = None, cpus_per_worker: float = 1, gpus_per_worker: float = 0) -> dict:
    """Answer `cfg.split` on `num_workers` Ray actors into `num_shards` shards, then merge them."""
    ray = import_ray()
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise shards.ShardError(f"runner.num_workers must be a positive integer, got {num_workers!r}")
    out = Path(cfg.paths.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    resume = bool(cfg.get("resume", True))
    with integrity.RunLock(out), ExitStack() as held:
        check_limit(cfg.get("limit"))
        count = shard_count(cfg, out, num_shards, num_workers)
        specs = [shards.ShardSpec(i, count) for i in range(count)]
        dirs = [out / s.dirname for s in specs]
        fp = integrity.fingerprint(cfg)
        digest = OmegaConf.select(cfg, "integrity.digest", default="sample")
        for d in dirs:  # no `shard=i` run may write into a shard while the driver does
            d.mkdir(exist_ok=True)
            held.enter_context(integrity.RunLock(d))
            integrity.check_resume(d, fp, resume, digest)
        save_hydra_record(cfg, out)  # only once every shard accepted the resume (a refusal rewrites nothing)
        examples = load_split(cfg, cfg.split, build_graph(cfg))  # the driver needs the questions only
        writers, todo = [], []
        for spec, d in zip(specs, dirs):
            part = shards.take(spec, cfg.split, examples, d, cfg.get("limit"), resume)
            writer = held.enter_context(report.PredictionWriter(d / report.PREDICTIONS, resume=resume,
                                                                redo=integrity.TRANSIENT))
            writers.append(writer)
            todo += [(spec.index, ex) for ex in part if ex.qid not in writer.done]
        if len(todo) < len(examples):
            log.info("resuming: %d of %d questions already answered in %s", len(examples) - len(todo),
                     len(examples), out)
        start = time.perf_counter()
        first = None
        if todo:
            first = answer_on_ray(ray, cfg, todo, writers, num_workers, address, num_cpus, cpus_per_worker,
                                  gpus_per_worker)
        wall = time.perf_counter() - start
        for w in writers:
            w.close()
        metrics = merge.merge(dirs, out, wall_s=wall if len(todo) == len(examples) else None, locked=True)
    metrics.update(new_questions=len(todo), num_workers=num_workers,
                   first_answer_s=None if first is None else round(first, 3))  # workers' start-up, mostly
    report.write_json(out / report.METRICS, metrics)
    if cfg.get("show_summary", True):
        print(report.terminal_text((out / report.SUMMARY).read_text(encoding="utf-8")))
    return metrics


def answer_on_ray(ray, cfg: DictConfig, todo: list, writers: list, num_workers: int, address, num_cpus,
                  cpus_per_worker: float, gpus_per_worker: float) -> float | None:
    """Stream `todo` ((shard, example) pairs) through the actor pool; write each answer as it returns.
    Returns the seconds until the first answers came back (the workers' start-up, mostly)."""
    started, start, first = not ray.is_initialized(), time.perf_counter(), None
    if started:  # else: the caller's session (a test's, a notebook's, a cluster's driver)
        ray.init(address=address, num_cpus=num_cpus, include_dashboard=False, log_to_driver=True)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False  # tqdm below counts questions
        items = [{"shard": i, "example": json.dumps(ex.to_dict(), ensure_ascii=True, default=str)} for i, ex in todo]
        batch = max(1, int(cfg.get("batch_size", 32)))
        # one batch per block (up to a cap): answers stream back a batch at a time, so a driver that
        # dies loses only the batches in flight
        blocks = max(1, min(-(-len(items) // batch), 200 * num_workers))
        ds = ray.data.from_items(items, override_num_blocks=blocks)
        ds = ds.map_batches(Answerer, fn_constructor_kwargs={"config": worker_config(cfg)}, batch_size=batch,
                            batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=num_workers),
                            num_cpus=cpus_per_worker, num_gpus=gpus_per_worker or None)
        with tqdm(total=len(todo), desc=f"ray x{num_workers} {cfg.split}", unit="q", dynamic_ncols=True) as bar:
            for out in ds.iter_batches(batch_size=None, batch_format="numpy"):
                for shard, line in zip(out["shard"], out["prediction"]):
                    if shard < 0:
                        raise worker_error(*json.loads(line))
                    writers[int(shard)].write(json.loads(line))
                bar.update(len(out["prediction"]))
                first = first if first is not None else time.perf_counter() - start
    finally:
        if started:
            ray.shutdown()
    return first


def worker_error(module: str, name: str, message: str) -> BaseException:
    """The input error a worker met, rebuilt in the driver (same class, same message), so that
    infer.py prints it in one line as it would for a single process."""
    import importlib

    cls = importlib.import_module(module)
    for part in name.split("."):
        cls = getattr(cls, part)
    err = cls.__new__(cls)
    BaseException.__init__(err, message)
    return err


def input_error(err: BaseException) -> BaseException | None:
    """The first of infer's input errors (rra.eval.run.INPUT_ERRORS) among the causes of `err`
    (Hydra wraps what a target raises in its own InstantiationException)."""
    todo, seen = [err], set()
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, INPUT_ERRORS):
            return e
        for name in ("__cause__", "__context__", "cause", "creation_task_error"):
            inner = getattr(e, name, None)
            if isinstance(inner, BaseException):
                todo.append(inner)
    return None
