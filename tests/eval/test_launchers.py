"""Sweeps through Hydra's launcher plugins (conf/hydra/launcher): every config composes against its
plugin, and a real `python infer.py -m hydra/launcher=local_parallel` runs its jobs in joblib's
worker processes, side by side."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGINS = {  # launcher config -> (plugin module, its launcher class)
    "local_parallel": ("hydra_plugins.hydra_joblib_launcher", "JoblibLauncher"),
    "slurm": ("hydra_plugins.hydra_submitit_launcher", "SlurmLauncher"),
    "ray_cluster": ("hydra_plugins.hydra_ray_launcher", "RayLauncher"),
}


def test_every_launcher_config_is_tested():
    assert sorted(p.stem for p in (REPO / "conf" / "hydra" / "launcher").glob("*.yaml")) == sorted(PLUGINS)


@pytest.mark.parametrize("entry", ["train", "infer"])
@pytest.mark.parametrize("launcher", sorted(PLUGINS))
def test_launcher_configs_compose_with_their_plugin(compose_cfg, entry, launcher):
    module, cls = PLUGINS[launcher]
    pytest.importorskip(module, reason=f"hydra/launcher={launcher} needs {module} (the `launchers` extra)")
    assert compose_cfg(entry, [f"hydra/launcher={launcher}"]).hydra.launcher._target_.endswith(cls)


@pytest.mark.slow
def test_a_sweep_runs_its_jobs_in_joblib_processes(builtin_root, tmp_path):
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    env = {**os.environ, "WANDB_MODE": "disabled", "HYDRA_FULL_ERROR": "1", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, str(REPO / "infer.py"), "-m", "hydra/launcher=local_parallel", "logger=none", "llm=none",
           "limit=6", "show_summary=false", f"paths.root_dir={builtin_root}", f"hydra.sweep.dir={tmp_path}",
           "batch_size=2,3"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "Joblib.Parallel(n_jobs=2" in proc.stdout + proc.stderr  # the plugin launched them
    runs = sorted(tmp_path.glob("*/metrics.json"))
    assert len(runs) == 2 and all(json.loads(p.read_text())["n"] == 6 for p in runs)
    answers = [[json.loads(x)["answers"] for x in (p.parent / "predictions.jsonl").read_text().splitlines()]
               for p in runs]
    assert answers[0] == answers[1]  # the batch size changes nothing but speed

