"""Every `python train.py` / `python infer.py` command in README.md composes against the real
config: each override names an existing group option or key (no training or inference is run).
Sweep values (`a,b`) are checked with their first value; `<placeholders>` stand for user paths."""
import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list[tuple[str, list[str]]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            m = re.match(r"python (train|infer|serve)\.py(.*)", line)
            if not m or "$" in line:  # the own-KG block uses shell variables; tests/test_own_kg.py runs it
                continue
            args = [a for a in shlex.split(m.group(2)) if not a.startswith("-") and a != "..."]
            args = [re.sub(r"<[^>]+>", "X", a) for a in args]
            commands.append((m.group(1), args))
    return commands


COMMANDS = readme_commands()


def test_the_readme_has_commands_to_check():
    assert sum(1 for entry, _ in COMMANDS if entry == "train") >= 8
    assert sum(1 for entry, _ in COMMANDS if entry == "infer") >= 10


@pytest.mark.parametrize("entry, overrides", COMMANDS, ids=[" ".join([e, *o])[:80] for e, o in COMMANDS])
def test_readme_command_composes(entry, overrides):
    if entry == "infer":  # infer.py quotes question=... itself (brackets and spaces are Hydra syntax)
        from rra.config import quote_question

        overrides = quote_question(overrides)
    parsed = OverridesParser.create().parse_overrides(overrides)
    first = []
    for o in parsed:  # a sweep (-m a,b) composes with its first value
        first.append(f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}" if o.is_sweep_override()
                     else o.input_line)
    if any(o.startswith("hparams_search=optuna") for o in first):
        pytest.importorskip("hydra_plugins.hydra_optuna_sweeper")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(entry, overrides=[o for o in first], return_hydra_config=False)
    assert cfg.get("name")
