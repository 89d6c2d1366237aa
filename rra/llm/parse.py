"""Parsing LLM replies, shared by the RRA answerer and every baseline.

Weak models wrap what we asked for in prose, numbering, markdown, JSON fences, braces or quotes. Each
parser here digs out the requested shape or raises `ParseError` (a ValueError whose `status` is
"unparseable"); none raises anything else for any string input. `try_parse(fn, text, ...)` turns the
exception into `(None, "unparseable: ...")` for callers that record the status and carry on.

- `clean_reply`: strip <think> blocks, chat special tokens and surrounding whitespace.
- `parse_json`: a JSON value anywhere in the reply (```json fences, trailing prose, trailing commas,
  Python-style single quotes / True / None).
- `parse_list`: items from a JSON array, numbered/bulleted lines, quoted items, or a comma/semicolon
  list (so entity names containing commas are split; match against candidates when you have them).
- `parse_answer`: the answer from "Answer: X" / "the answer is {X}" / JSON {"answer": ...} / first line.
- `parse_yes_no`: True/False for sufficiency checks ("Yes.", "{No}", "not enough information", JSON).
- `parse_choice`: 0-based index from "2", "option 2", "(B)", "Answer: C", or the option's text.
- `parse_scored_items`: [(item, score)] from ToG-style "1. {rel (Score: 0.7)}: why", "rel: 0.7", JSON.
- `match_candidate(s)`: map parsed items back to a candidate list: exact, case-insensitive,
  normalised (punctuation/underscores), containment, then fuzzy (difflib).
- `find_candidates_in_text`: candidates mentioned in free text, in order of appearance.
"""
from __future__ import annotations

import ast
import difflib
import json
import re
from typing import Any, Callable, Sequence

from rra.records import Status
from rra.text.matching import find_mentions, normalize


class ParseError(ValueError):
    """The reply does not contain what was asked for. Callers record status "unparseable"."""

    status = Status.UNPARSEABLE

    def __init__(self, reason: str, text: str = ""):
        self.reason, self.text = reason, text
        super().__init__(f"unparseable: {reason}: {text[:120]!r}")


def try_parse(fn: Callable[..., Any], text: str | None, *args, **kwargs) -> tuple[Any, str | None]:
    """(result, None) on success, (None, "unparseable: ...") when `fn` raises ParseError."""
    try:
        return fn(text, *args, **kwargs), None
    except ParseError as e:
        return None, str(e)


# --- cleaning ----------------------------------------------------------------------------------
_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_SPECIAL = re.compile(r"<\|[^|>]{1,40}\|>|</?s>|\[/?INST\]")
_QUOTES = "\"'`“”‘’«»"


def clean_reply(text: str | None) -> str:
    if not text:
        return ""
    text = _SPECIAL.sub("", _THINK.sub("", str(text)))
    text = re.sub(r"^\s*(assistant|answer)\s*\n", "", text, flags=re.I)  # a role echoed on its own line
    return text.strip()


def _nonempty(text: str | None) -> str:
    """The cleaned reply, or ParseError for an empty one."""
    text = clean_reply(text)
    if not text:
        raise ParseError("empty reply", "")
    return text


def clean_item(item: str) -> str:
    """One parsed item without list markers, markdown, braces, quotes, score suffix or end dot."""
    s = item.strip()
    s = re.sub(r"\(\s*score\s*[:=]\s*[-+0-9.eE]+\s*\)", "", s, flags=re.I).strip()
    for pat in (r"^\*\*(.+?)\*\*", r"^\{(.+?)\}", r"^\"(.+?)\"", r"^“(.+?)”", r"^`(.+?)`"):
        m = re.match(pat, s)
        if m and (m.end() == len(s) or not s[m.end()].isalnum()):
            s = m.group(1).strip()
            break
    s = s.strip("*_").strip()
    s = re.sub(r"\s*\(\s*score\s*[:=]\s*[-+0-9.eE]+\s*\)\s*$", "", s, flags=re.I)
    while s and (s[0] in _QUOTES + "{[(" or s[-1] in _QUOTES + "}]).,;:"):
        if s[-1] == ")" and "(" in s[:-1]:  # keep "Alien (1979)"
            break
        if s[-1] == "." and re.search(r"\b[A-Z]\.$|\.\w+\.$|\b(?:Jr|Sr|Inc|Ltd|Co|St|Bros|Dr|Mr|Mrs|Ms|vs)\.$", s):  # keep "D.C." / "Jr." style dots
            break
        s = s[1:] if s[0] in _QUOTES + "{[(" else s[:-1]
        s = s.strip()
    return s


# --- JSON --------------------------------------------------------------------------------------
_FENCE = re.compile(r"```(?:json|JSON|python)?\s*\n?(.*?)(```|$)", re.S)


def _loads_lenient(s: str) -> Any:
    s = s.strip()
    try:
        return json.loads(s)
    except (ValueError, RecursionError):
        pass
    fixed = re.sub(r",\s*([\]}])", r"\1", s)  # trailing commas
    try:
        return json.loads(fixed)
    except (ValueError, RecursionError):
        pass
    try:  # Python literal style: single quotes, True/False/None
        py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", fixed)))
        value = ast.literal_eval(py)
        if isinstance(value, (dict, list, tuple)):
            return list(value) if isinstance(value, tuple) else value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    raise ValueError("not JSON")


def _balanced_spans(text: str, limit: int = 20) -> list[str]:
    """Up to `limit` bracketed substrings '{...}' / '[...]', by start position. One string-aware
    stack pass (linear), so a reply of 5,000 unclosed brackets costs nothing."""
    pairs, stack, in_str, esc = [], [], False, False
    for i, c in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            continue
        if c == '"':
            in_str, esc = True, False
        elif c in "{[":
            stack.append(i)
        elif c in "}]" and stack:
            pairs.append((stack.pop(), i))
    return [text[a:b + 1] for a, b in sorted(pairs)[:limit]]


def parse_json(text: str | None) -> Any:
    """The first JSON object/array in the reply (fenced block first), leniently decoded."""
    text = _nonempty(text)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for c in candidates:
        try:
            return _loads_lenient(c)
        except ValueError:
            pass
    for span in _balanced_spans(text):
        try:
            return _loads_lenient(span)
        except ValueError:
            continue
    raise ParseError("no JSON value found", text)


def _json_items(value: Any) -> list[str] | None:
    """Items from a decoded JSON value: a list, or the list inside a one-key/answer-like object."""
    if isinstance(value, dict):
        for key in ("answers", "answer", "items", "entities", "relations", "result", "results"):
            if key in value:
                return _json_items(value[key])
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()):
            return [k for k, _ in sorted(value.items(), key=lambda kv: -kv[1])]
        lists = [v for v in value.values() if isinstance(v, list)]
        return _json_items(lists[0]) if len(lists) == 1 else None
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict):
                v = next((v[k] for k in ("name", "entity", "relation", "answer", "item") if k in v),
                         next(iter(v.values()), "") if v else "")
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out.append(str(v))
        return out
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value)]
    return None


# --- lists -------------------------------------------------------------------------------------
_MARKER = re.compile(r"^\s*(?:\d{1,3}\s*[.)\]:]|\(\d{1,3}\)|[-*•·+▪◦]|[A-Z][.)])\s+(.*\S)\s*$")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)")
_LABEL = re.compile(r"^\s*(?:[\w ]{0,30}?(?:answers?|relations?|entities|items|output|result)s?)\s*[:=]\s*", re.I)


def _dedupe(items: list[str], max_items: int | None) -> list[str]:
    seen, out = set(), []
    for it in items:
        key = it.lower()
        if it and key not in seen:
            seen.add(key)
            out.append(it)
    return out[:max_items] if max_items else out


def parse_list(text: str | None, max_items: int | None = None) -> list[str]:
    """Items of a list-shaped reply, in order, deduplicated (case-insensitive)."""
    text = _nonempty(text)
    if "[" in text or "{" in text:
        try:
            items = _json_items(parse_json(text))
            items = [clean_item(i) for i in items or []]
            if any(items):
                return _dedupe(items, max_items)
        except ParseError:
            pass
    lines = [ln for ln in text.splitlines() if ln.strip()]
    marked = [m.group(1) for m in map(_MARKER.match, lines) if m]
    if marked:
        return _dedupe([clean_item(i) for i in marked], max_items)
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    if quoted and len(" ".join(quoted)) < 0.8 * len(text):  # prose with quoted items in it
        return _dedupe([clean_item(q) for q in quoted], max_items)
    # Drop an intro line ("Here are the relations:") and a label ("Answer: a, b").
    if len(lines) > 1 and lines[0].rstrip().endswith(":"):
        lines = lines[1:]
    lines = [_LABEL.sub("", ln, count=1) for ln in lines]
    if len(lines) > 1 and not any(re.search(r"[,;]", ln) for ln in lines):
        parts = lines
    else:
        parts = [p for ln in lines for p in re.split(r"\s*[;,|]\s*", ln)]
    items = [clean_item(re.sub(r"^(?:and|or)\s+", "", p.strip(), flags=re.I)) for p in parts]
    items = [i for i in items if i]
    if not items:
        raise ParseError("no list items", text)
    return _dedupe(items, max_items)


# --- single answers ----------------------------------------------------------------------------
_ANSWER_LABEL = re.compile(r"(?:^|\n)\s*(?:\*\*)?(?:final\s+)?answers?(?:\*\*)?\s*[:：]\s*(?:\*\*)?(.+)", re.I)
_ANSWER_IS = re.compile(r"\banswers?\s+(?:to\s+[^\n]*?\s+)?(?:is|are|would be)\s*[:]?\s*(.+)", re.I)


def _json_object(text: str, marker: str) -> dict:
    """The JSON object a reply holds ({} when it has none: the caller reads the prose). Only tried
    when the reply has `{` and `marker`, so plain prose is never parsed as JSON."""
    if "{" not in text or marker not in text:
        return {}
    try:
        value = parse_json(text)
    except ParseError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_answer(text: str | None) -> str:
    """The answer string: JSON "answer", last "Answer: X" line, "the answer is {X}", or first line."""
    text = _nonempty(text)
    # ToG's own reply format puts the answer after a verdict: "{Yes}. Answer: Ridley Scott"
    text = re.sub(r"^\s*[{*]*\s*(?:yes|no)\s*[}*]*\s*[.,:!-]?\s*(?=answers?\s*[:：])", "", text, flags=re.I)
    value = _json_object(text, '"')
    if "answer" in value:
        v = value["answer"]
        ans = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        if ans.strip():
            return clean_item(ans)
    labelled = _ANSWER_LABEL.findall(text)
    match = labelled[-1] if labelled else None
    if match is None:
        m = _ANSWER_IS.search(text)
        match = m.group(1) if m else None
    if match is not None:
        braces = re.search(r"\{([^{}]+)\}", match)
        ans = braces.group(1) if braces else re.split(r"(?<=[^A-Z.])\.\s", match, maxsplit=1)[0]
        ans = clean_item(ans)
        if ans:
            return ans
    braces = re.findall(r"\{([^{}]+)\}", text)
    braces = [b for b in braces if b.strip().lower() not in ("yes", "no")]
    if braces:
        return clean_item(braces[-1])
    first = clean_item(text.splitlines()[0])
    if not first:
        raise ParseError("no answer text", text)
    return first


def committed_answers(text: str | None) -> list[str]:
    """The answers a free-form reply commits to: its final answer (`parse_answer`) split into
    items ("A | B", "A, B", "A and B"). [] when the reply states none (empty, unparseable). A reply
    that merely repeats the prompt commits to its first line, which names no gold answer."""
    try:
        answer = parse_answer(text)
    except ParseError:
        return []
    items = parse_list(answer) or [answer]
    if len(items) == 1 and " and " in items[0]:
        items = [x.strip() for x in items[0].split(" and ") if x.strip()]
    return items


_YES = {"yes", "true", "sufficient", "y"}
_NO = {"no", "false", "insufficient", "n"}
_NEGATIVE_PHRASES = re.compile(
    r"\b(not (?:enough|sufficient|possible|able)|insufficient|cannot|can ?not|can't|unable|"
    r"does not (?:contain|provide)|doesn't (?:contain|provide)|no (?:information|answer))\b", re.I)


def parse_yes_no(text: str | None) -> bool:
    """True for yes/sufficient, False for no/insufficient, from the first decisive word."""
    text = _nonempty(text)
    for v in _json_object(text, ":").values():
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.strip().lower() in _YES | _NO:
            return v.strip().lower() in _YES
    for word in re.findall(r"[A-Za-z]+", text[:400]):
        w = word.lower()
        if w in ("yes", "true", "no", "false"):
            return w in ("yes", "true")
    if _NEGATIVE_PHRASES.search(text):
        return False
    if re.search(r"\b(sufficient|enough)\b", text, re.I):
        return True
    if re.fullmatch(r"\s*[yYnN]\s*[.!]?\s*", text):
        return text.strip()[0].lower() == "y"
    raise ParseError("no yes/no", text)


def _choice_value(token: str, n: int) -> int | None:
    token = token.strip()
    if token.isdigit():
        i = int(token) - 1
    elif len(token) == 1 and token.isalpha():
        i = ord(token.upper()) - ord("A")
    else:
        return None
    return i if 0 <= i < n else None


def parse_choice(text: str | None, n_options: int, options: Sequence[str] | None = None) -> int:
    """0-based index of the chosen option: "2", "Option 2", "(B)", "answer: c", "#3", or the
    text of one of `options`. Numbers are 1-based, letters A=0. Out-of-range numbers are ignored."""
    text = _nonempty(text)
    patterns = [
        r"\b(?:option|choice|answer|candidate|number|no\.)\s*(?:is\s*)?[:#\-]?\s*\(?([A-Za-z]|\d{1,3})\)?(?!\w)",
        r"^\s*\(?([A-Z]|\d{1,3})(?:[).:\]]|\s*$|\s)",
        r"\(([A-Za-z]|\d{1,3})\)",
        r"#\s*(\d{1,3})\b",
        r"(?<![\w.])(\d{1,3})(?![\w.])",
    ]
    for pat in patterns:
        for m in re.finditer(pat, text, re.I if pat.startswith(r"\b") else 0):
            i = _choice_value(m.group(1), n_options)
            if i is not None:
                return i
    if options:
        found = find_candidates_in_text(text, options)
        if found:
            return list(options).index(found[0])
    raise ParseError(f"no choice among {n_options} options", text)


_SCORED_LINE = [
    re.compile(r"\{?\s*(?P<item>[^{}()\n]+?)\s*\(\s*score\s*[:=]\s*(?P<score>[-+]?\d*\.?\d+)\s*\)", re.I),
    re.compile(r"(?P<item>[^:=\n]+?)\s*(?:[:=]|-{1,2}|–)\s*(?:score\s*[:=]?\s*)?(?P<score>[-+]?\d*\.\d+|[01])\s*(?:$|[,;)\s])", re.I),
    re.compile(r"(?P<item>[^()\n]+?)\s*\(\s*(?P<score>[-+]?\d*\.\d+|[01])\s*\)", re.I),
]


def parse_scored_items(text: str | None) -> list[tuple[str, float]]:
    """[(item, score)] from ToG-style "{rel (Score: 0.5)}", "rel: 0.5", "rel (0.5)" lines or JSON."""
    text = _nonempty(text)
    if "{" in text and ('":' in text or "':" in text):
        try:
            value = parse_json(text)
            if isinstance(value, dict) and value and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()):
                return [(clean_item(k), float(v)) for k, v in value.items()]
            if isinstance(value, list):
                out = []
                for v in value:
                    if isinstance(v, dict):
                        name = next((v[k] for k in ("relation", "entity", "name", "item") if k in v), None)
                        score = next((v[k] for k in ("score", "confidence", "weight") if k in v), None)
                        if name is not None and isinstance(score, (int, float)):
                            out.append((clean_item(str(name)), float(score)))
                if out:
                    return out
        except ParseError:
            pass
    out = []
    # ToG sometimes puts every item on one line: "{a (Score: 0.6)}; {b (Score: 0.4)}".
    text = re.sub(r"(?<=[})])\s*[;,]\s*(?=\{)", "\n", text)
    for line in text.splitlines():
        m = _MARKER.match(line)
        body = m.group(1) if m else line.strip()
        for pat in _SCORED_LINE:
            hit = pat.match(body)  # anchored: a lazy item group searched from every offset is quadratic
            if hit:
                item = clean_item(hit.group("item"))
                if item:
                    out.append((item, float(hit.group("score"))))
                break
    if not out:
        raise ParseError("no scored items", text)
    return out


# --- matching back to candidates ---------------------------------------------------------------
def match_candidate(item: str, candidates: Sequence[str], cutoff: float = 0.8) -> str | None:
    """The candidate `item` refers to, or None: exact, case-insensitive, normalised, containment
    (the item quotes a candidate with extra words, or abbreviates one uniquely), then fuzzy."""
    if not item or not candidates:
        return None
    item = item.strip()
    if item in candidates:
        return item
    low = item.lower()
    for c in candidates:
        if c.lower() == low:
            return c
    norm = normalize(item)
    if not norm:
        return None
    norms = [normalize(c) for c in candidates]
    for c, n in zip(candidates, norms):
        if n == norm:
            return c
    padded = f" {norm} "
    inside = [(len(n), c) for c, n in zip(candidates, norms) if n and f" {n} " in padded]
    if inside:  # the longest candidate quoted within the item ("directed_by: because ...")
        return max(inside, key=lambda t: t[0])[1]
    if len(norm) >= 3:
        holders = [c for c, n in zip(candidates, norms) if f" {norm} " in f" {n} "]
        if len(holders) == 1 or (holders and len({normalize(h) for h in holders}) == 1):
            return holders[0]
    close = difflib.get_close_matches(norm, norms, n=1, cutoff=cutoff)
    return candidates[norms.index(close[0])] if close else None


def match_candidates(items: Sequence[str], candidates: Sequence[str], cutoff: float = 0.8) -> list[str]:
    """Each item mapped to its candidate (unmatched items dropped), deduplicated, in item order."""
    out = []
    for it in items:
        c = match_candidate(it, candidates, cutoff)
        if c is not None and c not in out:
            out.append(c)
    return out


def find_candidates_in_text(text: str | None, candidates: Sequence[str]) -> list[str]:
    """Candidates mentioned in the cleaned reply, ordered by first mention (rra.text.matching.find_mentions:
    whole words, a name inside a longer mentioned one does not count)."""
    return find_mentions(clean_reply(text), candidates)
