"""Writes the built-in sample KG (kb.txt + labels.tsv next to this file). Run once; the output is
committed, this script documents how it was made: `python rra/data/builtin/make_kb.py`.

The world is invented: the Lettered Coast, six countries of writers, their books, publishers,
prizes and cities. Every name below was made up for this project. Seeded, so reruns are identical.
"""
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(1729)

COUNTRIES = {  # country -> (language, cities)
    "Calderra": ("Calderran", ["Port Aubel", "Vessmoor", "Lintharrow"]),
    "Norvessa": ("Norvessan", ["Skarrholm", "Eddavik", "Tolbreen"]),
    "Ithmere": ("Ithmeric", ["Quorne", "Mireval", "Ashcombe"]),
    "Solvaria": ("Solvarian", ["Celadine", "Brightwater", "Orsolo"]),
    "Brannock": ("Brannish", ["Kilvarren", "Dunmorrow", "Glenhallow"]),
    "Quillon": ("Quillonese", ["Sarrabel", "Tessaline", "Mont Orrec"]),
}
GENRES = ["mystery", "historical novel", "science fiction", "fantasy", "poetry", "literary fiction",
          "travel writing", "biography", "thriller", "children's book"]
PUBLISHERS = ["Harrow and Vane", "Lamplight Press", "Meridian House", "Quill and Anchor",
              "Bluestone Books", "Oakhaven Press", "Saltmarsh Editions", "Tidewater Publishing"]
AWARDS = ["Golden Quill Prize", "Meridian Award", "Harbourlight Medal", "Coastal Book Prize",
          "Silver Lantern Award", "Ashcombe Fellowship Prize"]
FIRST = ["Ilse", "Tomas", "Mirela", "Oren", "Sabine", "Dario", "Leontine", "Kasimir", "Yara", "Bertil",
         "Agnese", "Rurik", "Elodie", "Viggo", "Noemi", "Casper", "Halina", "Teodor", "Marit", "Anselm",
         "Livia", "Jorund", "Petra", "Emeric", "Saskia", "Corvin", "Ines", "Matthias", "Zora", "Fennick",
         "Odile", "Lukas", "Brisa", "Hallvard", "Rosalind", "Severin", "Tamsin", "Aurelio", "Wenna", "Idris"]
LAST = ["Amberline", "Vostrov", "Kellmar", "Duskwood", "Halvorsen", "Penhallow", "Marisco", "Thornquist",
        "Ravensby", "Ostrander", "Belcourt", "Quillfeather", "Iversen", "Calloway", "Sorrentin", "Varga",
        "Moravec", "Lindgrave", "Okonkwo", "Fairweather", "Castellane", "Brightmore", "Delacroix-Vane",
        "Hollis", "Nakamura-Rhee", "Strand", "Vellacott", "Ambrose", "Kestrel", "Tarrant", "Wilde-Orme",
        "Ashgrove", "Mirecourt", "Pellinore", "Roskilde", "Santangelo", "Tovey", "Ulverston", "Winterbourne",
        "Yardley"]
ADJ = ["Silver", "Glass", "Hollow", "Quiet", "Burning", "Forgotten", "Northern", "Crimson", "Last",
       "Winter", "Paper", "Iron", "Salt", "Hidden", "Distant", "Sleeping", "Broken", "Golden", "Narrow",
       "Wandering", "Drowned", "Seventh", "Lesser", "Painted"]
NOUN = ["Orchard", "Harbour", "Lantern", "Cartographer", "Lighthouse", "Archive", "Meridian", "Garden",
        "Tide", "Clockmaker", "Observatory", "Ferry", "Bridge", "Mirror", "Atlas", "Orchestra",
        "Vineyard", "Compass", "Estuary", "Heron", "Kingdom", "Letter", "Monastery", "Saltworks"]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


triples: list[tuple[str, str, str]] = []
labels: dict[str, str] = {}


def entity(kind: str, name: str) -> str:
    eid = f"{kind}/{slug(name)}"
    labels[eid] = name
    return eid


cities: dict[str, str] = {}  # city id -> country id
city_language: dict[str, str] = {}
for country, (language, names) in COUNTRIES.items():
    c = entity("country", country)
    lang = entity("language", language)
    for name in names:
        city = entity("city", name)
        cities[city] = c
        city_language[city] = lang
        triples.append((city, "located_in", c))
city_ids = sorted(cities)
genre_ids = [entity("genre", g) for g in GENRES]
award_ids = [entity("award", a) for a in AWARDS]
publisher_ids = []
for name in PUBLISHERS:
    p = entity("publisher", name)
    publisher_ids.append(p)
    triples.append((p, "based_in", rng.choice(city_ids)))

authors = []
for first, last in zip(FIRST, rng.sample(LAST, len(FIRST))):
    a = entity("person", f"{first} {last}")
    home = rng.choice(city_ids)
    triples.append((a, "born_in", home))
    start = rng.randint(1948, 1995)
    authors.append({"id": a, "home": home, "genres": rng.sample(genre_ids, 2),
                    "years": (start, min(start + rng.randint(8, 30), 2023)),
                    "publisher": rng.choice(publisher_ids)})

titles: set[str] = set()


def plural(noun: str) -> str:
    """English plural of a title noun: Saltworks, Atlases, Ferries (not "Saltworkss", "Ferrys")."""
    if noun.endswith("works"):
        return noun
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def new_title() -> str:
    while True:
        pattern = rng.random()
        if pattern < 0.55:
            t = f"The {rng.choice(ADJ)} {rng.choice(NOUN)}"
        elif pattern < 0.8:
            t = f"{plural(rng.choice(NOUN))} of {labels[rng.choice(city_ids)]}"
        else:
            noun = rng.choice(NOUN)
            t = f"{'An' if noun[0] in 'AEIOU' else 'A'} {noun} for {rng.choice(FIRST)}"
        if t not in titles:
            titles.add(t)
            return t


books_by_author: dict[str, list[str]] = {a["id"]: [] for a in authors}
for i in range(100):
    author = authors[i % len(authors)] if i < 2 * len(authors) else rng.choice(authors)
    b = entity("book", new_title())
    books_by_author[author["id"]].append(b)
    triples.append((b, "written_by", author["id"]))
    if rng.random() < 0.1:  # a co-author
        other = rng.choice([a for a in authors if a is not author])
        triples.append((b, "written_by", other["id"]))
    publisher = author["publisher"] if rng.random() < 0.6 else rng.choice(publisher_ids)
    triples.append((b, "published_by", publisher))
    for g in author["genres"][: 1 + (rng.random() < 0.4)]:
        triples.append((b, "has_genre", g))
    triples.append((b, "published_in", entity("year", str(rng.randint(*author["years"])))))
    language = city_language[author["home"]] if rng.random() < 0.85 else rng.choice(sorted(set(city_language.values())))
    triples.append((b, "written_in", language))
    if rng.random() < 0.7:
        triples.append((b, "set_in", author["home"] if rng.random() < 0.4 else rng.choice(city_ids)))
    if rng.random() < 0.3:
        triples.append((b, "won_award", rng.choice(award_ids)))
for author, books in books_by_author.items():  # series: a later book is the sequel of an earlier one
    for earlier, later in zip(books, books[1:]):
        if rng.random() < 0.25:
            triples.append((later, "sequel_of", earlier))

triples = sorted(set(triples))
(HERE / "kb.txt").write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in triples), encoding="utf-8")
(HERE / "labels.tsv").write_text("".join(f"{e}\t{labels[e]}\n" for e in sorted(labels)), encoding="utf-8")
print(f"{len(triples)} triples, {len(labels)} labelled entities, {len({r for _, r, _ in triples})} relations")
