"""Reading the baselines' LLM replies, on top of the shared parsers in `rra.llm.parse`.

Weak local models answer in prose, number their lines, wrap things in JSON or quotes, or reply with
nothing. Each function here returns what it could read, or None when the reply holds nothing
usable, so the caller records "unparseable" and falls back, never crashes.

The baselines always ask the LLM to choose among *known* candidates (relations around an entity,
candidate entities, numbered triples), so after the format-aware parsers fail we still look for
the candidates themselves in the reply: "I'd pick 2. directed_by and maybe release year" parses.
"""
from __future__ import annotations

import re

from rra.llm import parse as P
from rra.text.matching import find_mentions

_NUMBER = r"(?:0?\.\d+|1(?:\.0+)?|0)"


def parse_choices(reply: str, candidates: list[str], display: dict[str, str] | None = None
                  ) -> dict[str, float] | None:
    """Which of `candidates` the reply picks, with the score written next to each (1.0 if none),
    in reply order. Tries: ToG-style scored items / JSON (`parse_scored_items`); a list
    (`parse_list`) matched back to the candidates; candidate names anywhere in the text (longest
    first, so `starred_actors (reverse)` is not read as `starred_actors`); bare numbers 1..n of
    the numbered list we showed. None when nothing matched."""
    text = P.clean_reply(reply)
    if not text or not candidates:
        return None
    display = display or {}
    alias = {}
    for c in candidates:
        alias.setdefault(display.get(c, c), c)
        alias.setdefault(c, c)
    names = list(alias)

    # ToG's format puts all items on one line: "{a (Score: 0.6)}; {b (Score: 0.4)}"
    scored, _ = P.try_parse(P.parse_scored_items, re.sub(r"(?<=[})])\s*[;,]\s*", "\n", text))
    if scored:
        out: dict[str, float] = {}
        for item, s in scored:
            hit = P.match_candidate(item, names)
            if hit is not None:
                c = alias[hit]
                out[c] = max(out.get(c, 0.0), min(max(float(s), 0.0), 1.0))
        if out:
            return out
    listed, _ = P.try_parse(P.parse_list, text)
    if listed:
        hits = P.match_candidates(listed, names, cutoff=0.9)
        if hits:
            return {alias[h]: 1.0 for h in hits}
    found = [alias[h] for h in find_mentions(text, names)]
    if found:
        return {c: 1.0 for c in dict.fromkeys(found)}
    nums = [int(n) for n in re.findall(r"(?<![\w.])(\d{1,3})(?![\w.])", text)]
    picked = [candidates[n - 1] for n in dict.fromkeys(nums) if 1 <= n <= len(candidates)]
    return {c: 1.0 for c in picked} or None


def parse_scores(reply: str, n: int) -> list[float] | None:
    """ToG's positional entity scores ("0.7, 0.2, 0.1"): the first `n` numbers in [0, 1], else None."""
    nums = [float(x) for x in re.findall(r"(?<![\w.])" + _NUMBER + r"(?![\w.])", P.clean_reply(reply))]
    return nums[:n] if n > 0 and len(nums) >= n else None


def parse_yes_no(reply: str) -> bool | None:
    value, _ = P.try_parse(P.parse_yes_no, reply)
    return value


def parse_answers(reply: str, max_answers: int = 20) -> list[str] | None:
    """Answer strings: the shared `parse_answer` span ("Answer: X", "the answer is {X}", JSON),
    split on `|` / `;` / new lines when the model listed several. None when nothing is left."""
    text = P.clean_reply(reply)
    if not text:
        return None
    # a leading verdict ("{Yes}. Answer: ...", "Yes. Ridley Scott") is not part of the answer
    text = re.sub(r"^\s*[{*]*\s*(?:yes|no)\s*[}*]*\s*(?:[.,:!-]\s*|$)", "", text, flags=re.I)
    items = None
    if text[:1] in "[{":
        value, _ = P.try_parse(P.parse_json, text)
        if isinstance(value, dict):
            value = value.get("answers", value.get("answer"))
        if isinstance(value, (list, str)):
            items = [P.clean_item(str(v)) for v in ([value] if isinstance(value, str) else value)]
    if items is None and re.search(r"\banswers?\s*(?:[:：]|is\b|are\b)", text, re.I):
        text = re.sub(r"^.*?\b(answers?\s*(?:[:：]|is\b|are\b))", r"\1", text, count=1, flags=re.I | re.S)
        text = re.sub(r"^answers?\s*(?:is|are)\b", "Answer:", text, flags=re.I)
        span, _ = P.try_parse(P.parse_answer, text)
        items = [P.clean_item(s) for s in re.split(r"\s*[|;]\s*", span)] if span else []
    elif items is None:  # a bare list: "1. A\n2. B", "A | B", "- A", or one line of prose
        items, _ = P.try_parse(P.parse_list, text)
        items = items or []
    items = [s for s in items if s and s.lower() not in ("none", "unknown", "n/a", "yes", "no") and len(s) < 200]
    return list(dict.fromkeys(items))[:max_answers] or None
