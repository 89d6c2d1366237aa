"""Fixtures for the rewriter tests: a WebNLG-shaped folder written here, and the packaged
SmolLM2 tokenizer (read once per session from the GGUF file) for tiny random LMs."""
from pathlib import Path

import pytest

ENTRY = """    <entry category="{cat}" eid="Id{eid}" size="{size}">
      <originaltripleset><otriple>ignored | ignored | ignored</otriple></originaltripleset>
      <modifiedtripleset>
{triples}
      </modifiedtripleset>
{lex}
    </entry>
"""

ENTRIES = [
    ("Film", [("Alien_(film)", "directedBy", "Ridley_Scott")],
     ["Alien was directed by Ridley Scott.", "Ridley Scott directed Alien."]),
    ("Film", [("Heat_(1995_film)", "releaseYear", '"1995"'), ("Heat_(1995_film)", "starring", "Al_Pacino")],
     ["Heat, released in 1995, stars Al Pacino."]),
    ("City", [("Aarhus", "leaderName", "Jacob_Bundsgaard")],
     ["The leader of Aarhus is Jacob Bundsgaard."]),
]


def webnlg_xml(entries=ENTRIES) -> str:
    body = "".join(
        ENTRY.format(
            cat=cat, eid=i + 1, size=len(triples),
            triples="\n".join(f"        <mtriple>{s} | {p} | {o}</mtriple>" for s, p, o in triples),
            lex="\n".join(f'      <lex comment="good" lid="Id{j + 1}">{t}</lex>' for j, t in enumerate(texts)),
        )
        for i, (cat, triples, texts) in enumerate(entries)
    )
    return f"<?xml version='1.0' encoding='UTF-8'?>\n<benchmark>\n  <entries>\n{body}  </entries>\n</benchmark>\n"


@pytest.fixture
def webnlg_entries() -> list:
    """(category, triples, texts) of the entries in every fixture file."""
    return ENTRIES


@pytest.fixture
def webnlg_root(tmp_path: Path) -> Path:
    """tmp/webnlg_challenge_2017/{train,dev}/{1,2}triples/*.xml + test/testdata_with_lex.xml."""
    root = tmp_path / "webnlg_challenge_2017"
    for split in ("train", "dev"):
        for size in (1, 2):
            d = root / split / f"{size}triples"
            d.mkdir(parents=True)
            (d / f"{size}triple_{split}.xml").write_text(
                webnlg_xml([e for e in ENTRIES if len(e[1]) == size]), encoding="utf-8")
    (root / "test").mkdir()
    (root / "test" / "testdata_with_lex.xml").write_text(webnlg_xml(), encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="session")
def tokenizer_state():
    """The packaged SmolLM2 tokenizer as a JSON state (loading the GGUF once per session)."""
    from rra.models.encoder import tokenizer_to_state
    from rra.resources import DEFAULT_LLM, load_pretrained

    _, tok = load_pretrained(DEFAULT_LLM, load_model=False)
    state = tokenizer_to_state(tok)
    state["chat_template"] = tok.chat_template
    return state


@pytest.fixture(autouse=True)
def one_torch_thread():
    """On a shared, loaded 2-core box one intra-op thread is several times faster than two
    (measured: 4 s vs 18 s for the same forward pass at load ~8); restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
