"""KG-to-text: triples as template sentences (what the template rewriter writes, and the texts of
silver KG pairs) and as the trained rewriter's linearised input (`<S> subj <P> pred <O> obj`)."""
from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from rra.graph.base import base_relation, is_inverse
from rra.records import Triple
from rra.text.relations import relation_words


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
