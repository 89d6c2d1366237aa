"""A KG in DBpedia's shape, written for chain questions over many relations with few questions each:

    python -m bench.kgs.dbpedia_shape --out DIR [--scale 1.0] [--seed 0]

writes DIR/kg.ttl (Turtle with prefixes: `dbr:` resources whose IRIs carry accents, apostrophes and
DBpedia's "(disambiguation)" suffixes, `dbo:` properties of which some are labelled and the rest read
by their camelCase names, `rdf:type` classes, English labels and German labels for places, typed
literals: `xsd:date`, `xsd:gYear`, `xsd:integer`, `xsd:double`), DIR/train.csv, DIR/dev.csv and
DIR/test.csv (question, topic_entities, answers: the topic and the answers written as labels, not
ids, as a user's spreadsheet would; answers of value questions as their text) and DIR/stats.json.

What it tests that the other benchmark KGs do not: a Turtle file, CSV question files naming
entities by label, one property name shared by several kinds of subject (`country` of a city, a
film and a university; `genre` of a band and an album), about 50 relations over nine kinds of
thing with a Zipf-like number of training questions per path (a few each, some none: those are
asked in test only), a phrasing of every path held out of training, and 1-3 hop paths.
"""
from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

from bench.kgs.common import (RDF_TYPE, Store, fill, generator_parser, lit, shown, surface, walk, write_jsonl, write_stats,
                              zipf_counts)
from rra.graph.rdf import XSD, is_literal, literal, split_literal
from rra.text.relations import relation_phrase

DBR = "http://dbpedia.org/resource/"
KIND_PATHS = "http://example.org/kg/"  # --ids kind-paths: http://example.org/kg/<kind>/<name>, no classes
IDS = ("dbpedia", "kind-paths")
DBO = "http://dbpedia.org/ontology/"
# the properties DBpedia labels here (the rest are read by their names: numberOfEmployees -> "number of employees")
LABELLED = {"birthPlace": "birth place", "deathPlace": "death place", "almaMater": "alma mater",
            "headquarter": "headquarters", "foundedBy": "founded by", "keyPerson": "key person",
            "musicComposer": "music by", "starring": "starring", "bandMember": "band member",
            "hometown": "home town", "recordLabel": "record label", "ground": "home stadium",
            "subsequentWork": "followed by", "literaryGenre": "literary genre", "officialLanguage": "official language",
            "populationTotal": "population", "releaseDate": "release date", "capital": "capital"}
CLASSES = ["Person", "City", "Country", "University", "Company", "Film", "Band", "Album", "SportsTeam", "Stadium",
           "Book", "Language", "Genre", "Currency", "Industry", "League", "Award"]

FIRST = ["José", "Zoë", "Łukasz", "Søren", "François", "Ana-María", "Chiara", "Björn", "Aoife", "Mateus", "Ines",
         "Dmitri", "Hélène", "Kwame", "Yuki", "Nils", "Marta", "Oisín", "Renée", "Tomás", "Agnieszka", "Lars",
         "Camille", "Emeka", "Greta", "Paolo", "Sinéad", "Jiří", "Leïla", "Rafael", "Astrid", "Mehmet", "Noor",
         "Xavier", "Ilse", "Duarte", "Małgorzata", "Kai", "Odile", "Vikram"]
LAST = ["García", "O'Brien", "Müller", "Nakamura", "Dubois", "Kowalski", "Lindqvist", "Ferreira", "Novák", "Rossi",
        "Okafor", "Haugen", "Petrović", "Moreau", "Van der Berg", "Sørensen", "Álvarez", "Ó Súilleabháin",
        "Takahashi", "Brennan", "Castellanos", "Weiß", "Janssen", "Marchetti", "Delacroix", "Ekström", "Quiroga",
        "Zieliński", "Abernathy", "Lefèvre", "Oyelaran", "St. Clair", "Baptiste", "Haas", "Villanueva"]
COUNTRIES = {"Valdoria": ("Valdorien", ["Port Ardent", "Saint-Étienne-du-Lac", "Mirabel", "Hollowmere"]),
             "Kessland": ("Kessland", ["Brückenau", "Altheim", "Nordtor"]),
             "Oranje Vale": ("Oranjetal", ["Zeelhaven", "Dortveld", "'s-Gravenmoor"]),
             "Lusetania": ("Lusetanien", ["Porto Seco", "Vila Nova de Arda", "Cascalho"]),
             "Brannoch": ("Brannoch", ["Kilmorrow", "Dún Carrig", "Ballyvane"]),
             "Severia": ("Severien", ["Krasnogor", "Belavoda", "Ostrovets", "Ždánov"]),
             "Castamar": ("Kastamar", ["San Lorién", "Aguasclaras", "Villarrosa"]),
             "Nordhaven": ("Nordhafen", ["Fjordvik", "Skarholm", "Ålesund Nye"]),
             "Tessaly Major": ("Groß-Tessalien", ["Kalamos", "Thessa", "Ioánnina Nea"]),
             "Marrowick": ("Marrowick", ["Ashcombe", "Leighton Fold", "Upper Kettering"])}
LANGUAGES = ["Valdorian", "Kesslandic", "Vale Dutch", "Lusetanian", "Brannish", "Severian", "Castamaran", "Nordic",
             "Tessalian", "English"]
CURRENCIES = ["Valdorian franc", "Kess mark", "Vale guilder", "Lusetanian real", "Brannoch pound", "Severian ruble",
              "Castamaran peso", "Nordhaven krone", "Tessalian drachma", "Marrowick shilling"]
GENRES = ["post-punk", "chamber pop", "jazz fusion", "black metal", "synth-pop", "folk rock", "bossa nova", "trip hop",
          "Krautrock", "shoegaze", "space opera", "noir fiction", "magical realism", "cosy mystery", "epic fantasy"]
INDUSTRIES = ["shipbuilding", "software", "brewing", "telecommunications", "publishing", "aerospace", "retail banking",
              "film distribution", "record industry", "pharmaceuticals"]
LEAGUES = ["Premier Division", "Liga Costera", "Nordic Cup League", "Continental Super League"]
AWARDS = ["Golden Lynx", "Orrery Prize", "Harbour Light Award", "Medal of the Silver Quill", "Prix Lumière-Vale",
          "Kessland Order of Merit"]
WORDS = ["Silent", "Crimson", "Northern", "Glass", "Last", "Hollow", "Winter", "Paper", "Iron", "Distant", "Salt",
         "Hidden", "Burning", "Quiet", "Electric", "Lost", "Velvet", "Broken", "Seventh", "Wandering"]
NOUNS = ["Harbour", "Orchard", "Lanterns", "River", "Atlas", "Season", "Mirror", "Garden", "Signal", "Parade",
         "Engine", "Tide", "Choir", "Compass", "Kingdom", "Frontier", "Echoes", "Meridian", "Ashes", "Ballad"]

# path -> (kind of topic, phrasings); {X} the topic's label. The last phrasing of a path is held out of training
PATHS = {
    ("birthPlace",): ("Person", ["where was {X} born", "what is the birthplace of {X}", "{X} was born in which city",
                                 "in what town was {X} born"]),
    ("birthDate",): ("Person", ["when was {X} born", "what is {X}'s date of birth", "on what day was {X} born"]),
    ("deathPlace",): ("Person", ["where did {X} die", "in which city did {X} pass away", "what was {X}'s place of death"]),
    ("nationality",): ("Person", ["what is the nationality of {X}", "which country is {X} a citizen of",
                                  "what passport does {X} hold"]),
    ("almaMater",): ("Person", ["where did {X} study", "which university did {X} attend", "what is {X}'s alma mater"]),
    ("spouse",): ("Person", ["who is {X} married to", "who is the spouse of {X}", "who did {X} marry"]),
    ("child",): ("Person", ["who are the children of {X}", "who is {X}'s child", "name a son or daughter of {X}"]),
    ("employer",): ("Person", ["who does {X} work for", "which company employs {X}", "what is {X}'s employer"]),
    ("award",): ("Person", ["what award did {X} win", "which prize was {X} given", "what honours has {X} received"]),
    ("team",): ("Person", ["which team does {X} play for", "what club is {X} on", "{X} plays for which side"]),
    ("capital",): ("Country", ["what is the capital of {X}", "which city is the capital of {X}",
                               "where is the seat of government of {X}"]),
    ("currency",): ("Country", ["what currency is used in {X}", "what money do they use in {X}",
                                "what is the currency of {X}"]),
    ("officialLanguage",): ("Country", ["what language is spoken in {X}", "what is the official language of {X}",
                                        "which language do people in {X} speak"]),
    ("^country",): ("Country", ["which cities are in {X}", "name the towns located in {X}", "what cities does {X} have"]),
    ("country",): ("City", ["which country is {X} in", "{X} is in what country", "in what nation is {X} located"]),
    ("populationTotal",): ("City", ["how many people live in {X}", "what is the population of {X}",
                                    "how big is the population of {X}"]),
    ("mayor",): ("City", ["who is the mayor of {X}", "who runs the city of {X}", "who leads {X}'s city council"]),
    ("^birthPlace",): ("City", ["who was born in {X}", "which people come from {X}", "name someone born in {X}"]),
    ("^hometown",): ("City", ["which bands come from {X}", "what band formed in {X}", "name a group from {X}"]),
    ("city",): ("University", ["in which city is {X}", "where is {X} located", "what city is {X} in"]),
    ("foundingYear",): ("University", ["when was {X} founded", "in what year was {X} established",
                                       "what year did {X} open"]),
    ("^almaMater",): ("University", ["who studied at {X}", "which people are alumni of {X}",
                                     "name a graduate of {X}"]),
    ("headquarter",): ("Company", ["where is {X} headquartered", "where are the headquarters of {X}",
                                   "in which city is {X} based"]),
    ("foundedBy",): ("Company", ["who founded {X}", "who started the company {X}", "who set up {X}"]),
    ("industry",): ("Company", ["what industry is {X} in", "what business is {X} in", "what sector does {X} work in"]),
    ("numberOfEmployees",): ("Company", ["how many employees does {X} have", "how many people work at {X}",
                                         "what is the headcount of {X}"]),
    ("parentCompany",): ("Company", ["who owns {X}", "what is the parent company of {X}", "{X} is a subsidiary of what"]),
    ("keyPerson",): ("Company", ["who runs {X}", "who are the key people at {X}", "who is in charge at {X}"]),
    ("^employer",): ("Company", ["who works for {X}", "who is employed by {X}", "name an employee of {X}"]),
    ("director",): ("Film", ["who directed {X}", "who is the director of {X}", "who made the film {X}",
                             "{X} was directed by whom"]),
    ("starring",): ("Film", ["who starred in {X}", "who acted in {X}", "which actors appear in {X}",
                             "who is in the cast of {X}"]),
    ("producer",): ("Film", ["who produced {X}", "who was the producer of {X}", "{X} was produced by whom"]),
    ("musicComposer",): ("Film", ["who wrote the music for {X}", "who composed the score of {X}",
                                  "who did the soundtrack of {X}"]),
    ("distributor",): ("Film", ["who distributed {X}", "which company released {X} in cinemas",
                                "what studio distributed {X}"]),
    ("releaseDate",): ("Film", ["when was {X} released", "what is the release date of {X}", "when did {X} come out"]),
    ("runtime",): ("Film", ["how long is {X}", "what is the running time of {X}", "how many minutes does {X} last"]),
    ("language",): ("Film", ["what language is {X} in", "in which language was {X} made", "what is {X}'s language"]),
    ("^director",): ("Person", ["which films did {X} direct", "what movies were directed by {X}",
                                "name a film by director {X}"]),
    ("^starring",): ("Person", ["what films did {X} act in", "which movies feature {X}", "what has {X} starred in"]),
    ("bandMember",): ("Band", ["who are the members of {X}", "who plays in {X}", "who is in the band {X}"]),
    ("hometown",): ("Band", ["where are {X} from", "what is the home town of {X}", "in which city did {X} form"]),
    ("genre",): ("Band", ["what kind of music do {X} play", "what genre are {X}", "what style of music is {X}"]),
    ("^artist",): ("Band", ["what albums did {X} release", "which records are by {X}", "name an album by {X}"]),
    ("artist",): ("Album", ["who recorded {X}", "which band made the album {X}", "{X} is an album by whom"]),
    ("recordLabel",): ("Album", ["what label released {X}", "which record label put out {X}", "who issued {X}"]),
    ("ground",): ("SportsTeam", ["where do {X} play their home games", "what is the home ground of {X}",
                                 "which stadium do {X} play at"]),
    ("league",): ("SportsTeam", ["which league are {X} in", "what division do {X} play in", "{X} compete in which league"]),
    ("manager",): ("SportsTeam", ["who manages {X}", "who is the coach of {X}", "who is the manager of {X}"]),
    ("^team",): ("SportsTeam", ["who plays for {X}", "which players are on {X}", "name a player of {X}"]),
    ("location",): ("Stadium", ["where is {X}", "in which city is the stadium {X}", "what town is {X} in"]),
    ("capacity",): ("Stadium", ["how many people does {X} hold", "what is the capacity of {X}",
                                "how many seats does {X} have"]),
    ("author",): ("Book", ["who wrote {X}", "who is the author of {X}", "{X} was written by whom", "who penned {X}"]),
    ("publisher",): ("Book", ["who published {X}", "which publisher brought out {X}", "what house published {X}"]),
    ("literaryGenre",): ("Book", ["what genre is {X}", "what kind of book is {X}", "what type of novel is {X}"]),
    ("subsequentWork",): ("Book", ["what is the sequel to {X}", "which book follows {X}", "what came after {X}"]),
    ("numberOfPages",): ("Book", ["how many pages does {X} have", "how long is the book {X} in pages",
                                  "what is the page count of {X}"]),
    ("^author",): ("Person", ["what books did {X} write", "which novels are by {X}", "name a book written by {X}"]),
    # two hops
    ("birthPlace", "country"): ("Person", ["in which country was {X} born", "what country is {X} originally from",
                                           "{X} was born in what country"]),
    ("director", "birthPlace"): ("Film", ["where was the director of {X} born", "what is the birthplace of {X}'s director",
                                          "the director of {X} was born in which city"]),
    ("director", "nationality"): ("Film", ["what nationality is the director of {X}",
                                           "which country is the director of {X} from",
                                           "the person who directed {X} holds which citizenship"]),
    ("author", "nationality"): ("Book", ["what nationality is the author of {X}", "where is the writer of {X} from",
                                         "the author of {X} is a citizen of which country"]),
    ("author", "almaMater"): ("Book", ["where did the author of {X} study", "which university did {X}'s writer attend",
                                       "the author of {X} graduated from where"]),
    ("artist", "hometown"): ("Album", ["where does the band that made {X} come from",
                                       "what is the home town of the band behind {X}",
                                       "the group that recorded {X} formed in which city"]),
    ("artist", "bandMember"): ("Album", ["who played on the album {X}", "who are the members of the band that made {X}",
                                         "which musicians are in the group behind {X}"]),
    ("headquarter", "country"): ("Company", ["in which country is {X} headquartered", "what country is {X} based in",
                                             "{X} has its head office in which country"]),
    ("team", "ground"): ("Person", ["where does {X}'s team play", "what is the home stadium of {X}'s club",
                                    "{X}'s side plays its home games at which ground"]),
    ("ground", "location"): ("SportsTeam", ["in which city do {X} play", "where is the home ground of {X}",
                                            "what town is {X}'s stadium in"]),
    ("capital", "mayor"): ("Country", ["who is the mayor of the capital of {X}", "who runs {X}'s capital city",
                                       "the capital of {X} is led by which mayor"]),
    ("foundedBy", "birthPlace"): ("Company", ["where was the founder of {X} born",
                                              "in what city was the person who founded {X} born",
                                              "the founder of {X} comes from which town"]),
    ("distributor", "headquarter"): ("Film", ["where is the distributor of {X} based",
                                              "in which city is the company that distributed {X}",
                                              "the studio behind {X}'s release is headquartered where"]),
    ("^author", "publisher"): ("Person", ["who publishes {X}'s books", "which publishers have put out books by {X}",
                                          "{X}'s novels are published by whom"]),
    ("^director", "releaseDate"): ("Person", ["when were {X}'s films released", "when did the films directed by {X} come out",
                                              "release dates of movies by {X}"]),
    ("almaMater", "city"): ("Person", ["in which city did {X} go to university", "where is {X}'s university",
                                       "the university {X} attended is in what city"]),
    ("team", "league"): ("Person", ["which league does {X}'s team play in", "what division is {X}'s club in",
                                    "{X}'s team competes in which league"]),
    ("subsequentWork", "author"): ("Book", ["who wrote the sequel to {X}", "who is the author of the book after {X}",
                                            "the follow-up to {X} was written by whom"]),
    # three hops
    ("director", "birthPlace", "country"): ("Film", ["in which country was the director of {X} born",
                                                     "the director of {X} was born in what country",
                                                     "what is the birth country of {X}'s director"]),
    ("author", "almaMater", "city"): ("Book", ["in which city did the author of {X} study",
                                               "where is the university the writer of {X} attended",
                                               "what city is the alma mater of {X}'s author in"]),
    ("artist", "hometown", "country"): ("Album", ["which country does the band behind {X} come from",
                                                  "in what country did the group that made {X} form",
                                                  "the band that recorded {X} is from which country"]),
    ("team", "ground", "location"): ("Person", ["in which city does {X}'s team play at home",
                                                "where is the stadium of {X}'s club",
                                                "{X}'s team's home ground is in what town"]),
    ("headquarter", "country", "capital"): ("Company", ["what is the capital of the country where {X} is based",
                                                        "which city is the capital of {X}'s home country",
                                                        "the country {X} is headquartered in has which capital"]),
}


def _iri(label: str, taken: set[str], kind: str, prefix: str = DBR) -> str:
    """A DBpedia resource IRI: the label with underscores, "(kind)" added where the name is taken.
    `prefix` KIND_PATHS: the kind in the path instead (http://example.org/kg/sports_team/...)."""
    if prefix == KIND_PATHS:
        prefix = KIND_PATHS + relation_phrase(kind).replace(" ", "_") + "/"
    local = label.replace(" ", "_")
    if local in taken:
        local = f"{local}_({kind.lower()})"
    n = 2
    base = local
    while local in taken:
        local, n = f"{base}_{n}", n + 1
    taken.add(local)
    return prefix + local


def build(scale: float, rng: random.Random, ids: str = "dbpedia") -> tuple[Store, dict[str, list[str]], dict[str, str]]:
    """The KG: a Store, entities by class, German labels of places. `ids` "kind-paths": entity IRIs
    name their kind in the path and the KG gives no rdf:type (a graph exported from a relational
    schema, LinkedMDB's shape); "dbpedia": dbr: IRIs with rdf:type classes."""
    if ids not in IDS:
        raise ValueError(f"ids={ids!r}: one of {', '.join(IDS)}")
    kg, taken = Store(), set()
    by: dict[str, list[str]] = {c: [] for c in CLASSES}
    german: dict[str, str] = {}

    def new(kind: str, label: str) -> str:
        e = _iri(label, taken, kind, KIND_PATHS if ids == "kind-paths" else DBR)
        kg.labels[e] = label
        if ids == "dbpedia":
            kg.add(e, RDF_TYPE, DBO + kind)
        by[kind].append(e)
        return e

    def rel(h: str, r: str, t: str) -> None:
        kg.add(h, DBO + r, t)

    for lang in LANGUAGES:
        new("Language", lang)
    for c in CURRENCIES:
        new("Currency", c)
    for g in GENRES:
        new("Genre", g)
    for i in INDUSTRIES:
        new("Industry", i)
    for lg in LEAGUES:
        new("League", lg)
    for a in AWARDS:
        new("Award", a)
    cities = []
    for k, (country, (de, towns)) in enumerate(COUNTRIES.items()):
        c = new("Country", country)
        german[c] = de
        rel(c, "currency", by["Currency"][k])
        rel(c, "officialLanguage", by["Language"][k])
        for j, town in enumerate(towns):
            t = new("City", town)
            cities.append(t)
            if rng.random() < 0.4:
                german[t] = town.replace("Saint", "Sankt").replace("Port ", "Hafen ")
            rel(t, "country", c)
            kg.add(t, DBO + "populationTotal", lit(rng.randint(8_000, 2_500_000), "integer"))
            if j == 0:
                rel(c, "capital", t)
    n_people = int(420 * scale)
    people = []
    for _ in range(n_people):
        p = new("Person", f"{rng.choice(FIRST)} {rng.choice(LAST)}")
        people.append(p)
        born = rng.choice(cities)
        rel(p, "birthPlace", born)
        rel(p, "nationality", kg.one(born, DBO + "country") if rng.random() < 0.85 else
            rng.choice(by["Country"]))
        kg.add(p, DBO + "birthDate", lit(f"{rng.randint(1930, 2002)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                                        "date"))
        if rng.random() < 0.3:
            rel(p, "deathPlace", rng.choice(cities))
        if rng.random() < 0.15:
            rel(p, "award", rng.choice(by["Award"]))
    for k in range(int(18 * scale) or 1):
        u = new("University", f"University of {kg.labels[rng.choice(cities)]}"
                if k % 2 else f"{rng.choice(LAST)} Institute of Technology")
        city = rng.choice(cities)
        rel(u, "city", city)
        rel(u, "country", kg.one(city, DBO + "country"))
        kg.add(u, DBO + "foundingYear", lit(rng.randint(1450, 1990), "gYear"))
    for p in people:
        if rng.random() < 0.7:
            rel(p, "almaMater", rng.choice(by["University"]))
    for i in range(0, len(people) - 1, 9):
        rel(people[i], "spouse", people[i + 1])
        rel(people[i + 1], "spouse", people[i])
        for c in people[i + 2:i + 2 + rng.randint(0, 2)]:
            rel(people[i], "child", c)
            rel(people[i + 1], "child", c)
    for _ in range(int(32 * scale) or 1):
        co = new("Company", f"{rng.choice(WORDS)} {rng.choice(NOUNS)} {rng.choice(['AG', 'Ltd.', 'S.A.', 'Group', '& Co.'])}")
        rel(co, "headquarter", rng.choice(cities))
        rel(co, "foundedBy", rng.choice(people))
        rel(co, "industry", rng.choice(by["Industry"]))
        rel(co, "keyPerson", rng.choice(people))
        kg.add(co, DBO + "foundingYear", lit(rng.randint(1850, 2015), "gYear"))
        kg.add(co, DBO + "numberOfEmployees", lit(rng.randint(12, 90_000), "integer"))
        if by["Company"][:-1] and rng.random() < 0.3:
            rel(co, "parentCompany", rng.choice(by["Company"][:-1]))
    for p in people:
        if rng.random() < 0.4:
            rel(p, "employer", rng.choice(by["Company"]))
    for c in cities:
        if rng.random() < 0.5:
            rel(c, "mayor", rng.choice(people))
    for _ in range(int(160 * scale) or 1):
        f = new("Film", f"The {rng.choice(WORDS)} {rng.choice(NOUNS)}" if rng.random() < 0.5 else
                f"{rng.choice(NOUNS)} of the {rng.choice(WORDS)} {rng.choice(NOUNS)}")
        rel(f, "director", rng.choice(people))
        for a in rng.sample(people, rng.randint(2, 4)):
            rel(f, "starring", a)
        rel(f, "producer", rng.choice(people))
        rel(f, "musicComposer", rng.choice(people))
        rel(f, "distributor", rng.choice(by["Company"]))
        rel(f, "language", rng.choice(by["Language"]))
        rel(f, "country", rng.choice(by["Country"]))
        kg.add(f, DBO + "releaseDate", lit(f"{rng.randint(1950, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                                          "date"))
        kg.add(f, DBO + "runtime", lit(f"{rng.randint(78, 190)}.0", "double"))
        if rng.random() < 0.2:
            rel(f, "award", rng.choice(by["Award"]))
    for _ in range(int(40 * scale) or 1):
        b = new("Band", f"{rng.choice(['The ', '', ''])}{rng.choice(WORDS)} {rng.choice(NOUNS)}")
        rel(b, "hometown", rng.choice(cities))
        rel(b, "genre", rng.choice(by["Genre"][:10]))
        for m in rng.sample(people, rng.randint(2, 5)):
            rel(b, "bandMember", m)
    labels_co = by["Company"]
    for _ in range(int(110 * scale) or 1):
        a = new("Album", f"{rng.choice(WORDS)} {rng.choice(NOUNS)}{rng.choice(['', '', ' (Live)', ' Vol. 2'])}")
        rel(a, "artist", rng.choice(by["Band"]))
        rel(a, "recordLabel", rng.choice(labels_co))
        rel(a, "genre", rng.choice(by["Genre"][:10]))
        kg.add(a, DBO + "releaseDate", lit(f"{rng.randint(1965, 2024)}-{rng.randint(1, 12):02d}-01", "date"))
    for _ in range(int(16 * scale) or 1):
        s = new("Stadium", f"{rng.choice(['Estadio', 'Stade', 'Arena', 'Park'])} {rng.choice(LAST)}")
        rel(s, "location", rng.choice(cities))
        kg.add(s, DBO + "capacity", lit(rng.randint(4_000, 95_000), "integer"))
    for k in range(int(24 * scale) or 1):
        town = kg.labels[rng.choice(cities)]
        t = new("SportsTeam", f"{town} {rng.choice(['FC', 'United', 'Athletic', 'Rovers', 'SC'])}")
        rel(t, "ground", rng.choice(by["Stadium"]))
        rel(t, "league", rng.choice(by["League"]))
        rel(t, "manager", rng.choice(people))
    for p in rng.sample(people, len(people) // 4):
        rel(p, "team", rng.choice(by["SportsTeam"]))
    for _ in range(int(90 * scale) or 1):
        bk = new("Book", f"{rng.choice(['The ', 'A ', ''])}{rng.choice(WORDS)} {rng.choice(NOUNS)}")
        rel(bk, "author", rng.choice(people))
        rel(bk, "publisher", rng.choice(by["Company"]))
        rel(bk, "literaryGenre", rng.choice(by["Genre"][10:]))
        kg.add(bk, DBO + "numberOfPages", lit(rng.randint(90, 900), "integer"))
    books = by["Book"]
    for a, b in zip(books[::3], books[1::3]):
        rel(a, "subsequentWork", b)
    return kg, by, german


def questions(kg: Store, by: dict[str, list[str]], scale: float, rng: random.Random) -> dict[str, list[dict]]:
    """Train / dev / test rows. Each path gets a Zipf-like number of training questions (some none,
    asked in test only) in every phrasing but its last; test asks every path in every phrasing."""
    paths = sorted(PATHS)
    unseen = set(rng.sample(paths, max(3, len(paths) // 12)))
    seen = [p for p in paths if p not in unseen]
    counts = dict(zip(seen, zipf_counts(len(seen), int(1800 * scale), rng, s=0.9, minimum=3)))
    rows: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    used: Counter = Counter()
    shared = {label for label, n in Counter(kg.labels.values()).items() if n > 1}  # a topic named by label must be one entity

    def ask(path: tuple[str, ...], phrasing: str) -> dict | None:
        kind = PATHS[path][0]
        for _ in range(60):
            topic = rng.choice(by[kind])
            if used[topic, path] >= 2 or kg.labels[topic] in shared:
                continue
            ends = walk(kg, [topic], [DBO + r if not r.startswith("^") else "^" + DBO + r[1:] for r in path])
            ends -= {topic}
            if not ends or len(ends) > 12:
                continue
            used[topic, path] += 1
            answers = sorted(shown(e) if is_literal(e) else kg.labels[e] for e in ends)
            text = surface(rng, fill(phrasing, X=kg.labels[topic]))
            return {"question": text, "topic_entities": kg.labels[topic], "answers": answers,
                    "path": " / ".join(path), "held_out_phrasing": phrasing == PATHS[path][1][-1],
                    "unseen_path": path in unseen, "hops": len(path)}
        return None

    for path in seen:
        phrasings = PATHS[path][1][:-1]
        for k in range(counts[path]):
            row = ask(path, phrasings[k % len(phrasings)])
            if row:
                (rows["dev"] if rng.random() < 0.1 else rows["train"]).append(row)
    per = max(1, round(4 * scale))
    for path in paths:
        for phrasing in PATHS[path][1]:
            for _ in range(per):
                row = ask(path, phrasing)
                if row:
                    rows["test"].append(row)
    return rows


def write_turtle(path: Path, kg: Store, german: dict[str, str]) -> int:
    """Turtle as DBpedia dumps it: prefixes, subjects grouped with `;`, labels with language tags."""
    def node(x: str) -> str:
        if is_literal(x):
            lexical, datatype, _ = split_literal(x)
            return literal(lexical) + (f"^^xsd:{datatype[len(XSD):]}" if datatype and datatype.startswith(XSD) else "")
        if x.startswith(DBO) and all(ch.isalnum() for ch in x[len(DBO):]):
            return "dbo:" + x[len(DBO):]
        return f"<{x}>"

    subjects: dict[str, list[str]] = {}
    for h, r, t in kg.triples:
        subjects.setdefault(h, []).append(f"{'a' if r == RDF_TYPE else node(r)} {node(t)}")
    for e, label in kg.labels.items():
        subjects.setdefault(e, []).append(f"rdfs:label {literal(label)}@en")
        if e in german:
            subjects[e].append(f"rdfs:label {literal(german[e])}@de")
    for name, label in LABELLED.items():
        subjects.setdefault(DBO + name, []).append(f"rdfs:label {literal(label)}@en")
    for c in CLASSES if any(r == RDF_TYPE for _, r, _ in kg.triples) else ():
        subjects.setdefault(DBO + c, []).append(f"rdfs:label {literal(relation_phrase(c))}@en")
    out = ["@prefix dbo: <http://dbpedia.org/ontology/> .\n",
           "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n",
           "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\n"]
    n = 0
    for s in subjects:
        parts = subjects[s]
        n += len(parts)
        out.append(node(s) + " " + " ;\n    ".join(parts) + " .\n")
    path.write_text("".join(out), encoding="utf-8")
    return n


def write_csv(path: Path, rows: list[dict], test: bool) -> None:
    """Answers only; the test file also has a qid and how many hops (read for the report, not for answering)."""
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question", "topic_entities", "answers"] + (["qid", "hops"] if test else []))
        for r in rows:
            w.writerow([r["question"], r["topic_entities"], "|".join(r["answers"])] + ([r["qid"], r["hops"]] if test else []))


def generate(out: Path, scale: float = 1.0, seed: int = 0, ids: str = "dbpedia") -> dict[str, str]:
    """Write the KG and its question files under `out`; their paths by name (kg, train, val, test,
    test_meta: each test question's qid with what bench.bench_relation_scorer groups it by, stats)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    kg, by, german = build(scale, rng, ids)
    rows = questions(kg, by, scale, rng)
    for k, r in enumerate(rows["test"]):
        r["qid"] = f"dbp-test-{k:04d}"
    n = write_turtle(out / "kg.ttl", kg, german)
    for split, r in rows.items():
        write_csv(out / f"{split}.csv", r, test=split == "test")
    meta = [{"qid": r["qid"], "path": r["path"], "extra": {"seen_path": not r["unseen_path"],
                                                           "seen_phrasing": not r["held_out_phrasing"]}}
            for r in rows["test"]]
    write_jsonl(out / "test_meta.jsonl", meta)  # no loader reads it
    relations = sorted({r for _, r, _ in kg.triples if r != RDF_TYPE})
    stats = {"kg": {"triples": n, "entities": len(kg.labels), "relations": len(relations)},
             "questions": {k: len(v) for k, v in rows.items()},
             "test_by_hops": dict(Counter(r["hops"] for r in rows["test"])),
             "test_held_out_phrasing": sum(r["held_out_phrasing"] for r in rows["test"]),
             "test_unseen_path": sum(r["unseen_path"] for r in rows["test"]),
             "paths": len(PATHS), "seed": seed, "scale": scale, "ids": ids}
    write_stats(out / "stats.json", stats)
    return {"kg": str(out / "kg.ttl"), "train": str(out / "train.csv"), "val": str(out / "dev.csv"),
            "test": str(out / "test.csv"), "test_meta": str(out / "test_meta.jsonl"), "stats": str(out / "stats.json")}


def parser():
    """The command line of `python -m bench.kgs.dbpedia_shape`."""
    ap = generator_parser("dbpedia_shape", __doc__)
    ap.add_argument("--ids", choices=IDS, default="dbpedia",
                    help="kind-paths: entity IRIs name their kind (http://example.org/kg/city/Mirabel), no rdf:type")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    files = generate(Path(args.out), args.scale, args.seed, args.ids)
    print(Path(files["stats"]).read_text())


if __name__ == "__main__":
    main()
