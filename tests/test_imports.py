"""The package's imports run one way, down the floors, with no circle: every import counts, the
ones inside functions (a lazy load of torch-heavy code) as much as those at the top of a module.

    entry points -> eval / serve -> methods (pipeline, baselines) -> steps (linking, retrieve,
    rewrite, answer) -> models / llm / data -> text, plans, embed -> graph -> records (+ resources, cli)

A module may import from its own floor or any floor below it; a circle inside a floor is still
an error. A new module lands on its package's floor (FLOORS below) or fails `test_every_module_has_a_floor`.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Floor of each module, by its dotted name or its package's (the longest prefix wins).
FLOORS = {
    "rra": 0, "rra.records": 0, "rra.resources": 0, "rra.cli": 0, "rra.net": 0,
    "rra.graph": 1,
    "rra.text": 2, "rra.embed": 2, "rra.plans": 2,
    "rra.data": 3, "rra.llm": 3, "rra.models": 3,
    "rra.linking": 4, "rra.pipeline": 4,  # the RRA method's steps (retrieve, plans, rewrite, answer)
    "rra.methods": 5, "rra.pipeline.method": 5, "rra.baselines": 5,
    "rra.eval": 6, "rra.serve": 6, "rra.config": 6, "rra.training": 6,
}


def modules() -> dict[str, Path]:
    mods = {}
    for p in (ROOT / "rra").rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    return mods


def module_graph(mods: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the package modules it imports, anywhere in its file (functions included)."""
    mods = mods or modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from rra.data import webnlg` imports the module rra.data.webnlg; `from
                # rra.records import Triple` imports rra.records only
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [t for t in subs if t in mods] or [node.module]
            else:
                continue
            graph[m] |= {t for t in targets if t in mods and t != m}
    return graph


def floor(module: str) -> int | None:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in FLOORS:
            return FLOORS[".".join(parts[:k])]
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while comp[-1:] != [v]:
                comp.append(stack.pop())
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (floor {floor(m)}) -> {t} (floor {floor(t)})"
                  for m, targets in graph.items() for t in targets if floor(t) > floor(m))


def test_every_module_has_a_floor():
    assert [m for m in modules() if floor(m) is None] == []


def test_no_import_cycles():
    graph = module_graph()
    assert len(graph) > 40  # the scan found the package
    assert cycles(graph) == []


def test_no_import_runs_up_a_floor():
    assert upward(module_graph()) == []


def test_the_records_import_nothing_of_the_package():
    assert module_graph()["rra.records"] == set()


def test_the_scan_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_scan_sees_imports_inside_functions_and_up_a_floor(tmp_path):
    pkg = tmp_path / "rra"
    (pkg / "graph").mkdir(parents=True)
    (pkg / "records.py").write_text("")
    (pkg / "graph" / "base.py").write_text("def f():\n    from rra.pipeline.method import RRAPipeline\n")
    (pkg / "pipeline.py").write_text("from rra.graph import base\n")
    mods = {"rra.records": pkg / "records.py", "rra.graph.base": pkg / "graph" / "base.py",
            "rra.pipeline.method": pkg / "pipeline.py"}
    graph = module_graph(mods)
    assert graph == {"rra.records": set(), "rra.graph.base": {"rra.pipeline.method"}, "rra.pipeline.method": {"rra.graph.base"}}
    assert cycles(graph) == [["rra.graph.base", "rra.pipeline.method"]]
    assert upward(graph) == ["rra.graph.base (floor 1) -> rra.pipeline.method (floor 5)"]


def test_import_sets_how_openmp_threads_wait_unless_the_user_did():
    """`import rra` (first in train.py, infer.py, serve.py: before torch loads its OpenMP runtime)
    lets waiting threads spin 3,000 times, then sleep (docs/retriever.md); a setting of the user's wins."""
    import os
    import subprocess
    import sys

    show = "import os, rra; print(os.environ['OMP_WAIT_POLICY'], os.environ['GOMP_SPINCOUNT'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    run = lambda extra: subprocess.run([sys.executable, "-c", show], env={**env, **extra}, cwd=ROOT,  # noqa: E731
                                       capture_output=True, text=True, check=True).stdout.split()
    assert run({}) == ["PASSIVE", "3000"]
    assert run({"GOMP_SPINCOUNT": "0", "OMP_WAIT_POLICY": "ACTIVE"}) == ["ACTIVE", "0"]
