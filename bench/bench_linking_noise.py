"""Entity linking on questions typed the way people type them (issue 28, item 4).

    python -m bench.bench_linking_noise [--metaqa-limit 300]

Each test question loses its `[...]` marks and its topic mention is rewritten by one kind of noise
(seeded): `clean` (as written), `no_article` (a leading "the"/"a" dropped: "Iron Atlas"), `lower`
(all lower case), `typo` (one letter of the longest word doubled, dropped or swapped with the next).
For each, the share of questions whose first linked anchor is the gold topic, with exact lookups
only (`fuzzy=False`, what rra did before) and with the fuzzy index (rapidfuzz; the default of RRA's
linker), and the linking time. Data: the built-in test split (200), the first `--metaqa-limit` of
each MetaQA test hop set (questions with a noise-able mention), and two-anchor questions over the
sports KG of bench.template_kg ("which player of [club] is from [country]": both anchors linked).
With `--alias-kg DIR` (a KG `python -m bench.kgs.wikidata_shape SRC DIR --aliases` wrote): its test
questions that name their topic by an alias ("L. Bergström"), as written and with a typo in the alias,
linked with a fuzzy index of labels only (before `all_aliases`) and of labels and aliases.
Writes bench/results/bench_linking_noise.json.
"""
from __future__ import annotations

import json
import random
import re
import time

from bench.common import METAQA, RESULTS, Run, arguments
from bench.template_kg import build_kg
from rra.linking import FuzzyIndex, link_entities, relation_vocabulary

MARK = re.compile(r"\[([^\]]+)\]")
NOISES = ("clean", "no_article", "lower", "typo")


def noisy(mention: str, kind: str, rng: random.Random) -> str | None:
    """The mention as a person might type it; None where this noise does not apply."""
    if kind == "clean":
        return mention
    if kind == "no_article":
        m = re.match(r"(?i)(the|a|an)\s+(.+)", mention)
        return m.group(2) if m else None
    if kind == "lower":
        return mention.lower() if mention.lower() != mention else None
    words = mention.split(" ")
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    if len(w) < 5:
        return None
    j = rng.randrange(1, len(w) - 1)
    edit = rng.choice(("double", "drop", "swap"))
    w = w[:j] + w[j] + w[j:] if edit == "double" else w[:j] + w[j + 1:] if edit == "drop" else \
        w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words[:i] + [w] + words[i + 1:])


def score(kg, examples, seed: int = 0) -> dict:
    """Questions with one topic: the noised mention is then the topic's (the built-in split's
    questions of two or three anchors are left out)."""
    examples = [ex for ex in examples if len(ex.topic_entities) == 1]
    words = relation_vocabulary(kg)
    fuzzy = FuzzyIndex(kg)
    start = time.perf_counter()
    fuzzy.match("warm up the index")  # built once per KG: its time is reported apart
    out = {"index_seconds": round(time.perf_counter() - start, 2)}
    for kind in NOISES:
        rng = random.Random(seed)
        rows = []
        for ex in examples:
            m = MARK.search(ex.question)
            typed = noisy(m.group(1), kind, rng) if m else None
            if typed is not None:
                rows.append((ex.question[:m.start()] + typed + ex.question[m.end():], ex.topic_entities[0]))
        figures = {"n": len(rows)}
        for name, index in (("exact", None), ("fuzzy", fuzzy)):
            start = time.perf_counter()
            first = sum((link := link_entities(kg, q, rel_words=words, fuzzy=index)).entities[:1] == [gold]
                        for q, gold in rows)
            figures[name] = {"first_anchor_is_topic": round(100 * first / max(len(rows), 1), 2),
                             "ms_per_question": round(1000 * (time.perf_counter() - start) / max(len(rows), 1), 2)}
        out[kind] = figures
    return out


def two_anchor(seed: int = 0, n: int = 200) -> dict:
    """Both anchors of "which player of <club> is from <country>" (names as written, and with a typo)."""
    from rra.graph import NetworkXGraph, Triple

    rng = random.Random(seed)
    kg = NetworkXGraph([Triple(*t) for t in build_kg(random.Random(seed))])
    pairs = sorted({(t.head, t.tail) for t in kg.all_triples() if t.relation == "club_country"})
    fuzzy, words = FuzzyIndex(kg), relation_vocabulary(kg)
    out = {}
    for kind in ("clean", "typo"):
        hits = total = 0
        for club, country in [rng.choice(pairs) for _ in range(n)]:
            c = noisy(club, kind, rng) or club
            q = rng.choice([f"which player of {c} is from {country}", f"name a {country} player at {c}"])
            link = link_entities(kg, q, rel_words=words, fuzzy=fuzzy)
            total += 1
            hits += set(link.entities[:2]) == {club, country}
        out[kind] = {"n": total, "both_anchors": round(100 * hits / total, 2)}
    return out


class _LabelsOnly:
    """A graph whose fuzzy index reads labels alone: what rra's did before `all_aliases`."""

    def __init__(self, kg):
        self.kg = kg

    def all_aliases(self) -> dict:
        return {}

    def all_names(self) -> dict:
        return {node: names[:1] for node, names in self.kg.all_names().items()}

    def __getattr__(self, name):
        return getattr(self.kg, name)


def alias_questions(directory: str, seed: int = 0) -> dict:
    """Questions naming their topic by an alias, as written and misspelt, on the alias KG."""
    from pathlib import Path

    from rra.data.qa_files import load_qa_file
    from rra.graph import load_graph

    kg = load_graph(Path(directory) / "kg.nt")
    aliases, words = kg.all_aliases(), relation_vocabulary(kg)
    rows = []  # (question, the alias as written, gold topic)
    for ex in load_qa_file(Path(directory) / "test.jsonl"):
        topic = (ex.topic_entities or [None])[0]
        named = [a for a in aliases.get(topic, []) if a in ex.question]
        if named:
            rows.append((ex.question, max(named, key=len), topic))
    out = {"kg": str(directory), "n": len(rows)}
    indexes = {"labels_only": FuzzyIndex(_LabelsOnly(kg)), "labels_and_aliases": FuzzyIndex(kg)}
    for kind in ("clean", "typo"):
        rng = random.Random(seed)
        typed = [(q.replace(a, t, 1), gold) for q, a, gold in rows if (t := noisy(a, kind, rng)) is not None]
        figures = {"n": len(typed)}
        for name, index in indexes.items():
            first = sum(link_entities(kg, q, rel_words=words, fuzzy=index).entities[:1] == [gold] for q, gold in typed)
            figures[name] = round(100 * first / max(len(typed), 1), 2)
        out[kind] = figures
    out["as_other_language_labels"] = other_language_labels(Path(directory) / "kg.nt", rows)
    return out


def other_language_labels(kg_path, rows: list[tuple[str, str, str]]) -> dict:
    """The same questions on the KG with every alias written as a label in another language
    (`skos:altLabel "UB"@en` -> `rdfs:label "UB"@de`): linked first to the gold topic by the
    in-memory graph as loaded now (other languages' labels found by) and as before (one label per
    entity, the English one: the rest dropped)."""
    import re
    import tempfile
    from pathlib import Path

    from rra.graph import NetworkXGraph, load_graph
    from rra.graph.loaders import read_kg

    alt = re.compile(r"<http://www\.w3\.org/2004/02/skos/core#altLabel> (\"(?:[^\"\\\\]|\\\\.)*\")(?:@[\w-]+)? \.$")
    lines = [alt.sub(lambda m: f"<http://www.w3.org/2000/01/rdf-schema#label> {m.group(1)}@de .", line)
             for line in Path(kg_path).read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kg.nt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        now = load_graph(path)
        before = NetworkXGraph(*read_kg(path)[:2])
    out = {"n": len(rows), "labels_rewritten": sum("rdf-schema#label>" in line and line.endswith('@de .') for line in lines)}
    for name, kg in (("other_languages_dropped", before), ("other_languages_found", now)):
        words = relation_vocabulary(kg)
        out[name] = round(100 * sum(link_entities(kg, q, rel_words=words).entities[:1] == [gold]
                                    for q, _, gold in rows) / max(len(rows), 1), 2)
    return out


def parser():
    """The command line of `python -m bench.bench_linking_noise`."""
    ap = arguments("bench_linking_noise", __doc__)
    ap.add_argument("--metaqa-limit", type=int, default=300, help="questions per MetaQA hop set (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alias-kg", help="a KG directory written by bench.kgs.wikidata_shape --aliases")
    ap.add_argument("--out", default=str(RESULTS / "bench_linking_noise.json"))
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    from rra.data.builtin import builtin_questions, load_builtin_graph

    run = Run.start("bench_linking_noise", args, argv)
    figures = {"metric": "first linked anchor == gold topic entity (percent), questions without [brackets]",
               "builtin_test": score(load_builtin_graph(), builtin_questions("test"), args.seed),
               "two_anchor_sports": two_anchor(args.seed)}
    if args.metaqa_limit and (METAQA / "kb.txt").exists():
        from rra.data.metaqa import load_metaqa, load_metaqa_graph

        kg = load_metaqa_graph(METAQA)
        figures["metaqa_test"] = {f"{h}hop": score(kg, load_metaqa(METAQA, hops=[h], split="test",
                                                                   limit=args.metaqa_limit), args.seed) for h in (1, 2, 3)}
    if args.alias_kg:
        figures["alias_questions"] = alias_questions(args.alias_kg, args.seed)
    run.write(figures, args.out)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
