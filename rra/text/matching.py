"""How strings are compared and names found in text: the loose form names are matched in
(`normalize`), the stricter one answers are scored in (`normalize_answer`), and the names
(`find_mentions`) or entities (`mentioned_entities`) a text mentions."""
from __future__ import annotations

import re
from typing import Sequence

from rra.graph.literals import value_text
from rra.graph.rdf import display, is_literal


def normalize(s: str) -> str:
    """Loose form for matching: lower case, punctuation/underscores/dots as spaces, collapsed
    ("film.directed_by" -> "film directed by")."""
    return " ".join(re.sub(r"[\W_]+", " ", s.lower()).split())


def normalize_answer(s: str) -> str:
    """The form answers are scored in (rra.eval.metrics): case-folded, whitespace collapsed.
    Stricter than `normalize` on purpose: "AC/DC" and "AC DC" are different answers. A literal
    node ("1985"^^xsd:gYear, "1.9E3"^^xsd:double) is scored as its value ("1985", "1900"), which is what
    a gold answer "1985" says."""
    s = str(s)
    if s[:1] == '"':
        s = value_text(s) or display(s) if is_literal(s) else s
    return " ".join(s.casefold().split())


def find_mentions(text: str, names: Sequence[str]) -> list[str]:
    """The names occurring in `text` as whole words (compared `normalize`d), ordered by first
    mention. Longer names claim their span first, so "Aliens" is not also "Alien" and "Scott"
    inside "Ridley Scott" does not count."""
    low = normalize(text or "")
    claimed: list[tuple[int, int]] = []
    first: dict[str, int] = {}
    for name in sorted(dict.fromkeys(names), key=lambda n: -len(normalize(n))):
        spelled = normalize(name)
        if not spelled:
            continue
        for m in re.finditer(r"(?<!\w)" + re.escape(spelled) + r"(?!\w)", low):
            if any(m.start() < e and s < m.end() for s, e in claimed):
                continue
            claimed.append((m.start(), m.end()))
            first[name] = min(first.get(name, m.start()), m.start())
    return sorted(first, key=first.get)


def mentioned_entities(text: str, labels: dict[str, str]) -> list[str]:
    """Entity ids (keys of `labels`, id -> label) whose label `text` names, by first mention."""
    by_label: dict[str, list[str]] = {}
    for ent, lab in labels.items():
        by_label.setdefault(lab, []).append(ent)
    return [e for lab in find_mentions(text, list(by_label)) for e in by_label[lab]]
