"""Sweeps through Hydra's launcher plugins (conf/hydra/launcher): every config composes against its
plugin, and a real `python infer.py -m hydra/launcher=local_parallel` runs its jobs in joblib's
worker processes, side by side."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

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
def test_launcher_configs_compose_with_their_plugin(entry, launcher):
    module, cls = PLUGINS[launcher]
    pytest.importorskip(module, reason=f"hydra/launcher={launcher} needs {module} (the `launchers` extra)")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(entry, overrides=[f"hydra/launcher={launcher}"], return_hydra_config=True)
    assert cfg.hydra.launcher._target_.endswith(cls)


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


def page_commands(page: Path) -> list[tuple[str, list[str]]]:
    """`python train.py|infer.py ...` lines of the page's bash blocks (shell variables as 0)."""
    import re
    import shlex

    commands = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\$\{?\w+\}?", "0", line.split("  #")[0].split(" & ")[0].strip())
            m = re.search(r"python (train|infer)\.py(.*)", line)
            if m:
                commands.append((m.group(1), [a for a in shlex.split(m.group(2)) if a != "-m"]))
    return commands


DOC_COMMANDS = page_commands(REPO / "docs" / "more_than_one_machine.md")


def test_the_page_has_its_commands():
    assert len(DOC_COMMANDS) >= 12 and any("runner=ray" in args for _, args in DOC_COMMANDS)


@pytest.mark.parametrize("entry, overrides", DOC_COMMANDS, ids=[" ".join([e, *o])[:90] for e, o in DOC_COMMANDS])
def test_every_command_of_the_page_composes(entry, overrides):
    """docs/more_than_one_machine.md: each train.py / infer.py command composes against the real
    config, Hydra's part included (launchers); a sweep with its first values."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for launcher, (module, _) in PLUGINS.items():
        if f"hydra/launcher={launcher}" in overrides:
            pytest.importorskip(module)
    parsed = OverridesParser.create().parse_overrides(overrides)
    first = [f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}" if o.is_sweep_override()
             else o.input_line for o in parsed]
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(entry, overrides=first, return_hydra_config=True)
    assert cfg.get("name")
