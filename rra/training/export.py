"""Shareable models: a trained retriever or rewriter as a plain directory, and loading it back.

    rra-export checkpoints/mykg/best.ckpt exported/mykg-retriever [--train-summary FILE]

The directory holds `model.safetensors` (the weights), `tokenizer.json`, `config.json` (the
checkpoint's `rra` block and hyper-parameters: relation vocabulary, encoder config, ...) and a
generated `README.md` model card. It loads wherever a checkpoint path is accepted
(`retriever.ckpt=DIR`, `rewriter.ckpt=DIR`, `model.init_from=DIR`), and so does a Hugging Face Hub
id holding such a directory (`retriever.ckpt=org/name`, downloaded once into the HF cache). To
share one: `huggingface-cli upload org/name exported/mykg-retriever` -- never needed to use rra.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rra.cli import run_command

from rra.models.checkpoint import CONFIG, EXPORT_FORMAT, TOKENIZER, WEIGHTS, ExportError

CARD = "README.md"


def export(ckpt_path: str | Path, out_dir: str | Path, train_summary: str | Path | None = None) -> Path:
    """Write the exported directory of a Lightning checkpoint made by rra; returns it."""
    import torch
    from safetensors.torch import save_file

    ckpt_path, out = Path(ckpt_path), Path(out_dir)
    ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=False)
    info = ckpt.get("rra") if isinstance(ckpt, dict) else None
    if not isinstance(info, dict) or "format" not in info:
        raise ExportError(f"{ckpt_path}: not an rra checkpoint (no 'rra' block); train one with python train.py")
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.contiguous() for k, v in ckpt["state_dict"].items()}
    save_file(state, str(out / WEIGHTS), metadata={"format": info["format"]})
    readable_as_normal_files(out / WEIGHTS)  # safetensors writes 0600: others could not load a shared export
    tokenizer = info.get("tokenizer")
    meta = {k: v for k, v in info.items() if k != "tokenizer"}
    config = {"export_format": EXPORT_FORMAT, "rra": meta,
              "hyper_parameters": json.loads(json.dumps(dict(ckpt.get("hyper_parameters", {})), default=str)),
              "source_checkpoint": str(ckpt_path), "epoch": ckpt.get("epoch"), "global_step": ckpt.get("global_step")}
    (out / CONFIG).write_text(json.dumps(config, indent=1), encoding="utf-8")
    if tokenizer is not None:
        (out / TOKENIZER).write_text(json.dumps(tokenizer), encoding="utf-8")
    summary = json.loads(Path(train_summary).read_text()) if train_summary else None
    (out / CARD).write_text(model_card(config, summary, out), encoding="utf-8")
    return out


def readable_as_normal_files(path: Path) -> None:
    """The mode a plain `open(..., "w")` would give (0666 less the umask, e.g. 0644)."""
    import os

    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)


def model_card(config: dict, summary: dict | None, out: Path) -> str:
    info = config["rra"]
    kind = "retriever" if info["format"] == "rra-retriever" else "rewriter"
    lines = [f"# rra {kind}: {out.name}", "",
             f"A {kind} trained with rra (Retrieve-Rewrite-Answer question answering over knowledge graphs).", ""]
    if kind == "retriever":
        rels = [r for r in info["relations"] if not r.startswith("^")]
        lines += [f"- encoder: `{info.get('encoder')}`; up to {info.get('max_hops')} hops; topic mask "
                  f"`{info.get('mask_token')}`",
                  f"- KG relations ({len(rels)}): " + ", ".join(f"`{r}`" for r in rels[:40])
                  + (f", ... ({len(rels) - 40} more)" if len(rels) > 40 else ""),
                  "", "Use it: `python infer.py retriever.ckpt=<this directory or its Hub id> data=... graph=...`"]
    else:
        lines += [f"- base model: `{info.get('model_name')}` ({'seq2seq' if info.get('seq2seq') else 'causal LM'})",
                  "", "Use it: `python infer.py rewriter=trained rewriter.ckpt=<this directory or its Hub id>`, "
                  "or continue training with `python train.py task=rewriter model.init_from=<it>`"]
    lines += ["", f"Trained from `{config.get('source_checkpoint')}` (epoch {config.get('epoch')}, "
              f"step {config.get('global_step')}); hyper-parameters in config.json."]
    if summary:
        data = summary.get("data") or {}
        metrics = {k: round(v, 4) for k, v in (summary.get("metrics") or {}).items() if k.startswith("test/")}
        lines += ["", "## Training run", "",
                  f"- run: `{summary.get('name')}`, {summary.get('epochs')} epochs, "
                  f"{round(summary.get('fit_seconds') or 0)} s of training"]
        if data.get("train_questions") is not None:
            lines.append(f"- data: {data.get('train_questions')} training questions, semantics {data.get('semantics')}")
        if metrics:
            lines.append("- test metrics: " + ", ".join(f"{k} {v}" for k, v in sorted(metrics.items())))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rra-export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ckpt", help="a checkpoint made by python train.py (retriever or rewriter)")
    ap.add_argument("out", help="directory to write (created)")
    ap.add_argument("--train-summary", help="train_summary.json of the run, for the model card's figures")
    args = ap.parse_args(argv)

    def command() -> None:
        out = export(args.ckpt, args.out, args.train_summary)
        size = sum(f.stat().st_size for f in out.iterdir()) / 2**20
        print(f"wrote {out} ({size:.1f} MB): {', '.join(sorted(f.name for f in out.iterdir()))}")

    return run_command("rra-export", command, (ExportError, FileNotFoundError))


if __name__ == "__main__":
    raise SystemExit(main())
