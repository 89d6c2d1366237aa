"""Relations read, not classified (issue 33): the relation scorer (`model.path_head=scorer`, the default)
against the paper's classifier head, on KGs built the way real ones are, never on the built-in KG alone.

    python -m bench.bench_relation_scorer own-kg [--head scorer classifier] [--scale 1.0] [--shape wikidata]
    python -m bench.bench_relation_scorer transfer --ckpt checkpoints/retriever/best.ckpt [--metaqa ROOT]
    python -m bench.bench_relation_scorer subgraphs [--head scorer classifier]
    python -m bench.bench_relation_scorer speed --scorer CKPT --classifier CKPT [--data metaqa --hop 2]

- own-kg: the scholarly N-Triples KG (bench/kgs/scholarly.py: IRIs, labels with accents, typed
  literals, 62 relations, Zipf question counts, 10 relations never asked in training, held-out
  phrasings), trained with the defaults on answers only, answered with given topics and linked
  from the text; Hits@1 and path accuracy per hop, on relations seen / unseen in training and on
  held-out phrasings.
  `--shape wikidata`: the same KG and questions with Wikidata's ids and naming (bench/kgs/wikidata_shape.py:
  `wdt:P<n>` predicates named only by the label of the property entity `wd:P<n>`), under `own-kg-wikidata`.
  `--shape dbpedia`: another KG written fresh in DBpedia's shape (bench/kgs/dbpedia_shape.py: Turtle, `dbr:` /
  `dbo:` IRIs, 47 relations over nine kinds of thing, CSV question files naming topics and answers by label,
  a phrasing of every path held out and some paths asked in test only), under `own-kg-dbpedia`.
- transfer: a checkpoint trained on another KG (the built-in one) answers the library KG
  (bench/kgs/library.py: the same domain, other relation names and phrasings) without training on
  it; and the pretrained encoder alone (`retriever=zero_shot`) on the library and scholarly KGs (and
  MetaQA with --metaqa), with a path's length from its words (the default) and from the untrained end head.
- subgraphs: Freebase-style per-question graphs (bench/kgs/freebase_subgraphs.py: hundreds of
  relations, CVT nodes, RoG rows): RRA against returning every end entity of the question graph's
  paths, and the heuristic (no LLM) ToG and StructGPT on the same graphs.
- speed: the retrievers' uncached throughput side by side in one process (same questions, same
  graph): encoder passes and questions/s.

Every train / infer run is the CLI itself (`python train.py ...`, `python infer.py ...` in a
subprocess), so the figures are what a user gets; the commands are in the record. Results merge into
bench/results/bench_relation_scorer.json, one key per part.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.common import CACHE, REPO, RESULTS, TOPIC_MODES, Run, arguments, previous

OUT = RESULTS / "bench_relation_scorer.json"


# -- running the CLI ----------------------------------------------------------------------------
def cli(script: str, overrides: list[str], log: Path) -> float:
    """`python SCRIPT OVERRIDES` from the checkout; its output to `log`; returns the wall seconds."""
    cmd = [sys.executable, script, "logger=none", *overrides]
    start = time.perf_counter()
    with open(log, "w") as f:
        done = subprocess.run(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}); see {log}")
    return round(time.perf_counter() - start, 1)


def train(name: str, overrides: list[str], work: Path, reuse: bool = False) -> dict:
    """Train with the defaults plus `overrides`; the published checkpoint and the run's summary.
    `reuse`: the training this benchmark ran before under the same name, when it finished (its
    summary and published checkpoint are there), is read back instead of run again."""
    ckpt_dir = work / "checkpoints"
    run_dir = work / f"train_{name}"
    done = run_dir / "train_summary.json"
    if reuse and done.is_file() and (ckpt_dir / name / "best.ckpt").is_file():
        seconds = json.loads((run_dir / "wall_seconds.json").read_text())["seconds"] \
            if (run_dir / "wall_seconds.json").is_file() else None
    else:
        seconds = cli("train.py", [*overrides, f"name={name}", f"paths.checkpoint_dir={ckpt_dir}",
                                   f"hydra.run.dir={run_dir}"], work / f"train_{name}.log")
        (run_dir / "wall_seconds.json").write_text(json.dumps({"seconds": seconds}))
    summary = json.loads(done.read_text())
    return {"ckpt": str(ckpt_dir / name / "best.ckpt"), "seconds": seconds, "summary": summary,
            "command": "python train.py " + " ".join(overrides)}


def infer(name: str, overrides: list[str], work: Path) -> tuple[dict, list[dict]]:
    """One infer.py run: its metrics.json and predictions."""
    run_dir = work / f"infer_{name}"
    seconds = cli("infer.py", [*overrides, f"hydra.run.dir={run_dir}", "show_summary=false", "resume=false"],
                  work / f"infer_{name}.log")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    metrics["wall_seconds"] = seconds
    preds = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return metrics, preds


def figures(metrics: dict, preds: list[dict], questions: list[dict] | None = None) -> dict:
    """Hits@1 and path accuracy overall, per hop and per question group (the test file's `extra`)."""
    out = {k: metrics.get(k) for k in ("n", "hits@1", "hits@1_strict", "f1", "path_acc", "hop_acc", "status")}
    groups: dict[str, list[dict]] = defaultdict(list)
    meta = {q.get("qid"): q.get("extra") or {} for q in questions or []}
    for p in preds:
        hop = p.get("gold_hop")
        groups[f"{hop}hop"].append(p)
        extra = meta.get(p.get("qid"), {})
        if "seen_relation" in extra:
            groups["unseen_relation" if not extra["seen_relation"] else "seen_relation"].append(p)
        if extra.get("seen_relation") and not extra.get("seen_phrasing", True):
            groups["held_out_phrasing"].append(p)
        if "seen_path" in extra:  # the DBpedia shape: a path no training question asked / a phrasing held out
            groups["unseen_path" if not extra["seen_path"] else "seen_path"].append(p)
            if extra["seen_path"]:
                groups["seen_path_seen_phrasing" if extra["seen_phrasing"] else "held_out_phrasing"].append(p)
        if "alias" in extra:  # the Wikidata shape's --aliases: the topic named by its alias
            groups["topic_named_by_alias"].append(p)
    out["groups"] = {g: _rates(ps) for g, ps in sorted(groups.items())}
    return out


def _rates(preds: list[dict]) -> dict:
    from rra.eval.metrics import hit_at_1

    n = len(preds)
    path_ok = [p for p in preds if p.get("gold_path")]
    return {"n": n, "hits@1": round(100 * sum(map(hit_at_1, preds)) / n, 2) if n else None,
            "path_acc": round(100 * sum(list(p.get("pred_path") or []) == list(p["gold_path"]) for p in path_ok)
                              / len(path_ok), 2) if path_ok else None}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


# -- the parts ----------------------------------------------------------------------------------
def own_kg(heads: list[str], scale: float, work: Path, reuse: bool = False, shape: str = "scholarly",
           data_overrides: list[str] = (), zero_shot: bool = False, train_overrides: list[str] = ()) -> dict:
    from bench.kgs import dbpedia_shape, scholarly, wikidata_shape

    if shape == "dbpedia":  # another KG written fresh: Turtle, CSV questions naming topics and answers by label
        files = dbpedia_shape.generate(work / "dbpedia", scale=scale, seed=0)
        files["test_questions"] = files["test_meta"]
        stem = "dbp"
    else:
        files = scholarly.generate(work / "scholarly", scale=scale, seed=0)
        stem = "schol"
    if shape.startswith("wikidata"):  # the same facts and questions with Wikidata's ids: wdt:P<n> named by wd:P<n>
        dated = shape == "wikidata-datetimes"  # and its dates as Wikidata writes them: dateTimes at midnight UTC
        aliased = shape == "wikidata-aliases"  # and aliases, which some test questions name their topics by
        files = wikidata_shape.convert(work / "scholarly", work / ("scholarly_" + shape.replace("-", "_")),
                                       datetimes=dated, aliases=aliased)
        stem = {"wikidata-datetimes": "wdt", "wikidata-aliases": "wda"}.get(shape, "wd")
    # relation names: the KG's own labels, read by default
    data = ["data=files", f"data.kb_path={files['kg']}", *data_overrides]
    test = read_jsonl(files.get("test_questions", files["test"]))
    out = {"kg": json.loads(Path(files["stats"]).read_text()).get("kg"), "shape": shape,
           "data_overrides": list(data_overrides), "heads": {},
           **({"train_overrides": list(train_overrides)} if train_overrides else {})}
    for head in heads:
        trained = train(f"{stem}_{head}", [*data, f"data.train_file={files['train']}", f"data.val_file={files['val']}",
                                          f"model.path_head={head}", *train_overrides], work, reuse)
        row = {"train_seconds": trained["seconds"], "train_command": trained["command"],
               "train_metrics": {k: v for k, v in trained["summary"].get("metrics", {}).items() if k.startswith("test/")},
               "convergence": (trained["summary"].get("convergence") or {}).get("still_improving")}
        ckpts = {"": trained["ckpt"]}  # row key prefix -> checkpoint answered
        mix = trained["summary"].get("pretrained_mix") or {}
        if mix.get("alpha", 1.0) < 1.0:  # the same training's fine-tuned end beside the published mix
            row["pretrained_mix"] = {k: v for k, v in mix.items() if k != "fine_tuned_ckpt"}
            ckpts["fine_tuned_"] = mix["fine_tuned_ckpt"]
        for prefix, ckpt in ckpts.items():
            for mode, extra in TOPIC_MODES.items():
                metrics, preds = infer(f"{stem}_{head}_{prefix}{mode}", [*data, f"data.test_file={files['test']}",
                                                                       f"retriever.ckpt={ckpt}", *extra], work)
                row[prefix + mode] = figures(metrics, preds, test)
        out["heads"][head] = row
    if zero_shot:  # the pretrained encoder alone on the same test questions, given topics
        metrics, preds = infer(f"{stem}_zero_shot_given", [*data, f"data.test_file={files['test']}",
                                                           "retriever=zero_shot"], work)
        out["zero_shot_given"] = figures(metrics, preds, test)
    return out


def transfer(ckpt: str, work: Path, fine_tuned: str | None = None, metaqa: str | None = None,
             metaqa_limit: int = 1000) -> dict:
    """`zero_shot_*`: retriever=zero_shot as configured (a path's length from its words); the
    `zero_shot_end_head_*` runs leave the length to the untrained end head (shortest first), as
    before 2026-11-29. `metaqa`: MetaQA's root, to answer its first `metaqa_limit` test questions
    of each hop both ways too."""
    from bench.kgs import library, scholarly

    lib = library.generate(work / "library", seed=0)
    schol = scholarly.generate(work / "scholarly", seed=0)
    out = {}
    end_head = ["retriever=zero_shot", "retriever.length_rule=end_head"]
    runs = {"builtin_checkpoint_on_library": (lib, [f"retriever.ckpt={ckpt}"]),
            **({"builtin_fine_tuned_end_on_library": (lib, [f"retriever.ckpt={fine_tuned}"])} if fine_tuned else {}),
            "zero_shot_on_library": (lib, ["retriever=zero_shot"]),
            "zero_shot_on_scholarly": (schol, ["retriever=zero_shot"]),
            "zero_shot_end_head_on_library": (lib, end_head),
            "zero_shot_end_head_on_scholarly": (schol, end_head)}
    for name, (files, retriever) in runs.items():
        data = ["data=files", f"data.kb_path={files['kg']}",
                f"data.test_file={files['test']}"]
        metrics, preds = infer(name, [*data, *retriever], work)
        out[name] = figures(metrics, preds, read_jsonl(files["test"]))
        out[name]["command"] = "python infer.py " + " ".join([*data, *retriever])
    for hop in (1, 2, 3) if metaqa else ():
        data = ["data=metaqa", f"data.root={metaqa}", f"data.hop={hop}", f"limit={metaqa_limit}"]
        for name, retriever in (("zero_shot", ["retriever=zero_shot"]), ("zero_shot_end_head", end_head)):
            key = f"{name}_on_metaqa_{hop}hop"
            metrics, preds = infer(key, [*data, *retriever], work)
            out[key] = {**figures(metrics, preds), "command": "python infer.py " + " ".join([*data, *retriever])}
    return out


def subgraph_methods(heads: list[str], work: Path, train_overrides: list[str] = (), baselines: bool = True) -> dict:
    """RRA with each head (`train_overrides` added to its train.py call), the heuristic ToG and
    StructGPT (unless `baselines` is false) and every path end, on the Freebase-style subgraphs."""
    from bench.kgs import freebase_subgraphs

    files = freebase_subgraphs.generate(work / "freebase", seed=0)
    data = ["data=subgraphs", f"data.train_file={files['train']}", f"data.val_file={files['dev']}",
            f"data.test_file={files['test']}"]
    out = {}
    for head in heads:
        trained = train(f"fb_{head}", [*data, f"model.path_head={head}", *train_overrides], work)
        metrics, preds = infer(f"fb_{head}", [*data, f"retriever.ckpt={trained['ckpt']}"], work)
        out[f"rra_{head}"] = {**figures(metrics, preds), "train_seconds": trained["seconds"],
                              **({"train_overrides": list(train_overrides)} if train_overrides else {})}
    if not baselines:
        return out
    for method in ("tog", "structgpt"):
        metrics, preds = infer(f"fb_{method}", [*data, f"method={method}", "llm=none"], work)
        out[f"{method}_heuristic"] = figures(metrics, preds)
    out["every_path_end"] = every_path_end(files["test"])
    return out


def every_path_end(test_file: str, max_hops: int = 2) -> dict:
    """The baseline of returning every entity the question graph's paths (<= max_hops from a topic,
    CVT pairs one hop, as rra reads them) end at: Hits@1 as any gold answer among them (the set has
    no order), and the set's size."""
    from rra.data.subgraph_formats import load_subgraph_questions
    from rra.graph.subgraphs import QuestionGraphs

    kg = QuestionGraphs()
    examples = load_subgraph_questions(test_file, kg=kg)
    hits, sizes = 0, []
    for ex in examples:
        with kg.scope(ex) as g:
            frontier = {t for t in ex.topic_entities if g.has_entity(t)}
            reached: set[str] = set()
            for _ in range(max_hops):
                nxt = {n for e in frontier for r in g.relations(e) for n in g.neighbors(e, r)}
                reached |= nxt
                frontier = nxt
            gold = {a for alias in ex.answer_ids or [[a] for a in ex.answers] for a in alias}
            hits += bool(reached & gold)
            sizes.append(len(reached))
    sizes.sort()
    return {"n": len(examples), "hits@1 (any gold among the ends)": round(100 * hits / max(1, len(examples)), 2),
            "median_ends": sizes[len(sizes) // 2] if sizes else 0}


def speed(ckpts: dict[str, str], data: str, hop: int | None, limit: int, extra: list[str] = ()) -> dict:
    """Uncached retrieval throughput of each checkpoint on the same questions, one process, turns
    alternating (this machine drifts between minutes)."""
    import torch

    from bench.common import compose
    from rra.config import build_graph
    from rra.data.dataset import Dataset
    from rra.models.retriever import Retriever
    from rra.text.relations import RelationText

    torch.set_num_threads(1)
    overrides = [f"data={data}"] + ([f"data.hop={hop}"] if hop else []) + list(extra)
    cfg = compose("infer", overrides)
    kg = build_graph(cfg)
    questions = Dataset.from_config(cfg.data).questions("test", kg)[:limit]
    texts, topics = [q.question for q in questions], [q.topic_entities[0] for q in questions]
    models = {name: Retriever.load(path) for name, path in ckpts.items()}
    text_of = RelationText(None, kg)
    seconds: dict[str, list[float]] = {name: [] for name in models}
    passes: dict[str, int] = {}
    for _ in range(3):
        for name, model in models.items():
            model.encoded_texts = 0
            start = time.perf_counter()
            model.predict(texts, topk=10, kg=kg, topics=topics, use_cache=False, relation_text=text_of)
            seconds[name].append(time.perf_counter() - start)
            passes[name] = model.encoded_texts
    out = {name: {"q_per_s": round(len(texts) / sorted(s)[1], 1), "encoder_passes_per_question":
                  round(passes[name] / len(texts), 2), "seconds": [round(x, 2) for x in s]}
           for name, s in seconds.items()}
    if len(out) == 2:
        a, b = list(out)
        out["ratio"] = f"{a} / {b} = {out[a]['q_per_s'] / out[b]['q_per_s']:.2f}"
    out.update(questions=len(texts), data=data, hop=hop, graph_constrained=True)
    return out


def parser():
    """The command line of `python -m bench.bench_relation_scorer`."""
    ap = arguments("bench_relation_scorer", __doc__)
    sub = ap.add_subparsers(dest="part", required=True)
    p = sub.add_parser("own-kg")
    p.add_argument("--head", nargs="+", default=["scorer", "classifier"])
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--reuse-training", action="store_true",
                   help="answer with the finished training of an earlier run of this part instead of training again")
    p.add_argument("--shape", choices=["scholarly", "wikidata", "wikidata-datetimes", "wikidata-aliases", "dbpedia"],
                   default="scholarly",
                   help="wikidata: the same KG and questions in Wikidata's shape (bench/kgs/wikidata_shape.py), "
                        "recorded under own-kg-wikidata; wikidata-datetimes: its dates and years as dateTimes at "
                        "midnight UTC too (the answers stay \"2023\", \"2021-11-10\"); wikidata-aliases: skos:altLabel "
                        "aliases, every other test question naming its topic by one; dbpedia: another KG written "
                        "fresh (bench/kgs/dbpedia_shape.py: Turtle, 47 relations, CSV questions naming entities by "
                        "label), recorded under own-kg-dbpedia")
    p.add_argument("--zero-shot", action="store_true",
                   help="also answer with the pretrained encoder alone (retriever=zero_shot), given topics")
    p.add_argument("--data-overrides", nargs="*", default=[],
                   help="data.* overrides for train.py and infer.py alike (e.g. 'data.property_namespaces={}')")
    p.add_argument("--train-overrides", nargs="*", default=[],
                   help="more train.py overrides (e.g. model.answer_types=true)")
    p = sub.add_parser("transfer")
    p.add_argument("--ckpt", default=str(REPO / "checkpoints" / "retriever" / "best.ckpt"))
    p.add_argument("--fine-tuned", help="the same training's fine-tuned checkpoint (train_summary.json's "
                   "pretrained_mix.fine_tuned_ckpt), answered beside the published mix")
    p.add_argument("--metaqa", help="MetaQA's root (../shared/data/metaqa): the zero-shot encoder on its test questions too")
    p.add_argument("--metaqa-limit", type=int, default=1000, help="MetaQA test questions per hop")
    p = sub.add_parser("subgraphs")
    p.add_argument("--head", nargs="+", default=["scorer", "classifier"])
    p.add_argument("--train-overrides", nargs="*", default=[],
                   help="more train.py overrides (e.g. datamodule.plan_ranker=auto)")
    p.add_argument("--no-baselines", action="store_true", help="RRA alone (not ToG, StructGPT, every path end)")
    p = sub.add_parser("speed")
    p.add_argument("--scorer", required=True)
    p.add_argument("--classifier", required=True)
    p.add_argument("--data", default="metaqa")
    p.add_argument("--hop", type=int, default=2)
    p.add_argument("--limit", type=int, default=300)
    p.add_argument("--overrides", nargs="*", default=[], help="more infer.py overrides (data.root=...)")
    p.add_argument("--names", nargs=2, default=["scorer", "classifier"],
                   help="what the two checkpoints are called in the record (e.g. floor_on floor_off)")
    ap.add_argument("--out", default=str(OUT), help="the record to merge into")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_relation_scorer", args, argv)
    work = CACHE / "bench_relation_scorer"
    work.mkdir(parents=True, exist_ok=True)
    key = args.part
    if args.part == "own-kg":
        result = own_kg(args.head, args.scale, work, args.reuse_training, args.shape, args.data_overrides,
                        args.zero_shot, args.train_overrides)
        key = "own-kg" if args.shape == "scholarly" else f"own-kg-{args.shape}"
    elif args.part == "transfer":
        result = transfer(args.ckpt, work, args.fine_tuned, args.metaqa, args.metaqa_limit)
    elif args.part == "subgraphs":
        result = subgraph_methods(args.head, work, args.train_overrides, not args.no_baselines)
    else:
        result = speed(dict(zip(args.names, (args.scorer, args.classifier))), args.data, args.hop, args.limit,
                       args.overrides)
    record = previous(args.out)
    parts = {k: v for k, v in record.items() if k not in ("benchmark", "command", "config", "machine", "load", "timestamp")}
    if args.part == "own-kg" and "heads" in parts.get(key, {}):  # a head not run now keeps its figures
        kept = {h: {**r, "command": parts[key].get("command")} for h, r in parts[key]["heads"].items()
                if h not in result["heads"]}
        result["heads"] = {**kept, **result["heads"]}
    parts[key] = {**result, "command": run.command, "load_start": run.load_start}
    run.write(parts, args.out)


if __name__ == "__main__":
    main()
