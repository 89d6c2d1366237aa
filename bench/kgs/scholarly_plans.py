"""Questions beyond one chain on the scholarly KG (issue 34): several anchors, conditions on
literal values, orders, an intermediate entity the question names, count and yes/no.

Shapes (the `shape` field) and their kinds (`extra.kind`):
    two_anchors        papers by A at venue V; A's papers on topic T; co-authored by A and B; A in journal J
    three_anchors      A and B at V; A on T at V; A and B on T
    comparison         A's papers after 2015; researchers at I with an h-index above 40; papers at V with
                       more than N citations; institutions in C founded before 1900
    two_conditions     A's papers between 2012 and 2018; since 2012 with more than 50 citations; ...
    anchors_condition  A's papers at V after 2016; A's papers on T with more than N citations; A and B before N
    order              A's earliest / latest paper; the most / least cited paper at V; the oldest / newest
                       institution in C; the highest h-index at I
    intermediate       papers at V by people from I; the venue of A's paper on T; the dataset of A's paper at V;
                       the year A published at V (the question names the node in the middle)
    count              how many papers did A write; students of A; institutions in C; papers at V; authors of X
    yes_no             did A write X; is V held in C; is A affiliated with I; was X presented at V; is I in C
    chain              1-3 hop chains (bench/kgs/scholarly_questions.py)

Every instance is chosen so that each part of its plan matters: dropping an anchor, a condition or
the named intermediate changes the answer; an order has one extreme; yes/no are balanced. Count
answers are numbers as text ("7"), yes/no answers "yes" / "no". Anchors appear in the text in
varying order. plans_train / plans_val hold answers only (chains mixed in); plans_test adds per row
`shape`, `extra` = {kind, gold (the plan, see bench/kgs/common.py), template, seen_phrasing}, and,
where rra's data contract can say the plan (rra/plans/plan.py `plan_from_record`), `relation_paths` and
`constraint` (chains: `relation_path` and `hops`). The gold plans of plans_train / plans_val are
written apart, to gold/plans_{train,val}.jsonl, which no loader reads.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from bench.kgs.common import fill, run_gold, surface, write_jsonl, zipf_counts
from bench.kgs.scholarly_questions import HELD_OUT_SHARE, ChainMaker, is_unseen

THREE_ANCHOR_RELATIONS = {"coauthors_venue": [("author", "B"), ("presentedAt", "V")],
                          "author_topic_venue": [("mainTopic", "T"), ("presentedAt", "V")],
                          "coauthors_topic": [("author", "B"), ("mainTopic", "T")]}
SHAPES = ("chain", "two_anchors", "three_anchors", "comparison", "two_conditions", "anchors_condition", "order",
          "intermediate", "count", "yes_no")
CHAIN_SHARE = 0.4  # of plans_train / plans_val: single chains, as in a real question log
YEAR, DATE, CITES, HINDEX, FOUNDED = "publicationYear", "publicationDate", "citationCount", "hIndex", "foundingYear"

# phrasings per kind: "a|b||held-out"; slots {A} {B} person, {V} conference, {T} topic, {J} journal,
# {I} institution, {C} country, {X} paper, {N} {M} numbers. Comparison kinds: one list per operator.
TEMPLATES = {
    "author_venue": "which papers did {A} present at {V}|what has {A} published at {V}|{V} papers by {A}|list {A}'s "
                    "papers at {V}|papers by {A} at {V}|at {V}, which papers were written by {A}||name the {V} "
                    "publications authored by {A}",
    "author_topic": "{A}'s papers on {T}|which papers by {A} are about {T}|what has {A} written on {T}|on {T}, what "
                    "did {A} publish|{T} papers written by {A}||find work by {A} in the area of {T}",
    "coauthors": "which papers did {A} and {B} write together|papers co-authored by {A} and {B}|what did {B} "
                 "co-write with {A}|joint papers of {A} and {B}||{A} and {B} collaborated on which papers",
    "author_journal": "which articles did {A} publish in {J}|what has {A} published in {J}|{J} articles by {A}"
                      "||papers by {A} that appeared in {J}",
    "coauthors_venue": "which papers did {A} and {B} write together for {V}|papers by {A} and {B} at {V}|at {V}, "
                       "what did {A} co-author with {B}||joint {V} papers of {B} and {A}",
    "author_topic_venue": "{A}'s papers on {T} at {V}|which {T} papers did {A} present at {V}|at {V}, which papers "
                          "by {A} were about {T}||papers about {T} that {A} published at {V}",
    "coauthors_topic": "papers written by {A} and {B} on {T}|what did {A} and {B} publish together about {T}"
                       "|{T} papers co-authored by {B} and {A}||joint work of {A} and {B} in {T}",
    "venue_institution": "which papers at {V} were written by people from {I}|what did researchers of {I} present "
                         "at {V}|{V} papers with an author from {I}||which {V} papers come from {I}",
    "author_topic_venue_via": "at which conference did {A} present the paper on {T}|where did {A}'s paper about "
                              "{T} appear|{A} presented a paper on {T} at which conference||which venue took "
                              "{A}'s {T} paper",
    "author_venue_dataset_via": "which dataset did {A} use in the paper at {V}|what data did {A}'s {V} paper use"
                                "|in {A}'s paper at {V}, which dataset was used",
    "author_venue_year_via": "in which year did {A} publish at {V}|when did {A} present at {V}|{A} had a paper at "
                             "{V} in what year||what year was {A}'s {V} paper",
    "count_author_papers": "how many papers did {A} write|how many papers has {A} published|what is the number of "
                           "publications by {A}|{A} has written how many papers||count the papers of {A}",
    "count_students": "how many PhD students did {A} supervise|how many doctoral students has {A} advised"
                      "|{A} advised how many PhD students",
    "count_institutions": "how many institutions are there in {C}|how many research institutions does {C} have"
                          "|{C} has how many universities",
    "count_venue_papers": "how many papers were presented at {V}|how many papers has {V} published|count the "
                          "papers of {V}",
    "count_paper_authors": "how many authors does {X} have|by how many people was {X} written|{X} has how many "
                           "authors",
    "ask_wrote": "did {A} write {X}|is {A} an author of {X}|was {X} written by {A}|{X}: is {A} among its authors"
                 "||did {A} contribute to {X}",
    "ask_venue_country": "is {V} held in {C}|does {V} take place in {C}|is {C} where {V} is held",
    "ask_affiliated": "is {A} affiliated with {I}|does {A} work at {I}|is {I} {A}'s employer||is {A} on the "
                      "staff of {I}",
    "ask_presented": "was {X} presented at {V}|did {X} appear at {V}|is {X} a paper from {V}",
    "ask_inst_country": "is {I} in {C}|is {I} located in {C}|does {C} host {I}",
    "order_earliest": "{A}'s earliest paper|what was the first paper {A} published|which is {A}'s oldest "
                      "publication||the earliest work of {A}",
    "order_latest": "{A}'s most recent paper|what is the latest paper by {A}|which paper did {A} publish last"
                    "||the newest publication of {A}",
    "order_most_cited": "the most cited paper at {V}|which paper from {V} has the most citations|what is the most "
                        "cited {V} paper||the {V} paper with the highest citation count",
    "order_least_cited": "the least cited paper presented at {V}|which {V} paper has the fewest citations",
    "order_oldest_institution": "the oldest institution in {C}|which university in {C} was founded first|what is "
                                "the oldest university in {C}||in {C}, which institution is the oldest",
    "order_newest_institution": "the newest institution in {C}|which university in {C} was founded most recently",
    "order_top_hindex": "who has the highest h-index at {I}|the researcher with the largest h-index at {I}|at {I}, "
                        "who has the highest h-index",
}
COMPARISON_TEMPLATES = {
    "author_year": {">": "which papers did {A} publish after {N}|{A}'s papers after {N}|papers by {A} published "
                         "later than {N}||after {N}, what did {A} publish",
                    "<": "which papers did {A} publish before {N}|{A}'s papers from before {N}",
                    ">=": "{A}'s papers since {N}|what did {A} write in {N} or later",
                    "<=": "what did {A} publish up to {N}|{A}'s papers from {N} or earlier"},
    "staff_hindex": {">": "which researchers at {I} have an h-index above {N}|who at {I} has an h-index of more "
                          "than {N}||people at {I} whose h-index exceeds {N}",
                     "<": "people at {I} with an h-index below {N}|who at {I} has an h-index under {N}",
                     ">=": "who at {I} has an h-index of at least {N}"},
    "venue_citations": {">": "which papers at {V} have more than {N} citations|{V} papers cited over {N} times"
                             "||papers from {V} with a citation count above {N}",
                        "<": "which {V} papers have fewer than {N} citations|papers at {V} cited less than {N} times"},
    "country_founding": {"<": "which institutions in {C} were founded before {N}|universities in {C} older than "
                              "{N}",
                         ">": "which institutions in {C} were established after {N}|universities in {C} founded "
                              "later than {N}||institutions of {C} created after {N}"},
}
TWO_CONDITION_TEMPLATES = {
    "author_between": ((">=", "<="), YEAR, YEAR, "papers by {A} between {N} and {M}|what did {A} publish from {N} "
                       "to {M}|{A}'s work published between {N} and {M}||between {N} and {M}, what did {A} write"),
    "author_year_citations": ((">=", ">"), YEAR, CITES, "which papers has {A} published since {N} with more than "
                              "{M} citations|{A}'s papers from {N} on that have over {M} citations"),
    "staff_hindex_between": ((">=", "<="), HINDEX, HINDEX, "researchers at {I} with an h-index between {N} and {M}"
                             "|who at {I} has an h-index from {N} to {M}"),
    "venue_year_citations": (("<", ">="), YEAR, CITES, "papers at {V} before {N} with at least {M} citations|which "
                             "{V} papers from before {N} have {M} or more citations"),
}
ANCHOR_CONDITION_TEMPLATES = {
    "author_venue_year": {">": "papers by {A} at {V} after {N}||after {N}, what did {A} present at {V}",
                          ">=": "since {N}, which papers has {A} published at {V}",
                          "<": "what did {A} present at {V} before {N}|{A}'s {V} papers from before {N}"},
    "author_topic_cites": {">": "{A}'s papers on {T} with more than {N} citations|which papers by {A} about {T} "
                                "are cited over {N} times"},
    "coauthors_year": {"<": "papers co-authored by {A} and {B} before {N}|what did {A} and {B} write together "
                            "before {N}",
                       ">": "joint papers of {A} and {B} after {N}",
                       ">=": "what have {B} and {A} written together since {N}"},
}

KINDS = {
    "two_anchors": ["author_venue", "author_topic", "coauthors", "author_journal"],
    "three_anchors": ["coauthors_venue", "author_topic_venue", "coauthors_topic"],
    "comparison": sorted(COMPARISON_TEMPLATES),
    "two_conditions": sorted(TWO_CONDITION_TEMPLATES),
    "anchors_condition": sorted(ANCHOR_CONDITION_TEMPLATES),
    "order": ["order_earliest", "order_latest", "order_most_cited", "order_least_cited", "order_oldest_institution",
              "order_newest_institution", "order_top_hindex"],
    "intermediate": ["venue_institution", "author_topic_venue_via", "author_venue_dataset_via", "author_venue_year_via"],
    "count": ["count_author_papers", "count_students", "count_institutions", "count_venue_papers",
              "count_paper_authors"],
    "yes_no": ["ask_wrote", "ask_venue_country", "ask_affiliated", "ask_presented", "ask_inst_country"],
}


def split(spec: str) -> tuple[list[str], list[str]]:
    seen, _, held = spec.partition("||")
    return [p for p in seen.split("|") if p], [p for p in held.split("|") if p]


class PlanMaker:
    """Draws plan-shaped questions: each kind proposes an instance, kept when every part of its
    plan matters."""

    def __init__(self, world, seed: int):
        from bench.kgs.scholarly_names import rel

        self.w, self.s, self.rel = world, world.store, rel
        self.rng = random.Random(seed * 104729 + 7)
        self.people = [p for p in world.of("Person") if len(self.papers(p)) >= 2]
        self.venues = world.of("Conference")
        self.countries = world.of("Country")
        self.institutions = world.of("Institution")
        self.conference_papers = [p for p in world.of("Paper") if self.n(p, "presentedAt")]
        self.advisors = sorted({a for p in world.of("Person") for a in self.n(p, "doctoralAdvisor")})
        self.reserved: set[tuple] = set()
        self._three: dict[str, list] = {}

    # -- reading the KG ------------------------------------------------------------------------
    def n(self, entity: str, relation: str) -> list[str]:
        return self.s.neighbors(entity, self.rel(relation))

    def papers(self, person: str) -> list[str]:
        return self.n(person, "^author")

    def answers(self, gold: dict) -> list[str]:
        return run_gold(self.s, gold)

    def chains(self, anchors, paths, **rest) -> dict:
        return {"anchors": list(anchors), "paths": [[self.rel(r) for r in p] for p in paths], **rest}

    def matters(self, gold: dict, variants: list[dict], limit: int = 25) -> list[str] | None:
        """The gold answers when non-empty, at most `limit`, and different from every variant's."""
        got = self.answers(gold)
        if not got or len(got) > limit or any(self.answers(v) == got for v in variants):
            return None
        return got

    def cond(self, relation, op, value) -> dict:
        return {"relation": self.rel(relation), "op": op, "value": value}

    def pick_value(self, entities: list[str], relation: str, op: str) -> int | None:
        """A literal that splits `entities` by `op` into a non-empty strict part, drawn between two
        neighbouring values so it reads naturally."""
        values = sorted({int(float(x.split('"')[1])) for e in entities for x in self.n(e, relation)})
        if len(values) < 2:
            return None
        i = self.rng.randrange(len(values) - 1)
        lo, hi = values[i], values[i + 1]
        if op in (">", "<="):
            return self.rng.randint(lo, hi - 1)
        return self.rng.randint(lo + 1, hi)

    # -- kinds: each returns (shape, kind, topics, slots, gold, answers, op key) or None ----------
    def two_anchors(self, kind: str):
        a = self.rng.choice(self.people)
        mine = self.papers(a)
        other_rel, slot = {"author_venue": ("presentedAt", "V"), "author_topic": ("mainTopic", "T"),
                           "coauthors": ("author", "B"), "author_journal": ("publishedInJournal", "J")}[kind]
        options = sorted({x for p in mine for x in self.n(p, other_rel)} - {a})
        if not options:
            return None
        b = self.rng.choice(options)
        gold = self.chains([a, b], [["^author"], ["^" + other_rel]])
        got = self.matters(gold, [self.chains([a], [["^author"]]), self.chains([b], [["^" + other_rel]])])
        return got and ("two_anchors", kind, [a, b], {"A": a, slot: b}, gold, got, None)

    def three_anchors(self, kind: str):
        found = self._three_candidates(kind)
        if not found:
            return None
        anchors = self.rng.choice(found)
        rels = THREE_ANCHOR_RELATIONS[kind]
        paths = [["^author"]] + [["^" + r] for r, _ in rels]
        gold = self.chains(anchors, paths)
        pairs = [self.chains([anchors[i], anchors[j]], [paths[i], paths[j]]) for i, j in ((0, 1), (0, 2), (1, 2))]
        got = self.matters(gold, pairs)
        slots = {"A": anchors[0], **{s: e for (_, s), e in zip(rels, anchors[1:])}}
        return got and ("three_anchors", kind, anchors, slots, gold, got, None)

    def _three_candidates(self, kind: str) -> list[tuple[str, str, str]]:
        """Every (A, x, y) of `kind` where each anchor matters (no pair of them gives the same
        papers), found once with set arithmetic over the papers each anchor reaches."""
        if kind not in self._three:
            rels = THREE_ANCHOR_RELATIONS[kind]
            reach = lambda e, r: set(self.n(e, "^" + r))  # noqa: E731  papers that `e` is the `r` of
            found = set()
            for a in self.people:
                mine = set(self.papers(a))
                for p in sorted(mine):
                    xs, ys = (sorted(set(self.n(p, r)) - {a}) for r, _ in rels)
                    for x in xs:
                        for y in ys:
                            if x == y:
                                continue
                            sx, sy = reach(x, rels[0][0]), reach(y, rels[1][0])
                            both = mine & sx & sy
                            if both and both != mine & sx and both != mine & sy and both != sx & sy:
                                found.add((a, x, y))
            self._three[kind] = sorted(found)
        return self._three[kind]

    def comparison(self, kind: str):
        op = self.rng.choice(sorted(COMPARISON_TEMPLATES[kind]))
        anchor, path, attr, slot = self._condition_anchor(kind)
        base = self.chains([anchor], [path])
        ends = [e for e in self.answers(base)]
        value = self.pick_value(ends, attr, op)
        if value is None:
            return None
        gold = {**base, "conditions": [self.cond(attr, op, value)]}
        got = self.matters(gold, [base])
        return got and ("comparison", kind, [anchor], {slot: anchor, "N": str(value)}, gold, got, op)

    def _condition_anchor(self, kind):
        if kind in ("author_year", "author_between", "author_year_citations"):
            return self.rng.choice(self.people), ["^author"], YEAR, "A"
        if kind in ("staff_hindex", "staff_hindex_between"):
            return self.rng.choice(self.institutions), ["^affiliation"], HINDEX, "I"
        if kind in ("venue_citations", "venue_year_citations"):
            return self.rng.choice(self.venues), ["^presentedAt"], CITES, "V"
        return self.rng.choice(self.countries), ["^country"], FOUNDED, "C"

    def two_conditions(self, kind: str):
        (op1, op2), attr1, attr2, _ = TWO_CONDITION_TEMPLATES[kind]
        anchor, path, _, slot = self._condition_anchor(kind)
        base = self.chains([anchor], [path])
        ends = self.answers(base)
        v1 = self.pick_value(ends, attr1, op1)
        v2 = self.pick_value(ends, attr2, op2)
        if v1 is None or v2 is None or (attr1 == attr2 and v1 >= v2):
            return None
        c1, c2 = self.cond(attr1, op1, v1), self.cond(attr2, op2, v2)
        gold = {**base, "conditions": [c1, c2]}
        got = self.matters(gold, [base, {**base, "conditions": [c1]}, {**base, "conditions": [c2]}])
        return got and ("two_conditions", kind, [anchor], {slot: anchor, "N": str(v1), "M": str(v2)}, gold, got, None)

    def anchors_condition(self, kind: str):
        op = self.rng.choice(sorted(ANCHOR_CONDITION_TEMPLATES[kind]))
        a = self.rng.choice(self.people)
        other, slot, attr = {"author_venue_year": ("presentedAt", "V", YEAR),
                             "author_topic_cites": ("mainTopic", "T", CITES),
                             "coauthors_year": ("author", "B", YEAR)}[kind]
        options = sorted({x for p in self.papers(a) for x in self.n(p, other)} - {a})
        if not options:
            return None
        b = self.rng.choice(options)
        base = self.chains([a, b], [["^author"], ["^" + other]])
        value = self.pick_value(self.answers(base), attr, op)
        if value is None:
            return None
        c = self.cond(attr, op, value)
        gold = {**base, "conditions": [c]}
        variants = [base, {**self.chains([a], [["^author"]]), "conditions": [c]},
                    {**self.chains([b], [["^" + other]]), "conditions": [c]}]
        got = self.matters(gold, variants)
        return got and ("anchors_condition", kind, [a, b], {"A": a, slot: b, "N": str(value)}, gold, got, op)

    def order(self, kind: str):
        if kind in ("order_earliest", "order_latest"):
            anchor, path, attr, slot = self.rng.choice(self.people), ["^author"], DATE, "A"
        elif kind in ("order_most_cited", "order_least_cited"):
            anchor, path, attr, slot = self.rng.choice(self.venues), ["^presentedAt"], CITES, "V"
        elif kind == "order_top_hindex":
            anchor, path, attr, slot = self.rng.choice(self.institutions), ["^affiliation"], HINDEX, "I"
        else:
            anchor, path, attr, slot = self.rng.choice(self.countries), ["^country"], FOUNDED, "C"
        op = "argmin" if kind in ("order_earliest", "order_least_cited", "order_oldest_institution") else "argmax"
        base = self.chains([anchor], [path])
        gold = {**base, "order": {"relation": self.rel(attr), "op": op}}
        got = self.matters(gold, [base], limit=1)
        return got and ("order", kind, [anchor], {slot: anchor}, gold, got, None)

    def intermediate(self, kind: str):
        a = self.rng.choice(self.people)
        p = self.rng.choice(self.papers(a))
        if kind == "venue_institution":
            venues, insts = self.n(p, "presentedAt"), sorted({i for x in self.n(p, "author")
                                                              for i in self.n(x, "affiliation")})
            if not venues or not insts:
                return None
            v, i = venues[0], self.rng.choice(insts)
            gold = self.chains([v, i], [["^presentedAt"], ["^affiliation", "^author"]])
            got = self.matters(gold, [self.chains([v], [["^presentedAt"]]),
                                      self.chains([i], [["^affiliation", "^author"]])])
            return got and ("intermediate", kind, [v, i], {"V": v, "I": i}, gold, got, None)
        via_rel, slot, last = {"author_topic_venue_via": ("mainTopic", "T", "presentedAt"),
                               "author_venue_dataset_via": ("presentedAt", "V", "usesDataset"),
                               "author_venue_year_via": ("presentedAt", "V", YEAR)}[kind]
        named = self.n(p, via_rel)
        if not named or not self.n(p, last):
            return None
        e = self.rng.choice(named)
        base = self.chains([a], [["^author", last]])
        gold = {**base, "via": {"step": 1, "relation": self.rel(via_rel), "entity": e}}
        got = self.matters(gold, [base])
        return got and ("intermediate", kind, [a, e], {"A": a, slot: e}, gold, got, None)

    def count(self, kind: str):
        anchor, path, slot = {
            "count_author_papers": (lambda: self.rng.choice(self.people), ["^author"], "A"),
            "count_students": (lambda: self.rng.choice(self.advisors), ["^doctoralAdvisor"], "A"),
            "count_institutions": (lambda: self.rng.choice(self.countries), ["^country"], "C"),
            "count_venue_papers": (lambda: self.rng.choice(self.venues), ["^presentedAt"], "V"),
            "count_paper_authors": (lambda: self.rng.choice(self.w.of("Paper")), ["author"], "X")}[kind]
        anchor = anchor()
        gold = {**self.chains([anchor], [path]), "aggregate": "count"}
        got = self.answers(gold)
        return got != ["0"] and ("count", kind, [anchor], {slot: anchor}, gold, got, None)

    def yes_no(self, kind: str, want_yes: bool):
        if kind == "ask_wrote":
            a = self.rng.choice(self.people)
            mine = self.papers(a)
            near = sorted({q for x in self.n(mine[0], "author") for q in self.papers(x)} - set(mine))
            x = self.rng.choice(mine) if want_yes else self.rng.choice(near or self.w.of("Paper"))
            anchor, path, ask, slots = a, ["^author"], x, {"A": a, "X": x}
        elif kind == "ask_venue_country":
            v = self.rng.choice(self.venues)
            home = self.n(self.n(v, "hostCity")[0], "inCountry")[0]
            c = home if want_yes else self.rng.choice(sorted(set(self.countries) - {home}))
            anchor, path, ask, slots = v, ["hostCity", "inCountry"], c, {"V": v, "C": c}
        elif kind == "ask_affiliated":
            a = self.rng.choice(self.w.of("Person"))
            mine = self.n(a, "affiliation")[0]
            wrong = sorted(set(self.n(a, "almaMater")) - {mine}) or sorted(set(self.institutions) - {mine})
            i = mine if want_yes else self.rng.choice(wrong)
            anchor, path, ask, slots = a, ["affiliation"], i, {"A": a, "I": i}
        elif kind == "ask_presented":
            x = self.rng.choice(self.conference_papers)
            v = self.n(x, "presentedAt")[0]
            v = v if want_yes else self.rng.choice(sorted(set(self.venues) - {v}))
            anchor, path, ask, slots = x, ["presentedAt"], v, {"X": x, "V": v}
        else:
            i = self.rng.choice(self.institutions)
            home = self.n(i, "country")[0]
            c = home if want_yes else self.rng.choice(sorted(set(self.countries) - {home}))
            anchor, path, ask, slots = i, ["country"], c, {"I": i, "C": c}
        gold = {**self.chains([anchor], [path]), "aggregate": "ask", "ask": ask}
        got = self.answers(gold)
        return got == (["yes"] if want_yes else ["no"]) and ("yes_no", kind, [anchor, ask], slots, gold, got, None)

    # -- questions -----------------------------------------------------------------------------
    def templates(self, kind: str, op: str | None) -> tuple[list[str], list[str]]:
        if kind in COMPARISON_TEMPLATES:
            return split(COMPARISON_TEMPLATES[kind][op])
        if kind in ANCHOR_CONDITION_TEMPLATES:
            return split(ANCHOR_CONDITION_TEMPLATES[kind][op])
        if kind in TWO_CONDITION_TEMPLATES:
            return split(TWO_CONDITION_TEMPLATES[kind][3])
        return split(TEMPLATES[kind])

    def draw(self, shape: str, n: int, held_share: float, prefix: str, start: int, reserve: bool) -> list[dict]:
        """`n` questions of `shape`, its kinds in turn (a kind that finds nothing new in 300 tries
        gives its turn to the next); yes/no alternate yes and no."""
        out, kinds, turn = [], KINDS[shape], start
        while len(out) < n and turn < start + 3 * n + 10:
            kind = kinds[turn % len(kinds)]
            turn += 1
            for _ in range(300):
                made = self.yes_no(kind, len(out) % 2 == 0) if shape == "yes_no" else getattr(self, shape)(kind)
                if made and (kind, tuple(sorted(made[3].values()))) not in self.reserved:
                    break
            else:
                continue
            _, kind, topics, slots, gold, answers, op = made
            if reserve:
                self.reserved.add((kind, tuple(sorted(slots.values()))))
            train_phr, held_phr = self.templates(kind, op)
            held = held_phr and self.rng.random() < held_share
            template = self.rng.choice(held_phr if held else train_phr)
            text = fill(template, **{k: v if k in ("N", "M") else self.w.label(v) for k, v in slots.items()})
            out.append({"question": surface(self.rng, text), "topic_entities": topics, "answers": answers,
                        "qid": f"{prefix}-{start + len(out):05d}", "shape": shape, "_kind": kind, "_gold": gold,
                        "_template": template})
        return out


def contract_fields(row: dict) -> dict:
    """`relation_paths` / `constraint` where rra's plan contract says the gold plan exactly (one
    path per anchor, intersected; at most one condition or order); {} otherwise."""
    gold = row["_gold"]
    if gold.get("aggregate") or gold.get("via") or len(gold.get("conditions") or []) > 1:
        return {}
    fields = {"relation_paths": gold["paths"]}
    if gold.get("conditions"):
        fields["constraint"] = dict(gold["conditions"][0])
    if gold.get("order"):
        fields["constraint"] = dict(gold["order"])
    return fields


def draw_test(maker: PlanMaker, chains: ChainMaker, counts: dict, seed: int) -> list[dict]:
    """plans_test rows (private `_` fields kept): `plans_test_per_shape` per shape, chains included;
    drawn before any training set, whose questions then never repeat them."""
    per_shape = counts["plans_test_per_shape"]
    test = []
    for shape in SHAPES:
        if shape == "chain":
            ids = [i for i in range(len(chains.paths)) if len(chains.pool(i)) >= 2]
            for i in random.Random(seed).sample(ids, min(per_shape, len(ids))):
                row = chains.draw(i, 1, HELD_OUT_SHARE, "ptest", len(test), reserve=True)[0]
                test.append({**row, "shape": "chain"})
        else:
            test += maker.draw(shape, per_shape, HELD_OUT_SHARE, "ptest", len(test), reserve=True)
    return test


def draw_train(maker: PlanMaker, chains: ChainMaker, total: int, seed: int, prefix: str) -> list[dict]:
    """`total` questions of every shape, CHAIN_SHARE of them chains (Zipf over the trained paths),
    the rest split evenly over the other shapes; shuffled."""
    n_chain = round(total * CHAIN_SHARE)
    rows = []
    trained = [i for i in range(len(chains.paths)) if not is_unseen(chains.paths[i][0]) and len(chains.pool(i)) >= 2]
    for i, k in zip(trained, zipf_counts(len(trained), n_chain, random.Random(seed + 5), s=1.0, minimum=0)):
        rows += [{**r, "shape": "chain"} for r in chains.draw(i, k, 0.0, prefix, len(rows), reserve=False)]
    others = [s for s in SHAPES if s != "chain"]
    for k, shape in enumerate(others):
        n = (total - n_chain) // len(others) + (1 if k < (total - n_chain) % len(others) else 0)
        rows += maker.draw(shape, n, 0.0, prefix, len(rows), reserve=False)
    random.Random(seed + len(prefix)).shuffle(rows)
    return rows


def write_plans(maker: PlanMaker, chains: ChainMaker, out: Path, counts: dict, seed: int, summary: dict,
                test_rows: list[dict]) -> dict[str, Path]:
    """plans_{train,val,test}.jsonl (`test_rows` from `draw_test`); adds the plan figures to `summary`."""
    from bench.kgs.scholarly_names import rel

    rows = {"plans_test": test_rows,
            "plans_train": draw_train(maker, chains, counts["plans_train"], seed, "ptrain"),
            "plans_val": draw_train(maker, chains, counts["plans_val"], seed + 1, "pval")}
    seen = {(r.get("_kind") or r["_path"], r["_template"]) for r in rows["plans_train"]}
    files = {}
    (out / "gold").mkdir(exist_ok=True)
    for name in ("plans_train", "plans_val"):
        files[name] = write_jsonl(out / f"{name}.jsonl", [
            {k: v for k, v in r.items() if not k.startswith("_") and k != "shape"} for r in rows[name]])
        files[f"gold_{name}"] = write_jsonl(out / "gold" / f"{name}.jsonl", [
            {"qid": r["qid"], "shape": r["shape"], "kind": r.get("_kind", "chain"), "template": r["_template"],
             "gold": r["_gold"] if "_gold" in r else {"anchors": r["topic_entities"], "paths": [
                 [rel(x) for x in chains.paths[r["_path"]][0]]]}} for r in rows[name]])
    test = []
    for r in rows["plans_test"]:
        key = (r.get("_kind") or r["_path"], r["_template"])
        row = {k: v for k, v in r.items() if not k.startswith("_")}
        if r["shape"] == "chain":
            path = chains.paths[r["_path"]][0]
            row.update({"relation_path": [rel(x) for x in path], "hops": len(path),
                        "extra": {"kind": "chain", "gold": {"anchors": r["topic_entities"],
                                                             "paths": [[rel(x) for x in path]]},
                                  "template": r["_template"], "seen_phrasing": key in seen}})
        else:
            row.update(contract_fields(r))
            row["extra"] = {"kind": r["_kind"], "gold": r["_gold"], "template": r["_template"],
                            "seen_phrasing": key in seen}
        test.append(row)
    files["plans_test"] = write_jsonl(out / "plans_test.jsonl", test)
    summary["plans"] = {
        "train": len(rows["plans_train"]), "val": len(rows["plans_val"]), "test": len(test),
        "train_by_shape": dict(Counter(r["shape"] for r in rows["plans_train"])),
        "test_by_shape": dict(Counter(r["shape"] for r in test)),
        "test_by_kind": dict(sorted(Counter(r["extra"]["kind"] for r in test).items())),
        "test_with_relation_paths": sum("relation_paths" in r or "relation_path" in r for r in test),
        "test_unseen_phrasing": sum(not r["extra"]["seen_phrasing"] for r in test),
        "yes_no_answers": dict(Counter(r["answers"][0] for r in test if r["shape"] == "yes_no")),
    }
    return files
