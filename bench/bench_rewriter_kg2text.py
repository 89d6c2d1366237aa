"""BLEU / chrF of rewriters on the held-out part of the RRA authors' KG-to-text corpus (data=rra_kg2text).

    python -m bench.bench_rewriter_kg2text --n 40 --systems zero_shot \
        webnlg=checkpoints/rewriter/bench_final.ckpt \
        corpus_metaqa=checkpoints/rewriter_kg2text_metaqa/best.ckpt ...
    python -m bench.bench_rewriter_kg2text --show 5          # outputs beside the corpus references

Evaluation sets, from the held-out inputs of conf/data/rra_kg2text.yaml (split_seed 0, at most
max_triples triples; never trained on): `metaqa` = the first N held-out MetaQA inputs, `wqsp` = the
first N held-out WebQSP inputs without compound-value nodes, `wqsp_cvt` = the first N with them
(reported apart). Scores: sacrebleu corpus BLEU (13a) and chrF against all texts of an input.
Each system's rows are merged into bench/results/bench_rewriter_kg2text.json (run systems in
separate invocations as their checkpoints appear). The first 20 inputs of each set keep every
system's output (whatever --out-name) side by side in bench/results/bench_rewriter_kg2text_examples.jsonl,
by corpus id only: the corpus
has no licence to be copied into the project, so `--show K` prints them beside the references read
from ../shared/data/rra_kg2text.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from bench.common import DATA, REPO, RESULTS, Run, arguments, loadavg, now, previous

EXAMPLES = RESULTS / "bench_rewriter_kg2text_examples.jsonl"
KEEP = 20  # outputs kept per set and system


def eval_sets(data: Path, n: int) -> dict:
    """set name -> held-out entries, as the datamodule holds them out."""
    from omegaconf import OmegaConf

    from rra.data.kg2text import held_out_sample, load_part

    cfg = OmegaConf.load(REPO / "conf" / "data" / "rra_kg2text.yaml")
    parts = {}
    for name in ("metaqa", "wqsp"):
        src = cfg.sources[name]
        parts[name] = load_part(data, name, list(src.files), list(src.relations or []), src.relation_pattern,
                                src.heldout, cfg.split_seed, cfg.max_triples)
    return {"metaqa": held_out_sample(parts["metaqa"], n),
            "wqsp": held_out_sample(parts["wqsp"], n, cvt=False),
            "wqsp_cvt": held_out_sample(parts["wqsp"], n, cvt=True)}


def build(system: str, max_new_tokens: int):
    """'zero_shot' (the packaged model with its chat template) or NAME=CHECKPOINT."""
    from rra.models.rewriter import ZERO_SHOT_PROMPT, RewriterModule

    if system == "zero_shot":
        return "zero_shot", None, RewriterModule(chat=True, prompt=ZERO_SHOT_PROMPT, max_new_tokens=max_new_tokens)
    name, _, ckpt = system.partition("=")
    if not ckpt:
        raise SystemExit(f"--systems: {system!r} is neither zero_shot nor NAME=CHECKPOINT")
    model = RewriterModule.load(ckpt)
    model.hparams.max_new_tokens = max_new_tokens
    return name, ckpt, model


def show(data: Path, k: int) -> None:
    refs = {}
    for name, entries in eval_sets(data, KEEP).items():
        for e in entries:
            refs[e.eid] = e
    for line in EXAMPLES.read_text().splitlines()[:k] if k else EXAMPLES.read_text().splitlines():
        row = json.loads(line)
        e = refs[row["eid"]]
        print(f"## {row['set']} {row['eid']}\n  triples: {e.triples}\n  reference: {e.texts[0]}")
        for system, text in row["outputs"].items():
            print(f"  {system}: {text}")


def score_system(model, sets: dict, batch_size: int, kept: dict, name: str) -> dict:
    """BLEU / chrF of one rewriter on every set; its first outputs go into `kept` (set, eid) -> row."""
    from rra.eval.rewriter import evaluate_rewriter

    rows = {}
    for set_name, entries in sets.items():
        r = evaluate_rewriter(lambda s: model.generate(s, batch_size=batch_size), entries, batch_size, progress=False)
        rows[set_name] = {k: round(v, 3) if isinstance(v, float) else v for k, v in r["scores"].items()}
        for ex in r["examples"][:KEEP]:
            row = kept.setdefault((set_name, ex["eid"]), {"set": set_name, "eid": ex["eid"], "outputs": {}})
            row["outputs"][name] = ex["output"]
        print(f"{name} {set_name}: BLEU {rows[set_name]['bleu']:.1f} chrF {rows[set_name]['chrf']:.1f} "
              f"({rows[set_name]['seconds_per_example']:.2f} s/example)", flush=True)
    return rows


def describe(args, sets: dict) -> dict:
    """What the record says about the evaluation beside the figures."""
    part = {"metaqa": " of the MetaQA part", "wqsp": " of the WebQSP part without CVT nodes",
            "wqsp_cvt": " of the WebQSP part with CVT nodes"}
    return {"what": "BLEU / chrF on held-out inputs of the RRA authors' KG-to-text corpus (data=rra_kg2text, "
                    "split_seed 0, inputs with <= max_triples triples)",
            "sets": {k: f"first {args.n} held-out inputs" + part[k] for k in sets},
            "n": {k: len(v) for k, v in sets.items()},
            "metrics": "sacrebleu corpus BLEU (13a) and chrF, all texts of an input as references",
            "generation": {"decoding": "greedy", "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size,
                           "threads": args.threads}}


def parser():
    """The command line of `python -m bench.bench_rewriter_kg2text`."""
    ap = arguments("bench_rewriter_kg2text", __doc__)
    ap.add_argument("--data", type=Path, default=DATA / "rra_kg2text")
    ap.add_argument("--systems", nargs="*", default=[])
    ap.add_argument("--sets", nargs="+", default=["metaqa", "wqsp", "wqsp_cvt"])
    ap.add_argument("--n", type=int, default=40, help="inputs per evaluation set")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=112)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out-name", default="bench_rewriter_kg2text",
                    help="results stem under bench/results (a second process running beside another)")
    ap.add_argument("--show", type=int, default=None, metavar="K",
                    help="print the first K kept examples beside their references (0: all) and exit")
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.show is not None:
        return show(args.data, args.show)
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    run = Run.start("bench_rewriter_kg2text", args)
    out = RESULTS / f"{args.out_name}.json"  # the examples file is shared: every rewriter side by side
    sets = {k: v for k, v in eval_sets(args.data, args.n).items() if k in args.sets}
    figures = previous(out).get("figures", {})
    kept = {(r["set"], r["eid"]): r for r in map(json.loads, EXAMPLES.read_text().splitlines())} \
        if EXAMPLES.exists() else {}
    for system in args.systems:
        load0 = loadavg()
        name, ckpt, model = build(system, args.max_new_tokens)
        rows = score_system(model, sets, args.batch_size, kept, name)
        figures[name] = {"checkpoint": os.path.relpath(ckpt, REPO) if ckpt else "packaged SmolLM2-135M-Instruct, "
                         "chat prompt", "sets": rows, "loadavg_start": load0, "loadavg_end": loadavg(),
                         "command": run.command, "timestamp": now()}
        run.write({"figures": figures, **describe(args, sets)}, out)  # after each system
        EXAMPLES.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept.values()))
        del model


if __name__ == "__main__":
    main()
