"""How a query plan (rra.plans.plan.QueryPlan) reads: to the plan ranker's encoder (`plan_words`:
anchors and named entities masked, literals as the question's slots, relations by name, operators in
words; `plan_parts`, its modifiers one by one; `ranker_text`, the question as the ranker reads it)
and to a person or an LLM (`plan_sentence`: names and values)."""
from __future__ import annotations

import heapq
import re
from typing import Mapping, Sequence

from rra.graph.rdf import is_literal
from rra.text.questions import mark_mentions, mask_topic
from rra.text.relations import relation_phrase

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


# "which university", "in what town", "what is the release date of": the noun after an English
# question word names what the answers are; auxiliaries, articles and prepositions end it
_ASKED_THE = re.compile(r"\b(?:which|what)\s+(?:is|was|are|were)\s+(?:the|an?)\s+((?:[^\W\d_]+\s*){1,3})", re.I)
_ASKED_AFTER = re.compile(r"\b(?:which|what)\s+(?:(?:kind|type|sort)\s+of\s+)?((?:[^\W\d_]+\s*){1,2})", re.I)
# "name a group from [E]", "list the books of [E]", "give me all films of [E]": an imperative names it too
_ASKED_IMPERATIVE = re.compile(r"^\W*(?:please\s+)?(?:name|list|give(?:\s+me)?|show(?:\s+me)?|tell\s+me)\s+"
                               r"(?:(?:a|an|the|all|some|any|every)\s+(?:of\s+the\s+)?)?((?:[^\W\d_]+\s*){1,2})", re.I)
_NOT_ASKED = frozenset("is was are were did does do has have had can could will would should may might the a an of in "
                       "on at to for by from with about one ones or and that which who whose "
                       "someone somebody something anyone anything everyone everything".split())


def asked_kind(question: str) -> str | None:
    """The kind of thing an English question asks for, where it names one: the words after "which" /
    "what" up to an auxiliary, article or preposition ("which university did [E]'s writer attend" ->
    "university", "what is the release date of [E]" -> "release date"), or after an imperative ("name a
    group from [E]" -> "group"); None where it names none
    ("who", "where", another language). The plan ranker weighs it against what each plan's results
    are (rra.pipeline.plans, `kind_weight`)."""
    for pattern in (_ASKED_THE, _ASKED_AFTER, _ASKED_IMPERATIVE):
        for m in pattern.finditer(question):
            words = []
            for word in m.group(1).lower().split():
                # a participle after the noun starts what is said of it ("books written by", "films set in")
                if word in _NOT_ASKED or (words and word.endswith(("ed", "en", "ing"))):
                    break
                words.append(word)
            if words:
                return " ".join(words)
    return None


KIND_READERS = ("pretrained", "trained")  # which encoder reads asked words against kinds (Retriever.kind_cosines)

# Words that say what a person is, and words for things (a person's attributes among them: "nationality"
# is no person). A sentence encoder reads a role nearer what it goes with than nearer "person" ("musicians"
# nearer "band", "directors" nearer "film": 19 of 23 such pairs with all-MiniLM-L6-v2), so a graph's
# generic class for people ("person", "human") lost to the band for "which musicians". A word nearer the
# first list's mean than the second's, and nearest a word of the first, is read as a role
# (Retriever.kind_cosines; of 46 other role words 40 are, of 61 other thing words 1 is, "instrument"):
# a role asked for is then given by a role kind at least as well as by any thing.
ROLE_WORDS = ("person people actor director writer musician player founder member employee student singer author "
              "scientist politician teacher artist composer editor researcher child parent man woman").split()
THING_WORDS = ("city book film company album country university paper stadium year language genre award journal "
               "event building product river song organisation nationality occupation gender religion name "
               "date").split()


def readable_kind(kind: str | None) -> str | None:
    """`kind` where it is words a reader can weigh against what a question asks for ("city", "year",
    "sports team"); None for an opaque id, a class the graph gives no label ("q101859", "0abc12"),
    whose cosine with any word is noise."""
    return kind if kind and any(t.isalpha() and len(t) > 1 for t in kind.split()) else None


# path segments that name where an id lives, not what it is (.../resource/Berlin, .../entity/Q42)
_GENERIC_SEGMENTS = frozenset("resource resources entity entities ontology page pages wiki id ids data node nodes item "
                              "items object objects thing things instance instances individual individuals record "
                              "records vocab vocabulary schema ns kb rdf rdfs owl prop property properties".split())
_KIND_SEGMENT = re.compile(r"^[a-z][a-z_-]{2,}$")  # lower case: "Face/Off" is a title, not a kind


def id_kind(nodes, sample: int = 16) -> str | None:
    """The kind an entity's id names by its path ("book/the_narrow_tide" -> "book",
    "http://data.example.org/film/38" -> "film"), where more than half of a sample of `nodes` (the
    `sample` smallest ids; literals skipped) name the same one in words; None where they name none:
    an id without a path, or one whose segment only says where ids live ("resource", "entity"). For
    a graph that gives its entities no class: what a plan answers, to weigh against what a question
    asks for at answering time (rra.pipeline.plans.answer_kind). The ranker's own texts do not read it."""
    picked = heapq.nsmallest(sample, (n for n in nodes if not is_literal(n)))
    if not picked:
        return None
    votes: dict[str, int] = {}
    for n in picked:
        path = n.split("#")[0].split("://", 1)[-1].split("/")
        if "://" in n:
            path = path[1:]  # the host names no kind
        segment = path[-2] if len(path) >= 2 and path[-1] else None
        if segment and _KIND_SEGMENT.match(segment) and segment not in _GENERIC_SEGMENTS:
            votes[segment] = votes.get(segment, 0) + 1
    if not votes:
        return None
    top, count = max(sorted(votes.items()), key=lambda kv: kv[1])
    return relation_phrase(top) if 2 * count > len(picked) else None


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
    whatever the order of its anchors. `kind`: what its results are (rra.plans.reads.KindCheck:
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
