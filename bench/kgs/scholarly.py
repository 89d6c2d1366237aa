"""A scholarly KG built the way real ones are, for measuring retrieval (issue 33) and query plans
(issue 34) on something other than the built-in KG.

    python -m bench.kgs.scholarly --out DIR [--scale 1.0] [--seed 0] [--no-plans]

writes DIR/kg.nt (43,244 N-Triples lines at scale 1, 39,399 of them facts: papers, people, venues,
journals, institutions, departments, cities, countries, continents, languages, topics, awards,
societies, publishers, projects, funders, datasets, software, licences, programming languages;
62 forward relations and rdf:type),
DIR/{train,val,test}.jsonl (chain questions, bench/kgs/scholarly_questions.py),
DIR/plans_{train,val,test}.jsonl (several anchors, conditions, orders, count, yes/no:
bench/kgs/scholarly_plans.py) and DIR/stats.json.

IRIs: entities `http://example.org/schol/resource/<Kind>_<n>`, relations and classes
`http://example.org/schol/ontology/<camelCaseName>`. Every entity and every relation has an
rdfs:label; values are typed literals (xsd:gYear years, xsd:date dates, xsd:integer counts,
xsd:string DOIs / ISSNs / ORCID iDs). rra reads the file with its defaults (`load_graph(kg.nt)`):
entity ids are the full IRIs, relation ids the full ontology IRIs (`rdf:type` for the type edge),
which is what the question files use.

Ambiguity is there on purpose, as in real KGs: an institution has a direct `country` and also
`locatedIn` -> city -> `inCountry` (same answer, 1 or 2 hops); a student's `affiliation` differs
from the advisor's and from their own `almaMater` (where the advisor works) in most cases; a
software's `developer` is usually also an `author` of the paper that describes it; `foundingYear`
and `headquarters` are shared by several kinds of entity.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.kgs import scholarly_names as N
from bench.kgs.scholarly_names import ONT, RES, rel
from bench.kgs.common import RDF_TYPE, Store, generator_parser, lit, write_ntriples, write_stats


# relation (camelCase) -> its label, as the ontology states it
RELATIONS = {
    # papers
    "author": "author", "presentedAt": "presented at", "publishedInJournal": "published in journal",
    "publicationYear": "publication year", "publicationDate": "publication date", "citationCount": "citation count",
    "pageCount": "number of pages", "doi": "DOI", "mainTopic": "main subject", "cites": "cites work",
    "usesDataset": "uses dataset", "paperLanguage": "language of work", "resultOf": "produced by project",
    "honouredWith": "award received by work",
    # people
    "affiliation": "affiliation", "doctoralAdvisor": "doctoral advisor", "almaMater": "educated at",
    "birthPlace": "place of birth", "nationality": "country of citizenship", "birthDate": "date of birth",
    "hIndex": "h-index", "orcid": "ORCID iD", "memberOf": "member of", "researchInterest": "field of work",
    "awardReceived": "award received", "worksInDepartment": "department", "nativeLanguage": "native language",
    # institutions, departments, places
    "locatedIn": "located in the city", "country": "country", "foundingYear": "year of foundation",
    "partOf": "part of", "headOfDepartment": "head of department", "inCountry": "in country",
    "population": "population", "onContinent": "continent", "capital": "capital city",
    "officialLanguage": "official language",
    # venues, journals, publishers, topics, awards
    "organiser": "organiser", "hostCity": "host city", "coversTopic": "covers topic", "publisher": "publisher",
    "editorInChief": "editor-in-chief", "issn": "ISSN", "scope": "journal scope", "headquarters": "headquarters location",
    "broaderTopic": "subfield of", "conferredBy": "conferred by",
    # projects, funders, datasets, software, programming languages
    "funder": "funded by", "principalInvestigator": "principal investigator", "hostInstitution": "host institution",
    "startDate": "start date", "fundingAmount": "funding amount (EUR)", "basedIn": "based in country",
    "creator": "creator", "datasetLicence": "dataset licence", "about": "dataset subject", "developer": "developer",
    "programmingLanguage": "programming language", "softwareLicence": "software licence",
    "describedIn": "described in paper", "designedBy": "designed by", "firstReleased": "first released",
}
CLASSES = {"Paper": "scholarly article", "Person": "researcher", "Institution": "research institution",
           "Department": "academic department", "City": "city", "Country": "country", "Continent": "continent",
           "Language": "natural language", "Conference": "academic conference", "Journal": "scientific journal",
           "Publisher": "publisher", "Topic": "research topic", "Award": "award", "Society": "learned society",
           "Project": "research project", "Funder": "funding agency", "Dataset": "dataset", "Software": "software",
           "Licence": "licence", "ProgrammingLanguage": "programming language"}
STRING_VALUED = ("doi", "issn", "orcid")




@dataclass
class World:
    store: Store
    kinds: dict[str, str]  # entity IRI -> class name (Paper, Person, ...)
    by_kind: dict[str, list[str]] = field(default_factory=dict)  # class -> IRIs in creation order
    string_literals: set[str] = field(default_factory=set)

    def of(self, kind: str) -> list[str]:
        return self.by_kind.get(kind, [])

    def label(self, entity: str) -> str:
        return self.store.labels[entity]


class _Builder:
    """Makes entities with unique labels and adds their facts."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.world = World(Store(), {})
        self.used_labels: set[str] = set()
        for name, label in RELATIONS.items():
            self.world.store.labels[rel(name)] = label
        for name, label in CLASSES.items():
            self.world.store.labels[ONT + name] = label

    def entity(self, kind: str, label: str) -> str:
        if label in self.used_labels:
            raise ValueError(f"label {label!r} used twice")
        self.used_labels.add(label)
        n = len(self.world.by_kind.setdefault(kind, []))
        iri = f"{RES}{kind}_{n + 1}"
        self.world.by_kind[kind].append(iri)
        self.world.kinds[iri] = kind
        self.world.store.labels[iri] = label
        self.world.store.add(iri, RDF_TYPE, ONT + kind)
        return iri

    def fact(self, head: str, name: str, tail: str) -> None:
        self.world.store.add(head, rel(name), tail)

    def value(self, head: str, name: str, lexical, xsd_type: str) -> None:
        node = lit(lexical, xsd_type)
        if xsd_type == "string":
            self.world.string_literals.add(node)
        self.world.store.add(head, rel(name), node)

    def unique(self, make, tries: int = 200) -> str:
        """A label from `make()` not used yet (`make` draws at random)."""
        for _ in range(tries):
            label = make()
            if label not in self.used_labels:
                return label
        raise RuntimeError("ran out of unique labels; enlarge the name pools")


def _date(rng: random.Random, year: int) -> str:
    start = dt.date(year, 1, 1)
    return (start + dt.timedelta(days=rng.randrange(365))).isoformat()


def _acronym(text: str) -> str:
    return "".join(w[0] for w in re.findall(r"[A-Za-zÀ-ÿ][\wÀ-ÿ-]*", text) if w[0].isupper())


def build(scale: float = 1.0, seed: int = 0) -> World:
    """The KG. `scale` multiplies the number of papers, people and organisations (places stay)."""
    rng = random.Random(seed)
    b = _Builder(rng)
    w = b.world
    n = lambda base, least=3: max(least, round(base * scale))  # noqa: E731

    # places and languages
    continents = {c: b.entity("Continent", c) for c in N.CONTINENTS}
    languages = {}
    for country, (_, langs, _) in N.COUNTRIES.items():
        for lang in langs:
            if lang not in languages:
                languages[lang] = b.entity("Language", lang)
    countries, cities, city_country = {}, {}, {}
    for name, (continent, langs, city_names) in N.COUNTRIES.items():
        c = countries[name] = b.entity("Country", name)
        b.fact(c, "onContinent", continents[continent])
        for lang in langs:
            b.fact(c, "officialLanguage", languages[lang])
        for k, city_name in enumerate(city_names):
            city = cities[city_name] = b.entity("City", city_name)
            city_country[city] = c
            b.fact(city, "inCountry", c)
            b.value(city, "population", rng.randrange(40_000, 9_000_000) if k == 0 or rng.random() < 0.8
                    else rng.randrange(9_000, 40_000), "integer")
            if k == 0:
                b.fact(c, "capital", city)
    country_lang = {countries[k]: v[1][0] for k, v in N.COUNTRIES.items()}

    # institutions: named in the country's language, several per big city
    city_list = sorted(cities.values(), key=lambda x: w.label(x))
    institutions = []
    for k in range(n(150, 12)):
        city = city_list[k % len(city_list)] if k < len(city_list) else rng.choice(city_list)
        country = city_country[city]
        special = N.SPECIAL_INSTITUTIONS.get(w.label(city))
        forms = N.INSTITUTION_FORMS.get(country_lang[country], []) + N.ENGLISH_FORMS
        name = special if special and special not in b.used_labels else None
        if name is None:
            free = [f.format(c=w.label(city)) for f in forms if f.format(c=w.label(city)) not in b.used_labels]
            if not free:
                continue
            name = free[0] if rng.random() < 0.6 else rng.choice(free)
        inst = b.entity("Institution", name)
        institutions.append(inst)
        b.fact(inst, "locatedIn", city)
        b.fact(inst, "country", country)
        b.value(inst, "foundingYear", rng.choice([rng.randrange(1088, 1800), rng.randrange(1800, 2015)]), "gYear")
    departments: dict[str, list[str]] = {}
    for inst in institutions:
        for disc in rng.sample(N.DISCIPLINES, 2):
            d = b.entity("Department", f"Department of {disc}, {w.label(inst)}")
            departments.setdefault(inst, []).append(d)
            b.fact(d, "partOf", inst)

    # topics, societies, venues, journals, publishers, awards
    topics, subtopics = {}, []
    for field_name, subs in N.TOPICS.items():
        topics[field_name] = b.entity("Topic", field_name)
        for s in subs:
            topics[s] = t = b.entity("Topic", s)
            subtopics.append(t)
            b.fact(t, "broaderTopic", topics[field_name])
    societies = []
    for name in N.SOCIETIES[: n(18, 4)]:
        s = b.entity("Society", name)
        societies.append(s)
        b.value(s, "foundingYear", rng.randrange(1890, 2012), "gYear")
        b.fact(s, "headquarters", rng.choice(city_list))
    field_names = list(N.TOPICS) + sorted(N.CONCEPTS[:20])
    venues = []
    for _ in range(n(45, 5)):
        def conf_name():
            f = rng.choice(field_names)
            long = rng.choice(N.CONFERENCE_FORMS).format(F=f)
            return f"{long} ({_acronym(long)})" if rng.random() < 0.6 else long
        v = b.entity("Conference", b.unique(conf_name))
        venues.append(v)
        b.fact(v, "organiser", rng.choice(societies))
        b.fact(v, "hostCity", rng.choice(city_list))
        for t in rng.sample(subtopics, rng.randint(1, 3)):
            b.fact(v, "coversTopic", t)
    publishers = []
    for name in N.PUBLISHERS[: n(12, 3)]:
        p = b.entity("Publisher", name)
        publishers.append(p)
        b.fact(p, "headquarters", rng.choice(city_list))
    journals = []
    for _ in range(n(35, 4)):
        j = b.entity("Journal", b.unique(lambda: rng.choice(N.JOURNAL_FORMS).format(F=rng.choice(field_names))))
        journals.append(j)
        b.fact(j, "publisher", rng.choice(publishers))
        b.value(j, "issn", f"{rng.randrange(1000, 9999)}-{rng.randrange(100, 999)}{rng.choice('0123456789X')}", "string")
        for t in rng.sample(subtopics, rng.randint(1, 2)):
            b.fact(j, "scope", t)
    person_awards = []
    for name in N.AWARD_NAMES[: n(16, 3)]:
        a = b.entity("Award", name)
        person_awards.append(a)
        b.fact(a, "conferredBy", rng.choice(societies))
    paper_awards = []
    for s in societies[: n(6, 2)]:
        for form in N.PAPER_AWARD_FORMS[:2]:
            a = b.entity("Award", form.format(S=_acronym(w.label(s)) or w.label(s)))
            paper_awards.append(a)
            b.fact(a, "conferredBy", s)

    # people: seniors advise juniors; a junior studied where the advisor works (almaMater) and
    # mostly works somewhere else now (affiliation)
    people, seniors = [], []
    n_people = n(700, 40)
    for k in range(n_people):
        def person_name():
            first, last = rng.choice(N.FIRST), rng.choice(N.LAST)
            middle = f" {rng.choice(N.INITIALS)}." if rng.random() < 0.2 else ""
            return f"{first}{middle} {last}"
        p = b.entity("Person", b.unique(person_name))
        people.append(p)
        senior = k < n_people * 0.3
        if senior:
            seniors.append(p)
        birth_city = rng.choice(city_list)
        b.fact(p, "birthPlace", birth_city)
        nationality = city_country[birth_city] if rng.random() < 0.85 else rng.choice(sorted(countries.values()))
        b.fact(p, "nationality", nationality)
        if rng.random() < 0.9:
            b.fact(p, "nativeLanguage", languages[country_lang[nationality]])
        year = rng.randrange(1942, 1975) if senior else rng.randrange(1970, 1999)
        b.value(p, "birthDate", _date(rng, year), "date")
        b.value(p, "hIndex", rng.randrange(18, 95) if senior else rng.randrange(1, 30), "integer")
        b.value(p, "orcid", "0000-000{}-{:04d}-{:04d}".format(rng.randrange(1, 4), rng.randrange(10_000),
                                                              rng.randrange(10_000)), "string")
        inst = rng.choice(institutions)
        b.fact(p, "affiliation", inst)
        if rng.random() < 0.8:
            b.fact(p, "worksInDepartment", rng.choice(departments[inst]))
        for t in rng.sample(subtopics, rng.randint(1, 3)):
            b.fact(p, "researchInterest", t)
        for s in rng.sample(societies, rng.choice([0, 0, 1, 1, 2])):
            b.fact(p, "memberOf", s)
        if senior and rng.random() < 0.25:
            b.fact(p, "awardReceived", rng.choice(person_awards))
    for p in people:
        advisors = [s for s in seniors if s != p]
        if p in seniors and rng.random() < 0.5:
            continue
        adv = rng.choice(advisors)
        b.fact(p, "doctoralAdvisor", adv)
        adv_inst = w.store.one(adv, rel("affiliation"))
        b.fact(p, "almaMater", adv_inst if rng.random() < 0.8 else rng.choice(institutions))
    senior_set = set(seniors)
    for inst, depts in departments.items():
        staff = [s for s in w.store.neighbors(inst, rel("^affiliation")) if s in senior_set]
        for d in depts:
            if staff:
                b.fact(d, "headOfDepartment", rng.choice(staff))
    for j in journals:
        b.fact(j, "editorInChief", rng.choice(seniors))

    # a person's group (advisor, students, a few colleagues: the people they keep writing with)
    # and preferred venues, journals, topics
    group = {p: [] for p in people}
    for p in people:
        for adv in w.store.neighbors(p, rel("doctoralAdvisor")):
            group[p].append(adv)
            group[adv].append(p)
    for p in people:
        inst = w.store.one(p, rel("affiliation"))
        colleagues = [q for q in w.store.neighbors(inst, rel("^affiliation")) if q != p]
        group[p] = list(dict.fromkeys(group[p][:4] + rng.sample(colleagues, min(2, len(colleagues)))))
    prefers = {p: (rng.sample(venues, min(2, len(venues))), rng.sample(journals, min(2, len(journals))),
                   w.store.neighbors(p, rel("researchInterest"))) for p in people}

    # projects and funders
    funders = {}
    for name, country in N.FUNDERS[: n(20, 4)]:
        f = b.entity("Funder", name)
        funders[f] = countries.get(country)
        if country:
            b.fact(f, "basedIn", countries[country])
    projects = []
    for _ in range(n(140, 6)):
        def project_name():
            words = rng.sample(N.PROJECT_WORDS, 3)
            acro = "".join(x[0] for x in words).upper() + rng.choice(["", "", "+", "-II", "²"])
            return f"{acro}: {' '.join(words)}"
        pr = b.entity("Project", b.unique(project_name))
        projects.append(pr)
        pi = rng.choice(seniors)
        b.fact(pr, "principalInvestigator", pi)
        host = w.store.one(pi, rel("affiliation")) if rng.random() < 0.85 else rng.choice(institutions)
        b.fact(pr, "hostInstitution", host)
        home = [f for f, c in funders.items() if c == w.store.one(host, rel("country"))]
        b.fact(pr, "funder", rng.choice(home) if home and rng.random() < 0.75 else rng.choice(sorted(funders)))
        b.value(pr, "startDate", _date(rng, rng.randrange(2005, 2023)), "date")
        b.value(pr, "fundingAmount", rng.randrange(50, 2500) * 1000, "integer")
    pi_projects = {}
    for pr in projects:
        pi_projects.setdefault(w.store.one(pr, rel("principalInvestigator")), []).append(pr)

    # datasets
    licences = [b.entity("Licence", name) for name in N.LICENCES]
    datasets = []
    for _ in range(n(110, 6)):
        ds = b.entity("Dataset", b.unique(lambda: rng.choice(N.DATASET_PARTS[0]) + rng.choice(N.DATASET_PARTS[1])
                                          + rng.choice(N.DATASET_SUFFIXES)))
        datasets.append(ds)
        for p in rng.sample(people, rng.choice([1, 1, 2])):
            b.fact(ds, "creator", p)
        b.fact(ds, "datasetLicence", rng.choice(licences))
        b.fact(ds, "about", rng.choice(subtopics))

    # papers: a lead author writes with their circle, at their preferred venues, on their topics
    english = languages["English"]
    papers, years = [], []
    n_papers = n(1800, 60)
    special_title = "On Learning: A Survey (Revisited)"
    for k in range(n_papers):
        lead = people[k] if k < len(people) else rng.choice(people[: max(1, len(people) // 2)] + people)

        def title():
            form = rng.choice(N.TITLE_FORMS)
            return form.replace("{C}", rng.choice(N.CONCEPTS)).replace("{M}", rng.choice(N.METHODS)) \
                .replace("{A}", rng.choice(N.ADJECTIVES)).replace("{T}", rng.choice(N.TASKS))
        p = b.entity("Paper", special_title if k == 0 else b.unique(title))
        papers.append(p)
        mates = group[lead] if rng.random() < 0.85 else people
        authors = [lead] + rng.sample(mates, min(len(mates), rng.choice([0, 1, 1, 2, 2, 3])))
        for a in dict.fromkeys(authors):
            b.fact(p, "author", a)
        v_pref, j_pref, t_pref = prefers[lead]
        if rng.random() < 0.7:
            b.fact(p, "presentedAt", rng.choice(v_pref) if rng.random() < 0.8 else rng.choice(venues))
        else:
            b.fact(p, "publishedInJournal", rng.choice(j_pref) if rng.random() < 0.75 else rng.choice(journals))
        born = int(w.store.one(lead, rel("birthDate"))[1:5])
        year = min(2023, max(1990, born + rng.randrange(24, 50)))
        years.append(year)
        b.value(p, "publicationYear", year, "gYear")
        b.value(p, "publicationDate", _date(rng, year), "date")
        b.value(p, "citationCount", int((rng.paretovariate(1.2) - 1) * 3 * (2024 - year)) + rng.randrange(3),
                "integer")
        b.value(p, "pageCount", rng.randrange(4, 42), "integer")
        b.value(p, "doi", f"10.{5000 + rng.randrange(400)}/schol.{year}.{k + 1:05d}", "string")
        for t in (rng.sample(t_pref, min(len(t_pref), rng.choice([1, 1, 2]))) if t_pref and rng.random() < 0.85
                  else [rng.choice(subtopics)]):
            b.fact(p, "mainTopic", t)
        b.fact(p, "paperLanguage", english if rng.random() < 0.88 else languages[country_lang[
            w.store.one(w.store.one(lead, rel("affiliation")), rel("country"))]])
        earlier = [q for q, y in zip(papers[:-1], years) if y <= year]
        for q in rng.sample(earlier, min(len(earlier), rng.choice([0, 1, 2, 3, 4]))):
            b.fact(p, "cites", q)
        if rng.random() < 0.35:
            b.fact(p, "usesDataset", rng.choice(datasets))
        if lead in pi_projects and rng.random() < 0.5:
            b.fact(p, "resultOf", rng.choice(pi_projects[lead]))
        if rng.random() < 0.03:
            b.fact(p, "honouredWith", rng.choice(paper_awards))

    # software: usually described in a paper by its developers (developer and author overlap)
    prog_langs = []
    for name in N.PROGRAMMING_LANGUAGES:
        pl = b.entity("ProgrammingLanguage", name)
        prog_langs.append(pl)
        b.fact(pl, "designedBy", rng.choice(seniors))
        b.value(pl, "firstReleased", rng.randrange(1985, 2021), "gYear")
    for _ in range(n(110, 6)):
        sw = b.entity("Software", b.unique(lambda: rng.choice(N.SOFTWARE_PARTS[0]) + rng.choice(N.SOFTWARE_PARTS[1])
                                          + rng.choice(["", "", "", "2", "-ng", ".js", "-py"])))
        paper = rng.choice(papers)
        if rng.random() < 0.85:
            b.fact(sw, "describedIn", paper)
            devs = w.store.neighbors(paper, rel("author"))
            devs = rng.sample(devs, rng.randint(1, len(devs)))
            if rng.random() < 0.3:
                devs.append(rng.choice(people))
        else:
            devs = rng.sample(people, rng.choice([1, 2]))
        for d in dict.fromkeys(devs):
            b.fact(sw, "developer", d)
        b.fact(sw, "programmingLanguage", rng.choice(prog_langs))
        b.fact(sw, "softwareLicence", rng.choice(licences[:8]))
    return w


def stats(world: World) -> dict:
    s = world.store
    per_relation = Counter(r for _, r, _ in s.triples)
    used = sorted(per_relation)
    return {"triples": len(s.triples), "label_triples": len(s.labels), "lines": len(s.triples) + len(s.labels),
            "entities": len(world.kinds), "relations": len(used),
            "entities_per_kind": {k: len(v) for k, v in sorted(world.by_kind.items())},
            "triples_per_relation": {r.rsplit("/", 1)[-1]: per_relation[r] for r in used}}


def generate(out: str | Path, scale: float = 1.0, seed: int = 0, plans: bool = True,
             questions: dict | None = None) -> dict[str, Path]:
    """Write the KG, its question files and stats.json under `out`; returns {name: path}.
    `questions` overrides the question counts ({"train": 3000, "val": 300, "test": 1000,
    "plans_train": 3000, "plans_val": 300, "plans_test_per_shape": 100}); by default they follow `scale`."""
    from bench.kgs import scholarly_plans, scholarly_questions

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    world = build(scale, seed)
    paths = {"kg": out / "kg.nt"}
    write_ntriples(paths["kg"], world.store, world.string_literals)
    counts = {"train": 3000, "val": 300, "test": 1000, "plans_train": 3000, "plans_val": 300,
              "plans_test_per_shape": 100}
    if questions is None and scale < 1:
        counts = {k: max(10, round(v * scale)) for k, v in counts.items()}
    counts.update(questions or {})
    summary = {"scale": scale, "seed": seed, "kg": stats(world)}
    # every test set is drawn before any training set, so no training question asks a test question
    # (the plan test set is drawn even without `plans`, so train.jsonl is the same either way)
    chains = scholarly_questions.ChainMaker(world, seed)
    chain_test = scholarly_questions.draw_test(chains, counts)
    planner = scholarly_plans.PlanMaker(world, seed)
    plan_test = scholarly_plans.draw_test(planner, chains, counts, seed)
    paths.update(scholarly_questions.write_chains(chains, out, counts, seed, summary, chain_test))
    if plans:
        paths.update(scholarly_plans.write_plans(planner, chains, out, counts, seed, summary, plan_test))
    paths["stats"] = out / "stats.json"
    write_stats(paths["stats"], summary)
    return paths


def parser():
    """The command line of `python -m bench.kgs.scholarly`."""
    ap = generator_parser("scholarly", __doc__)
    ap.add_argument("--no-plans", action="store_true", help="chain questions only")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    paths = generate(args.out, args.scale, args.seed, plans=not args.no_plans)
    print(json.dumps({k: str(v) for k, v in paths.items()}, indent=1))


if __name__ == "__main__":
    main()
