"""Reading JSON question files, shared by every reader of them (rra/data/qa_files.py for the plain
format, rra/data/subgraph_formats.py for RoG / NSM rows), so a byte-order mark, a line that is not
UTF-8, a line that is not JSON, an array item that is not an object and a half of a UTF-16 pair
are named the same way wherever they occur: as a DataFormatError naming file:line and the value.

- `objects(path)`: the objects of a JSONL file, one per non-blank line, lazily, each with its
  source ("file:N") and its byte offset, so a reader can read one row again (`reread`) instead of
  holding a big row (a subgraph of 5,000 triples) in memory;
- `array_items(path)`: the objects of a `.json` file that holds one array of them.

A file whose name ends in .gz, .bz2 or .xz (`questions.jsonl.gz`) is read decompressed, its format
taken from the name before that suffix, as the KG loaders do (rra.graph.loaders.COMPRESSIONS).
"""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Iterator

from rra.graph.loaders import COMPRESSIONS, open_bytes, read_file_bytes
from rra.records import DataFormatError

# "\ud83d" written as a JSON escape: half of a UTF-16 pair (a cut emoji) once parsed
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def decode(raw: bytes, path: Path | str, lineno: int) -> str:
    """UTF-8, with an optional byte-order mark before the first line (spreadsheets write one)."""
    try:
        return raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as e:
        raise DataFormatError(f"{path}:{lineno}", f"not valid UTF-8 ({e.reason} at byte {e.start}); "
                              "save the file as UTF-8", raw.decode("utf-8", "replace")) from None


def compressed(path: Path | str) -> bool:
    return Path(path).suffix.lower() in COMPRESSIONS


def lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text without its line break) of each line of a UTF-8 file (the
    offset is in the decompressed bytes of a compressed one)."""
    with open_bytes(path) as f:
        lineno = 0
        while True:
            offset = f.tell()
            raw = f.readline()
            if not raw:
                return
            lineno += 1
            yield lineno, offset, decode(raw, path, lineno).rstrip("\r\n")


def parse_object(text: str, source: str) -> dict:
    """One JSON object from `text`, or a DataFormatError naming `source`."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataFormatError(source, f"invalid JSON ({err.msg})", text) from None
    except RecursionError:  # "[[[[...": nested deeper than the parser goes
        raise DataFormatError(source, "invalid JSON (nested too deeply)", text[:80]) from None
    if not isinstance(value, dict):
        raise DataFormatError(source, "expected a JSON object", text)
    if _SURROGATE_ESCAPE.search(text):  # rare: only then walk the values to find the bad one
        no_lone_surrogates(value, source)
    return value


def objects(path: Path) -> Iterator[tuple[str, int, dict]]:
    """(source "file:N", byte offset, object) for each non-blank line of a JSONL file."""
    for lineno, offset, text in lines(path):
        if text.strip():
            source = f"{path}:{lineno}"
            yield source, offset, parse_object(text, source)


class _HeldOpen:
    """One compressed file held open for `reread`: seeking in a compressed stream decompresses
    from the start, so a fresh handle per row would cost the whole file again for every row (a
    RoG test file's graphs are built in question order: with one handle held, each seek only
    decompresses the rows between)."""

    def __init__(self):
        self.path: str | None = None
        self.file = None
        self.lock = threading.Lock()

    def line(self, path: Path, offset: int) -> bytes:
        with self.lock:
            if self.path != str(path):
                if self.file is not None:
                    self.file.close()
                self.file, self.path = COMPRESSIONS[Path(path).suffix.lower()](path, "rb"), str(path)
            self.file.seek(offset)
            return self.file.readline()


_held = _HeldOpen()


def reread(path: Path, offset: int, source: str) -> dict:
    """The object of the line starting at byte `offset` (from `objects`), read again."""
    if compressed(path):
        raw = _held.line(path, offset)
    else:
        with open(path, "rb") as f:
            f.seek(offset)
            raw = f.readline()
    return parse_object(decode(raw, path, 1 if offset == 0 else 2).rstrip("\r\n"), source)


def array_items(path: Path) -> Iterator[tuple[str, dict]]:
    """(source "file:item N", object) for each item of a `.json` file holding one array of objects."""
    text = decode(read_file_bytes(path), path, 1)
    try:
        items = json.loads(text)
    except json.JSONDecodeError as err:
        shown = text.splitlines()[err.lineno - 1] if text.strip() else text
        raise DataFormatError(f"{path}:{err.lineno}", f"invalid JSON ({err.msg})", shown) from None
    except RecursionError:
        raise DataFormatError(f"{path}:1", "invalid JSON (nested too deeply)", text[:80]) from None
    if not isinstance(items, list):
        raise DataFormatError(f"{path}:1", "a .json question file holds one array of question objects "
                              "(or use .jsonl, one object per line)", type(items).__name__)
    for i, item in enumerate(items, 1):
        source = f"{path}:item {i}"
        if not isinstance(item, dict):
            raise DataFormatError(source, "expected a JSON object", item)
        no_lone_surrogates(item, source)
        yield source, item


def starts_with_array(path: Path) -> bool:
    """Whether a `.json` file holds an array (else it is read as JSON lines)."""
    with open_bytes(path) as f:
        head = f.read(4096)
    return head.decode("utf-8-sig", "replace").lstrip()[:1] == "["


def no_lone_surrogates(value, source: str, key: str = "") -> None:
    """JSON may escape half of a UTF-16 pair ("\\ud83d", a cut emoji): not valid Unicode, it would
    fail every write of the question later. Refused here, with the place and the position."""
    if isinstance(value, dict):
        for k, v in value.items():
            no_lone_surrogates(v, source, k)
    elif isinstance(value, list):
        for v in value:
            no_lone_surrogates(v, source, key)
    elif isinstance(value, str):
        for i, ch in enumerate(value):
            if "\ud800" <= ch <= "\udfff":
                raise DataFormatError(source, f"{key or 'a value'} holds an unpaired UTF-16 surrogate "
                                      f"(\\u{ord(ch):04x} at character {i + 1}; a cut emoji?): not valid "
                                      "Unicode; fix or remove it", value.encode("utf-8", "backslashreplace").decode())
