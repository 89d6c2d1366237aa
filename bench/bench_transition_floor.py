"""What the search's transition floor changes (`model.transition_floor`, rra.models.frontier.Transitions):
one checkpoint answers the same test file twice with infer.py, with the floor off
(`retriever.transition_floor=0`) and as the checkpoint says (the default 0.01), given topics and
linked from the text. The record gives both Hits@1 and how many questions changed their top paths
or their anchors, so a KG where the floor leaves out nothing shows 0 changed.

    python -m bench.bench_transition_floor --name dbp --ckpt CKPT \\
        data=files data.kb_path=DIR/kg.ttl data.test_file=DIR/test.csv
    python -m bench.bench_transition_floor --name builtin --ckpt checkpoints/retriever/best.ckpt

Each run's infer.py output stays under bench/cache/bench_transition_floor/<name>_<floor>_<mode>/.
MetaQA's full splits are bench_pipeline's (`python -m bench.bench_pipeline --ckpt CKPT metaqa`),
run with a checkpoint whose `transition_floor` hparam is 0 and one where it is 0.01.
"""
from __future__ import annotations

from pathlib import Path

from bench.bench_relation_scorer import infer
from bench.common import CACHE, RESULTS, TOPIC_MODES, Run, arguments, previous

WORK = CACHE / "bench_transition_floor"
FLOORS = {"off": ["retriever.transition_floor=0"], "default": []}


def changed(a: list[dict], b: list[dict]) -> int:
    """Questions whose top paths or anchors differ between two runs' predictions."""
    key = lambda p: ([x["path"] for x in p.get("paths") or []], p.get("topic_entities"))  # noqa: E731
    other = {p["qid"]: key(p) for p in b}
    return sum(1 for p in a if other.get(p["qid"]) != key(p))


def measure(name: str, ckpt: str, overrides: list[str], modes: list[str]) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    out = {}
    for mode in modes:
        runs = {f: infer(f"{name}_{f}_{mode}", [*overrides, f"retriever.ckpt={ckpt}", *TOPIC_MODES[mode], *extra],
                         WORK) for f, extra in FLOORS.items()}
        out[mode] = {**{f"hits@1_{f}": m["hits@1"] for f, (m, _) in runs.items()}, "n": runs["off"][0]["n"],
                     "changed": changed(runs["default"][1], runs["off"][1]),
                     "command": "python infer.py " + " ".join([*overrides, f"retriever.ckpt={ckpt}",
                                                               *TOPIC_MODES[mode]])}
    return out


def parser():
    ap = arguments("bench_transition_floor", __doc__)
    ap.add_argument("--name", required=True, help="the row's name in the record (dbp, schol, builtin)")
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--modes", nargs="+", default=list(TOPIC_MODES), choices=list(TOPIC_MODES))
    ap.add_argument("--out", default=str(RESULTS / "bench_transition_floor.json"))
    ap.add_argument("overrides", nargs="*", help="infer.py overrides: the data")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_transition_floor", args, argv)
    rows = previous(args.out).get("rows", {})  # one row per invocation, merged
    rows[args.name] = {**measure(args.name, str(Path(args.ckpt).resolve()), args.overrides, args.modes),
                       "command": run.command,
                       "load_start": run.load_start}
    print({k: {m: (v[m]["hits@1_off"], v[m]["hits@1_default"], v[m]["changed"]) for m in args.modes}
           for k, v in rows.items() if k == args.name})
    run.write({"rows": rows}, args.out)


if __name__ == "__main__":
    main()
