"""Load test of `python serve.py` on loopback, against infer.py's batch path on the same questions.

    python -m bench.bench_serve builtin --ckpt checkpoints/retriever/best.ckpt
    python -m bench.bench_serve metaqa --ckpt checkpoints/metaqa/best.ckpt

Every request asks a question the server has not seen (the retriever caches encodings, so a
repeated question would be cheaper): the levels (`--clients` 1, 8, 32, each client sending
`--requests` requests one after the other) use consecutive, disjoint blocks of the split's first
questions (built-in: train split, 1,500; MetaQA 2-hop: test split), each starting at a multiple of 32.
Within a level the clients take the block's questions round robin (client c: c, c + clients, ...), so
the 32 requests in flight at 32 clients are the questions of one of infer.py's batches: the cost of
a batch depends on its questions, and the comparison is of serving, not of batch composition.
1. `python infer.py` answers all of them (graph scorer, batches of 32): its predictions are the
   reference, and per level the batch path's throughput on that level's own questions (their
   predictions' latency_s, each question's share of its batch's time, plus the loop's other time per
   question) is what `vs_batch_path` compares with.
2. `python serve.py` with the same groups and checkpoint takes the levels, one question per
   request with the topic entities infer.py used, one keep-alive connection per client.
3. Per level: requests/s, p50/p95/p99 latency, errors (non-200 or an answer that differs from
   infer.py's: must be 0), the server's RSS, the mean micro-batch size and the answering thread's
   busy share (/v1/info).
`--rounds` (default 3) repeats 1 and 2 with fresh processes, alternating which goes first; the
figures are the rounds' medians (the ratio: the median of the rounds' ratios, with their range).

Writes bench/results/bench_serve_<dataset>.json (figures, command, machine and load). MetaQA figures:
the retriever was trained on MetaQA dev, the questions are from test.
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import REPO, RESULTS, Run, arguments, free_port
from rra.serve.adapter import INPUT_STATUSES  # a question naming no KG entity: the server's 422
BATCH = 32  # infer.py's batch_size (its default) and the server's batching.max_batch
DATASETS = {  # the overrides that pick each dataset's questions (the same for infer.py and serve.py), split
    "builtin": ([], "train"),
    "metaqa": (["data=metaqa", "data.hop=2"], "test"),
}


def run_infer(overrides: list[str], split: str, n: int, out: Path) -> tuple[list[dict], dict]:
    """infer.py's batch path on the first `n` questions of `split`: (predictions, metrics)."""
    cmd = [sys.executable, str(REPO / "infer.py"), *overrides, f"split={split}", f"limit={n}", "logger=none",
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


class Connection:
    """A lean HTTP/1.1 keep-alive client for the load (asyncio streams; a few tens of microseconds a
    request). The load generator shares this 2-core machine with the server: httpx's ~1-2 ms of CPU
    per request, taken one after another for 32 clients in one process, left the server's answering
    thread idle between micro-batches while the next requests were written, so it measured the
    client as much as the server."""

    def __init__(self, url: str):
        self.host, _, port = url.removeprefix("http://").partition(":")
        self.port = int(port)
        self.reader = self.writer = None

    async def post(self, path: str, body: dict) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = json.dumps(body).encode()
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" not in headers:
            raise ValueError(f"response without content-length: {lines[0]}")
        return status, await self.reader.readexactly(int(headers["content-length"]))

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()


def check(ref: dict, status: int, body: bytes) -> str | None:
    """Why a reply is wrong (a non-200, or an answer that differs from infer.py's), else None."""
    if status != 200 and ref["status"] not in INPUT_STATUSES:
        return f"http {status}: {body[:200]!r}"
    reply = json.loads(body)
    got = reply.get("record", reply)
    if (got["answers"], got["status"], [p["path"] for p in got["paths"]]) != \
            (ref["answers"], ref["status"], [p["path"] for p in ref["paths"]]):
        return f"answer differs from infer.py for {ref['qid']}: {got['answers'][:3]} vs {ref['answers'][:3]}"
    return None


async def load(url: str, reference: list[dict], clients: int, requests: int) -> dict:
    """`clients` concurrent clients, `requests` each, client c asking reference[c::clients] (round robin:
    the requests in flight at any time are consecutive questions, as infer.py's batches are);
    every answer checked against infer.py's (after the level: checking is the client's work, not the
    server's, and would otherwise sit between a reply and the next request)."""
    latencies: list[float] = []
    errors: list[str] = []
    replies: list[tuple[dict, int, bytes]] = []

    async def client(c: int) -> None:
        conn = Connection(url)
        try:
            for ref in reference[c::clients][:requests]:
                body = {"question": ref["question"], "topic_entities": ref["topic_entities"]}
                t0 = time.perf_counter()
                try:
                    status, data = await asyncio.wait_for(conn.post("/v1/answer", body), 120)
                except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as err:
                    errors.append(f"{type(err).__name__}: {err}")
                    await conn.close()
                    conn = Connection(url)
                    continue
                latencies.append(time.perf_counter() - t0)
                replies.append((ref, status, data))
        finally:
            await conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    wall = time.perf_counter() - start
    errors += [e for e in (check(*r) for r in replies) if e]
    lat = sorted(latencies)
    pct = lambda q: round(1000 * lat[min(len(lat) - 1, int(q * len(lat)))], 2) if lat else None  # noqa: E731
    return {"clients": clients, "requests": clients * requests, "wall_s": round(wall, 3),
            "req_s": round(clients * requests / wall, 1), "p50_ms": pct(0.50), "p95_ms": pct(0.95),
            "p99_ms": pct(0.99), "errors": len(errors), "error_examples": errors[:5]}


def serve_levels(overrides: list[str], reference: list[dict], clients: list[int], starts: list[int],
                 requests: int, log: Path) -> tuple[list[dict], float]:
    """A fresh `python serve.py` taking the levels one after the other: (per level figures, RSS at start)."""
    levels = []
    with Server(overrides, log) as server:
        rss_start = server.rss_mb()
        for c, start in zip(clients, starts):
            before_info = httpx.get(f"{server.url}/v1/info").json()["batching"]
            level = asyncio.run(load(server.url, reference[start:start + c * requests], c, requests))
            level["questions"] = [start, start + c * requests]
            after_info = httpx.get(f"{server.url}/v1/info").json()["batching"]
            level["mean_batch"] = round((after_info["questions"] - before_info["questions"])
                                        / max(1, after_info["batches"] - before_info["batches"]), 2)
            # the answering thread's share of the level's wall time (1.0: it never waited for requests)
            # and its throughput while answering (the rest is the HTTP turn-around between batches)
            busy = after_info["busy_s"] - before_info["busy_s"]
            level["worker_busy"] = round(busy / level["wall_s"], 3)
            level["worker_q_s"] = round(level["requests"] / max(busy, 1e-9), 1)
            level["server_rss_mb"] = server.rss_mb()
            level["loadavg"] = [round(x, 2) for x in os.getloadavg()]
            levels.append(level)
    return levels, rss_start


def batch_path_q_s(preds: list[dict], metrics: dict, lo: int, hi: int) -> float:
    """infer.py's throughput on questions [lo, hi) of its run: their predictions' latency_s (each
    question's share of its batch's encoder and graph work) plus the answering loop's time that no
    latency_s accounts for (writing predictions.jsonl, gold labels, the method's untimed steps),
    spread evenly over the run's questions."""
    rest = (metrics["wall_s"] - sum(p.get("latency_s") or 0 for p in preds)) / len(preds)
    return (hi - lo) / (sum(p.get("latency_s") or 0 for p in preds[lo:hi]) + (hi - lo) * rest)


def summarize(clients: int, requests: int, start: int, rounds: list[dict]) -> dict:
    """A level over its rounds: the medians, the median of the rounds' ratios with their range, and
    the pooled ratio (all rounds' requests over all their server time, against the same questions'
    batch-path time), which a single slow round moves less than it moves the range."""
    ratios = sorted(level["vs_batch_path"] for level in rounds)
    med = lambda key: round(statistics.median(level[key] for level in rounds), 3)  # noqa: E731
    # the same requests in both: the ratio of the batch path's time to the server's
    pooled = (sum(level["requests"] / level["batch_path_q_s"] for level in rounds)
              / sum(level["wall_s"] for level in rounds))
    return {"clients": clients, "requests": clients * requests, "questions": [start, start + clients * requests],
            "rounds": len(rounds), "req_s": med("req_s"), "batch_path_q_s": med("batch_path_q_s"),
            "vs_batch_path": round(statistics.median(ratios), 3), "vs_batch_path_range": [ratios[0], ratios[-1]],
            "vs_batch_path_pooled": round(pooled, 3),
            "p50_ms": med("p50_ms"), "p95_ms": med("p95_ms"), "p99_ms": med("p99_ms"),
            "errors": sum(level["errors"] for level in rounds),
            "error_examples": [e for level in rounds for e in level["error_examples"]][:5],
            "mean_batch": med("mean_batch"), "worker_busy": med("worker_busy"), "worker_q_s": med("worker_q_s"),
            "server_rss_mb": max(level["server_rss_mb"] for level in rounds), "per_round": rounds}


def bench(dataset: str, ckpt: str, clients: list[int], requests: int, extra: list[str], work: Path,
          rounds: int = 1) -> dict:
    """`rounds` rounds, each a fresh infer.py run and a fresh server on the same questions (both start
    cold), in alternating order: on this machine the same run's speed moves by tens of percent from
    one minute to the next, so a single pair measures the drift as much as the server. A level's
    figures are the medians of its rounds; `vs_batch_path` is the median of the rounds' ratios (each
    against its own infer.py run)."""
    data, split = DATASETS[dataset]
    overrides = data + [f"retriever.ckpt={ckpt}", "llm=none", "answer=graph"] + extra
    # each level's questions start at a multiple of infer.py's batch size, so that with round-robin
    # clients the requests in flight at a time are the questions of one of infer.py's batches
    starts, n = [], 0
    for c in clients:
        starts.append(n)
        n = -(-(n + c * requests) // BATCH) * BATCH
    infer_runs, served = [], []
    for r in range(rounds):
        if r % 2 == 1:  # odd rounds: the server first (the questions are those of round 0's infer.py run)
            served.append(serve_levels(overrides, infer_runs[0][0], clients, starts, requests, work / f"serve_{r}.log"))
        infer_runs.append(run_infer(overrides, split, n, work / f"infer_{r}"))
        if r == 0 and len(infer_runs[0][0]) < n:
            raise ValueError(f"{dataset} {split} has {len(infer_runs[0][0])} questions; the levels need {n} "
                             "(fewer --requests)")
        if r % 2 == 0:
            served.append(serve_levels(overrides, infer_runs[0][0], clients, starts, requests, work / f"serve_{r}.log"))
    reference = infer_runs[0][0]  # every reply was checked against round 0's answers (identical_runs: all agree)
    levels = []
    for i, (c, start) in enumerate(zip(clients, starts)):
        per_round = [run_levels[i] for run_levels, _ in served]
        for level, (preds, metrics) in zip(per_round, infer_runs):
            level["batch_path_q_s"] = round(batch_path_q_s(preds, metrics, start, start + c * requests), 1)
            level["vs_batch_path"] = round(level["req_s"] / level["batch_path_q_s"], 3)
        summary = summarize(c, requests, start, per_round)
        levels.append(summary)
        print(f"{dataset} {c:>3} clients: {summary['req_s']:>8} req/s  p50 {summary['p50_ms']} ms  "
              f"p95 {summary['p95_ms']} ms  p99 {summary['p99_ms']} ms  errors {summary['errors']}  "
              f"batch {summary['mean_batch']}  busy {summary['worker_busy']}  rss {summary['server_rss_mb']} MB  "
              f"({summary['vs_batch_path']}x batch path, rounds {sorted(r['vs_batch_path'] for r in per_round)}, "
              f"pooled {summary['vs_batch_path_pooled']}x)", flush=True)
    answers = lambda preds: [(p["answers"], p["paths"] and [q["path"] for q in p["paths"]]) for p in preds]  # noqa: E731
    runs = [round(m["n"] / m["wall_s"], 1) for _, m in infer_runs]
    return {"dataset": dataset, "split": split, "questions": n, "requests_per_client": requests, "checkpoint": ckpt,
            "overrides": overrides, "rounds": rounds,
            "batch_path": {"q_s": round(statistics.median(runs), 1), "q_s_per_round": runs, "n": n, "batch_size": BATCH,
                           "hits@1": infer_runs[0][1].get("hits@1"),
                           "identical_runs": all(answers(p) == answers(reference) for p, _ in infer_runs)},
            "server_rss_start_mb": max(rss for _, rss in served), "levels": levels}


def parser():
    """The command line of `python -m bench.bench_serve`."""
    ap = arguments("bench_serve", __doc__)
    ap.add_argument("dataset", choices=sorted(DATASETS))
    ap.add_argument("--ckpt", required=True, help="retriever checkpoint (builtin: checkpoints/retriever/best.ckpt)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--requests", type=int, default=20, help="requests per client (each a new question)")
    ap.add_argument("--rounds", type=int, default=3, help="fresh infer.py + server pairs, alternating which goes first")
    ap.add_argument("--out", default=None, help="results JSON (default bench/results/bench_serve_<dataset>.json)")
    ap.add_argument("overrides", nargs="*", help="more Hydra overrides for both infer.py and serve.py")
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_serve", args)
    with tempfile.TemporaryDirectory(prefix="bench_serve_") as tmp:
        result = bench(args.dataset, str(Path(args.ckpt).resolve()), args.clients, args.requests, args.overrides,
                       Path(tmp), args.rounds)
    result["note"] = ("retriever trained on MetaQA dev, questions from MetaQA test (2-hop)" if args.dataset == "metaqa"
                      else "built-in KG, questions from its train split (the first ones; the test split has only 200)")
    run.write(result, args.out or RESULTS / f"bench_serve_{args.dataset}.json")
    errors = sum(level["errors"] for level in result["levels"])
    print(f"batch path {result['batch_path']['q_s']} q/s; errors {errors}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
