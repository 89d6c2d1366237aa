"""Load test of `python serve.py` on loopback, against infer.py's batch path on the same questions.

    python bench/bench_serve.py builtin --ckpt checkpoints/retriever/best.ckpt
    python bench/bench_serve.py metaqa --ckpt checkpoints/metaqa/best.ckpt --n 500

1. `python infer.py` answers the first `--n` test questions (graph scorer, batches of 32): its
   predictions are the reference, its answering loop's wall time the batch path's throughput.
2. `python serve.py` with the same groups and checkpoint; for each level in `--clients` (1, 8, 32),
   that many clients each send `--requests` requests one after the other (one question each, with
   the topic entities infer.py used), over one keep-alive connection per client.
3. Per level: requests/s, p50/p95/p99 latency, errors (non-200 or an answer that differs from
   infer.py's: must be 0), the server's RSS, and the mean micro-batch size (/v1/info).

Writes bench/results/bench_serve_<dataset>.json (figures, command, machine and load). MetaQA figures:
the retriever was trained on MetaQA dev, the questions are from test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, machine  # noqa: E402  (bench/common.py)

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
DATASETS = {  # the overrides that pick each dataset's questions, the same for infer.py and serve.py
    "builtin": [],
    "metaqa": ["data=metaqa", "data.hop=2"],
}


def run_infer(overrides: list[str], n: int, out: Path) -> tuple[list[dict], dict]:
    """infer.py's batch path on the first `n` test questions: (predictions, metrics)."""
    cmd = [sys.executable, str(REPO / "infer.py"), *overrides, "split=test", f"limit={n}", "logger=none",
           "show_summary=false", "resume=false", f"hydra.run.dir={out}"]
    subprocess.run(cmd, check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return preds, json.loads((out / "metrics.json").read_text())


class Server:
    """`python serve.py` in a subprocess on a free loopback port."""

    def __init__(self, overrides: list[str], log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, str(REPO / "serve.py"), *overrides, f"port={self.port}", "log_level=warning"]
        self.log = log.open("w")
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)

    def __enter__(self) -> "Server":
        deadline = time.time() + 600
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve.py exited with {self.proc.returncode}; see {self.log.name}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("serve.py did not start within 600 s")

    def rss_mb(self) -> float:
        import psutil

        return round(psutil.Process(self.proc.pid).memory_info().rss / 2**20, 1)

    def __exit__(self, *exc) -> None:
        self.proc.terminate()  # SIGTERM: graceful shutdown
        try:
            self.proc.wait(timeout=60)
        finally:
            self.log.close()


async def load(url: str, reference: list[dict], clients: int, requests: int) -> dict:
    """`clients` concurrent clients, `requests` each; every answer checked against infer.py's."""
    latencies: list[float] = []
    errors: list[str] = []

    async def client(c: int) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=1)) as http:
            for k in range(requests):
                ref = reference[(c * requests + k) % len(reference)]
                body = {"question": ref["question"], "topic_entities": ref["topic_entities"]}
                t0 = time.perf_counter()
                try:
                    r = await http.post("/v1/answer", json=body)
                except httpx.HTTPError as err:
                    errors.append(f"{type(err).__name__}: {err}")
                    continue
                latencies.append(time.perf_counter() - t0)
                if r.status_code != 200 and ref["status"] not in ("unknown_entity", "no_topic_entity"):
                    errors.append(f"http {r.status_code}: {r.text[:200]}")
                    continue
                got = r.json().get("record", r.json())
                if (got["answers"], got["status"], [p["path"] for p in got["paths"]]) != \
                        (ref["answers"], ref["status"], [p["path"] for p in ref["paths"]]):
                    errors.append(f"answer differs from infer.py for {ref['qid']}: {got['answers'][:3]} vs {ref['answers'][:3]}")

    start = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    wall = time.perf_counter() - start
    lat = sorted(latencies)
    pct = lambda q: round(1000 * lat[min(len(lat) - 1, int(q * len(lat)))], 2) if lat else None  # noqa: E731
    return {"clients": clients, "requests": clients * requests, "wall_s": round(wall, 3),
            "req_s": round(clients * requests / wall, 1), "p50_ms": pct(0.50), "p95_ms": pct(0.95),
            "p99_ms": pct(0.99), "errors": len(errors), "error_examples": errors[:5]}


def bench(dataset: str, ckpt: str, n: int, clients: list[int], requests: int, extra: list[str], work: Path) -> dict:
    overrides = DATASETS[dataset] + [f"retriever.ckpt={ckpt}", "llm=none", "answer=graph"] + extra
    preds, metrics = run_infer(overrides, n, work / "infer")
    batch_q_s = metrics["n"] / metrics["wall_s"]
    levels = []
    with Server(overrides, work / "serve.log") as server:
        rss_start = server.rss_mb()
        for c in clients:
            before = httpx.get(f"{server.url}/v1/info").json()["batching"]
            level = asyncio.run(load(server.url, preds, c, requests))
            after = httpx.get(f"{server.url}/v1/info").json()["batching"]
            level["mean_batch"] = round((after["questions"] - before["questions"]) / max(1, after["batches"] - before["batches"]), 2)
            level["server_rss_mb"] = server.rss_mb()
            level["vs_batch_path"] = round(level["req_s"] / batch_q_s, 2)
            levels.append(level)
            print(f"{dataset} {c:>3} clients: {level['req_s']:>8} req/s  p50 {level['p50_ms']} ms  p95 {level['p95_ms']} ms  "
                  f"p99 {level['p99_ms']} ms  errors {level['errors']}  batch {level['mean_batch']}  "
                  f"rss {level['server_rss_mb']} MB  ({level['vs_batch_path']}x batch path)", flush=True)
    return {"dataset": dataset, "questions": len(preds), "checkpoint": ckpt, "overrides": overrides,
            "batch_path": {"q_s": round(batch_q_s, 1), "n": metrics["n"], "wall_s": metrics["wall_s"],
                           "hits@1": metrics.get("hits@1"), "batch_size": 32},
            "server_rss_start_mb": rss_start, "levels": levels}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=sorted(DATASETS))
    ap.add_argument("--ckpt", required=True, help="retriever checkpoint (builtin: checkpoints/retriever/best.ckpt)")
    ap.add_argument("--n", type=int, default=200, help="test questions (the first n)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--requests", type=int, default=50, help="requests per client")
    ap.add_argument("--out", default=None, help="results JSON (default bench/results/bench_serve_<dataset>.json)")
    ap.add_argument("overrides", nargs="*", help="more Hydra overrides for both infer.py and serve.py")
    args = ap.parse_args()
    ckpt = str(Path(args.ckpt).resolve())
    with tempfile.TemporaryDirectory(prefix="bench_serve_") as tmp:
        load_before = os.getloadavg()
        result = bench(args.dataset, ckpt, args.n, args.clients, args.requests, args.overrides, Path(tmp))
    result.update(command=" ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]), machine=machine(),
                  loadavg_before=[round(x, 2) for x in load_before],
                  date=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    if args.dataset == "metaqa":
        result["note"] = "retriever trained on MetaQA dev, questions from MetaQA test (2-hop)"
    out = Path(args.out) if args.out else RESULTS / f"bench_serve_{args.dataset}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    errors = sum(level["errors"] for level in result["levels"])
    print(f"wrote {out}; batch path {result['batch_path']['q_s']} q/s; errors {errors}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
