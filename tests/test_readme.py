"""The README and every docs/ page run as written: each `python train.py` / `infer.py` / `serve.py`
command composes against the real config (each override names an existing group option or key; no
training or inference is run), each `python -m bench.*` and `rra-kg` command parses with that tool's
own command line, and each relative link (and #anchor) points at a file (and a heading) that exists.
Commands are read from ```bash blocks and from `inline code`; sweep values (`a,b`) are checked with
their first value, `<placeholders>` stand for user paths, `[--optional flags]` are left out."""
import importlib
import re
import shlex
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_VAR = re.compile(r"\$[A-Za-z_]")  # $D, $OWN: the own-KG block (tests/test_own_kg.py runs it)


def command_lines(text: str) -> list[str]:
    """Shell lines of ```bash blocks (continuations joined, comments cut) and inline code spans."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        lines += [line.split("  #")[0].strip() for line in block.replace("\\\n", " ").splitlines()]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    lines += [span.strip() for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose.replace("\n", " "))]
    return [part.strip() for line in lines for part in line.split("&&")]


def arguments(rest: str) -> list[str]:
    rest = re.sub(r"\[--[^\]]*\]", "", rest)  # [--optional flags] of a table's command
    return [re.sub(r"<[^>]+>", "X", a) for a in shlex.split(rest) if a != "..."]


def page_commands() -> list[tuple[str, str, list[str]]]:
    """(page, tool, arguments): tool is train / infer / serve, bench.NAME, or rra-kg."""
    found = []
    for page in PAGES:
        for line in command_lines(page.read_text(encoding="utf-8")):
            line = re.sub(r"^(\w+=\S+\s+)+", "", line)  # OMP_NUM_THREADS=1 python train.py ...
            if SHELL_VAR.search(line):
                continue
            m = (re.match(r"python (train|infer|serve)\.py(?:\s+(.*))?$", line)
                 or re.match(r"python -m (bench(?:\.\w+)+)(?:\s+(.*))?$", line) or re.match(r"(rra-kg)(?:\s+(.*))?$", line))
            if m:
                found.append((page.relative_to(REPO).as_posix(), m.group(1), arguments(m.group(2) or "")))
    return found


COMMANDS = page_commands()
ENTRY = [c for c in COMMANDS if c[1] in ("train", "infer", "serve")]
TOOLS = [c for c in COMMANDS if c[1] not in ("train", "infer", "serve")]


def ids(commands):
    return [f"{page}: {' '.join([tool, *args])}"[:100] for page, tool, args in commands]


def test_the_pages_have_commands_to_check():
    pages = {page for page, _, _ in COMMANDS}
    assert {"README.md", "docs/usage.md", "docs/own-kg.md", "docs/results.md", "docs/rewriter.md"} <= pages
    assert sum(tool == "train" for _, tool, _ in COMMANDS) >= 8 and sum(tool == "infer" for _, tool, _ in COMMANDS) >= 10
    assert len({tool for _, tool, _ in TOOLS if tool.startswith("bench.")}) >= 15


@pytest.mark.parametrize("page, entry, overrides", ENTRY, ids=ids(ENTRY))
def test_command_composes(compose_cfg, page, entry, overrides):
    if entry == "infer":  # infer.py quotes question=... itself (brackets and spaces are Hydra syntax)
        from rra.config import quote_question

        overrides = quote_question(overrides)
    overrides = [o for o in overrides if not o.startswith("-")]  # -m
    first = []
    for o in OverridesParser.create().parse_overrides(overrides):  # a sweep (-m a,b) composes with its first value
        first.append(f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}" if o.is_sweep_override()
                     else o.input_line)
    if any(o.startswith("hparams_search=optuna") for o in first):
        pytest.importorskip("hydra_plugins.hydra_optuna_sweeper")
    if "hydra/launcher=ray_cluster" in first:  # the `ray-launcher` extra, not installed by `make test`
        pytest.importorskip("hydra_plugins.hydra_ray_launcher")
    assert compose_cfg(entry, first).get("name")


@pytest.mark.parametrize("page, tool, args", TOOLS, ids=ids(TOOLS))
def test_tool_command_parses(page, tool, args):
    """A benchmark's or rra-kg's arguments as its own parser reads them (a stale flag exits with 2)."""
    if tool == "rra-kg":
        from rra.graph.cli import _parser as parser
    else:
        parser = importlib.import_module(tool).parser
    try:
        parser().parse_args(args)
    except SystemExit as err:
        pytest.fail(f"{page}: `{tool} {' '.join(args)}` does not parse (exit {err.code})")


def slug(heading: str) -> str:
    """The #anchor a heading gets on GitHub."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def links() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        prose = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if not re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                out.append((page.relative_to(REPO).as_posix(), target))
    return out


LINKS = links()


def test_the_pages_link_each_other():
    readme = {target for page, target in LINKS if page == "README.md"}
    assert {f"docs/{p.name}" for p in PAGES if p.parent.name == "docs"} <= {t.split("#")[0] for t in readme}


@pytest.mark.parametrize("page, target", LINKS, ids=[f"{p}: {t}" for p, t in LINKS])
def test_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    file = (REPO / page).parent / path if path else REPO / page
    assert file.resolve().exists(), f"{page} links to {target}: no such file"
    if anchor and file.suffix == ".md":
        headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", file.read_text(encoding="utf-8"), flags=re.S),
                              re.M)
        assert anchor in {slug(h) for h in headings}, f"{page} links to {target}: no such heading"
