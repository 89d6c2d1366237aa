"""BLEU / chrF of the packaged SmolLM2-135M on WebNLG 2017 test, zero-shot vs fine-tuned on WebNLG train.

    python -m bench.bench_rewriter                      # fine-tune (CPU budget), then evaluate both
    python -m bench.bench_rewriter --ckpt checkpoints/rewriter/bench_final.ckpt   # evaluate only
    python -m bench.bench_rewriter --ckpt checkpoints/rewriter/metaqa_silver.ckpt --skip-zero-shot --out-name bench_rewriter_silver

Test sample: `fixed_sample(load_webnlg(root, "test"), 200, seed=0)` (seeded, file order), scored by
sacrebleu against all references. Fine-tuning: the same RewriterModule / WebNLGDataModule that
`python train.py task=rewriter` uses, capped by --max-steps and --max-minutes. Writes
bench/results/bench_rewriter.{json,md} and per-example outputs to bench/results/bench_rewriter_examples.jsonl.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from bench.common import CACHE, DATA, REPO, RESULTS, Run, arguments, write_json


def fine_tune(args) -> tuple[str, dict]:
    """The packaged SmolLM2 fine-tuned on WebNLG train under the step and time caps, through the
    RewriterModule / WebNLGDataModule that `python train.py task=rewriter` uses: (checkpoint, figures)."""
    import lightning as L
    from lightning.pytorch.loggers import CSVLogger

    from rra.data.webnlg import WebNLGDataModule
    from rra.models.rewriter import RewriterModule

    L.seed_everything(0, workers=True)
    dm = WebNLGDataModule(args.data, batch_size=args.batch_size, val_size=args.val_size, test_size=0)
    t0 = time.perf_counter()
    model = RewriterModule(lr=args.lr, warmup_steps=max(1, args.max_steps // 10),
                           train_last_layers=args.train_last_layers, max_new_tokens=args.max_new_tokens)
    load_s = time.perf_counter() - t0
    trainer = L.Trainer(accelerator="cpu", devices=1, max_steps=args.max_steps, max_epochs=1,
                        max_time={"minutes": args.max_minutes}, enable_checkpointing=False,
                        logger=CSVLogger(str(CACHE), name="bench_rewriter"), log_every_n_steps=5,
                        gradient_clip_val=1.0, num_sanity_val_steps=0)
    val_before = trainer.validate(model, datamodule=dm, verbose=False)[0]["val/loss"]
    t0 = time.perf_counter()
    trainer.fit(model, datamodule=dm)
    train_s = time.perf_counter() - t0
    val_after = trainer.validate(model, datamodule=dm, verbose=False)[0]["val/loss"]
    ckpt = str(Path(args.ckpt_dir) / "bench_final.ckpt")
    Path(args.ckpt_dir).mkdir(parents=True, exist_ok=True)
    trainer.save_checkpoint(ckpt)
    steps = trainer.global_step
    return ckpt, {
        "train_split": "webnlg train (one example per reference text, 18,102), shuffled, seed 0",
        "steps": steps, "batch_size": args.batch_size, "examples_seen": steps * args.batch_size,
        "train_seconds": train_s, "samples_per_s": steps * args.batch_size / max(train_s, 1e-9),
        "seconds_per_step": train_s / max(steps, 1), "model_load_seconds": load_s,
        "stopped_by": "max_steps" if steps >= args.max_steps else "max_time",
        "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "total_params": sum(p.numel() for p in model.parameters()),
        "val_loss_before": val_before, "val_loss_after": val_after,
        "val_sample": f"{args.val_size} seeded dev entries, loss on the first reference",
        "checkpoint": os.path.relpath(ckpt, REPO),
    }


def score(model, test, batch_size: int) -> dict:
    """BLEU / chrF of one rewriter on the test sample, and its outputs."""
    from rra.eval.rewriter import evaluate_rewriter

    return evaluate_rewriter(lambda s: model.generate(s, batch_size=batch_size), test, batch_size)


def zero_shot(args, test) -> dict:
    from rra.models.rewriter import ZERO_SHOT_PROMPT, RewriterModule

    return score(RewriterModule(chat=True, prompt=ZERO_SHOT_PROMPT, max_new_tokens=args.max_new_tokens), test,
                 args.batch_size)


def fine_tuned(args, ckpt: str, test) -> dict:
    from rra.models.rewriter import RewriterModule

    t0 = time.perf_counter()
    model = RewriterModule.load(ckpt)
    model.hparams.max_new_tokens = args.max_new_tokens
    load_s = time.perf_counter() - t0
    r = score(model, test, args.batch_size)
    r["scores"]["checkpoint_load_seconds"] = load_s
    return r


def write_outputs(out: Path, name: str, record: dict, rows: dict, examples: dict) -> str:
    """NAME.md (the table) and NAME_examples.jsonl (outputs by entry id: no dataset text is copied)."""
    from rra.eval.rewriter import markdown_table

    md = [f"# {name}", "", f"`{record['command']}`", "", record["test_sample"], "", markdown_table(rows)]
    if "fine_tuning" in record:
        f = record["fine_tuning"]
        md.append(f"Fine-tuning: {f['steps']} steps x {f['batch_size']} in {f['train_seconds']:.0f} s "
                  f"({f['samples_per_s']:.2f} samples/s, stopped by {f['stopped_by']}), "
                  f"val loss {f['val_loss_before']:.3f} -> {f['val_loss_after']:.3f}.")
    md.append(f"\nLoad average start {record['load']['start']}, end {record['load']['end']} (shared 2-core box).")
    (out / f"{name}.md").write_text("\n".join(md) + "\n")
    with open(out / f"{name}_examples.jsonl", "w") as fh:
        for system, rows_ in examples.items():
            for ex in rows_:
                # dataset text (inputs, references) stays out of the repository: outputs + entry ids only
                kept = {k: v for k, v in ex.items() if k not in ("source", "references")}
                fh.write(json.dumps({"system": system, **kept}, ensure_ascii=False) + "\n")
    return "\n".join(md)


def parser():
    """The command line of `python -m bench.bench_rewriter`."""
    ap = arguments("bench_rewriter", __doc__)
    ap.add_argument("--data", default=str(DATA / "webnlg"))
    ap.add_argument("--test-size", type=int, default=200)
    ap.add_argument("--test-seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=200)
    ap.add_argument("--max-minutes", type=float, default=20.0)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--train-last-layers", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=80)
    ap.add_argument("--val-size", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads; 1 is several times faster than 2 on this shared 2-core box")
    ap.add_argument("--ckpt", default=None, help="skip fine-tuning and evaluate this checkpoint")
    ap.add_argument("--ckpt-dir", default=str(REPO / "checkpoints" / "rewriter"))
    ap.add_argument("--skip-zero-shot", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--out-name", default="bench_rewriter",
                    help="results file stem (e.g. bench_rewriter_silver for a checkpoint trained elsewhere)")
    return ap


def main() -> None:
    args = parser().parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from rra.data.webnlg import fixed_sample, load_webnlg

    run = Run.start("bench_rewriter", args)
    test = fixed_sample(load_webnlg(args.data, "test"), args.test_size, args.test_seed)
    figures = {"test_sample": f"fixed_sample(load_webnlg(root, 'test'), {args.test_size}, seed={args.test_seed}) "
                              "of webnlg_challenge_2017/test/testdata_with_lex.xml (1,862 entries)",
               "metrics": "sacrebleu corpus BLEU (13a) and chrF, all references per entry",
               "test_entries_by_size": {k: sum(len(e.triples) == k for e in test) for k in range(1, 8)}}
    partial = CACHE / "bench_rewriter_partial.json"  # what is done so far, should a later step die
    ckpt = args.ckpt
    if ckpt is None:
        ckpt, figures["fine_tuning"] = fine_tune(args)
        write_json(run.record(figures), partial)
    rows, examples = {}, {}
    if not args.skip_zero_shot:
        r = zero_shot(args, test)
        rows["SmolLM2-135M zero-shot (chat prompt)"] = figures["zero_shot"] = r["scores"]
        examples["zero_shot"] = r["examples"]
        write_json(run.record(figures), partial)
    r = fine_tuned(args, ckpt, test)
    rows[f"SmolLM2-135M fine-tuned ({Path(ckpt).name})"] = figures["fine_tuned"] = r["scores"]
    examples["fine_tuned"] = r["examples"]
    record = run.write(figures, Path(args.out) / f"{args.out_name}.json")
    print(write_outputs(Path(args.out), args.out_name, record, rows, examples))


if __name__ == "__main__":
    main()
