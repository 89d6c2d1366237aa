"""Bad input, as a new user and an attacker send it (issue 37): every case run through the code a user
runs (readers, infer.py's loop, train.py's, a live server on 127.0.0.1), and its outcome recorded:

    clear_error   refused with a message that names the problem (file:line, the field, the key)
    handled       accepted and dealt with as documented (bounded and flagged, counted, redacted)
    crash         a traceback, a plain-text 500, an exception nobody named
    silent_wrong  accepted without a word where it should have been refused or flagged
    leak          a reply shows a server path or address, or a run leaves a temporary file behind
    stall         the case ran past its time limit

    python -m bench.bench_bad_input [--before DIR] [--only world,readers,plans,real_files,server,runs,hub]

`--before DIR`: a checkout of the code before the fixes (e.g. `git worktree add DIR c2a2d3e`), whose
hub cases are measured the same way for the before/after figures (seconds, peak RSS). The hub cases
run in child processes with a memory limit (`--hub-memory-gb`) and a time limit (`--hub-timeout`).
The real WebQSP / CWQ rows are not downloadable here: the per-question rows are the hand-written
ones of bench/kgs/webqsp_rows.py and a Freebase-style world (bench/kgs/freebase_subgraphs, scale
0.3: RoG rows and NSM files, whose names file gives the true CVTs). Writes
bench/results/bench_bad_input.json.
"""
from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from bench.common import REPO, Run, arguments, compose

OUTCOMES = ("clear_error", "handled", "crash", "silent_wrong", "leak", "stall")
CASE_SECONDS = 120  # an in-process case that takes longer stalled


@dataclass
class Case:
    item: int  # the finding of issue 37 it covers
    name: str
    outcome: str
    message: str = ""
    seconds: float = 0.0
    figures: dict = field(default_factory=dict)


def run_case(item: int, name: str, fn, expect: str) -> Case:
    """Run `fn()`. expect="error": a DataFormatError / ValueError / FileNotFoundError naming its
    place is clear, no error is silent_wrong. expect="handled": `fn` returns (ok, message[, figures]);
    not ok is silent_wrong. Anything else raised is a crash."""
    from rra.records import DataFormatError

    start = time.perf_counter()
    try:
        got = fn()
        outcome, message, figures = ("silent_wrong", "accepted without a word", {}) if expect == "error" else _verdict(got)
    except (DataFormatError, ValueError, FileNotFoundError, KeyError) as err:
        outcome, message, figures = ("clear_error" if expect == "error" else "crash"), f"{type(err).__name__}: {err}", {}
    except Exception as err:  # noqa: BLE001 - a crash is an outcome to record
        outcome, message, figures = "crash", f"{type(err).__name__}: {err}", {}
    seconds = time.perf_counter() - start
    if seconds > CASE_SECONDS:
        outcome = "stall"
    case = Case(item, name, outcome, message[:400], round(seconds, 3), figures)
    print(f"[{case.outcome:12}] item {item:2} {name}: {case.message[:150]}", flush=True)
    return case


def _verdict(got) -> tuple[str, str, dict]:
    ok, message, *rest = got
    outcome = ok if isinstance(ok, str) else ("handled" if ok else "silent_wrong")
    return outcome, message, rest[0] if rest else {}


# -- readers (items 3, 4; the one JSON reader of issue 36) ---------------------------------------
def reader_cases(tmp: Path) -> list[Case]:
    from bench.kgs.webqsp_rows import NSM_ROW, ROG_ROWS, nsm_folder, write_jsonl

    from rra.data.qa_files import load_qa_file
    from rra.data.subgraph_formats import load_nsm, load_rog
    from rra.graph.subgraphs import QuestionGraphs

    def rog(**change):
        row = copy.deepcopy(ROG_ROWS[1])
        row.update({k: v for k, v in change.items() if v is not DROP})
        for k in [k for k, v in change.items() if v is DROP]:
            row.pop(k)
        return row

    def rog_file(name, row):
        return lambda: load_rog(str(write_jsonl(tmp / f"{name}.jsonl", [ROG_ROWS[0], row])), kg=QuestionGraphs())

    def nsm_file(name, row):
        return lambda: load_nsm(str(nsm_folder(tmp / name, [NSM_ROW, {**copy.deepcopy(NSM_ROW), **row}])),
                                kg=QuestionGraphs())

    cases = [run_case(4, f"rog_{name}", rog_file(name, rog(**change)), "error") for name, change in {
        "graph_missing": {"graph": DROP}, "graph_null": {"graph": None}, "graph_object": {"graph": {"a": 1}},
        "triple_of_two": {"graph": [["A", "r", "B"], ["A", "r"]]}, "triple_empty_name": {"graph": [["A", "", "B"]]},
        "a_entity_dict": {"a_entity": {"Padmé Amidala": 1}}, "a_entity_nested_list": {"a_entity": [["a", "b"]]},
        "q_entity_object": {"q_entity": [{"name": "x"}]}, "id_object": {"id": {"x": 1}}, "question_null": {"question": None},
    }.items()]
    cases += [run_case(4, f"nsm_{name}", nsm_file(name, change), "error") for name, change in {
        "subgraph_missing": {"subgraph": None}, "tuples_object": {"subgraph": {"tuples": {"a": 1}}},
        "tuple_of_two": {"subgraph": {"tuples": [["m.1", "r"]]}}, "answers_object": {"answers": {"kb_id": "m.1"}},
        "answer_id_list": {"answers": [{"kb_id": ["m.1"], "text": "x"}]}, "entities_string": {"entities": "m.09l3p"},
    }.items()]
    for name, text in {"lone_surrogate": b'{"question": "a \\ud83d b", "q_entity": ["A"], "graph": []}\n',
                       "not_utf8": b'\xff{"question": "q"}\n', "array_line": b"[1, 2]\n",
                       "nested_100k_deep": b"[" * 100_000 + b"\n", "torn_json": b'{"question": "q", "graph": [\n'}.items():
        for reader, load in (("rog", lambda p: load_rog(str(p), kg=QuestionGraphs())), ("plain", load_qa_file)):
            path = tmp / f"{reader}_{name}.jsonl"
            path.write_bytes(text)
            cases.append(run_case(4, f"json_{name}_{reader}_reader", lambda load=load, path=path: load(path), "error"))

    def bom():
        path = tmp / "bom.jsonl"
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROG_ROWS[2]).encode() + b"\n")
        got = load_rog(str(path), kg=QuestionGraphs())
        return got[0].qid == "WebQTrn-2", f"read, qid {got[0].qid}"

    def empty_graph():
        kg = QuestionGraphs()
        got = load_rog(str(write_jsonl(tmp / "empty.jsonl", ROG_ROWS + [rog(id="e", graph=[])])), kg=kg)
        return len(got) == 4, "read; the empty graph counted in a warning"

    def nsm_without_names():
        kg = QuestionGraphs()
        [ex] = load_nsm(str(nsm_folder(tmp / "nsm_plain")), kg=kg)
        with kg.scope(ex) as g:
            kept = len(list(g.all_triples()))
            spurious = [t.relation for t in g.all_triples() if "type.object.type" in t.relation and " > " in t.relation]
        report = kg.fold_report()
        ok = kept == 13 and not spurious and report == {"cvts_folded": 2, "unnamed_kept": 8}
        return ok, f"17 triples -> {kept} facts, {report}, spurious type relations {spurious}", {"triples_kept": kept, **report}

    def parquet_null_graph():
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp / "null.parquet"
        pq.write_table(pa.Table.from_pylist(ROG_ROWS[:2] + [rog(graph=None)]), path)
        return load_rog(str(path), kg=QuestionGraphs())

    cases += [run_case(4, "bom_first_line", bom, "handled"), run_case(4, "empty_graph_counted", empty_graph, "handled"),
              run_case(3, "nsm_without_names_file", nsm_without_names, "handled"),
              run_case(4, "parquet_graph_null", parquet_null_graph, "error")]
    return cases


DROP = object()


# -- question-file plans (item 10) --------------------------------------------------------------
def plan_cases(tmp: Path) -> list[Case]:
    from rra.data.qa_files import load_questions
    from rra.graph.networkx_graph import NetworkXGraph
    from rra.records import Triple

    facts = [("book/orchard", "written_by", "person/ilse"), ("book/orchard", "set_in", "place/vessmoor"),
             ("book/tide", "written_by", "person/ilse"), ("book/heron", "set_in", "place/vessmoor")]
    kg = NetworkXGraph([Triple(*t) for t in facts])
    base = {"question": "which books did [Ilse] set in [Vessmoor]", "topic_entities": ["person/ilse", "place/vessmoor"],
            "answers": ["book/orchard"]}

    def load(name, row, check=None):
        path = tmp / f"plan_{name}.jsonl"
        path.write_text(json.dumps(base) + "\n" + json.dumps({**base, **row}) + "\n")
        got = load_questions(str(path), kg=kg)
        return got if check is None else check(got)

    refused = {"relation_paths_empty": {"relation_paths": []},
               "relation_path_not_in_relation_paths": {"relation_paths": [["^written_by"], ["^set_in"]],
                                                       "relation_path": ["^set_in", "^written_by"]},
               "hops_against_path": {"relation_path": ["^written_by"], "hops": 2},
               "relation_not_in_kg": {"relation_path": ["^writen_by"]},
               "relation_paths_not_in_kg": {"relation_paths": [["^written_by"], ["^located_in"]]},
               "constraint_relation_not_in_kg": {"constraint": {"relation": "year", "op": ">", "value": 1990}}}
    cases = [run_case(10, name, lambda n=name, r=row: load(n, r), "error") for name, row in refused.items()]

    def warned(reason_start):
        return lambda got: (bool(got[1].extra.get("plan_warnings")) and got[1].extra["plan_warnings"][0].startswith(reason_start),
                            f"kept, warned: {got[1].extra.get('plan_warnings')}")
    doubtful = {"fewer_paths_than_anchors": ({"relation_paths": [["^written_by"]]}, "relation_paths gives 1"),
                "plan_contradicts_answers": ({"relation_paths": [["^written_by"], ["^set_in"]], "answers": ["book/heron"]},
                                             "the given plan reaches"),
                "path_contradicts_answers": ({"topic_entities": ["place/vessmoor"], "relation_path": ["^written_by"],
                                              "answers": ["book/tide"]}, "relation_path")}
    cases += [run_case(10, name, lambda n=name, r=row, c=start: load(n, r, warned(c)), "handled")
              for name, (row, start) in doubtful.items()]
    return cases


# -- real per-question files: inference and the oracle (items 1, 2) ------------------------------
TINY = ["model=retriever_tiny", "callbacks.early_stopping=null", "callbacks.progress_bar=null", "test=false"]


def real_file_cases(tmp: Path) -> list[Case]:
    from bench.kgs.webqsp_rows import ROG_ROWS, write_jsonl

    from rra.eval.run import run_split
    from rra.training.run import train

    files = [f"data.train_file={write_jsonl(tmp / 'train.jsonl', ROG_ROWS)}",
             f"data.val_file={write_jsonl(tmp / 'dev.jsonl', ROG_ROWS[:2])}"]
    test = write_jsonl(tmp / "test.jsonl", ROG_ROWS)
    train(compose("train", ["data=subgraphs", *TINY, "trainer.max_epochs=3", *files, "name=rows"], tmp))
    ckpt = tmp / "checkpoints" / "rows" / "best.ckpt"

    def infer_test_file_alone():
        m = run_split(compose("infer", ["data=subgraphs", f"data.test_file={test}", f"retriever.ckpt={ckpt}",
                                        "llm=none", "show_summary=false"], tmp), tmp / "item1")
        return m["n"] == 3, f"answered {m['n']} questions of the test file, statuses {m['status']}"

    def oracle(data):
        def run():
            m = run_split(compose("infer", ["data=subgraphs", "method=tog", "llm=oracle", "limit=6",
                                            "show_summary=false", *data], tmp), tmp / f"oracle{len(data)}")
            return m.get("llm_oracle") and m["hits@1"] > 0, f"ToG ceiling Hits@1 {m['hits@1']:.1f} on {m['n']}", \
                {"hits@1": m["hits@1"], "n": m["n"]}
        return run

    return [run_case(1, "infer_subgraphs_with_the_test_file_alone", infer_test_file_alone, "handled"),
            run_case(2, "oracle_on_the_generated_sample", oracle([]), "handled"),
            run_case(2, "oracle_on_webqsp_rows", oracle([f"data.test_file={test}"]), "handled")]


# -- hubs (item 5): child processes with a memory and a time limit, before and after ------------
HUB_CHILD = r'''
import json, sys, time
from pathlib import Path
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict
import rra.config
case, data, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
src = Path(rra.config.__file__).resolve().parents[1]
rra.config.register_resolvers(src)
start, result = time.perf_counter(), {}
try:
    if case == "walk_networkx":
        from rra.graph.networkx_graph import NetworkXGraph
        from rra.records import Triple
        kg = NetworkXGraph([Triple(*line.rstrip("\n").split("\t")) for line in open(data / "kb.tsv")])
        walks = kg.follow_path("usa", ["^nationality", "nationality", "^nationality"], limit=10000)
        result = {"instances": len(walks)}
    else:
        GlobalHydra.instance().clear()
        over = json.loads((data / f"{case}.json").read_text())
        with initialize_config_dir(config_dir=str(src / "conf"), version_base="1.3"):
            cfg = compose("infer", overrides=over, return_hydra_config=True)
        HydraConfig().set_config(cfg)
        with open_dict(cfg):
            cfg.paths.output_dir = str(out)
        from rra.eval.run import run_split
        m = run_split(cfg, out)
        preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
        result = {"status": m["status"], "answers": [len(p["answers"]) for p in preds],
                  "bounds": sorted({b for p in preds for b in p.get("extra", {}).get("bounds", [])})}
except BaseException as err:
    result = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
result["seconds"] = round(time.perf_counter() - start, 2)
print("RESULT " + json.dumps(result), flush=True)
'''


def hub_data(tmp: Path, people: int) -> Path:
    """A hub of `people` nationals (each born in a city, each city in a state) as a per-question
    file and as a KG file, with small countries to train on; retrievers trained on each."""
    from bench.kgs.webqsp_rows import write_jsonl

    from rra.training.run import train

    d = tmp / "hub"
    d.mkdir(parents=True, exist_ok=True)

    def facts(country, n):
        t = [(f"{country} person {i}", "nationality", country) for i in range(n)]
        t += [(f"{country} person {i}", "born_in", f"{country} city {i % 1000}") for i in range(n)]
        return t + [(f"{country} city {j}", "contained_by", f"{country} state {j % 50}") for j in range(min(n, 1000))]

    asks = [("who is from {}", ["^nationality"]), ("where were people from {} born", ["^nationality", "born_in"]),
            ("which states hold the birthplaces of people from {}", ["^nationality", "born_in", "contained_by"])]

    def rows(country, n, tag):
        g = [list(t) for t in facts(country, n)]
        return [{"id": f"{tag}-{k}", "question": q.format(country), "q_entity": [country], "graph": g,
                 "a_entity": [f"{country} {('person', 'city', 'state')[k]} {i}" for i in range(min(n, 3))]}
                for k, (q, _) in enumerate(asks)]

    small = [f"country{k}" for k in range(10)]
    write_jsonl(d / "train.jsonl", [r for k, c in enumerate(small) for r in rows(c, 4, f"t{k}")])
    write_jsonl(d / "dev.jsonl", rows(small[0], 4, "d"))
    write_jsonl(d / "hub.jsonl", rows("usa", people, "hub"))
    kb = facts("usa", people) + [t for c in small for t in facts(c, 4)]
    (d / "kb.tsv").write_text("".join("\t".join(t) + "\n" for t in kb))
    qa = lambda c, tag: [{"qid": f"{tag}-{k}", "question": q.format(f"[{c}]"), "topic_entities": [c],  # noqa: E731
                          "answers": [f"{c} person 1"], "relation_path": p} for k, (q, p) in enumerate(asks)]
    for name, items in (("train_q", [x for k, c in enumerate(small) for x in qa(c, f"t{k}")]), ("dev_q", qa(small[0], "d")),
                        ("test_q", qa("usa", "hub"))):
        write_jsonl(d / f"{name}.jsonl", items)
    files = ["data=files", f"data.kb_path={d / 'kb.tsv'}"]
    train(compose("train", [*TINY, "trainer.max_epochs=20", *files, f"data.train_file={d / 'train_q.jsonl'}",
                            f"data.val_file={d / 'dev_q.jsonl'}", "name=hubfiles"], d))
    train(compose("train", ["data=subgraphs", *TINY, "trainer.max_epochs=20", f"data.train_file={d / 'train.jsonl'}",
                            f"data.val_file={d / 'dev.jsonl'}", "name=hubrows"], d))
    common = ["logger=none", "llm=none", "show_summary=false", f"paths.root_dir={d}"]
    (d / "subgraph_infer.json").write_text(json.dumps(
        common + ["data=subgraphs", f"data.train_file={d / 'train.jsonl'}", f"data.val_file={d / 'dev.jsonl'}",
                  f"data.test_file={d / 'hub.jsonl'}", f"retriever.ckpt={d}/checkpoints/hubrows/best.ckpt"]))
    (d / "networkx_infer.json").write_text(json.dumps(
        common + files + [f"data.test_file={d / 'test_q.jsonl'}", f"retriever.ckpt={d}/checkpoints/hubfiles/best.ckpt"]))
    return d


def hub_child(src: Path, case: str, data: Path, out: Path, memory_gb: float, timeout: float) -> dict:
    """One hub case in a child process running the code under `src`: its result, wall seconds and
    peak RSS; killed at `timeout` (a stall) or by its memory limit."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (int(memory_gb * 2**30),) * 2)

    env = {**os.environ, "PYTHONPATH": str(src), "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1",
           "RRA_CACHE_DIR": str(out.parent / "cache")}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", HUB_CHILD, case, str(data), str(out)], cwd=src, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=limit)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    wall = time.perf_counter() - start
    found = [line for line in output.splitlines() if line.startswith("RESULT ")]
    result = json.loads(found[-1][7:]) if found else {"error": output.strip().splitlines()[-1:] or ["no output"]}
    if not found and wall >= timeout - 1:
        result["error"] = f"killed after {timeout:g} s (a stall)"
    return {**result, "wall_s": round(wall, 2), "peak_rss_mb": usage.ru_maxrss // 1024}


def hub_cases(tmp: Path, before: Path | None, memory_gb: float, timeout: float, people: int) -> list[Case]:
    data = hub_data(tmp, people)
    cases = []
    for case in ("walk_networkx", "subgraph_infer", "networkx_infer"):
        after = hub_child(REPO, case, data, tmp / f"after_{case}", memory_gb, timeout)
        old = hub_child(before, case, data, tmp / f"before_{case}", memory_gb, timeout) if before else None
        bounded = "error" not in after and (case == "walk_networkx" and after["instances"] <= 10_000 or
                                            case != "walk_networkx" and bool(after.get("bounds")))
        outcome = "stall" if "killed after" in after.get("error", "") else "handled" if bounded else \
            "crash" if "error" in after else "silent_wrong"
        message = (f"after: {after['wall_s']} s, peak {after['peak_rss_mb']} MB, {after.get('bounds') or after.get('instances')}"
                   + (f"; before: {old['wall_s']} s, peak {old['peak_rss_mb']} MB, {old.get('error') or old.get('status')}"
                      if old else ""))
        figures = {"after": after, **({"before": old} if old else {})}
        print(f"[{outcome:12}] item  5 hub_{case}: {message[:200]}", flush=True)
        cases.append(Case(5, f"hub_{case}", outcome, message[:600], after["wall_s"], figures))
    return cases


# -- the server (items 6-9) ---------------------------------------------------------------------
def server_cases(tmp: Path) -> list[Case]:
    import httpx
    import uvicorn

    from bench.common import free_port
    from rra.serve.app import create_app
    from rra.serve.service import Service

    service = Service.from_config(compose("serve", ["method=kgqp", "llm=none"], tmp))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    cases = []
    private = [str(REPO), str(Path.home()), str(tmp)]
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:  # one connection, kept alive
        def ask(item, name, method, path, body, status, kind):
            def run():
                if isinstance(body, bytes):
                    r = client.request(method, path, content=body, headers={"content-type": "application/json"})
                elif callable(body):
                    r = client.request(method, path, content=body(), headers={"content-type": "application/json"})
                else:
                    r = client.request(method, path, json=body)
                envelope = r.headers.get("content-type", "").startswith("application/json") and \
                    isinstance(r.json().get("error"), dict) and r.json()["error"].get("type") == kind
                after = client.post("/v1/answer", json={"question": "who wrote [The Narrow Tide]"})  # same connection
                if any(p in r.text for p in private):
                    return "leak", r.text[:300]
                if r.status_code >= 500 and not envelope:
                    return "crash", f"{r.status_code} {r.text[:200]}"
                ok = r.status_code == status and envelope and after.status_code == 200
                return ok, f"{r.status_code} {r.text[:250]}; next request on the connection: {after.status_code}"
            return run_case(item, name, run, "handled")

        cases += [
            ask(6, "surrogate_in_question", "POST", "/v1/answer", b'{"question": "who \\ud83d"}', 422, "invalid_text"),
            ask(6, "surrogate_in_id", "POST", "/v1/answer", b'{"question": "q", "id": "\\ud83d"}', 422, "invalid_text"),
            ask(6, "surrogate_in_topic_entities", "POST", "/v1/answer", b'{"question": "q", "topic_entities": ["\\ud83d"]}',
                422, "invalid_text"),
            ask(6, "surrogate_in_chat_message", "POST", "/v1/chat/completions",
                b'{"messages": [{"role": "user", "content": "who \\ud83d"}]}', 422, "invalid_text"),
            ask(7, "chat_text_part_not_a_string", "POST", "/v1/chat/completions",
                {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}, 422, "invalid_request"),
            ask(7, "body_not_utf8", "POST", "/v1/answer", b'{"question": "\xff\xfe"}', 400, "invalid_json"),
            ask(7, "body_nested_100k_deep", "POST", "/v1/answer", b'{"question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                400, "invalid_json"),
            ask(7, "body_50mb_chunked", "POST", "/v1/answer", lambda: iter([b"x" * 1_000_000] * 50), 413, "body_too_large"),
            ask(7, "body_2mb_declared", "POST", "/v1/answer", b"x" * 2_000_000, 413, "body_too_large"),
            ask(7, "no_such_route", "GET", "/v1/nothing", None, 404, "not_found"),
            ask(7, "wrong_method", "GET", "/v1/answer", None, 405, "method_not_allowed"),
        ]

        def info():
            text = client.get("/v1/info").text
            shown = [p for p in private if p in text]
            return ("leak" if shown else True), f"/v1/info names {shown or 'no server path'}; checkpoint: " \
                f"{json.loads(text).get('checkpoint')!r}, graph: {json.loads(text).get('graph')!r}"
        cases.append(run_case(8, "info_shows_no_server_paths", info, "handled"))
    server.should_exit = True
    thread.join(timeout=30)
    cases += [run_case(8, "graph_error_shows_no_store_address", lambda: graph_error_reply(tmp), "handled"),
              run_case(9, "edited_store_seen_after_ttl_and_on_clear", stale_cache, "handled")]
    return cases


def graph_error_reply(tmp: Path):
    """A server whose SPARQL store is down: the 502 names what failed, not the store's address."""
    from fastapi.testclient import TestClient

    from bench.common import build_method
    from rra.graph import SparqlGraph
    from rra.serve.app import create_app
    from rra.serve.service import Limits, Service

    hidden = "http://127.0.0.1:9/internal/sparql"  # the discard port: refused at once
    kg = SparqlGraph(hidden, trust_env=False, retries=0, timeout=2)
    service = Service(kg, None, build_method(kg, None, ["method=kgqp", "llm=none"]), Limits())
    with TestClient(create_app(service)) as c:
        r = c.post("/v1/answer", json={"question": "who wrote [The Narrow Tide]"})
    if "127.0.0.1:9" in r.text or "internal/sparql" in r.text:
        return "leak", r.text[:300]
    return r.status_code == 502 and r.json()["error"]["type"] == "graph_error", f"{r.status_code} {r.text[:250]}"


def stale_cache():
    """A SPARQL store edited while the server runs: the cached answer is trusted for
    graph_cache_ttl_s, then read again; clear_caches (SIGHUP) drops it at once."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from rra.graph import SparqlGraph
    from rra.graph.rdf import RdfMapping
    from rra.serve.service import Limits, Service

    m = RdfMapping()
    state = {"director": "Ridley Scott"}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"head": {"vars": ["e", "n"]}, "results": {"bindings": [
                {"e": {"type": "uri", "value": m.entity_iri("Alien")},
                 "n": {"type": "uri", "value": m.entity_iri(state["director"])}}]}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        kg = SparqlGraph(f"http://127.0.0.1:{httpd.server_address[1]}/query", trust_env=False, cache_ttl=0.5)
        first = kg.neighbors("Alien", "directed_by")
        state["director"] = "Dan O'Bannon"
        within = kg.neighbors("Alien", "directed_by")
        time.sleep(0.6)
        after_ttl = kg.neighbors("Alien", "directed_by")
        state["director"] = "James Cameron"
        kg.cache_ttl = None
        Service(kg, None, None, Limits()).clear_caches()
        after_clear = kg.neighbors("Alien", "directed_by")
    finally:
        httpd.shutdown()
        httpd.server_close()
    ok = first == within == ["Ridley Scott"] and after_ttl == ["Dan O'Bannon"] and after_clear == ["James Cameron"]
    return ok, f"before edit {first}, within the TTL {within}, after it {after_ttl}, after clear_caches {after_clear}"


# -- runs (items 11, 12) ------------------------------------------------------------------------
def run_cases(tmp: Path) -> list[Case]:
    import shutil

    from rra.eval import integrity
    from rra.eval.run import run_split
    from rra.training.run import optimized, train

    base = ["method=kgqp", "llm=none", "limit=3", "show_summary=false"]

    def refused_resume():
        out = tmp / "resume"
        run_split(compose("infer", base, tmp), out)
        before = {p.name: p.read_bytes() for p in (out / ".hydra").iterdir()}
        try:
            run_split(compose("infer", base + ["method=tog"], tmp), out)
            return False, "a resume with another method was accepted"
        except integrity.ResumeMismatchError as err:
            same = {p.name: p.read_bytes() for p in (out / ".hydra").iterdir()} == before
            return same, f"refused ({str(err)[:120]}...); .hydra/ {'unchanged' if same else 'REWRITTEN'}"

    def killed_temp_file():
        out = tmp / "temp"
        run_split(compose("infer", base, tmp), out)
        (out / ".predictions.jsonl.424242.tmp").write_bytes(b"x" * 43_000_000)
        run_split(compose("infer", base + ["limit=4"], tmp), out)
        left = [p.name for p in out.glob(".*.tmp")]
        return ("leak" if left else True), f"temporary files left: {left or 'none'}"

    def in_place_edit(mode):
        def run():
            kb = tmp / f"kb_{mode}.txt"
            shutil.copy(REPO / "rra" / "data" / "builtin" / "kb.txt", kb)
            over = base + ["data=files", f"data.kb_path={kb}", f"data.test_file={questions}",
                           f"integrity.digest={mode}"]
            out = tmp / f"edit_{mode}"
            run_split(compose("infer", over, tmp), out)
            stat, data = kb.stat(), bytearray(kb.read_bytes())
            i = data.index(b"_", 10)  # an id's underscore: the KG still reads
            data[i:i + 1] = b"-"
            kb.write_bytes(bytes(data))
            os.utime(kb, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            try:
                run_split(compose("infer", over + ["limit=4"], tmp), out)
                return False, f"digest={mode}: resumed over a KG edited in place (size and mtime restored)"
            except integrity.ResumeMismatchError as err:
                return True, f"digest={mode}: refused: {str(err)[:150]}"
        return run

    from rra.data.builtin import builtin_questions
    from rra.data.qa_files import save_qa_file

    questions = save_qa_file(builtin_questions("test")[:6], tmp / "builtin_test.jsonl")

    def one_epoch():
        cfg = compose("train", ["model=retriever_tiny", "callbacks.progress_bar=null", "trainer.max_epochs=1",
                                "trainer.limit_train_batches=5", "trainer.min_steps=0"], tmp / "short")
        metrics = train(cfg)
        value = optimized(cfg, metrics)
        return "val/path_acc_best" in metrics, f"validated at the last step: val/path_acc_best = {value}"

    return [run_case(11, "refused_resume_leaves_hydra_record", refused_resume, "handled"),
            run_case(11, "killed_resume_temp_file_swept", killed_temp_file, "handled"),
            run_case(11, "kg_edited_in_place_digest_sample", in_place_edit("sample"), "handled"),
            run_case(11, "kg_edited_in_place_digest_content", in_place_edit("content"), "handled"),
            run_case(12, "one_epoch_shorter_than_validation_interval", one_epoch, "handled")]


# -- a realistic world (items 3, 4): bench/kgs/freebase_subgraphs, RoG and NSM rows ---------------
def world_cases(tmp: Path, scale: float = 0.3) -> list[Case]:
    """Every row of a Freebase-style world in RoG format is read (none refused), and its NSM files
    without the names file fold CVTs against the truth the names file gives."""
    from bench.kgs.freebase_subgraphs import generate
    from rra.data.subgraph_formats import load_nsm, load_rog
    from rra.graph.cvt import CVTRule
    from rra.graph.subgraphs import QuestionGraphs, build_subgraph

    generate(str(tmp), scale, 0, nsm=True)

    def rog_rows():
        counts = {split: len(load_rog(str(tmp / f"{split}.jsonl"), kg=QuestionGraphs())) for split in ("train", "dev", "test")}
        return True, f"every row read and checked: {counts}", counts

    def nsm_without_names():
        named, plain = QuestionGraphs(), QuestionGraphs()
        examples = load_nsm(str(tmp / "nsm" / "test.jsonl"), kg=named)
        load_nsm(str(tmp / "nsm" / "test.jsonl"), kg=plain, names=str(tmp / "nsm" / "no_names.json"))
        truth = folded = right = facts_named = facts_plain = old_folded = old_facts = 0
        for ex in examples:
            key = ex.extra["subgraph"]
            g_named, cvts, _, _ = build_subgraph(named._sources[key](), CVTRule())
            sub = plain._sources[key]()
            g_plain, guess, _, _ = build_subgraph(sub, CVTRule())
            g_old, every, _, _ = build_subgraph(replace(sub, named=True), CVTRule())  # the rule before: every unnamed id
            truth, folded, right = truth + len(cvts), folded + len(guess), right + len(cvts & guess)
            facts_named, facts_plain = facts_named + g_named.stats().triples, facts_plain + g_plain.stats().triples
            old_folded, old_facts = old_folded + len(every), old_facts + g_old.stats().triples
        figures = {"questions": len(examples), "cvts": truth, "folded": folded, "real_entities_folded": folded - right,
                   "precision": round(right / max(folded, 1), 4), "recall": round(right / max(truth, 1), 4),
                   "facts_with_names": facts_named, "facts_without_names": facts_plain,
                   "before": {"folded": old_folded, "real_entities_folded": old_folded - truth, "facts": old_facts}}
        return figures["precision"] >= 0.99, (f"{folded} folded, {folded - right} of them real entities "
                                              f"(precision {figures['precision']}, recall {figures['recall']})"), figures

    return [run_case(4, "world_rog_rows_all_read", rog_rows, "handled"),
            run_case(3, "world_nsm_without_names_against_names", nsm_without_names, "handled")]


SECTIONS = {"world": world_cases, "readers": reader_cases, "plans": plan_cases, "real_files": real_file_cases, "server": server_cases,
            "runs": run_cases}


def totals(cases: list[Case]) -> dict:
    return {o: sum(c.outcome == o for c in cases) for o in OUTCOMES}


def parser():
    ap = arguments("bench_bad_input", __doc__)
    ap.add_argument("--only", default="", help="comma-separated sections: " + ",".join([*SECTIONS, "hub"]))
    ap.add_argument("--before", default=None, help="a checkout of the code before the fixes (hub before/after)")
    ap.add_argument("--hub-people", type=int, default=100_000, help="neighbours of the hub entity")
    ap.add_argument("--hub-memory-gb", type=float, default=4.0, help="address-space limit of each hub child")
    ap.add_argument("--hub-timeout", type=float, default=300.0, help="seconds before a hub child counts as a stall")
    ap.add_argument("--out", default=None, help="the record (default bench/results/bench_bad_input.json)")
    return ap


def run_sections(args) -> list[Case]:
    wanted = [s for s in args.only.split(",") if s] or [*SECTIONS, "hub"]
    cases: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="bench_bad_input_") as tmp:
        os.environ["RRA_CACHE_DIR"] = str(Path(tmp) / "cache")  # digests of this run's files only
        for name in wanted:
            where = Path(tmp) / name
            where.mkdir()
            if name == "hub":
                cases += hub_cases(where, Path(args.before) if args.before else None, args.hub_memory_gb,
                                   args.hub_timeout, args.hub_people)
            else:
                cases += SECTIONS[name](where)
    return cases


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_bad_input", args, argv)
    os.environ.setdefault("WANDB_MODE", "disabled")
    cases = run_sections(args)
    run.write({"totals": totals(cases), "cases": [asdict(c) for c in cases]}, args.out)
    print(json.dumps(totals(cases)))


if __name__ == "__main__":
    main()
