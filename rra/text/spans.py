"""The n-grams of a question (its units: words, or single characters of scripts written without
spaces) and the span that names a given entity (`name_in_text`: its label where the text holds it,
else an alias the KG finds it by)."""
from __future__ import annotations

import re
from typing import Sequence

from rra.graph.base import KnowledgeGraph
from rra.text.questions import BRACKETED

WORD = re.compile(r"\S+")
# Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, CJK punctuation, kana,
# bopomofo, CJK ideographs, Hangul, fullwidth forms, the supplementary ideographs): one unit each.
UNSEGMENTED = ("\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3000-\u30ff\u3100-\u312f\u3400-\u4dbf"
               "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0002fa1f")
UNIT = re.compile(f"[{UNSEGMENTED}]|[^\\s{UNSEGMENTED}]+")
UNSEGMENTED_CHAR = re.compile(f"[{UNSEGMENTED}]")
# Edge punctuation that is part of the sentence, not of a label ("... Alien?", "《卧虎藏龙》？").
EDGE_PUNCT = "?!.,;:\"'()？！。，、；：“”‘’（）《》〈〉【】「」『』"
SENTENCE_END = "?!.,;:"  # what ends a sentence or clause after a name, never part of it at the end


def units(question: str, char_ngrams: bool = True) -> list[tuple[int, int, bool]]:
    """The question's units as (start, end, is one character of a script without spaces)."""
    if not char_ngrams:
        return [(m.start(), m.end(), False) for m in WORD.finditer(question)]
    return [(m.start(), m.end(), bool(UNSEGMENTED_CHAR.fullmatch(m.group()))) for m in UNIT.finditer(question)]


def spans(question: str, max_ngram: int, max_chars: int) -> list[tuple[int, int, str, list[str]]]:
    """Every n-gram of units, longest first: (first unit, units, its text, its units' texts). At
    most `max_ngram` words and `max_chars` unspaced characters; units are joined as written (a
    space where the question has any, none between characters)."""
    found = units(question, max_chars > 0)
    before = [0]  # unspaced characters before each unit
    for u in found:
        before.append(before[-1] + u[2])
    longest = max(max_ngram, max_chars) if before[-1] else max_ngram
    out = []
    for n in range(min(len(found), longest), 0, -1):
        for i in range(len(found) - n + 1):
            chars = before[i + n] - before[i]
            if chars > max_chars or n - chars > max_ngram:
                continue
            span = found[i:i + n]
            pieces = [question[a:b] for a, b, _ in span]
            text = pieces[0] + "".join((" " if span[k][1] < span[k + 1][0] else "") + pieces[k + 1]
                                       for k in range(n - 1))
            out.append((i, n, text, pieces))
    return out


def mention_forms(text: str) -> list[str]:
    """The forms a span of a question may name an entity by, tried in this order: as written ("Paris,
    Texas."), without the sentence's punctuation ("Paper (Extended Version)?" keeps its closing
    bracket: only the sentence's mark goes first), without edge punctuation, and without a possessive
    ("Jürgen MacDonald's affiliation": the possessive is the question's, not the name's). The
    sentence's marks go one at a time, so a name that ends in a full stop keeps it where the question
    ends right after it ("Who works for Acme Ltd.?" names "Acme Ltd.", not "Acme Ltd")."""
    forms, bare = [text], text
    while bare and bare[-1] in SENTENCE_END:
        bare = bare[:-1]
        forms.append(bare)
    owner = bare[:-2] if bare[-2:] in ("'s", "’s") else bare
    return [f for f in dict.fromkeys([*forms, text.strip(EDGE_PUNCT), owner]) if f.strip(EDGE_PUNCT)]


def name_in_text(kg: KnowledgeGraph, question: str, entity: str, label: str, max_ngram: int = 16,
                 max_chars: int = 16) -> str:
    """How the question names a topic it is given: its label where the text holds it, else the
    longest span the KG finds that entity by (an alias: "JFK" for the entity labelled "John F.
    Kennedy"), so masking and marking find it; the label when no span names it. One lookup per span
    (`TopicLinker` batches them through its LookAhead); `names_in_text` for many at once."""
    texts = _forms_to_look_up(question, label, max_ngram, max_chars)
    return next((t for t in texts if entity in kg.find_entities(t, "casefold", ALIAS_LIMIT)), label)


def names_in_text(kg: KnowledgeGraph, asked: Sequence[tuple[str, str, str]], max_ngram: int = 16,
                  max_chars: int = 16) -> list[str]:
    """`name_in_text` of each (question, entity, label), every span of them all looked up in one
    batched call."""
    texts = [_forms_to_look_up(q, label, max_ngram, max_chars) for q, _, label in asked]
    wanted = sorted({t for found in texts for t in found})
    hits = kg.find_entities_batch(wanted, "casefold", ALIAS_LIMIT) if wanted else {}
    return [next((t for t in found if entity in hits.get(t, ())), label)
            for found, (_, entity, label) in zip(texts, asked)]


def _forms_to_look_up(question: str, label: str, max_ngram: int, max_chars: int) -> list[str]:
    """The forms of the question's spans, longest span first, that may name a given topic
    (`mention_forms`: "NYC?" is looked up as "NYC" too); none where the text holds its label (or
    marks the topic in brackets)."""
    if not label or named_in_text(question, [label]):
        return []
    texts = [text for _, _, text, _ in spans(question, max_ngram, max_chars)]
    return list(dict.fromkeys(f for text in texts for f in mention_forms(text)))


ALIAS_LIMIT = 50  # entities one name may find when a given topic is looked for in the text


def named_in_text(question: str, labels: Sequence[str]) -> bool:
    """Whether the text holds each name (or marks its topic in brackets): no lookup needed."""
    return bool(BRACKETED.search(question)) or all(n.casefold() in question.casefold() for n in labels)
