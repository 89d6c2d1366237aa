"""bench/ as code people copy: every benchmark is a module with a short main(), writes its record
through bench.common.Run, and the result files already committed stay readable by the benchmarks
that merge into them. No benchmark is run here (their figures come from the full runs)."""
import argparse
import ast
import importlib
import json
from pathlib import Path

import pytest

from bench.common import RESULTS, Run, previous

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in ("__init__", "common"))


def test_a_record_says_what_produced_it(tmp_path):
    args = argparse.Namespace(limit=5, ckpt=Path("ckpt/best.ckpt"), func=print)
    run = Run.start("bench_example", args, ["--limit", "5", "--ckpt", "ckpt/best.ckpt"])
    out = tmp_path / "results" / "bench_example.json"
    run.write({"figures": {"hits@1": 99.5}, "note": "a test"}, out)
    record = json.loads(out.read_text())
    assert record["benchmark"] == "bench_example" and record["figures"] == {"hits@1": 99.5}
    assert record["command"] == "python -m bench.bench_example --limit 5 --ckpt ckpt/best.ckpt"
    assert record["config"] == {"limit": 5, "ckpt": "ckpt/best.ckpt"}  # the subcommand handler is no setting
    assert len(record["load"]["start"]) == len(record["load"]["end"]) == 3
    assert {"platform", "cpu_count", "loadavg"} <= set(record["machine"]) and record["timestamp"]
    assert [p.name for p in out.parent.iterdir()] == ["bench_example.json"]  # written whole, no temporary left


def test_a_command_with_spaces_is_quoted_as_a_shell_reads_it():
    run = Run.start("bench_x", {}, ["--question", "who wrote [The Narrow Tide]"])
    assert run.command == "python -m bench.bench_x --question 'who wrote [The Narrow Tide]'"


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_is_a_module_with_a_short_main(name):
    """Importable as bench.NAME (no sys.path insert), main() under 60 lines, its command line in
    parser() (so the commands of README and docs/ are checked against it, tests/test_readme.py)."""
    source = (BENCH / f"{name}.py").read_text()
    assert "sys.path" not in source
    module = importlib.import_module(f"bench.{name}")
    assert callable(module.parser) and module.parser().prog == f"python -m bench.{name}"
    main = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert main.end_lineno - main.lineno + 1 <= 60, f"bench/{name}.py main() is {main.end_lineno - main.lineno + 1} lines"
    if name.startswith("bench_"):  # the record goes through the one writer
        assert "Run.start(" in source and "json.dump(" not in source


# the result files that later runs merge into, and what they read from them
MERGED = {"bench_scale.json": ("results", "shapes"), "bench_faults.json": ("faults",),
          "bench_pipeline_metaqa.json": ("figures",), "bench_pipeline_llm.json": ("figures",),
          "bench_rewriter_kg2text.json": ("figures",), "bench_rewriter_qa_first100.json": ("figures",),
          "bench_budget_builtin.json": ("runs",), "bench_linking.json": ("builtin", "metaqa")}


def test_committed_results_stay_readable():
    for path in RESULTS.glob("*.json"):
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict), path.name
    for name, keys in MERGED.items():
        old = previous(RESULTS / name)
        assert all(isinstance(old.get(k), dict) for k in keys), name


def test_figures_come_from_functions_a_test_can_call(tmp_path):
    """bench_scale's worker on a small generated KG: the figures its main() writes, per backend."""
    from bench.bench_scale import generate, worker

    shape = generate(2000, tmp_path)
    figures = worker("networkx", tmp_path, shape["heads"])
    assert shape["triples"] == 2000 and figures["load_s"] > 0 and figures["retrieval_questions_per_s"] > 0
    assert 0 < figures["path2_p50_ms"] <= figures["path2_p95_ms"]
