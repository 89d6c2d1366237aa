"""BLEU / chrF of the packaged SmolLM2-135M on WebNLG 2017 test, zero-shot vs fine-tuned on WebNLG train.

    python bench/bench_rewriter.py                      # fine-tune (CPU budget), then evaluate both
    python bench/bench_rewriter.py --ckpt checkpoints/rewriter/bench_final.ckpt   # evaluate only
    python bench/bench_rewriter.py --ckpt checkpoints/rewriter/metaqa_silver.ckpt --skip-zero-shot --out-name bench_rewriter_silver

Test sample: `fixed_sample(load_webnlg(root, "test"), 200, seed=0)` (seeded, file order), scored by
sacrebleu against all references. Fine-tuning: the same RewriterModule / WebNLGDataModule that
`python train.py task=rewriter` uses, capped by --max-steps and --max-minutes. Writes
bench/results/bench_rewriter.{json,md} and per-example outputs to bench/results/bench_rewriter_examples.jsonl.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch
from common import machine  # bench/common.py

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "webnlg"))
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
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--out-name", default="bench_rewriter",
                    help="results file stem (e.g. bench_rewriter_silver for a checkpoint trained elsewhere)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import lightning as L
    from lightning.pytorch.loggers import CSVLogger

    from rra.data.webnlg import WebNLGDataModule, fixed_sample, load_webnlg
    from rra.models.rewriter import ZERO_SHOT_PROMPT, RewriterModule
    from rra.eval.rewriter import evaluate_rewriter, markdown_table

    result: dict = {
        "benchmark": "bench_rewriter",
        "command": " ".join([sys.executable.split("/")[-1]] + sys.argv),
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "loadavg_start": os.getloadavg(),
        "test_sample": f"fixed_sample(load_webnlg(root, 'test'), {args.test_size}, seed={args.test_seed}) "
                       "of webnlg_challenge_2017/test/testdata_with_lex.xml (1,862 entries)",
        "metrics": "sacrebleu corpus BLEU (13a) and chrF, all references per entry",
        "config": vars(args),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    partial = REPO / "bench" / "cache" / "bench_rewriter_partial.json"
    partial.parent.mkdir(parents=True, exist_ok=True)

    def save_partial():
        partial.write_text(json.dumps(result, indent=2, ensure_ascii=False))

    test = fixed_sample(load_webnlg(args.data, "test"), args.test_size, args.test_seed)
    result["test_entries_by_size"] = {k: sum(len(e.triples) == k for e in test) for k in range(1, 8)}

    # 1. fine-tune ---------------------------------------------------------------------------
    ckpt = args.ckpt
    if ckpt is None:
        L.seed_everything(0, workers=True)
        dm = WebNLGDataModule(args.data, batch_size=args.batch_size, val_size=args.val_size, test_size=0)
        t0 = time.perf_counter()
        model = RewriterModule(lr=args.lr, warmup_steps=max(1, args.max_steps // 10),
                               train_last_layers=args.train_last_layers, max_new_tokens=args.max_new_tokens)
        load_s = time.perf_counter() - t0
        trainer = L.Trainer(
            accelerator="cpu", devices=1, max_steps=args.max_steps, max_epochs=1,
            max_time={"minutes": args.max_minutes}, enable_checkpointing=False,
            logger=CSVLogger(str(REPO / "bench" / "cache"), name="bench_rewriter"),
            log_every_n_steps=5, gradient_clip_val=1.0, num_sanity_val_steps=0,
        )
        val_before = trainer.validate(model, datamodule=dm, verbose=False)[0]["val/loss"]
        t0 = time.perf_counter()
        trainer.fit(model, datamodule=dm)
        train_s = time.perf_counter() - t0
        val_after = trainer.validate(model, datamodule=dm, verbose=False)[0]["val/loss"]
        ckpt = str(Path(args.ckpt_dir) / "bench_final.ckpt")
        Path(args.ckpt_dir).mkdir(parents=True, exist_ok=True)
        trainer.save_checkpoint(ckpt)
        steps = trainer.global_step
        result["fine_tuning"] = {
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
        del trainer, model, dm
        save_partial()

    # 2. zero-shot and fine-tuned generation on the same test sample ---------------------------
    rows: dict[str, dict] = {}
    examples: dict[str, list] = {}
    if not args.skip_zero_shot:
        zs = RewriterModule(chat=True, prompt=ZERO_SHOT_PROMPT, max_new_tokens=args.max_new_tokens)
        r = evaluate_rewriter(lambda s: zs.generate(s, batch_size=args.batch_size), test, args.batch_size)
        rows["SmolLM2-135M zero-shot (chat prompt)"] = r["scores"]
        examples["zero_shot"] = r["examples"]
        result["zero_shot"] = r["scores"]
        del zs
        save_partial()
    t0 = time.perf_counter()
    ft = RewriterModule.load(ckpt)
    ft.hparams.max_new_tokens = args.max_new_tokens
    ckpt_load_s = time.perf_counter() - t0
    r = evaluate_rewriter(lambda s: ft.generate(s, batch_size=args.batch_size), test, args.batch_size)
    r["scores"]["checkpoint_load_seconds"] = ckpt_load_s
    rows[f"SmolLM2-135M fine-tuned ({Path(ckpt).name})"] = r["scores"]
    examples["fine_tuned"] = r["examples"]
    result["fine_tuned"] = r["scores"]

    result["loadavg_end"] = os.getloadavg()
    (out / f"{args.out_name}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    md = [f"# {args.out_name}", "", f"`{result['command']}`", "", result["test_sample"], "", markdown_table(rows)]
    if "fine_tuning" in result:
        f = result["fine_tuning"]
        md.append(f"Fine-tuning: {f['steps']} steps x {f['batch_size']} in {f['train_seconds']:.0f} s "
                  f"({f['samples_per_s']:.2f} samples/s, stopped by {f['stopped_by']}), "
                  f"val loss {f['val_loss_before']:.3f} -> {f['val_loss_after']:.3f}.")
    md.append(f"\nLoad average start {result['loadavg_start']}, end {result['loadavg_end']} (shared 2-core box).")
    (out / f"{args.out_name}.md").write_text("\n".join(md) + "\n")
    with open(out / f"{args.out_name}_examples.jsonl", "w") as fh:
        for name, rows_ in examples.items():
            for ex in rows_:
                # dataset text (inputs, references) stays out of the repository: outputs + entry ids only
                kept = {k: v for k, v in ex.items() if k not in ("source", "references")}
                fh.write(json.dumps({"system": name, **kept}, ensure_ascii=False) + "\n")
    print((out / f"{args.out_name}.md").read_text())


if __name__ == "__main__":
    main()
