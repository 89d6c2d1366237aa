"""infer.py end to end: a tiny retriever trained by train.py into tmp_path, then infer on its test
split through the same Hydra config groups (compose API and a real `python infer.py -m` subprocess)."""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOY_CONF = REPO / "tests" / "models" / "conf"  # the retriever tests' toy KG + questions (data=toy)
sys.path.insert(0, str(REPO / "tests" / "models"))

from rra.config import quote_question  # noqa: E402
from rra.records import QAExample  # noqa: E402
from rra.training.run import train  # noqa: E402

SEARCH = f"hydra.searchpath=[file://{TOY_CONF}]"


@pytest.fixture(scope="module")
def toy_cfg(compose_cfg):
    """toy_cfg(name, root, overrides): the real train / infer config on the toy KG, paths under `root`."""
    return lambda name, root, overrides: compose_cfg(name, ["data=toy", SEARCH, *overrides], root)


@pytest.fixture(scope="module")
def trained_root(toy_cfg, tmp_path_factory) -> Path:
    """`python train.py` (tiny encoder, toy KG) publishing checkpoints/retriever/best.ckpt in tmp."""
    root = tmp_path_factory.mktemp("infer_root")
    cfg = toy_cfg("train", root, ["model=retriever_tiny", "trainer.max_epochs=3", "test=false",
                                  "callbacks.progress_bar=null"])
    train(cfg)
    assert (root / "checkpoints" / "retriever" / "best.ckpt").is_file()
    return root


def test_split_run_writes_outputs_and_resumes(toy_cfg, trained_root, tmp_path):
    from rra.eval.run import run_split

    cfg = toy_cfg("infer", trained_root, ["limit=10", "llm=none"])
    metrics = run_split(cfg, tmp_path)
    lines = (tmp_path / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 10 and metrics["n"] == 10 and metrics["new_questions"] == 10
    pred = json.loads(lines[0])
    assert {"qid", "answers", "paths", "triples", "status", "latency_s"} <= set(pred)
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["hits@1"] == metrics["hits@1"] and saved["hop_acc_n"] == 10
    summary = (tmp_path / "summary.md").read_text()
    assert "| Hits@1 (%) |" in summary
    # the method describes its own parts (rra.methods.QAMethod.describe)
    assert "best.ckpt" in summary and "- **rewriter**: template" in summary and "- **answer**: graph" in summary
    # same output dir: nothing is answered twice, the metrics cover all questions
    again = run_split(toy_cfg("infer", trained_root, ["limit=12", "llm=none"]), tmp_path)
    assert again["new_questions"] == 2 and again["n"] == 12
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 12


def test_llm_that_returns_nothing_costs_a_status_not_the_run(toy_cfg, trained_root, tmp_path):
    from rra.eval.run import run_split

    cfg = toy_cfg("infer", trained_root, ["limit=4", "llm=fake", "answer=llm", "rewriter=llm"])
    metrics = run_split(cfg, tmp_path)
    assert metrics["n"] == 4 and set(metrics["status"]) <= {"unparseable", "no_path"}
    assert metrics["llm_calls_per_q"] >= 1  # rewriter + answerer were asked
    pred = json.loads((tmp_path / "predictions.jsonl").read_text().splitlines()[0])
    assert any("empty reply" in e for e in pred["errors"])


def test_single_question_prints_paths_triples_and_answer(toy_cfg, trained_root, capsys):
    from rra.eval.run import answer_question

    cfg = toy_cfg("infer", trained_root, ["llm=none", "rewriter=template",
                                              "question='who directed [Movie 3]'"])
    pred = answer_question(cfg)
    out = capsys.readouterr().out
    assert pred.status == "ok" and "paths:" in out and "triples" in out and "answers:" in out
    # ranked answers with scores and the path that reached each; weak ones flagged, not answers
    cands = pred.extra["candidates"]
    assert [c["score"] for c in cands] == sorted((c["score"] for c in cands), reverse=True)
    assert f"1. {cands[0]['label']}  {cands[0]['score']:.4f}  via {' -> '.join(cands[0]['path'])}" in out
    cut = [c for c in cands if c["score"] < 0.1 * cands[0]["score"]]
    assert all(c["entity"] not in pred.answers for c in cut)
    assert ("below the answer cut-off" in out) == bool(cut[:10 - len(pred.answers)])
    missing = answer_question(toy_cfg("infer", trained_root, ["llm=none", "question='who directed [Zorro]'"]))
    assert missing.status == "unknown_entity"


def test_missing_checkpoint_is_a_clear_error(toy_cfg, tmp_path):
    from rra.eval.run import build

    cfg = toy_cfg("infer", tmp_path, ["llm=none"])
    with pytest.raises(Exception, match="python train.py"):
        build(cfg)


def test_quote_question_keeps_brackets_and_quotes():
    assert quote_question(["question=what did [A] do", "split=test"]) == \
        ["question='what did [A] do'", "split=test"]
    assert quote_question(["question=who's [B]"]) == ["question='who\\'s [B]'"]


@pytest.mark.slow
def test_multirun_subprocess_over_answer_modes(trained_root, tmp_path):
    env = {**os.environ, "WANDB_MODE": "disabled", "RRA_ROOT": "", "HYDRA_FULL_ERROR": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "models"), str(REPO)])}
    cmd = [sys.executable, str(REPO / "infer.py"), "-m", "data=toy", "logger=none", SEARCH,
           f"paths.root_dir={trained_root}", f"hydra.sweep.dir={tmp_path}", "limit=3", "llm=fake",
           "answer=graph,llm"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    runs = sorted(tmp_path.glob("*/metrics.json"))
    assert len(runs) == 2
    assert all(json.loads(p.read_text())["n"] == 3 for p in runs)
    # each job records its config and overrides (written by rra.eval.run under the run's lock)
    assert all("answer=" in (p.parent / ".hydra" / "overrides.yaml").read_text() for p in runs)


def test_a_refused_run_leaves_the_running_runs_directory_untouched(trained_root, tmp_path):
    """`python infer.py` into a directory another run holds exits with RunLockedError and writes
    nothing there: the holder's .hydra/config.yaml and overrides.yaml still describe the holder."""
    from rra.eval.integrity import RunLock

    env = {**os.environ, "WANDB_MODE": "disabled", "RRA_ROOT": "", "HYDRA_FULL_ERROR": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "models"), str(REPO)])}
    run = tmp_path / "run"
    base = [sys.executable, str(REPO / "infer.py"), "data=toy", "logger=none", SEARCH, f"paths.root_dir={trained_root}",
            f"hydra.run.dir={run}", "limit=3", "llm=none", "show_summary=false"]
    first = subprocess.run(base, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    assert run / ".hydra" / "config.yaml" in before and run / ".hydra" / "overrides.yaml" in before
    with RunLock(run):  # the first run is still writing
        second = subprocess.run(base + ["method=tog"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode != 0 and "another run" in second.stderr
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before


def test_default_config_reads_the_builtin_graph_and_test_split(cfg_infer):
    from rra.eval.run import build_graph, load_split

    cfg = cfg_infer(root=None)
    assert cfg.retriever.ckpt.endswith("checkpoints/retriever/best.ckpt")  # what train.py publishes
    assert cfg.method._target_ == "rra.pipeline.method.build_rra" and cfg.answer._target_ == "rra.pipeline.answer.GraphScorer"
    kg = build_graph(cfg)
    examples = load_split(cfg, "test", kg)
    assert len(examples) > 0 and all(kg.has_entity(e.topic_entities[0]) for e in examples)
    with pytest.raises(ValueError, match="no 'nope' question source"):
        load_split(cfg, "nope", kg)


def test_zero_shot_config_reaches_the_model_it_builds(cfg_infer, monkeypatch):
    """retriever=zero_shot: every setting in its config is a parameter of the factory, and a path's
    length comes from its words (length_rule path_text) unless the config says end_head."""
    from hydra.utils import instantiate

    from rra.models import retriever as retriever_module

    built = {}

    class Recorder:  # stands in for the Retriever: records its settings, loads no encoder
        def __init__(self, *args, **kwargs):
            built.update(kwargs)

        def to(self, device):
            return self

        def eval(self):
            return self

        def quantize(self, how):
            return self

    monkeypatch.setattr(retriever_module, "Retriever", Recorder)
    instantiate(cfg_infer(["retriever=zero_shot"]).retriever)
    assert built["length_rule"] == "path_text" and built["length_penalty"] == 0.08 and built["path_head"] == "scorer"
    instantiate(cfg_infer(["retriever=zero_shot", "retriever.length_rule=end_head"]).retriever)
    assert built["length_rule"] == "end_head"


def test_checkpoint_of_another_kg_warns_and_reads_its_relations(toy_cfg, trained_root, tmp_path, caplog):
    """The default relation scorer answers on a KG whose relations it never saw (the paper's classifier
    head refuses: tests/models/test_retriever.py); what it misses is named in a warning."""
    from rra.eval.run import build

    kb = tmp_path / "kb.txt"
    kb.write_text("A|likes|B\nB|likes|C\n")
    cfg = toy_cfg("infer", trained_root, ["llm=none", f"data.kb_path={kb}"])
    with caplog.at_level(logging.WARNING):
        _, _, method = build(cfg)
    assert "relation(s) this one does not have" in caplog.text and "reads this KG's own relations" in caplog.text
    p = method.answer(QAExample("who does [A] like", ["A"], ["B"], qid="x"))
    assert p.status == "ok" and p.answers == ["B"], p.errors


def test_baseline_with_concurrency_pools_llm_calls(toy_cfg, trained_root, tmp_path):
    """`concurrency=3`: a baseline answers three questions at a time; the LLM is wrapped in
    BatchingLLM and every question still gets its prediction, once, with its own call count."""
    from rra.eval.run import build, run_split
    from rra.llm import BatchingLLM

    overrides = ["limit=6", "llm=fake", "method=tog", "method.mode=llm", "concurrency=3"]
    _, llm, _ = build(toy_cfg("infer", trained_root, overrides))
    assert isinstance(llm, BatchingLLM)
    metrics = run_split(toy_cfg("infer", trained_root, overrides), tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert metrics["n"] == 6 and len({d["qid"] for d in lines}) == 6
    assert all(d["llm_calls"] >= 1 for d in lines) and metrics["llm_usage"]["calls"] == sum(d["llm_calls"] for d in lines)


def test_sparql_backends_report_graph_requests_per_question(toy_cfg, trained_root, tmp_path):
    """A batch of questions on the embedded store costs a few queries per question, not one per
    path per question, and the run reports how many (graph_requests_per_question)."""
    from rra.eval.run import run_split

    metrics = run_split(toy_cfg("infer", trained_root, ["limit=20", "llm=none", "graph=oxigraph",
                                                           "graph.graph_iri=http://rra.test/graph/toy"]), tmp_path)
    plain = run_split(toy_cfg("infer", trained_root, ["limit=20", "llm=none"]), tmp_path / "nx")
    assert metrics["hits@1"] == plain["hits@1"] and "graph_requests_per_question" not in plain
    assert 0 < metrics["graph_requests_per_question"] <= 2.0
    assert "graph requests / question" in (tmp_path / "summary.md").read_text()


def test_infer_on_a_named_graph_of_virtuoso(toy_cfg, trained_root, tmp_path, virtuoso):
    """`rra-kg load --virtuoso` bulk-loads the KG into a named graph; infer.py on graph=sparql
    scoped to it answers exactly as on NetworkX (the store's other graphs are not seen)."""
    import shutil

    from rra.eval.run import run_split
    from rra.graph.cli import main as rra_kg

    iri = "http://rra.test/graph/toy-infer"
    kb = tmp_path / "toy_kb.txt"
    shutil.copy(REPO / "tests" / "models" / "toy_kb.txt", kb)
    assert rra_kg(["load", str(kb), "--virtuoso", f"127.0.0.1:{virtuoso.sql_port}", "--graph", iri]) == 0
    overrides = ["limit=16", "llm=none", "graph=sparql", f"graph.endpoint={virtuoso.endpoint}",
                 f"graph.graph_iri={iri}", "graph.trust_env=false"]
    on_virtuoso = run_split(toy_cfg("infer", trained_root, overrides), tmp_path / "virtuoso")
    on_networkx = run_split(toy_cfg("infer", trained_root, ["limit=16", "llm=none"]), tmp_path / "nx")
    got = [json.loads(x)["answers"] for x in (tmp_path / "virtuoso" / "predictions.jsonl").read_text().splitlines()]
    want = [json.loads(x)["answers"] for x in (tmp_path / "nx" / "predictions.jsonl").read_text().splitlines()]
    assert got == want and on_virtuoso["hits@1"] == on_networkx["hits@1"]
    assert on_virtuoso["graph_requests_per_question"] <= 2.0


# -- run integrity ---------------------------------------------------------------------------
def test_resuming_with_another_setup_is_refused(toy_cfg, trained_root, tmp_path):
    from rra.eval.integrity import ResumeMismatchError
    from rra.eval.run import run_split

    run_split(toy_cfg("infer", trained_root, ["limit=6", "llm=none"]), tmp_path)
    with pytest.raises(ResumeMismatchError, match=r"method\._target_: .*build_rra.* -> .*ToG"):
        run_split(toy_cfg("infer", trained_root, ["limit=6", "llm=none", "method=tog"]), tmp_path)
    # the same setup resumes; resume=false starts over with the new one
    again = run_split(toy_cfg("infer", trained_root, ["limit=8", "llm=none"]), tmp_path)
    assert again["new_questions"] == 2 and again["n"] == 8
    fresh = run_split(toy_cfg("infer", trained_root, ["limit=6", "llm=none", "method=tog", "resume=false"]), tmp_path)
    assert fresh["method"] == "tog" and fresh["n"] == 6


def test_a_locked_output_dir_refuses_a_second_run(toy_cfg, trained_root, tmp_path):
    from rra.eval.integrity import RunLock, RunLockedError
    from rra.eval.run import run_split

    with RunLock(tmp_path):  # another run holds the directory
        with pytest.raises(RunLockedError, match="another run"):
            run_split(toy_cfg("infer", trained_root, ["limit=4", "llm=none"]), tmp_path)
    assert run_split(toy_cfg("infer", trained_root, ["limit=4", "llm=none"]), tmp_path)["n"] == 4


@pytest.mark.parametrize("limit", ["-1", "0", "abc", "2.5"])
def test_limit_must_be_null_or_positive(toy_cfg, trained_root, tmp_path, limit):
    from rra.eval.run import run_split

    with pytest.raises(ValueError, match="limit must be null"):
        run_split(toy_cfg("infer", trained_root, [f"limit={limit}", "llm=none"]), tmp_path)


FAILING_LLM = ["llm=fake", "+llm.default={_target_: rra.llm.base.LLMReply, text: '', error: 'http 500: down'}",
               "answer=llm"]


def test_llm_down_warns_counts_and_fails_under_strict(toy_cfg, trained_root, tmp_path):
    import math

    from rra.eval.run import RunFailedError, optimized_metric, run_split

    metrics = run_split(toy_cfg("infer", trained_root, ["limit=6", *FAILING_LLM]), tmp_path / "a")
    assert metrics["llm_answered"] == 0 and metrics["llm_asked_n"] == 6
    assert any("LLM answered only 0%" in w for w in metrics["warnings"])
    summary = (tmp_path / "a" / "summary.md").read_text()
    assert "**Warning:**" in summary and "answered by the LLM" in summary
    # a sweep must not read the graph fall-back's Hits@1 as the LLM's: the run reports itself failed
    assert metrics["run_failed"] is True and math.isnan(optimized_metric(metrics))
    assert "failed as a measurement of its method" in summary
    with pytest.raises(RunFailedError, match="strict=true"):
        run_split(toy_cfg("infer", trained_root, ["limit=6", "strict=true", *FAILING_LLM]), tmp_path / "b")
    plain = run_split(toy_cfg("infer", trained_root, ["limit=6", "llm=none"]), tmp_path / "c")
    assert plain["warnings"] == [] and "none used" in (tmp_path / "c" / "summary.md").read_text()
    assert plain["run_failed"] is False and optimized_metric(plain) == plain["hits@1"]


SERVER = {"down": True}


def flaky_server(prompt):
    """An LLM endpoint that is down until the test brings it back (same config both runs)."""
    from rra.llm.base import LLMReply

    return LLMReply("", error="http 503: down") if SERVER["down"] else "Gus"


def test_transient_failures_are_retried_on_resume_and_counted_once(toy_cfg, trained_root, tmp_path):
    from rra.eval.run import run_split

    flaky = ["llm=fake", "+llm.script={_target_: hydra.utils.get_method, path: test_infer.flaky_server}", "answer=llm"]
    SERVER["down"] = True
    first = run_split(toy_cfg("infer", trained_root, ["limit=5", *flaky]), tmp_path)
    assert first["status"].get("llm_error") == 5
    SERVER["down"] = False
    second = run_split(toy_cfg("infer", trained_root, ["limit=5", *flaky]), tmp_path)
    assert second["new_questions"] == 5 and second["n"] == 5  # asked again, each qid counted once
    assert "llm_error" not in second["status"]
    lines = (tmp_path / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 10  # the failed answers stay in the file; metrics read each qid's latest


def test_an_echo_llm_earns_lenient_credit_but_no_strict_credit(toy_cfg, trained_root, tmp_path, katan):
    """llm-katan's echo backend repeats the prompt, knowledge included: the paper's lenient rule
    (a gold answer anywhere in the reply) credits it; the committed-answer metric does not."""
    from rra.eval.run import run_split

    url = katan()
    overrides = ["limit=12", "llm=openai", f"llm.base_url={url}", "llm.model=echo", "llm.api_key_env=KATAN_API_KEY",
                 "llm.max_retries=0", "answer=llm", "rewriter=triple"]
    metrics = run_split(toy_cfg("infer", trained_root, overrides), tmp_path)
    assert metrics["llm_asked_n"] == 12 and metrics["llm_answered"] == 100
    assert metrics["hits@1"] >= 50 and metrics["hits@1_strict"] <= 10
    summary = (tmp_path / "summary.md").read_text()
    assert "Hits@1, first answer only" in summary


@pytest.mark.parametrize("rewriter", ["triple", "template", "none", "llm"])
@pytest.mark.parametrize("answer", ["graph", "llm", "choice"])
def test_every_rewriter_and_answer_option_builds_and_answers(toy_cfg, trained_root, rewriter, answer):
    """Every option of the rewriter= and answer= groups (the trained rewriter has its own tests)
    instantiates through conf/method/rra.yaml and answers; `rewriter=triple` once failed here
    (a step class without its own __init__ looked as if it took any keyword)."""
    from rra.eval.run import build, load_split

    cfg = toy_cfg("infer", trained_root, [f"rewriter={rewriter}", f"answer={answer}", "llm=fake"])
    kg, _, method = build(cfg)
    examples = load_split(cfg, "test", kg)[:2]
    preds = list(method.answer_batch(examples))
    assert [p.qid for p in preds] == [ex.qid for ex in examples]
    assert all(p.status in ("ok", "unparseable") and p.answers for p in preds), [p.errors for p in preds]
    assert method.describe()["rewriter"] == method.rewriter.name and method.describe()["answer"] == answer


# -- remote backends that die mid-run -------------------------------------------------------------
class OxigraphServe:
    """`oxigraph serve` of the toy KG on 127.0.0.1 (a store loaded once; start / kill -9 / start)."""

    def __init__(self, root: Path):
        import shutil
        import socket

        from rra.graph import read_triples, write_ntriples

        self.binary = shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))
        if self.binary is None:
            pytest.skip("the `oxigraph` server binary is not installed (pip install oxigraph)")
        self.store, nt = root / "store", root / "toy.nt"
        write_ntriples(nt, read_triples(REPO / "tests" / "models" / "toy_kb.txt")[0])
        subprocess.run([self.binary, "load", "--location", str(self.store), "--file", str(nt)], check=True,
                       capture_output=True, timeout=60)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url, self.proc, self.log = f"http://127.0.0.1:{self.port}/query", None, root / "serve.log"

    def start(self) -> "OxigraphServe":
        import time

        import httpx

        self.proc = subprocess.Popen([self.binary, "serve-read-only", "--location", str(self.store),
                                      "--bind", f"127.0.0.1:{self.port}"], stdout=open(self.log, "ab"),
                                     stderr=subprocess.STDOUT)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                if httpx.post(self.url, data={"query": "ASK {}"}, timeout=1, trust_env=False).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        pytest.fail(f"oxigraph serve did not start: {self.log.read_text()[-1000:]}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def kill_after(monkeypatch, n: int, kill) -> dict:
    """Call `kill()` right after the n-th prediction is written; returns {"at": monotonic time}."""
    import time

    from rra.eval import report

    state = {"written": 0, "at": None}
    write = report.PredictionWriter.write

    def counting(self, pred):
        write(self, pred)
        state["written"] += 1
        if state["written"] == n:
            kill()
            state["at"] = time.monotonic()

    monkeypatch.setattr(report.PredictionWriter, "write", counting)
    return state


def statuses(path: Path) -> tuple[list[str], dict]:
    from rra.eval.integrity import latest_per_qid

    latest = latest_per_qid([json.loads(x) for x in path.read_text().splitlines()])
    counts: dict = {}
    for d in latest:
        counts[d["status"]] = counts.get(d["status"], 0) + 1
    return [d["qid"] for d in latest], counts


def test_sparql_store_killed_mid_run_ends_fast_loses_nothing_and_resumes(toy_cfg, trained_root, tmp_path, monkeypatch):
    """200 questions on `oxigraph serve`, killed (-9) after the 30th answer: the run ends within
    seconds (deadline + circuit breaker, no fall-back ladder of failing requests), every question is
    in predictions.jsonl once, the rest as graph_error; with the server back, a resume answers them."""
    import time

    from rra.eval.run import run_split

    server = OxigraphServe(tmp_path).start()
    overrides = ["data.test.n=200", "llm=none", "graph=sparql", f"graph.endpoint={server.url}", "graph.trust_env=false",
                 "graph.cache_size=0", "graph.backoff=0.05", "batch_size=4", "show_summary=false"]
    state = kill_after(monkeypatch, 30, server.kill)
    try:
        metrics = run_split(toy_cfg("infer", trained_root, overrides), tmp_path / "run")
        after_kill = time.monotonic() - state["at"]
        qids, counts = statuses(tmp_path / "run" / "predictions.jsonl")
        assert after_kill < 30, f"the run took {after_kill:.1f} s after the kill"
        assert len(qids) == 200 == len(set(qids)) == metrics["n"]
        assert counts.get("ok", 0) >= 30 and counts.get("graph_error", 0) >= 150, counts
        pred = json.loads((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()[-1])
        assert any("connection refused" in e or "in a row" in e for e in pred["errors"]), pred["errors"]
        server.start()
        monkeypatch.undo()
        again = run_split(toy_cfg("infer", trained_root, overrides), tmp_path / "run")
        qids, counts = statuses(tmp_path / "run" / "predictions.jsonl")
        assert again["new_questions"] == 200 - 30 - (metrics["status"].get("ok", 0) - 30)
        assert len(qids) == 200 and "graph_error" not in counts and again["n"] == 200
    finally:
        server.kill()


def test_llm_server_killed_mid_run_ends_fast_loses_nothing_and_resumes(toy_cfg, trained_root, tmp_path, monkeypatch, katan):
    """The same with an OpenAI-compatible server (llm-katan, echo backend) answering for RRA."""
    import time

    from rra.eval.run import run_split

    url = katan()
    overrides = ["data.test.n=200", "llm=openai", f"llm.base_url={url}", "llm.model=echo",
                 "llm.api_key_env=KATAN_API_KEY", "llm.backoff_s=0.05", "answer=llm", "rewriter=triple",
                 "batch_size=8", "show_summary=false"]
    state = kill_after(monkeypatch, 24, lambda: katan.kill(url))
    metrics = run_split(toy_cfg("infer", trained_root, overrides), tmp_path / "run")
    after_kill = time.monotonic() - state["at"]
    qids, counts = statuses(tmp_path / "run" / "predictions.jsonl")
    assert after_kill < 30, f"the run took {after_kill:.1f} s after the kill"
    assert len(qids) == 200 == len(set(qids)) == metrics["n"]
    assert counts.get("llm_error", 0) >= 150, counts
    last = json.loads((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()[-1])
    assert any("unavailable:" in e and "in a row" in e for e in last["errors"]), last["errors"]  # the breaker
    katan(port=int(url.rsplit(":", 1)[1].split("/")[0]))
    monkeypatch.undo()
    monkeypatch.setenv("KATAN_API_KEY", "test-key")
    again = run_split(toy_cfg("infer", trained_root, overrides), tmp_path / "run")
    qids, counts = statuses(tmp_path / "run" / "predictions.jsonl")
    assert len(qids) == 200 and "llm_error" not in counts and again["n"] == 200


# -- resume fingerprints by content ---------------------------------------------------------------
def test_resume_stops_when_an_input_file_changed_and_names_it(toy_cfg, trained_root, tmp_path, monkeypatch):
    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path / "cache"))  # the digests cached across run dirs
    """Same config, same paths, different content: a KG with lines deleted, or a checkpoint
    overwritten in place (same size), stops the resume and says which input changed. Unchanged
    inputs are not read again (their digests are kept with size + mtime in run.json)."""
    import shutil

    from rra.eval import integrity
    from rra.eval.integrity import ResumeMismatchError
    from rra.eval.run import run_split

    kb, ckpt = tmp_path / "kb.txt", tmp_path / "best.ckpt"
    shutil.copy(REPO / "tests" / "models" / "toy_kb.txt", kb)
    shutil.copy(trained_root / "checkpoints" / "retriever" / "best.ckpt", ckpt)
    over = ["limit=4", "llm=none", f"data.kb_path={kb}", f"retriever.ckpt={ckpt}", "show_summary=false"]
    run_split(toy_cfg("infer", trained_root, over), tmp_path / "run")
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["inputs"]
    assert {"data.kb_path", "retriever.ckpt"} <= set(recorded)

    reads = []
    monkeypatch.setattr(integrity, "file_hash", lambda p, real=integrity.file_hash: reads.append(p) or real(p))
    assert run_split(toy_cfg("infer", trained_root, over[1:] + ["limit=6"]), tmp_path / "run")["new_questions"] == 2
    assert reads == []  # nothing changed: no input read again
    run_split(toy_cfg("infer", trained_root, over), tmp_path / "other-run")
    assert reads == []  # nor for a new run dir (~/.cache/rra/digests.json, here $RRA_CACHE_DIR)
    assert str(kb.resolve()) in json.loads((tmp_path / "cache" / "digests.json").read_text())

    lines = kb.read_text().splitlines(keepends=True)
    kb.write_text("".join(lines[:-5]))
    with pytest.raises(ResumeMismatchError, match=r"data\.kb_path \(.*kb\.txt\): content changed"):
        run_split(toy_cfg("infer", trained_root, over), tmp_path / "run")
    kb.write_text("".join(lines))

    data = bytearray(ckpt.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte of the weights, size unchanged
    ckpt.write_bytes(bytes(data))
    with pytest.raises(ResumeMismatchError, match=r"retriever\.ckpt \(.*best\.ckpt\): content changed"):
        run_split(toy_cfg("infer", trained_root, over), tmp_path / "run")


def test_skipped_kg_lines_are_counted_and_shown(toy_cfg, trained_root, tmp_path):
    """graph.on_error=skip: the bad lines are counted, and the first line numbers are in
    metrics.json and summary.md."""
    from rra.eval.run import run_split

    kb = tmp_path / "kb.txt"
    lines = (REPO / "tests" / "models" / "toy_kb.txt").read_text().splitlines()
    lines[2:2] = ["only|two", "a||b"]  # lines 3 and 4
    lines.append("x|^inverse|y")
    kb.write_text("\n".join(lines) + "\n")
    over = ["limit=3", "llm=none", f"data.kb_path={kb}", "graph.on_error=skip", "show_summary=false"]
    metrics = run_split(toy_cfg("infer", trained_root, over), tmp_path / "run")
    assert metrics["kg_skipped_lines"] == 3
    assert [r.split(":")[0] for r in metrics["kg_skipped_first"]] == ["line 3", "line 4", f"line {len(lines)}"]
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["kg_skipped_lines"] == 3
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "KG lines skipped" in summary and "line 4: empty head, relation or tail" in summary


def test_a_bad_question_file_is_one_clear_line_not_a_traceback(trained_root, tmp_path):
    env = {**os.environ, "WANDB_MODE": "disabled", "RRA_ROOT": "", "PYTHONPATH": str(REPO)}
    env.pop("HYDRA_FULL_ERROR", None)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "who directed [Movie 1]", "answers": ["Director 1"]}\n{"question": 3}\n')
    cmd = [sys.executable, str(REPO / "infer.py"), "data=files", f"data.kb_path={REPO / 'tests' / 'models' / 'toy_kb.txt'}",
           f"data.test_file={questions}", "logger=none", "llm=none", f"paths.root_dir={trained_root}",
           f"hydra.run.dir={tmp_path / 'run'}"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert f"error: DataFormatError: {questions}:2: missing or empty 'question'" in proc.stderr


def test_caches_and_stores_are_not_fingerprinted_by_content():
    """A cache directory or an on-disk store changes as runs use it; its content must not block a resume."""
    from rra.eval.integrity import _input_paths

    node = {"cache_dir": str(REPO / "tests"), "store_path": str(REPO / "tests"), "kb_path": str(REPO / "tests" / "models" / "toy_kb.txt"),
            "nested": {"supervision_cache": str(REPO / "tests")}}
    assert _input_paths(node, "data") == {"data.kb_path": str(REPO / "tests" / "models" / "toy_kb.txt")}


def test_strict_is_a_parameter_of_the_method_not_of_the_process(toy_cfg, trained_root, monkeypatch):
    from rra.eval.run import build
    from rra.methods import QAMethod

    monkeypatch.setattr(QAMethod, "strict", False)  # the tests' default off: what infer.py starts from
    _, _, lenient = build(toy_cfg("infer", trained_root, ["llm=none"]))
    _, _, strict = build(toy_cfg("infer", trained_root, ["llm=none", "strict=true"]))
    assert strict.strict and not lenient.strict and not QAMethod.strict
    assert "RRA_STRICT_ERRORS" not in os.environ


# -- issue 37 item 11: a refused resume rewrites nothing; temporary files; content digests --------
def test_a_refused_resume_leaves_the_runs_record_as_it_was(toy_cfg, trained_root, tmp_path):
    from rra.eval.integrity import ResumeMismatchError
    from rra.eval.run import run_split

    run_split(toy_cfg("infer", trained_root, ["limit=3", "llm=none", "show_summary=false"]), tmp_path)
    before = {p: p.read_bytes() for p in (tmp_path / ".hydra").iterdir()}
    assert {p.name for p in before} == {"config.yaml", "hydra.yaml", "overrides.yaml"}
    with pytest.raises(ResumeMismatchError):
        run_split(toy_cfg("infer", trained_root, ["limit=3", "llm=none", "method=tog"]), tmp_path)
    assert {p: p.read_bytes() for p in (tmp_path / ".hydra").iterdir()} == before


def test_a_killed_runs_temporary_file_is_removed_by_the_next_run(toy_cfg, trained_root, tmp_path, monkeypatch):
    from rra.eval import report
    from rra.eval.run import run_split

    run_split(toy_cfg("infer", trained_root, ["limit=3", "llm=none", "show_summary=false"]), tmp_path)
    left = tmp_path / ".predictions.jsonl.99999.tmp"  # a resume killed (-9) while rewriting the answers
    left.write_bytes(b"x" * 1_000_000)
    (tmp_path / ".run.json.tmp").write_text("{")
    run_split(toy_cfg("infer", trained_root, ["limit=4", "llm=none", "show_summary=false"]), tmp_path)
    assert not left.exists() and not (tmp_path / ".run.json.tmp").exists()
    # interrupted in the middle of the rewrite: no copy left behind, the answers as they were
    monkeypatch.setattr(report.os, "fsync", lambda fd: (_ for _ in ()).throw(KeyboardInterrupt()))
    kept = (tmp_path / "predictions.jsonl").read_bytes()
    with pytest.raises(KeyboardInterrupt):
        report.replace_lines(tmp_path / "predictions.jsonl", ["{}\n"])
    assert list(tmp_path.glob(".*.tmp")) == [] and (tmp_path / "predictions.jsonl").read_bytes() == kept


@pytest.mark.parametrize("where, refused_by", [("first block", {"sample", "content"}), ("between blocks", {"content"})])
def test_an_edit_that_keeps_size_and_mtime_is_seen_by_content_digests(toy_cfg, trained_root, tmp_path, where, refused_by):
    """A KG edited in place, its size and mtime restored: `integrity.digest=sample` (the default)
    sees it where one of its 16 sampled blocks changed, `content` wherever it is, `stamp` never."""
    import shutil

    from rra.eval import integrity
    from rra.eval.integrity import ResumeMismatchError
    from rra.eval.run import run_split

    kb = tmp_path / "kb.txt"
    shutil.copy(REPO / "tests" / "models" / "toy_kb.txt", kb)
    with kb.open("a") as f:  # past 1 MB, so that the sample does not read all of it
        f.writelines(f"filler_{i}|unrelated_to|filler_{i + 1}\n" for i in range(80_000))
    size = kb.stat().st_size
    step = (size - integrity.SAMPLE_BLOCK) // (integrity.SAMPLE_BLOCKS - 1)
    where = 10 if where == "first block" else integrity.SAMPLE_BLOCK + (step - integrity.SAMPLE_BLOCK) // 2
    assert step > 2 * integrity.SAMPLE_BLOCK  # there is a gap between the first two sampled blocks
    for mode in ("stamp", "sample", "content"):
        out = tmp_path / mode
        over = ["limit=2", "llm=none", f"data.kb_path={kb}", "show_summary=false", f"integrity.digest={mode}"]
        run_split(toy_cfg("infer", trained_root, over), out)
        stat = kb.stat()
        data = bytearray(kb.read_bytes())
        while data[where] not in b"0123456789":  # a digit of an id: the KG still reads
            where += 1
        data[where] = ord("1") if data[where] != ord("1") else ord("2")
        kb.write_bytes(bytes(data))
        os.utime(kb, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert kb.stat().st_size == stat.st_size and kb.stat().st_mtime_ns == stat.st_mtime_ns
        if mode in refused_by:
            with pytest.raises(ResumeMismatchError, match=r"data\.kb_path \(.*kb\.txt\): content changed"):
                run_split(toy_cfg("infer", trained_root, over + ["limit=3"]), out)
        else:
            assert run_split(toy_cfg("infer", trained_root, over + ["limit=3"]), out)["new_questions"] == 1
