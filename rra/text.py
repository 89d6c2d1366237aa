"""Text helpers every part shares, each defined once: how a relation reads, how a question's
`[topic]` marks are handled, how strings are normalised and how entity names are found in text.

Relations are shown three ways, by purpose:
- `relation_display`: the KG name, for prompts whose reply must name it back
  (`^directed_by` -> "directed_by (reverse)");
- `relation_phrase`: words for an encoder (the retriever's input, embedding baselines)
  (`^film.directed_by` -> "film directed by (reverse)", camelCase and URIs split);
- `relation_words`: words for prose, the last name part only (`film.film.directed_by` -> "directed by").
A dataset whose relation ids are opaque (Wikidata's `P50`) names them in its config
(`data.relation_labels`, read by `relation_names`); the three functions then read the name
(`^P50` -> "author (reverse)") wherever a method shows relations to an LLM or an encoder.
"""
from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from rra.graph.base import GraphUnavailableError, KnowledgeGraph, base_relation, is_inverse
from rra.graph.literals import value_text
from rra.graph.rdf import display, is_literal
from rra.records import Triple

log = logging.getLogger(__name__)

BRACKETED = re.compile(r"\[([^\[\]]+)\]")


# --- relations ---------------------------------------------------------------------------------
def relation_names(value: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    """A dataset's names for its relations (`data.relation_labels`): a mapping relation id -> name,
    or a labels file of `relation<TAB>name` lines (read like `data.labels_path`, bad lines are a
    KGFormatError naming file and line); None: no names (relations read by their ids)."""
    if value is None or value == "":
        return {}
    if not isinstance(value, Mapping):
        from rra.graph.loaders import read_labels

        value = read_labels(value)[0]
    return {str(k): str(v).strip() for k, v in value.items() if str(v).strip()}


def _named(relation: str, names: Mapping[str, str] | None) -> str | None:
    return names.get(base_relation(relation)) if names is not None else None


INVERSE_MARK = " (reverse)"  # how a relation read backwards is written after its name


def relation_display(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`^directed_by` -> "directed_by (reverse)"; a forward relation as it is (its name, if named)."""
    shown = _named(relation, names) or base_relation(relation)
    return f"{shown}{INVERSE_MARK}" if is_inverse(relation) else shown


def local_name(iri: str) -> str:
    """An IRI's last segment (`http://x/ontology/birthPlace` -> `birthPlace`); a plain name as it is."""
    return re.split(r"[/#]", iri.rstrip("/#"))[-1]


def relation_phrase(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`directed_by` -> "directed by"; `^directed_by` -> "directed by (reverse)"; URIs -> local name."""
    named = _named(relation, names)
    if named:
        return f"{named.lower()}{INVERSE_MARK}" if is_inverse(relation) else named.lower()
    name = base_relation(relation)
    name = local_name(name)  # http://x/ontology/birthPlace -> birthPlace
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)  # camelCase -> camel Case
    name = re.sub(r"[_.\-]+", " ", name).strip().lower()
    return f"{name}{INVERSE_MARK}" if is_inverse(relation) else name


def without_direction(text: str) -> str:
    """A relation's text (`relation_phrase`, perhaps with its kind) without the mark of a relation
    read backwards: "directed by (reverse) giving film" -> "directed by giving film"."""
    return text.replace(INVERSE_MARK, "")


def relation_words(relation: str, names: Mapping[str, str] | None = None) -> str:
    """`film.film.directed_by` -> "directed by"; `hasGenre` -> "has genre"; `^r` -> words of r."""
    named = _named(relation, names)
    if named:
        return named.lower()
    if " " in base_relation(relation).strip():  # already words (a relation's name, not an id)
        return " ".join(base_relation(relation).lower().split())
    name = base_relation(relation).rstrip("/")
    r = re.split(r"[/#:.]", name)[-1] or name
    r = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", r)
    return re.sub(r"[_\-\s]+", " ", r).strip().lower() or name


class RelationNames(Mapping[str, str]):
    """Names for a KG's relations, keyed by forward relation id: the dataset's (`data.relation_labels`),
    else the KG's own (a property's rdfs:label, or the label of the entity that describes the
    predicate: `KnowledgeGraph.relation_labels`), asked of the KG once per relation and kept. What
    every method shows an LLM, a rewriter or an encoder, so an opaque id (`wdt:P19`) reads as its
    name ("place of birth") wherever the KG gives one. `prepare` asks for many relations in one call
    (a SPARQL store sees one query per batch of new relations); a lookup of an unseen relation asks
    for it alone. A store that cannot say leaves ids to read as words."""

    def __init__(self, names: Mapping[str, str] | None = None, kg=None):
        self.given = dict(names or {})
        self.kg = kg
        self._found: dict[str, str] = {}
        self._asked: set[str] = set()

    def prepare(self, relations: Iterable[str]) -> None:
        todo = sorted({b for b in map(base_relation, relations) if b not in self._asked and b not in self.given})
        if todo and self.kg is not None:
            try:
                found = self.kg.relation_labels(todo)
            except Exception:  # noqa: BLE001 - names are a nicety: a store that cannot say reads ids as words
                found = {}
            self._found.update({r: n.strip() for r, n in found.items() if n and n.strip()})
        self._asked.update(todo)

    def __getitem__(self, relation: str) -> str:
        if relation in self.given:
            return self.given[relation]
        if relation not in self._asked:
            self.prepare([relation])
        return self._found[relation]

    def __iter__(self):  # the names known so far
        return iter({**self._found, **self.given})

    def __len__(self) -> int:
        return len({**self._found, **self.given})


class RelationText:
    """How an encoder reads a relation, for one KG: the dataset's name for it (`data.relation_labels`),
    else the KG's own (a property's rdfs:label, `KnowledgeGraph.relation_labels`), else its id as
    words (`relation_phrase`); `^r` reads "... (reverse)". The KG's names are asked in batches
    (`prepare`) and kept, so a SPARQL store sees one query per batch of new relations. Per-question
    graphs (no names outside a question) read ids as words.

    `kinds` (rra.plan_reads.KindCheck of the KG) names what each relation leads to; the
    relation scorer reads it after the name (`with_kinds`: "place of birth giving city"), where the
    graph gives classes or typed values. Plan texts say what a plan's results are on their own
    (rra.text.plan_words `kind`), so they read the names alone (`__call__`)."""

    def __init__(self, names: Mapping[str, str] | None = None, kg=None, kinds=None):
        self.names = names if isinstance(names, RelationNames) else RelationNames(names, kg)
        self.kg = kg
        self.kinds = kinds
        self._text: dict[str, str] = {}
        self._kind: dict[str, str | None] = {}

    def prepare(self, relations: Iterable[str], kinds: bool = False) -> None:
        relations = list(relations)
        self.names.prepare(relations)
        new = sorted({r for r in relations if r not in self._kind}) if kinds else []
        if new:
            self._kind.update(dict.fromkeys(new))
            if self.kinds is not None:
                try:
                    self._kind.update(self.kinds.relation_kinds(new))
                except GraphUnavailableError:
                    raise  # a store that cannot be reached is an error, not a missing nicety
                except Exception as e:  # noqa: BLE001 - a store that cannot sample a relation: names alone
                    log.warning("could not read what %d relations lead to (%s: %s); they read by name alone",
                                len(new), type(e).__name__, e)

    def __call__(self, relation: str) -> str:
        text = self._text.get(relation)
        if text is None:
            self.prepare([relation])
            text = self._text[relation] = relation_phrase(relation, self.names)
        return text

    def kind(self, relation: str) -> str | None:
        if relation not in self._kind:
            self.prepare([relation], kinds=True)
        return self._kind[relation]

    def with_kinds(self) -> "KindedRelationText":
        return KindedRelationText(self)


class KindedRelationText:
    """A relation's text with what it leads to: "place of birth giving city" (the name alone where
    the graph does not say). What a retriever trained with `relation_kinds` reads."""

    def __init__(self, text: RelationText):
        self.text = text

    def prepare(self, relations: Iterable[str]) -> None:
        self.text.prepare(relations, kinds=True)

    def __call__(self, relation: str) -> str:
        kind = self.text.kind(relation)
        return f"{self.text(relation)} giving {kind}" if kind else self.text(relation)


# --- questions ---------------------------------------------------------------------------------
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


# --- query plans as text -------------------------------------------------------------------------
# How a plan reads (rra.plan.QueryPlan): to the plan ranker's encoder (`plan_words`: anchors and
# named entities masked, literals as the question's slots, relations by name, operators in words)
# and to a person or an LLM (`plan_sentence`: names and values).
OPERATOR_WORDS = {">": "more than, after", ">=": "at least, since", "<": "less than, before",
                  "<=": "at most, until", "=": "equal to, in",
                  "argmax": "the highest, latest, last, most", "argmin": "the lowest, earliest, first, least"}
AGGREGATE_WORDS = {"count": "how many, the number of", "ask": "yes or no, whether it is one of"}
# Every common way a question writes an operator: a modifier part (plan_parts) lists them as
# alternatives (", " between), and the ranker takes the best-matching one, so "h-index above [N1]"
# and "exceeds [N1]" read `>` as "more than [N1]" does (the pooled plan text keeps OPERATOR_WORDS).
# Words whose direction depends on the attribute ("older than": a founding year, or an age) are left
# out; negated ones ("no later than") are rewritten in the question first (plain_comparatives).
OPERATOR_PHRASES = {
    ">": ("more than", "after", "over", "above", "greater than", "higher than", "exceeds", "later than", "beyond"),
    ">=": ("at least", "since", "or more", "or later", "onwards", "or after", "or higher", "or above", "or over"),
    "<": ("less than", "before", "fewer than", "under", "below", "lower than", "earlier than", "prior to"),
    "<=": ("at most", "until", "up to", "or less", "or fewer", "or earlier", "or before", "or lower", "or below",
           "or under"),
    "=": ("equal to", "in", "exactly", "on"),
    "argmax": ("the highest", "the latest", "the last", "the most", "the largest", "the biggest", "the newest",
               "the most recent", "the top"),
    "argmin": ("the lowest", "the earliest", "the first", "the least", "the smallest", "the fewest", "the oldest"),
}
COUNT_PREFIX = f"{AGGREGATE_WORDS['count']}: "
LITERAL_SLOT = "[N{}]"
_SLOT_LITERAL = re.compile(r"(?<![\w/\[])(\d{4}-\d{2}-\d{2}|[+-]?\d+(?:\.\d+)?)(?![\w/\]])")


def slot_literals(question: str) -> tuple[str, dict[str, str]]:
    """The question with each literal outside `[...]` marks written as its slot ([N1], [N2], ...,
    in text order) and {literal as written: slot}: the ranker reads which literal a condition
    takes, not its value, so a plan's text is the same for every question of its form."""
    slots: dict[str, str] = {}
    parts = re.split(r"(\[[^\[\]]*\])", question)

    def slot(m: re.Match) -> str:
        return slots.setdefault(m.group(1), LITERAL_SLOT.format(len(slots) + 1))

    text = "".join(p if p.startswith("[") else _SLOT_LITERAL.sub(slot, p) for p in parts)
    return text, slots


_NEGATED_COMPARATIVE = re.compile(r"\b(?:no|not)\s+(?:((?:more|greater|higher|larger|bigger|later)\s+than|after)|"
                                  r"((?:less|fewer|lower|smaller|earlier)\s+than|before))\b", re.IGNORECASE)


def plain_comparatives(text: str) -> str:
    """A negated comparative written as the bound it means ("no later than" -> "at most", "not
    fewer than" -> "at least", "not before" -> "at least"): read word by word, "no lower than"
    matches "lower than" (`<`) as fully as it matches its own phrasing, so the ranker would have
    only the pooled vector to tell them apart."""
    return _NEGATED_COMPARATIVE.sub(lambda m: "at most" if m.group(1) else "at least", text)


def ranker_text(question: str, mentions: Sequence[str], mask: str | None = "[E]") -> tuple[str, dict[str, str]]:
    """What the plan ranker reads of a question: every named entity marked and masked, negated
    comparatives as the bound they mean, literals as their slots ([N1], ...); and the slots
    (literal -> slot) its plans are written with."""
    return slot_literals(plain_comparatives(mask_topic(mark_mentions(question, mentions), (), mask)))


def _branches(plan, anchor_text, text_of, via: str = " ") -> list[str]:
    out = []
    for k, (anchor, path) in enumerate(zip(plan.anchors, plan.paths)):
        steps = [text_of(r) for r in path]
        if k == 0 and plan.via is not None:
            steps[plan.via.step - 1] += f" (the one with {text_of(plan.via.relation)} {anchor_text(plan.via.entity)})"
        out.append(f"{anchor_text(anchor)}{via}{' then '.join(steps)}")
    return out


def plan_words(plan, text_of=relation_phrase, slots: Mapping[str, str] | None = None, mask: str = "[E]",
               kind: str | None = None) -> str:
    """A plan as the plan ranker reads it: "[E] author (reverse) and [E] presented at (reverse)
    where publication year is more than, after [N1] giving paper", "the number of: ...", "yes or
    no, is [E] one of: ...". Branches after the first are in a fixed order, so a plan reads one way
    whatever the order of its anchors. `kind`: what its results are (rra.plan_reads.KindCheck:
    a class name, "year", "number"), where the graph says."""
    branches = _branches(plan, lambda _: mask, text_of)
    body = " and ".join(branches[:1] + sorted(branches[1:]))
    value = lambda v: (slots or {}).get(str(v), str(v))  # noqa: E731
    conditions = [f"{text_of(c.relation)} is {OPERATOR_WORDS[c.op]} {value(c.value)}" for c in plan.comparisons]
    if conditions:
        body += " where " + " and ".join(conditions)
    if plan.order is not None:
        body += f" with {OPERATOR_WORDS[plan.order.op]} {text_of(plan.order.relation)}"
    if kind:
        body += f" giving {kind}"
    if plan.aggregate == "count":
        return COUNT_PREFIX + body
    if plan.aggregate == "ask":
        return f"yes or no, is {mask} one of: " + body
    return body


def pooled_plan_text(text: str, operators: bool = True) -> str:
    """What the plan ranker's pooled plan vector reads of a plan text (plan_words): the text less
    the count's prefix, which the "how many" modifier (plan_parts) scores on its own. With it, the
    pooled cosine preferred the count plan for any question (built-in: by 4-7 logits, "what books
    were published in [E]" answered by a count); the text itself stays the plan's key.

    `operators=False` (model.pooled_operators=false, an option, not the default): a condition's
    operator and an order's direction are left to the modifiers too ("publication year is compared
    with [N1]", "the highest or lowest citation count"). The pooled vector barely reads them, and
    what it learnt of them was the training set's habits: on the scholarly set it preferred `<=`
    for "whose h-index exceeds [N1]" by about 2 logits while the word match gave `>` 0.76 against
    `<=` 0.54."""
    text = text.removeprefix(COUNT_PREFIX)
    if not operators:
        for op, words in OPERATOR_WORDS.items():
            if op in ("argmax", "argmin"):
                text = text.replace(f" with {words} ", " with the highest or lowest ")
            elif op in (">", ">=", "<", "<=", "="):
                text = text.replace(f" is {words} ", " is compared with ")
    return text


def plan_parts(plan, text_of=relation_phrase, slots: Mapping[str, str] | None = None, mask: str = "[E]") -> list[str]:
    """The plan's modifiers as short texts of their own: a condition as its attribute and its
    operator ("publication year", "less than, before, fewer than, ... [N1]"), an order as its
    attribute and its direction ("citation count", "the lowest, the earliest, ..."), a count as
    "how many, the number of": the plan ranker matches each against the question's words, where a
    whole plan's pooled vector barely moves between "after" and "before". The operator apart from
    the attribute, whose tokens every operator shares, so its few telling words are not averaged
    away; ", " separates alternative phrasings, of which the best-matching one counts. What a
    plan's results are (plan_words `kind`) is read in the pooled text alone: as a part too, one
    scholarly training read "the earliest work of [E]" as `birthDate` (giving date) 3 times in 4,
    order 96 against 99 without the part (chain 91 against 96; one training each)."""
    value = lambda v: (slots or {}).get(str(v), str(v))  # noqa: E731
    parts = []
    for c in plan.comparisons:
        parts += [text_of(c.relation), f"{', '.join(OPERATOR_PHRASES[c.op])} {value(c.value)}"]
    if plan.order is not None:
        parts += [text_of(plan.order.relation), ", ".join(OPERATOR_PHRASES[plan.order.op])]
    if plan.via is not None:
        parts.append(f"the one with {text_of(plan.via.relation)} {mask}")
    if plan.aggregate:
        parts.append(AGGREGATE_WORDS[plan.aggregate])
    return parts


def plan_sentence(plan, labels: Mapping[str, str], name=lambda r: r) -> str:
    """The plan in words for a reader (the rewriter's knowledge text, the LLM's prompt, the page)."""
    label = lambda e: labels.get(e, e)  # noqa: E731
    chains = _branches(plan, label, lambda r: relation_phrase(name(r)), via=" via ")
    text = "Query plan: the answers are reached from " + " and from ".join(chains)
    for c in plan.comparisons:
        text += f", keeping those whose {relation_phrase(name(c.relation))} is {c.op} {c.value}"
    if plan.order is not None:
        text += (f", keeping those with the {'largest' if plan.order.op == 'argmax' else 'smallest'} "
                 f"{relation_phrase(name(plan.order.relation))}")
    if plan.aggregate == "count":
        text += "; the answer is how many there are"
    elif plan.aggregate == "ask":
        text += f"; the answer is yes if {label(plan.ask)} is one of them, else no"
    return text + "."


# --- normalisation and mentions ----------------------------------------------------------------
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


# --- KG-to-text: template sentences and the trained rewriter's input -------------------------
def forward(t: Triple) -> Triple:
    """A triple written with an inverse relation (tail, ^r, head) -> the KG's (head, r, tail)."""
    return Triple(t.tail, base_relation(t.relation), t.head) if is_inverse(t.relation) else t


# Phrases for the relations of the two KGs we ship configs for (MetaQA/WikiMovies and the built-in
# sample KG). Others use the generic "{head} {relation words} {tail}." or a table given in config.
DEFAULT_TEMPLATES: dict[str, str] = {
    "directed_by": "{head} was directed by {tail}",
    "written_by": "{head} was written by {tail}",
    "starred_actors": "{head} stars {tail}",
    "release_year": "{head} was released in {tail}",
    "in_language": "{head} is in {tail}",
    "has_genre": "{head} has the genre {tail}",
    "has_tags": "{head} is about {tail}",
    "has_imdb_rating": "{head} has an IMDb rating of {tail}",
    "has_imdb_votes": "{head} has {tail} IMDb votes",
    "born_in": "{head} was born in {tail}",
    "located_in": "{head} is located in {tail}",
    "published_by": "{head} was published by {tail}",
    "published_in": "{head} was published in {tail}",
    "written_in": "{head} was written in {tail}",
    "set_in": "{head} is set in {tail}",
    "won_award": "{head} won the {tail}",
    "sequel_of": "{head} is a sequel of {tail}",
    "based_in": "{head} is based in {tail}",
}


def join_names(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def template_sentence(templates: Mapping[str, str], head: str, relation: str, tails: Sequence[str]) -> str:
    """One sentence for a head, a relation and its tails: the relation's template, or
    "{head} {relation words} {tail}."."""
    tpl = templates.get(base_relation(relation)) or "{head} " + relation_words(relation) + " {tail}"
    return tpl.format(head=head, tail=join_names(list(tails))) + "."


def template_text(triples: Sequence[Triple], templates: Mapping[str, str] = DEFAULT_TEMPLATES) -> str:
    """The template verbaliser: triples grouped by (head, relation) in their order, one sentence
    per group (what `rra.pipeline.rewrite.TemplateRewriter` writes, and the texts of silver KG pairs)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for t in map(forward, triples):
        tails = groups.setdefault((t.head, t.relation), [])
        if t.tail not in tails:
            tails.append(t.tail)
    return " ".join(template_sentence(templates, h, r, tails) for (h, r), tails in groups.items())


def clean_entity(value: str) -> str:
    """`Abilene,_Texas` -> `Abilene, Texas`; `"18L/36R"` -> `18L/36R`; `"x"@en` -> `x`."""
    value = re.sub(r'^"(.*)"(@\w+|\^\^.*)?$', r"\1", value.strip())
    return value.replace("_", " ").strip()


def clean_relation(relation: str) -> str:
    """`cityServed` -> `city served`; `directed_by` -> `directed by`; `^r` stays marked inverse."""
    inverse = relation.startswith("^")
    relation = relation.lstrip("^").replace("_", " ")
    relation = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", relation).lower().strip()
    return f"inverse of {relation}" if inverse else relation


def linearise(triples: Iterable[Sequence[str]]) -> str:
    """What the model reads: `<S> subj <P> pred <O> obj <S> ...` in the given order."""
    return " ".join(
        f"<S> {clean_entity(s)} <P> {clean_relation(p)} <O> {clean_entity(o)}" for s, p, o in triples
    )


# --- answering prompts (method-specific prompts stay with their method) ------------------------
# The RRA paper's answering prompt (knowledge first, then the question).
RRA_ANSWER_PROMPT = (
    "Below are the facts that might be relevant to answer the question:\n{knowledge}\n\n"
    "Question: {question}\nAnswer:"
)
NO_KNOWLEDGE_PROMPT = "Question: {question}\nAnswer:"
CHOICE_PROMPT = (
    "Below are the facts that might be relevant to answer the question:\n{knowledge}\n\n"
    "Question: {question}\nChoose the correct answer from these options:\n{options}\n"
    "Reply with the number of the correct option only.\nAnswer:"
)
# The baselines' answering prompts (ToG's wording): triplets in, " | "-separated entities out.
TRIPLES_ANSWER_PROMPT = """Given a question and knowledge graph triplets (entity, relation, entity), answer the question using the triplets and your knowledge.
Reply with only the answer entities, separated by " | ".

Question: {question}
Knowledge triplets:
{knowledge}
Answer:"""
OWN_KNOWLEDGE_PROMPT = """Answer the question with your own knowledge.
Reply with only the answer entities, separated by " | ".

Question: {question}
Answer:"""


# --- n-grams of a question, and the span that names a given entity ----------------------------
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
