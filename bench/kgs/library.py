"""A second books KG for zero-shot transfer from the built-in one (rra/data/builtin): the same
domain, with different relation names and directions, opaque IRIs, typed literals and phrasings of
its own, so a checkpoint trained on the built-in KG meets relations it never saw.

    python -m bench.kgs.library --out DIR [--scale 1.0] [--seed 0]

writes DIR/kg.nt (~5,000 facts at scale 1 plus an rdfs:label for every entity and relation),
DIR/test.jsonl (500 chain questions of 1-2 hops with `relation_path`, `hops`, `shape: "chain"` and
`extra.builtin_equivalent`: the built-in relation path asking the same thing, or null),
DIR/train.jsonl (1,000 questions, answers only, for a fine-tuning comparison; their gold paths in
gold/train.jsonl, which no loader reads) and DIR/stats.json.

How it differs from the built-in KG: entities are opaque IRIs (`http://example.org/library/id/w0042`,
names only in labels); relations are `http://example.org/library/vocab/<name>` with schema.org-like
names; `publisherOf` points from the publisher to the book (built-in: `published_by`, book to
publisher) and `predecessorOf` from the earlier book to the later (built-in: `sequel_of`, later to
earlier); the publication date is an xsd:date literal (built-in: a year entity); translators,
illustrators, page counts, ISBNs, birth dates and nationalities are new.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from bench.kgs.common import (RDF_TYPE, Store, fill, generator_parser, lit, run_gold, surface, write_jsonl, write_ntriples,
                              write_stats, zipf_counts)

BASE = "http://example.org/library/id/"
VOCAB = "http://example.org/library/vocab/"
RELATIONS = {"creator": "creator", "publisherOf": "publisher of", "narrativeLocation": "narrative location",
             "inLanguage": "in language", "datePublished": "date published", "genre": "genre", "award": "award",
             "predecessorOf": "predecessor of", "containedInPlace": "contained in place",
             "foundingLocation": "founding location", "birthPlace": "birth place", "birthDate": "birth date",
             "nationality": "nationality", "translator": "translator", "illustrator": "illustrator",
             "numberOfPages": "number of pages", "isbn": "ISBN"}
CLASSES = {"Book": "book", "Person": "person", "Organization": "publishing house", "City": "town",
           "Country": "country", "Language": "language", "Genre": "genre", "Award": "award"}
# built-in relation asking the same thing, per library relation (walked the same way)
BUILTIN = {"creator": "written_by", "^creator": "^written_by", "^publisherOf": "published_by",
           "publisherOf": "^published_by", "narrativeLocation": "set_in", "^narrativeLocation": "^set_in",
           "inLanguage": "written_in", "genre": "has_genre", "award": "won_award", "^award": "^won_award",
           "predecessorOf": "^sequel_of", "^predecessorOf": "sequel_of", "birthPlace": "born_in",
           "^birthPlace": "^born_in", "containedInPlace": "located_in", "^containedInPlace": "^located_in",
           "foundingLocation": "based_in"}

COUNTRIES = {"Vellmar": ["Oskaro", "Brenholt", "Tarn Ferry", "Ysgard"], "Coastmere": ["Lowmarsh", "St. Aldric",
             "Pennick Bay", "Harrowgate"], "Ostrelia": ["Kraskov", "Dvorna", "Lés-sur-Mer"],
             "Aurenne": ["Valmont-d'Aure", "Chaumesse", "Port Éloi", "Brisac"],
             "Kaldmark": ["Fjellhavn", "Norrvik", "Åsby"], "Isla Serena": ["Puerto Caliz", "San Amaro", "Riomar"],
             "Dunbarrow": ["Glenhollow", "Kilcarran", "Ardmore Cross"], "Marovia": ["Zelengrad", "Podvrh", "Lisanj"],
             "Tamsin Isles": ["Greyharbour", "Morrow Quay"], "Quelmoor": ["Hollins Reach", "Fenwick", "Ashby-on-Tarn"],
             "Serapia": ["Alcáçova", "Miravel", "Torre Alta"], "Nordlund": ["Vinterby", "Solheim", "Kirkeby"]}
LANGUAGES = ["English", "Catalan", "Welsh", "Portuguese", "Danish", "Czech", "Occitan", "Basque", "Icelandic",
             "Dutch", "Italian", "Romanian"]
GENRES = ["literary fiction", "detective story", "epic poetry", "memoir", "satire", "gothic horror", "picture book",
          "travelogue", "family saga", "speculative fiction", "essay collection", "historical romance",
          "crime thriller", "fable", "drama in verse"]
AWARDS = ["Lantern of Letters", "Marrow Prize", "Golden Inkwell", "Weaver's Medal", "Halcyon Award",
          "Prix de la Plume d'Argent", "Salt & Ember Prize", "Northern Quill Honour", "Premio Alba",
          "Threadneedle Award", "Owl of Minerva Prize", "Ferryman's Laurel"]
PUBLISHERS = ["Hollowfield & Daughters", "Kestrel Lane Books", "Maison Verlaine", "Quayside Editions",
              "Thornapple Press", "Editorial Miralba", "Nightingale House", "Paper Moth Publishing",
              "Ironbark Books", "Les Éditions du Phare", "Brackwater Press", "Saffron Gate", "Inkwell & Oar",
              "Vellum Street", "Old Mill Imprints", "Foxglove Editions", "Tidemark Books", "Cobblestone Press",
              "Hartwood Publishing", "Meridian & Finch", "Sparrowhawk Books", "Lumen Editorial", "Gull Rock Press",
              "Bellwether Books", "Driftwood Editions"]
FIRST = ["Agnes", "Bastien", "Cormac", "Delphine", "Eamon", "Fenella", "Gideon", "Halldóra", "Ignatius", "Jolanta",
         "Kasimir", "Liesel", "Mórna", "Niamh", "Octave", "Perpetua", "Quentin", "Rosalind", "Séverine", "Tobias",
         "Ursula", "Valentin", "Wilhelmina", "Xavier", "Yseult", "Zacharias", "Amadeo", "Brígida", "Cyprian",
         "Dagmar", "Eulalia", "Florentin", "Gwenllian", "Hugo", "Isaura", "Jonas"]
LAST = ["Ashdown", "Brannigan", "Castellví", "Dunmore", "Eriksdóttir", "Falconer", "Grünewald", "Hawthorne",
        "Ibarra", "Jessop", "Kovařík", "Larkspur", "Montagnac", "Nørgaard", "O'Flaherty", "Penhaligon", "Quennell",
        "Rosenqvist", "St. Clair", "Thistlewood", "Urquhart", "Valcourt", "Whitlock", "Ysander", "Zelenka",
        "de la Roche", "Mac an tSaoir", "Abernethy", "Beaumarchais", "Cruickshank"]
TITLE_A = ["Songs", "Letters", "Ashes", "Lanterns", "Maps", "Salt", "Orchards", "Bells", "Tides", "Lamps",
           "Ledgers", "Gardens", "Winters", "Mirrors", "Embers", "Rooks", "Harbours", "Ferries"]
TITLE_B = ["the Lowland Sea", "a Drowned Parish", "Brenholt", "the Glass Coast", "Seven Bridges", "the Long Thaw",
           "an Absent Father", "the Quiet Years", "Tarn Ferry", "the Northern Road", "Lost Weather", "the Orchard Keeper",
           "the Salt Kings", "Miravel", "the Last Ferryman", "Small Hours"]
TITLE_FORMS = ["{A} of {B}", "The {A} of {B}", "{A} for {B}", "A Winter in {P}", "The {P} Letters",
               "{A}, and Other Stories", "Beneath {B}", "What the {A} Knew", "{P}: A Chronicle", "The House at {P}",
               "Notes from {B}", "The {A} Keeper's Daughter", "After {B} (A Novel)"]

# (path, topic kind, "phrasing|phrasing|..."): phrasings of this KG, unlike the built-in templates'
PATHS = [
    (["creator"], "Book", "who penned {X}|{X} is by which writer|which novelist created {X}|whose book is {X}"
     "|name the creator of {X}"),
    (["^creator"], "Person", "list everything {X} has authored|what titles are credited to {X}|which works did "
     "{X} produce|{X} is the author of which books"),
    (["^publisherOf"], "Book", "which press released {X}|{X} came out from which publishing house|who brought {X} "
     "to print|what imprint issued {X}"),
    (["publisherOf"], "Organization", "what has {X} put out|which titles appear in the catalogue of {X}|name books "
     "released by {X}"),
    (["narrativeLocation"], "Book", "in which place does {X} unfold|what is the backdrop of {X}|{X} takes the "
     "reader to which town|where does the story of {X} happen"),
    (["^narrativeLocation"], "City", "which stories unfold in {X}|what fiction uses {X} as a backdrop|name novels "
     "whose action happens in {X}"),
    (["inLanguage"], "Book", "what tongue was {X} written in|{X} was composed in which language|the original "
     "language of {X} is what"),
    (["datePublished"], "Book", "on what date did {X} first appear|when did {X} hit the shelves|{X} was released "
     "on which date"),
    (["birthPlace"], "Person", "what is the hometown of {X}|{X} comes from which town|where did {X} come into the "
     "world"),
    (["^birthPlace"], "City", "which writers hail from {X}|who was born in the town of {X}|name people native to {X}"),
    (["genre"], "Book", "what sort of writing is {X}|{X} falls into which category|how would you classify {X}"),
    (["award"], "Book", "what honour did {X} receive|{X} was decorated with which prize|which distinction went to "
     "{X}"),
    (["^award"], "Award", "which titles received the {X}|what did the {X} go to|name the books honoured with the "
     "{X}"),
    (["predecessorOf"], "Book", "what follows {X} in the series|which book continues the story of {X}|what is the "
     "next instalment after {X}"),
    (["^predecessorOf"], "Book", "what comes before {X}|which book precedes {X}|{X} follows which earlier book"),
    (["containedInPlace"], "City", "{X} lies in which nation|which nation is {X} part of|{X} belongs to what "
     "country"),
    (["^containedInPlace"], "Country", "which towns does {X} include|name settlements within {X}"),
    (["foundingLocation"], "Organization", "where was {X} founded|in which town did {X} start out|{X} was "
     "established where"),
    (["translator"], "Book", "who translated {X}|who rendered {X} into another language|whose translation of {X} "
     "is this"),
    (["illustrator"], "Book", "who drew the pictures for {X}|who illustrated {X}|the artwork of {X} is by whom"),
    (["numberOfPages"], "Book", "how long is {X} in pages|what is the page count of {X}|how many pages does {X} run "
     "to"),
    (["birthDate"], "Person", "what is the date of birth of {X}|when was {X} born|{X} was born on which day"),
    (["nationality"], "Person", "what country does {X} hold citizenship of|{X} is a citizen of which nation"),
    (["isbn"], "Book", "what is the ISBN of {X}|give the ISBN for {X}"),
    (["creator", "birthPlace"], "Book", "where was the writer of {X} born|the author of {X} comes from which town"
     "|what is the hometown of the person who wrote {X}"),
    (["creator", "nationality"], "Book", "what country is the author of {X} from|the writer of {X} is a citizen of "
     "which nation"),
    (["narrativeLocation", "containedInPlace"], "Book", "in which nation is {X} set|{X} takes place in what "
     "country|the story of {X} happens in which country"),
    (["^publisherOf", "foundingLocation"], "Book", "where was the publisher of {X} founded|in which town did the "
     "house that issued {X} start out"),
    (["^creator", "genre"], "Person", "what kinds of writing has {X} produced|in which categories does {X} write"),
    (["^creator", "^publisherOf"], "Person", "which houses have published {X}|who prints the books of {X}"),
    (["birthPlace", "containedInPlace"], "Person", "in which nation was {X} born|{X} was born in what country"),
    (["^predecessorOf", "creator"], "Book", "who wrote the book that comes before {X}|who penned the prequel of {X}"),
    (["^award", "creator"], "Award", "who wrote the books that won the {X}|which writers received the {X}"),
    (["^creator", "narrativeLocation"], "Person", "where do the stories of {X} unfold|in what towns are {X}'s books "
     "set"),
    (["translator", "nationality"], "Book", "what nationality is the translator of {X}|the person who translated "
     "{X} is from which country"),
]
MAX_ANSWERS = 25


def rel(name: str) -> str:
    return "^" + VOCAB + name[1:] if name.startswith("^") else VOCAB + name


class Library:
    def __init__(self, rng: random.Random):
        self.rng, self.store = rng, Store()
        self.kinds: dict[str, list[str]] = {}
        self.strings: set[str] = set()
        for name, label in RELATIONS.items():
            self.store.labels[VOCAB + name] = label
        for name, label in CLASSES.items():
            self.store.labels[VOCAB + name] = label

    def entity(self, kind: str, label: str, prefix: str) -> str:
        iri = f"{BASE}{prefix}{len(self.kinds.setdefault(kind, [])) + 1:04d}"
        self.kinds[kind].append(iri)
        self.store.labels[iri] = label
        self.store.add(iri, RDF_TYPE, VOCAB + kind)
        return iri

    def fact(self, head: str, name: str, tail: str) -> None:
        self.store.add(head, VOCAB + name, tail)


def build(scale: float = 1.0, seed: int = 0) -> Library:
    rng = random.Random(seed)
    lib = Library(rng)
    n = lambda base: max(10, round(base * scale))  # noqa: E731
    used: set[str] = set()

    def unique(make) -> str:
        for _ in range(500):
            x = make()
            if x not in used:
                used.add(x)
                return x
        raise RuntimeError("name pool too small")
    countries, cities = {}, []
    for country, towns in COUNTRIES.items():
        c = countries[country] = lib.entity("Country", country, "c")
        used.add(country)
        for t in towns:
            city = lib.entity("City", t, "p")
            used.add(t)
            cities.append(city)
            lib.fact(city, "containedInPlace", c)
    languages = [lib.entity("Language", x, "l") for x in LANGUAGES]
    genres = [lib.entity("Genre", x, "g") for x in GENRES]
    awards = [lib.entity("Award", x, "r") for x in AWARDS]
    publishers = []
    for x in PUBLISHERS:
        p = lib.entity("Organization", x, "o")
        publishers.append(p)
        lib.fact(p, "foundingLocation", rng.choice(cities))
    people = []
    for _ in range(n(260)):
        p = lib.entity("Person", unique(lambda: f"{rng.choice(FIRST)} {rng.choice(LAST)}"), "n")
        people.append(p)
        born = rng.choice(cities)
        lib.fact(p, "birthPlace", born)
        lib.fact(p, "nationality", lib.store.one(born, VOCAB + "containedInPlace") if rng.random() < 0.85
                 else rng.choice(sorted(countries.values())))
        lib.fact(p, "birthDate", lit(f"{rng.randrange(1890, 1995)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                                     "date"))
    writers, others = people[: len(people) * 2 // 3], people[len(people) * 2 // 3:]
    books = []
    for k in range(n(420)):
        def title():
            return rng.choice(TITLE_FORMS).format(A=rng.choice(TITLE_A), B=rng.choice(TITLE_B),
                                                  P=lib.store.labels[rng.choice(cities)])
        b = lib.entity("Book", unique(title), "w")
        books.append(b)
        for w in rng.sample(writers, rng.choice([1, 1, 1, 1, 2])):
            lib.fact(b, "creator", w)
        lib.fact(rng.choice(publishers), "publisherOf", b)
        if rng.random() < 0.7:
            lib.fact(b, "narrativeLocation", rng.choice(cities))
        lib.fact(b, "inLanguage", rng.choice(languages))
        year = rng.randrange(1900, 2024)
        lib.fact(b, "datePublished", lit(f"{year}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}", "date"))
        for g in rng.sample(genres, rng.choice([1, 1, 2])):
            lib.fact(b, "genre", g)
        if rng.random() < 0.12:
            lib.fact(b, "award", rng.choice(awards))
        if rng.random() < 0.2:
            lib.fact(b, "translator", rng.choice(others))
        if rng.random() < 0.15:
            lib.fact(b, "illustrator", rng.choice(others))
        lib.fact(b, "numberOfPages", lit(rng.randrange(48, 900), "integer"))
        isbn = lit(f"978-{rng.randrange(0, 10)}-{rng.randrange(1000, 9999)}-{rng.randrange(1000, 9999)}-{rng.randrange(10)}",
                   "string")
        lib.strings.add(isbn)
        lib.fact(b, "isbn", isbn)
    for a, b in zip(books, books[1:]):
        if rng.random() < 0.1 and set(lib.store.neighbors(a, VOCAB + "creator")) & set(lib.store.neighbors(b, VOCAB + "creator")) \
                or rng.random() < 0.04:
            lib.fact(a, "predecessorOf", b)
    return lib


def _pools(lib: Library) -> list[list[tuple[str, list[str]]]]:
    out = []
    for k, (path, kind, _) in enumerate(PATHS):
        found = []
        for t in lib.kinds.get(kind, []):
            answers = run_gold(lib.store, {"anchors": [t], "paths": [[rel(r) for r in path]]})
            if answers and len(answers) <= MAX_ANSWERS and t not in answers:
                found.append((t, answers))
        random.Random(k).shuffle(found)
        out.append(found)
    return out


def generate(out: str | Path, scale: float = 1.0, seed: int = 0, questions: dict | None = None) -> dict[str, Path]:
    """Write kg.nt, test.jsonl, train.jsonl, gold/train.jsonl and stats.json under `out`."""
    out = Path(out)
    (out / "gold").mkdir(parents=True, exist_ok=True)
    counts = {"train": 1000, "test": 500}
    if questions is None and scale < 1:
        counts = {k: max(20, round(v * scale)) for k, v in counts.items()}
    counts.update(questions or {})
    lib = build(scale, seed)
    rng = random.Random(seed + 3)
    pools = _pools(lib)
    usable = [k for k, p in enumerate(pools) if len(p) >= 2]

    def ask(k: int, topic: str, answers: list[str], qid: str) -> dict:
        path, _, spec = PATHS[k]
        text = surface(rng, fill(rng.choice(spec.split("|")), X=lib.store.labels[topic]))
        return {"question": text, "topic_entities": [topic], "answers": answers, "qid": qid, "_k": k}
    test, reserved = [], set()
    share = {k: 0 for k in usable}  # even shares; a path with few topics leaves its rest to the others
    while sum(share.values()) < counts["test"] and any(share[k] < len(pools[k]) - 1 for k in usable):
        for k in usable:
            if share[k] < len(pools[k]) - 1 and sum(share.values()) < counts["test"]:
                share[k] += 1
    for k in usable:
        for topic, answers in pools[k][:share[k]]:
            reserved.add((k, topic))
            test.append(ask(k, topic, answers, f"lib-test-{len(test):04d}"))
    train = []
    for k, m in zip(usable, zipf_counts(len(usable), counts["train"], random.Random(seed), s=0.6, minimum=1)):
        free = [x for x in pools[k] if (k, x[0]) not in reserved] or pools[k]
        for _ in range(m):
            train.append(ask(k, *rng.choice(free), f"lib-train-{len(train):04d}"))
    rng.shuffle(train)
    for r in test:
        path = PATHS[r.pop("_k")][0]
        equivalent = [BUILTIN.get(x) for x in path]
        r.update({"relation_path": [rel(x) for x in path], "hops": len(path), "shape": "chain",
                  "extra": {"builtin_equivalent": equivalent if all(equivalent) else None}})
    gold = [{"qid": r["qid"], "relation_path": [rel(x) for x in PATHS[r["_k"]][0]]} for r in train]
    train_paths = Counter("|".join(PATHS[r.pop("_k")][0]) for r in train)
    paths = {"kg": out / "kg.nt", "test": out / "test.jsonl", "train": out / "train.jsonl",
             "gold_train": out / "gold" / "train.jsonl", "stats": out / "stats.json"}
    write_ntriples(paths["kg"], lib.store, lib.strings)
    write_jsonl(paths["test"], test)
    write_jsonl(paths["train"], train)
    write_jsonl(paths["gold_train"], gold)
    used_relations = {r for _, r, _ in lib.store.triples if r != RDF_TYPE}
    stats = {"scale": scale, "seed": seed, "triples": len(lib.store.triples), "labels": len(lib.store.labels),
             "relations": len(used_relations), "entities": sum(len(v) for v in lib.kinds.values()),
             "test": len(test), "train": len(train), "test_by_hops": dict(Counter(r["hops"] for r in test)),
             "test_with_builtin_equivalent": sum(r["extra"]["builtin_equivalent"] is not None for r in test),
             "test_paths": len(usable), "train_questions_per_path": dict(train_paths.most_common())}
    write_stats(paths["stats"], stats)
    return paths


def parser():
    """The command line of `python -m bench.kgs.library`."""
    return generator_parser("library", __doc__)


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    print(json.dumps({k: str(v) for k, v in generate(args.out, args.scale, args.seed).items()}, indent=1))


if __name__ == "__main__":
    main()
