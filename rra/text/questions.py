"""A question's `[topic]` marks: taken away (`strip_brackets`), masked so a model learns the
question's form, not the name (`mask_topic`), or written around the mentions of named entities
(`mark_mentions`)."""
from __future__ import annotations

import re
from typing import Sequence

BRACKETED = re.compile(r"\[([^\[\]]+)\]")


def strip_brackets(question: str) -> str:
    """`what movies did [Ridley Scott] direct` -> `what movies did Ridley Scott direct`."""
    return BRACKETED.sub(lambda m: m.group(1), question)


def mask_topic(question: str, topic_entities: Sequence[str] = (), mask: str | None = "[E]") -> str:
    """Replace the topic entity by `mask`, so a model learns the question's form, not the name.

    `[Ridley Scott]` spans are masked; otherwise the first case-insensitive occurrence of each
    given topic entity string. mask=None leaves the question unchanged. Idempotent.
    """
    if mask is None:
        return question
    if BRACKETED.search(question):
        return BRACKETED.sub(mask, question)
    for entity in topic_entities:
        if entity:
            question = re.sub(re.escape(entity), mask, question, count=1, flags=re.IGNORECASE)
    return question


def mark_mentions(question: str, mentions: Sequence[str]) -> str:
    """Each mention's first case-insensitive occurrence marked `[...]`, longest first, never
    inside another mark; a question already marked `[...]` is left as it is."""
    if BRACKETED.search(question):
        return question
    taken: list[tuple[int, int]] = []
    for m in sorted({m for m in mentions if m and m.strip()}, key=len, reverse=True):
        for hit in re.finditer(re.escape(m), question, flags=re.IGNORECASE):
            if not any(hit.start() < e and s < hit.end() for s, e in taken):
                taken.append((hit.start(), hit.end()))
                break
    for s, e in sorted(taken, reverse=True):
        question = f"{question[:s]}[{question[s:e]}]{question[e:]}"
    return question
