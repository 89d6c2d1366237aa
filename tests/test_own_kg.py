"""The README's "Your own KG" example, run as written: export the built-in KG and questions to files,
train from them with data=files, answer on NetworkX and on Oxigraph, and get identical predictions.

Only what keeps CI fast is changed: a tiny encoder and one epoch (no step floor) for train.py, no logger, and each
command's output under a temp dir (RRA_ROOT; the README's relative checkpoint path then points there)."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rra.data.builtin import builtin_questions

REPO = Path(__file__).resolve().parents[1]
FAST_TRAIN = "model=retriever_tiny trainer.max_epochs=1 trainer.min_steps=0 callbacks.progress_bar=null"


def readme_block() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- own-kg:begin -->\s*```bash\n(.*?)```\s*<!-- own-kg:end -->", text, re.S)
    assert block, "README.md lost its own-kg example block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def as_test_script(lines: list[str], tmp: Path) -> str:
    out = ["set -euo pipefail"]
    runs = 0
    for line in lines:
        code = line.split("  #")[0].rstrip()  # the README's trailing comments
        if code.startswith("D="):
            code = f"D={shlex.quote(str(tmp / 'mykg'))}"
        elif code.startswith("python "):
            runs += 1
            code = code.replace("python ", f"{shlex.quote(sys.executable)} ", 1)
            for script in ("train.py", "infer.py"):
                code = code.replace(f" {script}", f" {shlex.quote(str(REPO / script))}", 1)
            if "train.py" in code:
                code += f" {FAST_TRAIN}"
            if "train.py" in code or "infer.py" in code:
                code += f" logger=none hydra.run.dir={shlex.quote(str(tmp / 'runs' / str(runs)))}"
        out.append(code)
    return "\n".join(out) + "\n"


@pytest.mark.slow
def test_readme_own_kg_example_runs_and_backends_agree(tmp_path):
    script = as_test_script(readme_block(), tmp_path)
    env = {**os.environ, "RRA_ROOT": str(tmp_path), "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled",
           "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, script + proc.stdout[-3000:] + proc.stderr[-5000:]

    runs = sorted((tmp_path / "runs").iterdir(), key=lambda p: int(p.name))
    train_run, nx_run, ox_run = runs[0], runs[1], runs[2]
    summary = json.loads((train_run / "train_summary.json").read_text())
    coverage = summary["data"]["coverage"]["train"]
    assert coverage["coverage"] == 1.0, coverage  # ~10% of these questions answer with their topic
    assert (tmp_path / "checkpoints" / "mykg" / "best.ckpt").is_file()

    def predictions(run: Path) -> list[dict]:
        return [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]

    nx, ox = predictions(nx_run), predictions(ox_run)
    assert len(nx) == len(ox) == len(builtin_questions("test"))  # chains and the shapes beyond them
    keys = ("qid", "answers", "paths", "triples", "status")
    assert [{k: d[k] for k in keys} for d in nx] == [{k: d[k] for k in keys} for d in ox]
    assert "NetworkXGraph" in (nx_run / "summary.md").read_text()
    assert "OxigraphGraph" in (ox_run / "summary.md").read_text()
    assert json.loads((nx_run / "metrics.json").read_text())["hits@1"] is not None
