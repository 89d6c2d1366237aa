"""Fault matrix: what a run does when its SPARQL store or its LLM server fails, through infer.py's own
evaluation loop (rra.eval.run.run_split). Per fault: seconds to finish (and seconds after a mid-run
kill), questions per status, answers lost (qids missing from predictions.jsonl: must be 0), whether
the run reported itself failed, one error message as the user sees it, and for kills the resume
after the server is back.

    python -m bench.bench_faults --ckpt checkpoints/metaqa/best.ckpt --hop 1 --limit 200

SPARQL faults (graph scorer, no LLM): endpoint down at start, `oxigraph serve` killed (-9) mid-run,
a server that trickles one byte a second, a server that answers an HTML page, a private Virtuoso 7
(named graph) killed mid-run (skipped when virtuoso-t is absent). LLM faults (RRA with
the OpenAI-compatible backend answering from triples, NetworkX graph; llm-katan's echo backend on
127.0.0.1): wrong API key (401), HTTP 500 on every call, replies slower than the time-out, server
killed mid-run. MetaQA: retriever trained on the dev split, questions = first `--limit` of the test
split. Writes bench/results/bench_faults.json.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.common import (METAQA, METAQA_CKPT, REPO, RESULTS, Run, arguments, compose, free_port, loadavg, now,
                          oxigraph_serve, previous)
from rra.eval import report
from rra.eval.integrity import latest_per_qid
from rra.eval.run import run_split
from rra.graph.loaders import read_triples
from rra.graph.rdf import write_ntriples

SPARQL_FAULTS = ["sparql_ok", "sparql_down_at_start", "sparql_killed_mid_run", "sparql_trickle", "sparql_html",
                 "virtuoso_killed_mid_run"]
GRAPH_IRI = "http://rra.local/graph/metaqa"
LLM_FAULTS = ["llm_ok", "llm_401", "llm_500", "llm_timeout", "llm_killed_mid_run"]
NEEDS = {"sparql": "the oxigraph CLI", "virtuoso": "virtuoso-t", "llm": "llm-katan"}  # what a fault's servers need


def infer(overrides: list[str], out: Path, kill_after: int | None = None, kill=None) -> dict:
    """One infer.py run (compose + run_split) into `out`; with `kill_after`, `kill()` is called right
    after that many predictions are written (the time is recorded as metrics["killed_at"])."""
    cfg = compose("infer", overrides, output_dir=out)
    write, state = report.PredictionWriter.write, {"n": 0, "at": None, "qids": set()}

    def counting(self, pred):
        write(self, pred)
        state["n"] += 1
        state["qids"].add(pred.qid)
        if kill_after is not None and state["n"] == kill_after:
            kill()
            state["at"] = time.perf_counter()

    report.PredictionWriter.write = counting
    start = time.perf_counter()
    try:
        metrics = run_split(cfg, out)
    except Exception as err:  # a clear error is an outcome too (e.g. the store is down before the first question)
        metrics = {"error": f"{type(err).__name__}: {err}"}
    finally:
        report.PredictionWriter.write = write
    end = time.perf_counter()
    metrics["seconds"] = round(end - start, 2)
    metrics["written_qids"] = state["qids"]
    if state["at"] is not None:
        metrics["seconds_after_kill"] = round(end - state["at"], 2)
    return metrics


def summary(metrics: dict, out: Path, wanted: int) -> dict:
    latest = latest_per_qid(report.read_predictions(out / report.PREDICTIONS))
    errors = [e for d in latest if d.get("status") != "ok" for e in d.get("errors", [])]
    keep = ("error", "seconds", "seconds_after_kill", "hits@1", "run_failed", "llm_answered", "llm_calls_per_q",
            "graph_requests_per_question")
    return {**{k: metrics[k] for k in keep if k in metrics}, "statuses": metrics.get("status", {}),
            "questions": len(latest), "questions_missing": wanted - len({d["qid"] for d in latest}),
            # an answer lost = a question this run answered that predictions.jsonl does not hold
            "answers_lost": len(metrics["written_qids"] - {d["qid"] for d in latest}),
            "example_error": errors[-1][:300] if errors else None}


class FaultyEndpoint:
    """A loopback HTTP server that answers every POST badly: `trickle` (a JSON body, one byte a
    second) or `html` (200 with a proxy's login page)."""

    def __init__(self, mode: str):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    if mode == "html":
                        body = b"<!DOCTYPE html><html><head><title>Proxy login</title></head><body>sign in</body></html>"
                        self.send_response(200)
                        self.send_header("Content-Type", "text/html")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                    body = b'{"head": {"vars": []}, "results": {"bindings": []}}' + b" " * 600
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(1.0)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/query"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Katan:
    """llm-katan (echo backend) on 127.0.0.1, started with fault flags; kill -9 and restart."""

    def __init__(self, work: Path, **faults):
        import shutil

        self.binary = shutil.which("llm-katan") or shutil.which("llm-katan", path=str(Path(sys.executable).parent))
        self.port, self.work, self.faults, self.proc = free_port(), work, faults, None
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "Katan":
        import httpx

        args = [self.binary, "--model", "echo", "--backend", "echo", "--host", "127.0.0.1", "--port", str(self.port),
                "--stats-file", str(self.work / f"katan{self.port}.json"), "--disable-dashboard", "--log-level", "warning"]
        for k, v in self.faults.items():
            args += [f"--{k.replace('_', '-')}"] + ([] if v is True else [str(v)])
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                httpx.get(f"{self.url}/models", timeout=1, trust_env=False)
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("llm-katan did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def sparql_fault(fault: str, over: list[str], args, serve, out: Path) -> dict:
    """A SPARQL store that is down, dies mid-run, trickles bytes or answers HTML; `serve()` starts
    `oxigraph serve` on the MetaQA store: (process, URL), None without the oxigraph CLI."""
    if fault == "sparql_down_at_start":
        return summary(infer(over + [f"graph.endpoint=http://127.0.0.1:{free_port()}/query"], out), out, args.limit)
    if fault in ("sparql_trickle", "sparql_html"):
        server = FaultyEndpoint("trickle" if fault == "sparql_trickle" else "html")
        try:
            return summary(infer(over + [f"graph.endpoint={server.url}"], out), out, args.limit)
        finally:
            server.stop()
    served = serve()
    if served is None:
        return None
    proc, url = served
    over = over + [f"graph.endpoint={url}"]

    def stop():
        proc.kill()
        proc.wait()

    if fault == "sparql_ok":
        m = infer(over, out)
        stop()
        return summary(m, out, args.limit)
    result = summary(infer(over, out, args.kill_after, stop), out, args.limit)
    proc, _ = serve()  # the server is back (same store, same port): resume into the same directory
    again = infer([o for o in over if o != "resume=false"], out)
    proc.kill()
    proc.wait()
    return {**result, "resume": summary(again, out, args.limit)}


def virtuoso_fault(over: list[str], args, nt: Path, work: Path, out: Path) -> dict | None:
    """A private Virtuoso 7 (MetaQA in a named graph) killed mid-run, then back; None if not installed."""
    from rra.graph.virtuoso import VirtuosoServer, binaries

    if binaries() is None:
        return None
    server = VirtuosoServer(work / "virtuoso", free_port(), free_port()).start()
    server.load(nt, GRAPH_IRI)
    over = over + [f"graph.endpoint={server.endpoint}", f"graph.graph_iri={GRAPH_IRI}"]

    def kill():
        server.proc.kill()
        server.proc.wait()

    result = summary(infer(over, out, args.kill_after, kill), out, args.limit)
    server.start()  # the same database: the server is back
    again = infer([o for o in over if o != "resume=false"], out)
    server.stop()
    return {**result, "resume": summary(again, out, args.limit)}


def llm_fault(fault: str, base: list[str], args, work: Path, out: Path) -> dict | None:
    """llm-katan (echo) with a wrong key, errors on every call, replies past the time-out, or killed
    mid-run; None if llm-katan is not installed."""
    faults = {"llm_401": {"validate_keys": True, "api_keys": "openai=the-right-key"},
              "llm_500": {"error_rate": 1.0},
              "llm_timeout": {"latency_ms": int(args.llm_timeout * 1000 * 3)}}.get(fault, {})
    katan = Katan(work, **faults)
    if katan.binary is None:
        return None
    katan.start()
    os.environ["BENCH_FAULTS_KEY"] = "a-wrong-key" if fault == "llm_401" else "any"
    over = base + ["graph=networkx", "llm=openai", f"llm.base_url={katan.url}", "llm.model=echo",
                   "llm.api_key_env=BENCH_FAULTS_KEY", f"llm.timeout_s={args.llm_timeout}", "answer=llm",
                   "rewriter=triple"]
    try:
        if fault != "llm_killed_mid_run":
            return summary(infer(over, out), out, args.limit)
        result = summary(infer(over, out, args.kill_after, katan.kill), out, args.limit)
        katan.start()
        return {**result, "resume": summary(infer([o for o in over if o != "resume=false"], out), out, args.limit)}
    finally:
        katan.kill()


def parser():
    """The command line of `python -m bench.bench_faults`."""
    ap = arguments("bench_faults", __doc__)
    ap.add_argument("--ckpt", default=str(METAQA_CKPT))
    ap.add_argument("--hop", type=int, default=1)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--kill-after", type=int, default=30, help="answers written before a mid-run kill")
    ap.add_argument("--graph-timeout", type=float, default=5.0)
    ap.add_argument("--llm-timeout", type=float, default=5.0)
    ap.add_argument("--faults", nargs="+", default=SPARQL_FAULTS + LLM_FAULTS)
    ap.add_argument("--data-root", default=str(METAQA))
    ap.add_argument("--out", default=str(RESULTS / "bench_faults.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_faults", args)
    base = ["data=metaqa", f"data.hop={args.hop}", "split=test", f"limit={args.limit}",
            f"retriever.ckpt={args.ckpt}", f"batch_size={args.batch_size}", "show_summary=false", "resume=false",
            f"data.root={args.data_root}"]
    sparql = base + ["llm=none", "graph=sparql", "graph.trust_env=false", f"graph.timeout={args.graph_timeout}"]
    work = Path(tempfile.mkdtemp(prefix="bench_faults_"))
    nt = work / "kb.nt"
    if any(f.startswith(("sparql", "virtuoso")) for f in args.faults):
        write_ntriples(nt, *read_triples(Path(args.data_root) / "kb.txt")[:2])
    results, skipped, port = {}, {}, free_port()
    for fault in args.faults:
        print(f"-- {fault}", flush=True)
        if fault == "virtuoso_killed_mid_run":
            r = virtuoso_fault(sparql, args, nt, work, work / fault)
        elif fault.startswith("sparql"):
            r = sparql_fault(fault, sparql, args, lambda: oxigraph_serve(nt, work / "store", port=port), work / fault)
        else:
            r = llm_fault(fault, base, args, work, work / fault)
        if r is None:
            skipped[fault] = NEEDS[fault.split("_")[0]] + " not installed"
            continue
        # faults can be re-run one at a time: each says when and under what load
        results[fault] = {**r, "timestamp": now(), "loadavg": loadavg()}
        print(fault, json.dumps(results[fault]), flush=True)
    run.write({"faults": {**previous(args.out).get("faults", {}), **results}, "skipped": skipped,
               "note": f"MetaQA {args.hop}-hop test, first {args.limit} questions, batch {args.batch_size}; retriever "
                       "trained on the dev split (official train split unavailable). SPARQL faults: graph scorer on "
                       "graph=sparql (oxigraph serve); LLM faults: RRA answer=llm rewriter=triple on NetworkX with "
                       f"llm=openai against llm-katan --backend echo. Deadlines: graph.timeout={args.graph_timeout} "
                       f"s, llm.timeout_s={args.llm_timeout} s; circuit breakers at their defaults (3 failed "
                       "requests in a row, 30 s pause). A kill is kill -9 right after the --kill-after-th answer "
                       "is written.",
               "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                        text=True).stdout.strip()}, args.out)


if __name__ == "__main__":
    main()
