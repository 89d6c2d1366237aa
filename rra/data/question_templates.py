"""Question templates: how one relation hop is said, and how hops nest into a grammatical question.

A question nests one template per hop: the last relation gives the question, every earlier one a
noun phrase for the entities reached so far, innermost first, the topic entity marked `[label]`:
    [born_in, ^set_in] from Ilse Varga -> "which books are set in the birthplace of [Ilse Varga]"

Template text (YAML or JSON, see rra/data/builtin/templates.yaml), one slot per template:
- `{e}`: the inner noun phrase as it is ("who wrote {e}");
- `{the e}`, `{the genre e}`: a bare name takes the words ("which books won {the e}" -> "won the
  [Golden Quill Prize]"), a noun phrase brings its own determiner ("won the award won by [X]"),
  so no "the the" and no "the genre the genres of [X]";
- `{name}`: the template only fits a bare name ("the {name} titles");
- `{is|are}`: singular | plural, agreeing with the inner phrase ("where {is|are} {e} set").
Per relation, `question` lists whole questions, `phrase` singular noun phrases and `phrase_plural`
plural ones, so the next hop agrees with them ("where are the books set in [X] set").
A phrase that ends after its slot ("the city where {e} is based") is never put where text follows
the slot ("where is {e} based"): that is how "is based based" came about.
Relations without templates get generic ones built from the relation's name.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from rra.graph.base import is_inverse
from rra.records import DataFormatError
from rra.text.relations import relation_words

SLOT = re.compile(r"\{(e|name|the(?: [^{}|]+?)? e)\}")
AGREE = re.compile(r"\{([^{}|]*)\|([^{}|]*)\}")
KEYS = ("question", "phrase", "phrase_plural")


@dataclass(frozen=True)
class Phrase:
    """A noun phrase for the entities reached so far."""
    text: str
    plural: bool = False
    name: bool = True  # a bare entity name ("[X]"), not a phrase with its own determiner
    open_end: bool = False  # text follows the innermost name ("the city where [X] is based")


@dataclass(frozen=True)
class Template:
    text: str
    plural: bool = False  # the number of the phrase it makes (phrases only)

    def __post_init__(self):
        problem = template_problem(self.text)
        if problem:
            raise ValueError(f"{problem}: {self.text!r}")

    @property
    def _slot(self) -> re.Match:
        return SLOT.search(self.text)

    @property
    def names_only(self) -> bool:
        return self._slot.group(1) == "name"

    @property
    def text_after_slot(self) -> bool:
        return bool(self.text[self._slot.end():].strip())

    def fits(self, inner: Phrase) -> bool:
        if self.names_only and not inner.name:
            return False
        return not (inner.open_end and self.text_after_slot)

    def fill(self, inner: Phrase) -> Phrase:
        slot = self._slot
        form = slot.group(1)
        words = form[: -len(" e")] if form.startswith("the") else ""
        filled = f"{words} {inner.text}" if words and inner.name else inner.text
        text = self.text[: slot.start()] + filled + self.text[slot.end():]
        text = AGREE.sub(lambda m: m.group(2 if inner.plural else 1), text)
        open_end = (self.text_after_slot and not self.names_only) or (not self.text_after_slot and inner.open_end)
        return Phrase(" ".join(text.split()), self.plural, name=False, open_end=open_end)


def template_problem(text: object) -> str | None:
    """Why `text` is not a template, or None."""
    if not isinstance(text, str):
        return "a template is a string"
    if len(SLOT.findall(text)) != 1:
        return "each template needs exactly one slot ({e}, {the e}, {the WORDS e} or {name})"
    if re.search(r"[{}]", AGREE.sub("", SLOT.sub("", text))):
        return "braces other than the slot and {singular|plural} choices"
    return None


@dataclass
class RelationTemplates:
    question: list[Template]
    phrase: list[Template]  # singular and plural noun phrases


def generic_templates(relation: str) -> RelationTemplates:
    """Templates from the relation's name, every slot at the end so they fit any inner phrase."""
    w = relation_words(relation)
    if is_inverse(relation):
        w = re.sub(r"^(has|have|is|was) ", "", w)  # "^has_rating": not "what has has rating"
        return RelationTemplates(
            question=[Template(f"what has {w} {{e}}"), Template(f"which entities have {w} {{e}}")],
            phrase=[Template(f"the entities with {w} {{e}}", plural=True)],
        )
    w = re.sub(r" of$", "", w)  # "part_of": not "the part of of"
    return RelationTemplates(question=[Template(f"what is the {w} of {{e}}")], phrase=[Template(f"the {w} of {{e}}")])


class Templates:
    def __init__(self, table: dict[str, RelationTemplates] | None = None):
        self.table = dict(table or {})

    @classmethod
    def load(cls, path: str | Path) -> "Templates":
        """YAML (.yaml/.yml) or JSON: {relation: {question: [...], phrase: [...], phrase_plural: [...]}}."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise DataFormatError(str(path), "templates must map relation -> {question: [...], phrase: [...]}")
        table = {}
        for relation, entry in data.items():
            where = f"{path} [{relation}]"
            if not isinstance(entry, dict) or set(entry) - set(KEYS):
                raise DataFormatError(where, f"expected keys {', '.join(KEYS)}", entry)
            lists = {}
            for key in KEYS:
                items = entry.get(key) or []
                if isinstance(items, str):
                    items = [items]
                for t in items:
                    problem = template_problem(t)
                    if problem:
                        raise DataFormatError(where, f"{key}: {problem}", t)
                lists[key] = [Template(t, plural=key == "phrase_plural") for t in items]
            fallback = generic_templates(str(relation))
            phrases = lists["phrase"] + lists["phrase_plural"]
            table[str(relation)] = RelationTemplates(lists["question"] or fallback.question, phrases or fallback.phrase)
        return cls(table)

    def get(self, relation: str) -> RelationTemplates:
        return self.table.get(relation) or generic_templates(relation)

    def noun_phrase(self, path: Sequence[str], topic: str | Phrase, rng: random.Random) -> Phrase:
        """The entities reached from `topic` (a bare `[label]`) along `path`, as a noun phrase."""
        phrase = topic if isinstance(topic, Phrase) else Phrase(topic)
        for relation in path:
            phrase = self._pick(relation, "phrase", phrase, rng).fill(phrase)
        return phrase

    def question(self, path: Sequence[str], topic: str | Phrase, rng: random.Random) -> str:
        inner = self.noun_phrase(path[:-1], topic, rng)
        return self._pick(path[-1], "question", inner, rng).fill(inner).text

    def _pick(self, relation: str, kind: str, inner: Phrase, rng: random.Random) -> Template:
        fitting = [t for t in getattr(self.get(relation), kind) if t.fits(inner)]
        return rng.choice(fitting or getattr(generic_templates(relation), kind))
