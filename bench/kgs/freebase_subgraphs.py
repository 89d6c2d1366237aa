"""Per-question subgraphs in RoG's format, of a realistic size, in a Freebase-style world written
fresh: the setting of WebQSP as RoG ships it (rmanluo/RoG-webqsp), without its data.

    python -m bench.kgs.freebase_subgraphs --out DIR [--scale 1.0] [--seed 0] [--nsm]

writes DIR/{train,dev,test}.jsonl (RoG rows: id, question, answer, q_entity, a_entity, graph,
choices; read by rra.data.subgraph_formats.load_rog / conf/data/subgraphs.yaml), DIR/gold/
{train,dev,test}.jsonl (each question's relation path and whether its answers are in its graph;
no loader reads it) and DIR/stats.json; with --nsm also DIR/nsm/ in NSM / GNN-RAG's format.

The world: people (actors, directors, athletes, politicians, musicians, authors, business people),
films, TV programmes, sports teams and leagues, places (continents, countries, regions, cities),
companies, universities, bands, albums, books, awards, languages, currencies. Entities have
Freebase machine ids (`m.0` + 5 characters) and names with commas and parentheses; n-ary facts
go through unnamed compound-value (CVT) nodes (film performances, team rosters, marriages,
education, employment tenures, government positions held, ...), stored both ways with their
reverse properties, as in a Freebase dump; every entity has `type.object.type`,
`common.topic.notable_types` and a long tail of `base.*` / `common.topic.*` facts. In RoG rows a
named entity is written by its name and a CVT by its machine id, so rra folds the CVTs away.

Each question (74 question relations, 1-2 hops where a CVT pair counts as one) gets the topic's
neighbourhood within two hops (CVTs passed through), capped per node and padded with facts a
third hop away to 1,000-3,000 triples; in `unreachable` (6%) of them every triple touching an
answer is removed. Question counts per relation follow a Zipf curve in train and dev; test is
spread evenly over the relations (some have no training question).
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from bench.kgs import freebase_names as N
from bench.kgs.common import Store, generator_parser, write_stats, zipf_counts
from bench.kgs.freebase_schema import COMMON, CVT_TYPES, LONG_TAIL, QUESTIONS, REVERSE

MID_CHARS = "0123456789bcdfghjklmnpqrstvwxyz_"
MAX_ANSWERS = 15
UNREACHABLE = 0.06
# topic kind of a question -> the entity type its topics are drawn from
TOPIC_TYPES = {"person": "person", "married": "person", "parent": "person", "child": "person",
               "sibling": "person", "employee": "person", "religious": "person", "ethnic": "person",
               "speaker": "person", "deceased": "person", "actor": "person", "director": "person",
               "tv_actor": "person", "athlete": "person", "politician": "person", "musician": "artist",
               "band_member": "person", "author": "person", "winner": "person", "film": "film",
               "film_character": "character", "tv_program": "tv_program", "team": "team", "champion_team": "team",
               "city": "city", "country": "country", "jurisdiction": "jurisdiction", "company": "company",
               "band": "band", "book": "book", "namesake": "namesake", "language": "language",
               "structure": "structure"}


class World:
    """Entities (machine ids), names, facts; literal nodes are `lit:<value>`."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.store = Store()
        self.names: dict[str, str] = {}
        self.kinds: dict[str, list[str]] = {}
        self._mids: set[str] = set()
        self._pools: dict[str, list[str]] = {}
        self._taken: set[str] = set()

    def mid(self) -> str:
        while True:
            m = "m.0" + "".join(self.rng.choice(MID_CHARS) for _ in range(self.rng.choice([4, 5, 5, 6])))
            if m not in self._mids:
                self._mids.add(m)
                return m

    def entity(self, kind: str | tuple, name: str, types: tuple[str, ...] = (), notable: str | None = None) -> str:
        """A named entity; a name already taken gets a Freebase-like disambiguation."""
        base, k = name, 2
        while name in self._taken:
            name = f"{base} ({notable or types[0].split('.')[-1].replace('_', ' ')})" if k == 2 else f"{base} ({k})"
            k += 1
        m = self.mid()
        self.names[m] = name
        self._taken.add(name)
        for kd in (kind,) if isinstance(kind, str) else kind:
            self.kinds.setdefault(kd, []).append(m)
        for t in types:
            self.store.add(m, "type.object.type", self.lit(t))
        if notable:
            self.store.add(m, "common.topic.notable_types", self.pool("notable:" + notable, [notable])[0])
            self.store.add(m, "kg.object_profile.prominent_type", self.lit(types[0] if types else "common.topic"))
        return m

    def lit(self, value) -> str:
        return f"lit:{value}"

    def pool(self, key: str, names: list[str], notable: str | None = None) -> list[str]:
        """Named entities for a list of values (genres, professions, ...), made once."""
        if key not in self._pools:
            self._pools[key] = [self.entity("value", n, ("common.topic",), notable) for n in names]
        return self._pools[key]

    def fact(self, head: str, relation: str, tail: str) -> None:
        self.store.add(head, relation, tail)
        if relation in REVERSE:
            self.store.add(tail, REVERSE[relation], head)

    def cvt(self, kind: str, **roles) -> str:
        """A compound value of `kind` joining the participants (entities or literals) by role."""
        node = self.mid()
        for role, values in roles.items():
            out_prop, back_prop = CVT_TYPES[kind][role]
            for v in values if isinstance(values, list) else [values]:
                if back_prop:
                    self.store.add(node, back_prop, v)
                if out_prop and not v.startswith("lit:"):
                    self.store.add(v, out_prop, node)
        return node

    def of(self, kind: str) -> list[str]:
        return self.kinds.get(kind, [])

    def shown(self, node: str) -> str:
        """A node as RoG writes it: its name, a literal's value, a CVT's machine id."""
        return node[4:] if node.startswith("lit:") else self.names.get(node, node)


def _date(rng, lo: int, hi: int) -> str:
    return f"{rng.randrange(lo, hi)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


def build(scale: float = 1.0, seed: int = 0) -> World:
    rng = random.Random(seed)
    w = World(rng)
    n = lambda base, least=4: max(least, round(base * scale))  # noqa: E731
    pick = rng.choice

    # places
    continents = [w.entity("continent", c, ("location.location", "location.continent"), "Continent") for c in N.CONTINENTS]
    countries, states, cities = [], [], []
    languages = [w.entity(("language",), l, ("language.human_language",), "Human Language") for l in N.LANGUAGE_NAMES]
    currencies = [w.entity("currency", c, ("finance.currency",), "Currency") for c in N.CURRENCY_WORDS]
    govs = w.pool("gov", N.GOVERNMENT_FORMS)
    zones = w.pool("zones", N.TIME_ZONES)

    def place_name():
        return pick(N.PLACE_ROOTS) + pick(N.PLACE_ENDS)
    for name in N.COUNTRY_WORDS[: n(40, 8)]:
        c = w.entity(("country", "jurisdiction", "place"), name, ("location.location", "location.country"), "Country")
        countries.append(c)
        w.fact(c, "location.location.containedby", pick(continents))
        w.fact(c, "location.country.currency_used", pick(currencies))
        langs = rng.sample(languages, rng.choice([1, 1, 2, 3]))
        w.fact(c, "location.country.official_language", langs[0])
        for l in langs:
            w.fact(l, "language.human_language.countries_spoken_in", c)
        w.fact(c, "location.country.form_of_government", pick(govs))
        w.cvt("population", place=c, number=w.lit(rng.randrange(300_000, 90_000_000)), year=w.lit(rng.randrange(2005, 2015)))
        w.cvt("gdp", country=c, amount=w.lit(rng.randrange(10**9, 10**12)), currency=currencies[-5], year=w.lit(rng.randrange(2008, 2015)))
        for _ in range(4):
            s = w.entity(("state", "jurisdiction", "place"), pick(N.STATE_FORMS).format(r=place_name().strip()),
                         ("location.location", "location.administrative_division"), "Administrative Division")
            states.append(s)
            w.fact(s, "location.location.containedby", c)
            for k in range(3):
                raw = place_name().strip()
                name = raw if rng.random() < 0.6 else f"{raw}, {w.names[s]}"
                ci = w.entity(("city", "jurisdiction", "place", "namesake"), name,
                              ("location.location", "location.citytown"), "City/Town/Village")
                cities.append(ci)
                w.fact(ci, "location.location.containedby", s)
                if rng.random() < 0.3:
                    w.fact(ci, "location.location.containedby", c)
                w.fact(ci, "location.location.time_zones", pick(zones))
                w.cvt("population", place=ci, number=w.lit(rng.randrange(2_000, 3_000_000)), year=w.lit(2010))
                w.cvt("geocode", place=ci, lat=w.lit(round(rng.uniform(-60, 70), 4)), lon=w.lit(round(rng.uniform(-170, 170), 4)))
                if k == 0 and len(states) % 4 == 1:
                    w.fact(c, "location.country.capital", ci)

    # people
    professions = w.pool("professions", N.PROFESSIONS)
    religions = w.pool("religions", N.RELIGIONS)
    ethnicities = w.pool("ethnicities", N.ETHNICITIES)
    genders = w.pool("genders", ["Male", "Female"])
    causes = w.pool("causes", N.CAUSES_OF_DEATH)
    roles = {"actor": 900, "director": 160, "athlete": 700, "politician": 300, "musician": 260, "author": 220,
             "business": 160, "other": 300}
    people: list[str] = []
    by_role: dict[str, list[str]] = {}
    prof_of = {"actor": ["Actor", "Voice Actor", "Comedian", "Model"], "director": ["Film director", "Screenwriter", "Film Producer"],
               "athlete": ["Athlete", "Football player", "Basketball player", "Baseball player", "Coach"],
               "politician": ["Politician", "Lawyer", "Diplomat", "Activist"], "musician": ["Singer", "Songwriter", "Musician", "Record producer", "Composer"],
               "author": ["Writer", "Novelist", "Poet", "Journalist"], "business": ["Businessperson", "Entrepreneur", "Engineer", "Economist"],
               "other": N.PROFESSIONS}
    for role, count in roles.items():
        for _ in range(n(count)):
            name = f"{pick(N.FIRST)} {pick(N.LAST)}{pick(N.SUFFIXES)}"
            p = w.entity(("person", role), name, ("people.person", "common.topic"), "Person")
            people.append(p)
            by_role.setdefault(role, []).append(p)
            born = pick(cities)
            w.fact(p, "people.person.place_of_birth", born)
            w.store.add(p, "people.person.date_of_birth", w.lit(_date(rng, 1920, 1995)))
            w.fact(p, "people.person.nationality", w.store.neighbors(w.store.one(born, "location.location.containedby"),
                                                                     "location.location.containedby")[0]
                   if rng.random() < 0.85 else pick(countries))
            w.fact(p, "people.person.gender", pick(genders))
            for prof in rng.sample(prof_of[role], rng.choice([1, 1, 2])):
                w.fact(p, "people.person.profession", professions[N.PROFESSIONS.index(prof)])
            if rng.random() < 0.25:
                w.fact(p, "people.person.religion", pick(religions))
            if rng.random() < 0.2:
                w.fact(p, "people.person.ethnicity", pick(ethnicities))
            if rng.random() < 0.3:
                for l in rng.sample(languages, rng.choice([1, 2])):
                    w.fact(p, "people.person.languages", l)
            for _ in range(rng.choice([0, 1, 1, 2])):
                w.cvt("place_lived", person=p, location=pick(cities), start=w.lit(rng.randrange(1950, 2012)))
            if rng.random() < 0.15:
                w.store.add(p, "type.object.type", w.lit("people.deceased_person"))
                w.fact(p, "people.deceased_person.place_of_death", pick(cities))
                w.fact(p, "people.deceased_person.cause_of_death", pick(causes))
                w.store.add(p, "people.deceased_person.date_of_death", w.lit(_date(rng, 1990, 2015)))
    for _ in range(n(500)):
        a, b = rng.sample(people, 2)
        w.cvt("marriage", spouse=[a, b], union=pick(w.pool("union", ["Marriage", "Domestic partnership"])),
              **{"from": w.lit(rng.randrange(1950, 2012))}, place=pick(cities))
    for _ in range(n(350)):
        parent, child = rng.sample(people, 2)
        w.fact(child, "people.person.parents", parent)
    for _ in range(n(200)):
        a, b = rng.sample(people, 2)
        w.cvt("sibling", sibling=[a, b])

    # organisations
    industries = w.pool("industries", N.INDUSTRIES)
    universities = []
    for _ in range(n(150)):
        city = pick(cities)
        name = pick(N.UNIVERSITY_FORMS).format(c=w.names[city].split(",")[0], p=pick(N.LAST))
        u = w.entity(("university", "org", "namesake"), name, ("education.educational_institution", "organization.organization"), "College/University")
        universities.append(u)
        w.fact(u, "location.location.containedby", city)
    for p in people:
        for _ in range(rng.choice([0, 1, 1, 2])):
            w.cvt("education", student=p, institution=pick(universities), degree=pick(w.pool("degrees", N.DEGREES)),
                  major=pick(w.pool("majors", N.MAJORS)), start=w.lit(rng.randrange(1950, 2010)))
    companies = []
    for _ in range(n(200)):
        name = pick(N.COMPANY_FORMS).format(a=pick(N.TITLE_WORDS + N.LAST), b=pick(N.LAST))
        co = w.entity(("company", "org"), name, ("organization.organization", "business.business_operation"), "Organization")
        companies.append(co)
        for f in rng.sample(by_role["business"] + people, rng.choice([1, 1, 2])):
            w.fact(co, "organization.organization.founders", f)
        city = pick(cities)
        w.cvt("address", organization=co, city=city, state=w.store.one(city, "location.location.containedby"),
              street=w.lit(f"{rng.randrange(1, 9000)} {pick(N.TITLE_WORDS)} Street, Suite {rng.randrange(1, 900)}"),
              postal=w.lit(str(rng.randrange(10000, 99999))))
        w.cvt("leadership", person=pick(by_role["business"] + people), organization=co,
              role=pick(w.pool("titles", N.JOB_TITLES)), **{"from": w.lit(rng.randrange(1980, 2014))})
        w.fact(co, "business.business_operation.industry", pick(industries))
        w.cvt("employees", company=co, number=w.lit(rng.randrange(10, 200_000)), year=w.lit(rng.randrange(2008, 2015)))
    for p in rng.sample(people, len(people) // 4):
        w.cvt("employment", person=p, company=pick(companies), title=pick(w.pool("titles", N.JOB_TITLES)),
              **{"from": w.lit(rng.randrange(1970, 2014))})

    # government
    parties = []
    for c in countries:
        for form in rng.sample(N.PARTY_FORMS, 3):
            parties.append(w.entity("party", form.format(c=w.names[c]), ("government.political_party",), "Political party"))
    offices = []
    for jur, forms in [(countries, N.OFFICE_FORMS["country"]), (states, N.OFFICE_FORMS["state"]),
                       (cities[::3], N.OFFICE_FORMS["city"])]:
        for j in jur:
            for form in forms[:2]:
                offices.append((w.entity("office", form.format(j=w.names[j]), ("government.government_office_or_title",),
                                         "Government Office or Title"), j))
    bodies = w.pool("bodies", N.GOVERNMENTAL_BODIES)
    for p in by_role["politician"]:
        for office, j in rng.sample(offices, rng.choice([1, 1, 2, 3])):
            start = rng.randrange(1960, 2012)
            w.cvt("position_held", holder=p, office=office, jurisdiction=j, body=pick(bodies),
                  **{"from": w.lit(start), "to": w.lit(start + rng.randrange(1, 9))})
        w.cvt("party_tenure", politician=p, party=pick(parties), **{"from": w.lit(rng.randrange(1960, 2010))})

    # films, characters, awards
    genres = w.pool("film_genres", N.FILM_GENRES, "Film genre")

    def title():
        return pick(N.TITLE_FORMS).format(a=pick(N.TITLE_WORDS), b=pick(N.TITLE_WORDS), p=w.names[pick(cities)].split(",")[0],
                                          q=pick(N.TITLE_WORDS))
    awards = [w.entity("award", form.format(n=nm), ("award.award_category",), "Award category")
              for nm in N.AWARD_NAMES for form in rng.sample(N.AWARD_FORMS, 5)]
    films = []
    for _ in range(n(800)):
        year = rng.randrange(1950, 2015)
        f = w.entity("film", title(), ("film.film",), "Film")
        if w.names[f].count("(") == 0 and rng.random() < 0.2:
            w.names[f] += f" ({year} film)"
        films.append(f)
        w.fact(f, "film.film.directed_by", pick(by_role["director"]))
        for x in rng.sample(by_role["director"] + by_role["author"], rng.choice([1, 2])):
            w.fact(f, "film.film.written_by", x)
        w.fact(f, "film.film.produced_by", pick(by_role["director"] + by_role["business"]))
        if rng.random() < 0.6:
            w.fact(f, "film.film.music", pick(by_role["musician"]))
        for g in rng.sample(genres, rng.choice([1, 2, 3])):
            w.fact(f, "film.film.genre", g)
        w.fact(f, "film.film.country", pick(countries))
        w.fact(f, "film.film.language", pick(languages[:12]))
        w.store.add(f, "film.film.initial_release_date", w.lit(f"{year}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"))
        w.fact(f, "film.film.featured_film_locations", pick(cities))
        w.fact(f, "film.film.production_companies", pick(companies))
        w.cvt("runtime", film=f, minutes=w.lit(rng.randrange(80, 190)), region=pick(countries))
        w.cvt("release", film=f, date=w.lit(f"{year}-{rng.randrange(1, 13):02d}-01"), region=pick(countries))
        if rng.random() < 0.5:
            w.cvt("money", film=f, amount=w.lit(rng.randrange(1, 300) * 10**6), currency=currencies[-5])
        for actor in rng.sample(by_role["actor"], rng.randrange(4, 9)):
            ch = w.entity("character", f"{pick(N.FIRST)} {pick(N.LAST)}" if rng.random() < 0.7 else
                          f"{pick(['Agent', 'Captain', 'Doctor', 'Mr.', 'Mrs.', 'Old', 'Young'])} {pick(N.LAST)}",
                          ("film.film_character",), "Film character")
            w.cvt("performance", actor=actor, film=f, character=ch,
                  **({"special": pick(w.pool("special", ["Voice", "Uncredited", "Cameo appearance"]))}
                     if rng.random() < 0.1 else {}))
    for a, b in zip(films, films[1:]):
        if rng.random() < 0.08:
            w.fact(a, "film.film.sequel", b)
    for _ in range(n(600)):
        winner = pick(by_role["actor"] + by_role["director"] + by_role["musician"] + by_role["author"])
        kind = "award_honor" if rng.random() < 0.5 else "award_nomination"
        role = "winner" if kind == "award_honor" else "nominee"
        w.cvt(kind, **{role: winner, "award": pick(awards), "year": w.lit(rng.randrange(1960, 2015)), "work": pick(films)})

    # television
    networks = [w.entity("network", x, ("tv.tv_network", "organization.organization"), "TV Network") for x in N.NETWORKS]
    programs = []
    for _ in range(n(150)):
        tp = w.entity("tv_program", title(), ("tv.tv_program",), "TV Program")
        programs.append(tp)
        w.fact(tp, "tv.tv_program.program_creator", pick(by_role["director"] + by_role["author"]))
        w.fact(tp, "tv.tv_program.genre", pick(w.pool("tv_genres", N.TV_GENRES, "TV Genre")))
        w.fact(tp, "tv.tv_program.country_of_origin", pick(countries))
        w.cvt("network", program=tp, network=pick(networks), **{"from": w.lit(rng.randrange(1960, 2014))})
        w.store.add(tp, "tv.tv_program.number_of_seasons", w.lit(rng.randrange(1, 15)))
        for actor in rng.sample(by_role["actor"], rng.randrange(3, 8)):
            ch = w.entity("character", f"{pick(N.FIRST)} {pick(N.LAST)}", ("tv.tv_character",), "TV Character")
            w.cvt("tv_appearance", actor=actor, series=tp, character=ch, **{"from": w.lit(rng.randrange(1960, 2014))})

    # sports
    leagues, teams, stadiums = {}, [], []
    for sport, positions in N.SPORTS.items():
        s = w.entity("sport", sport, ("sports.sport",), "Sport")
        leagues[sport] = (s, [w.entity("league", f"{pick(['Premier', 'National', 'Continental', 'United'])} "
                                       f"{sport.split()[-1].title()} League{suffix}", ("sports.sports_league",), "Sports League")
                              for suffix in ("", " (second division)")], w.pool("pos:" + sport, positions))
    architects = rng.sample(people, 30)
    for _ in range(n(120)):
        sport = pick(sorted(leagues))
        s_node, sport_leagues, positions = leagues[sport]
        city = pick(cities)
        team = w.entity(("team", "org"), f"{w.names[city].split(',')[0]} {pick(N.TEAM_NICKNAMES)}",
                        ("sports.sports_team",), "Sports Team")
        teams.append(team)
        w.fact(team, "sports.sports_team.sport", s_node)
        w.fact(team, "sports.sports_team.location", city)
        stadium = w.entity(("structure", "namesake"), f"{pick(N.LAST)} {pick(['Stadium', 'Arena', 'Park', 'Field', 'Centre'])}",
                           ("sports.sports_facility", "architecture.structure"), "Sports Facility")
        stadiums.append(stadium)
        w.fact(team, "sports.sports_team.arena_stadium", stadium)
        w.fact(stadium, "location.location.containedby", city)
        w.fact(stadium, "architecture.structure.architect", pick(architects))
        w.cvt("dated_location", team=team, venue=stadium, **{"from": w.lit(rng.randrange(1900, 2010))})
        w.cvt("league", team=team, league=pick(sport_leagues))
        w.cvt("coach_tenure", coach=pick(by_role["athlete"]), team=team,
              position=pick(w.pool("coach_pos", ["Head coach", "Manager", "Assistant coach"])),
              **{"from": w.lit(rng.randrange(1990, 2014))})
        if rng.random() < 0.4:
            event = w.entity("event", f"{rng.randrange(1960, 2014)} {w.names[sport_leagues[0]]} Finals",
                             ("sports.sports_championship_event",), "Sports Championship Event")
            w.fact(team, "sports.sports_team.championships", event)
        for player in rng.sample(by_role["athlete"], 10):
            start = rng.randrange(1980, 2012)
            w.cvt("roster", player=player, team=team, position=pick(positions), **{"from": w.lit(start)},
                  to=w.lit(start + rng.randrange(1, 8)), number=w.lit(rng.randrange(1, 99)))
    for p in by_role["athlete"]:
        teams_of = w.store.neighbors(p, "sports.pro_athlete.teams")
        if teams_of:
            sport = w.store.one(w.store.one(teams_of[0], "sports.sports_team_roster.team"), "sports.sports_team.sport")
            w.cvt("sport_played", athlete=p, sport=sport, start=w.lit(rng.randrange(1975, 2010)))

    # music and books
    labels = [w.entity(("label", "org"), x, ("music.record_label",), "Record label") for x in N.RECORD_LABELS]
    mgenres = w.pool("music_genres", N.MUSIC_GENRES, "Musical genre")
    artists = list(by_role["musician"])
    for m in artists:
        w.kinds.setdefault("artist", []).append(m)
    for _ in range(n(60)):
        band = w.entity(("band", "artist"), f"The {pick(N.TITLE_WORDS)} {pick(['Brothers', 'Collective', 'Band', 'Project', 'Ensemble'])}"
                        if rng.random() < 0.6 else pick(N.TITLE_WORDS) + pick(["", "s", " & the " + pick(N.TITLE_WORDS) + "s"]),
                        ("music.musical_group", "music.artist"), "Musical Group")
        artists.append(band)
        for member in rng.sample(by_role["musician"] + by_role["other"], rng.randrange(2, 6)):
            w.cvt("membership", member=member, group=band, role=pick(w.pool("instruments", N.INSTRUMENTS)),
                  start=w.lit(rng.randrange(1960, 2012)))
    for a in artists:
        for g in rng.sample(mgenres, rng.choice([1, 2])):
            w.fact(a, "music.artist.genre", g)
        w.fact(a, "music.artist.label", pick(labels))
        w.fact(a, "music.artist.origin", pick(cities))
        for _ in range(rng.randrange(1, 4)):
            al = w.entity("album", title(), ("music.album",), "Musical Album")
            w.fact(al, "music.album.artist", a)
            w.store.add(al, "music.album.release_date", w.lit(_date(rng, 1960, 2015)))
            w.fact(al, "music.album.genre", pick(mgenres))
    bgenres = w.pool("book_genres", N.BOOK_GENRES, "Literary Genre")
    for _ in range(n(400)):
        bk = w.entity("book", title(), ("book.written_work", "book.book"), "Book")
        for au in rng.sample(by_role["author"], rng.choice([1, 1, 1, 2])):
            w.fact(bk, "book.written_work.author", au)
        w.fact(bk, "book.book.genre", pick(bgenres))
        w.store.add(bk, "book.written_work.date_of_first_publication", w.lit(_date(rng, 1850, 2015)))

    # languages, structures, namesakes
    for l in languages:
        w.fact(l, "language.human_language.language_family", pick(w.pool("families", N.LANGUAGE_FAMILIES)))
        w.fact(l, "language.human_language.writing_system", pick(w.pool("scripts", N.WRITING_SYSTEMS)))
    for city in rng.sample(cities, len(cities) // 3):
        att = w.entity(("structure", "attraction"), f"{pick(['Old', 'Royal', 'Grand', 'Saint'])} {pick(N.TITLE_WORDS)} "
                       f"{pick(['Cathedral', 'Museum', 'Tower', 'Bridge', 'Gardens', 'Palace'])}",
                       ("travel.tourist_attraction", "architecture.structure"), "Tourist attraction")
        w.fact(att, "travel.tourist_attraction.near_travel_destination", city)
        w.fact(att, "architecture.structure.architect", pick(architects))
        w.store.add(att, "architecture.structure.opened", w.lit(rng.randrange(1100, 2010)))
    for x in rng.sample(w.of("namesake"), len(w.of("namesake")) // 6):
        w.fact(x, "symbols.namesake.named_after", pick(people))
    _long_tail(w, rng)
    return w


def _long_tail(w: World, rng: random.Random) -> None:
    """The facts real dumps are full of: webpages, aliases, notable-for, base.* properties."""
    families = {"person": w.of("person"), "place": w.of("place"), "work": w.of("film") + w.of("book") +
                w.of("album") + w.of("tv_program"), "org": w.of("org")}
    cats = w.pool("webcats", N.WEBPAGE_CATEGORIES)
    for family, entities in families.items():
        relations = LONG_TAIL[family]
        for e in entities:
            for r in rng.sample(relations, rng.randrange(3, 10)):
                if r.endswith("#"):
                    w.store.add(e, r[:-1], w.lit(f"{r[:-1].rsplit('.', 1)[-1]} {rng.randrange(1, 10_000)}"))
                else:
                    pool = w.pool("tail:" + r, [f"{r.rsplit('.', 1)[-1].replace('_', ' ').capitalize()} {k}"
                                                for k in range(1, 9)])
                    w.store.add(e, r, rng.choice(pool))
            for r in rng.sample(COMMON[3:], rng.randrange(1, 4)):
                w.store.add(e, r.rstrip("#"), w.lit(f"{w.names[e]} {r.rstrip('#').rsplit('.', 1)[-1]}"))
            if rng.random() < 0.4:
                w.cvt("webpage", topic=e, uri=w.lit(f"http://www.example.org/{rng.randrange(10**6)}"),
                      category=rng.choice(cats))
            if rng.random() < 0.5:
                w.store.add(e, "common.topic.notable_for", rng.choice(w.pool("notable_for", [
                    "Film", "Music", "Politics", "Sports", "Literature", "Television", "Business", "Geography"])))


# -- questions ----------------------------------------------------------------------------------
def walk(w: World, topic: str, hops: list[str]) -> set[str]:
    """The nodes a question's relation path reaches from `topic` (a CVT hop passes through the
    compound value; the topic itself is never its own answer)."""
    frontier = {topic}
    for hop in hops:
        steps = hop.split(">")
        for s in steps:
            frontier = {m for x in sorted(frontier) for m in w.store.neighbors(x, s)}
        frontier.discard(topic)
    return frontier


def topic_pools(w: World) -> list[list[tuple[str, list[str]]]]:
    """Per question of QUESTIONS, (topic, answers) of every entity it can be asked about, seeded order."""
    out = []
    for k, (hops, kind, _) in enumerate(QUESTIONS):
        found = []
        for t in w.of(TOPIC_TYPES[kind]):
            answers = walk(w, t, hops)
            if 0 < len(answers) <= MAX_ANSWERS and not any(a.startswith("m.") and a not in w.names for a in answers):
                found.append((t, sorted(answers)))
        random.Random(k).shuffle(found)
        out.append(found)
    return out


def draw_questions(w: World, counts: dict, seed: int) -> dict[str, list[dict]]:
    """{split: [question]}: test evenly over the question relations (drawn first, its (relation,
    topic) pairs kept out of train and dev), train and dev on a Zipf curve over them, with
    `counts["unseen"]` relations never asked in train or dev."""
    rng = random.Random(seed + 17)
    pools = topic_pools(w)
    usable = [k for k, p in enumerate(pools) if len(p) >= 3]
    reserved: set[tuple[int, str]] = set()
    splits: dict[str, list[dict]] = {"test": []}
    per = counts["test"] // len(usable)
    for j, k in enumerate(usable):
        for topic, answers in pools[k][: per + (1 if j < counts["test"] % len(usable) else 0)]:
            reserved.add((k, topic))
            splits["test"].append(_question(w, rng, k, topic, answers))
    rng.shuffle(splits["test"])
    order = list(usable)
    rng.shuffle(order)
    asked = order[: len(order) - counts["unseen"]]
    for split in ("train", "dev"):
        rows = []
        for k, n in zip(asked, zipf_counts(len(asked), counts[split], None, s=1.0, minimum=1 if split == "train" else 0)):
            free = [x for x in pools[k] if (k, x[0]) not in reserved] or pools[k]
            for _ in range(n):
                rows.append(_question(w, rng, k, *rng.choice(free)))
        rng.shuffle(rows)
        splits[split] = rows
    for split, rows in splits.items():
        for i, r in enumerate(rows):
            r["id"] = f"fbsg-{split}-{i:05d}"
    return splits


def _question(w: World, rng: random.Random, k: int, topic: str, answers: list[str]) -> dict:
    hops, _, spec = QUESTIONS[k]
    text = rng.choice(spec.split("|")).replace("{X}", w.names[topic])
    if rng.random() < 0.6:  # WebQSP's questions are mostly lower case
        text = text.lower()
    return {"question": text + ("?" if rng.random() < 0.5 else ""), "topic": topic, "answers": answers, "q": k}


# -- subgraphs ----------------------------------------------------------------------------------
class Neighbourhoods:
    """The triples around an entity, as RoG's per-question graphs hold them: two hops (compound
    values passed through within a hop), at most `cap` triples read per node (hubs sampled),
    padded from the third hop to the question's size."""

    def __init__(self, w: World, cap: int = 45, topic_cap: int = 400):
        self.w, self.cap, self.topic_cap = w, cap, topic_cap
        self.triples = w.store.triples
        self.index = {t: i for i, t in enumerate(self.triples)}
        self.adj: dict[str, list[int]] = {}
        for i, (h, _, t) in enumerate(self.triples):
            self.adj.setdefault(h, []).append(i)
            if not t.startswith("lit:"):
                self.adj.setdefault(t, []).append(i)

    def is_cvt(self, node: str) -> bool:
        return node.startswith("m.") and node not in self.w.names

    def around(self, topic: str, target: int, rng: random.Random) -> list[int]:
        """Triple indices by distance from `topic`: its own, then the second hop's (read until
        twice `target`, so there is some to sample from), then the third's (until `target`)."""
        seen, frontier, picked = {topic}, [topic], []
        chosen: set[int] = set()
        for hop, enough in enumerate((None, 2 * target, target)):
            nxt, stack = [], list(frontier)
            while stack and (enough is None or len(picked) < enough):
                x = stack.pop()
                edges = self.adj.get(x, [])
                cap = self.topic_cap if x == topic else self.cap
                if len(edges) > cap:
                    edges = rng.sample(edges, cap)
                for i in edges:
                    if i in chosen:
                        continue
                    chosen.add(i)
                    picked.append(i)
                    h, _, t = self.triples[i]
                    other = t if h == x else h
                    if other in seen or other.startswith("lit:"):
                        continue
                    seen.add(other)
                    (stack if self.is_cvt(other) else nxt).append(other)
            if len(picked) >= target:
                break
            frontier = nxt
            rng.shuffle(frontier)
        return picked

    def path_triples(self, topic: str, hops: list[str], answers: list[str]) -> set[int]:
        """The triples of every walk of the question's path from the topic to an answer."""
        walks = [[topic]]
        ends: list[list[tuple[int, str]]] = [[]]
        for hop in hops:
            for step in hop.split(">"):
                nxt, nxt_ends = [], []
                for nodes, used in zip(walks, ends):
                    for y in self.w.store.neighbors(nodes[-1], step):
                        nxt.append(nodes + [y])
                        nxt_ends.append(used + [(self.index[(nodes[-1], step, y)], y)])
                walks, ends = nxt, nxt_ends
        goal = set(answers)
        return {i for nodes, used in zip(walks, ends) if nodes[-1] in goal for i, _ in used}


def subgraph(nb: Neighbourhoods, q: dict, rng: random.Random, unreachable: bool) -> list[int]:
    """Triple indices of a question's graph: the answer paths (unless `unreachable`: then every
    triple touching an answer is gone), the topic's own triples, then its neighbourhood, sampled
    or padded to a size between 1,000 and 2,800."""
    target = rng.randint(1000, 2800)
    topic = q["topic"]
    keep = set() if unreachable else nb.path_triples(topic, QUESTIONS[q["q"]][0], q["answers"])
    picked = nb.around(topic, target, rng)
    gone = set(q["answers"]) if unreachable else set()
    if gone:
        picked = [i for i in picked if nb.triples[i][0] not in gone and nb.triples[i][2] not in gone]
    first = {i for i in picked if topic in (nb.triples[i][0], nb.triples[i][2])}
    chosen = keep | first
    rest = [i for i in picked if i not in chosen]
    room = max(0, target - len(chosen))
    chosen |= set(rest if len(rest) <= room else rng.sample(rest, room))
    while len(chosen) < 1000:  # a small neighbourhood: facts from anywhere, as padding
        i = rng.randrange(len(nb.triples))
        if nb.triples[i][0] not in gone and nb.triples[i][2] not in gone:
            chosen.add(i)
    out = sorted(chosen)
    rng.shuffle(out)
    return out


def rog_row(w: World, nb: Neighbourhoods, q: dict, graph: list[int]) -> dict:
    answers = [w.shown(a) for a in q["answers"]]
    return {"id": q["id"], "question": q["question"], "answer": answers, "q_entity": [w.shown(q["topic"])],
            "a_entity": answers, "graph": [[w.shown(h), r, w.shown(t)] for h, r, t in (nb.triples[i] for i in graph)],
            "choices": []}


def generate(out: str | Path, scale: float = 1.0, seed: int = 0, questions: dict | None = None,
             nsm: bool = False) -> dict[str, Path]:
    """Write the three splits, the gold paths and stats.json under `out`; returns {name: path}.
    `questions`: {"train": 700, "dev": 150, "test": 300, "unseen": 4} by default (scaled below 1)."""
    out = Path(out)
    (out / "gold").mkdir(parents=True, exist_ok=True)
    counts = {"train": 700, "dev": 150, "test": 300, "unseen": 4}
    if questions is None and scale < 1:
        counts = {k: max(2, round(v * scale)) if k != "unseen" else v for k, v in counts.items()}
    counts.update(questions or {})
    w = build(scale, seed)
    nb = Neighbourhoods(w)
    splits = draw_questions(w, counts, seed)
    rng = random.Random(seed + 99)
    paths, summary = {}, {"scale": scale, "seed": seed, "world_triples": len(w.store.triples),
                          "world_entities": len(w.names), "question_relations": len(QUESTIONS), "splits": {}}
    relations_seen: set[str] = set()
    train_counts = Counter(q["q"] for q in splits["train"])
    records = {}
    for split in ("train", "dev", "test"):
        rows, gold, sizes, rel_counts, records[split] = [], [], [], [], []
        for q in splits[split]:
            cut = rng.random() < UNREACHABLE
            graph = subgraph(nb, q, rng, cut)
            rows.append(json.dumps(rog_row(w, nb, q, graph), ensure_ascii=False))
            rels = {nb.triples[i][1] for i in graph}
            relations_seen |= rels
            sizes.append(len(graph))
            rel_counts.append(len(rels))
            hops = QUESTIONS[q["q"]][0]
            gold.append({"id": q["id"], "path": hops, "hops": len(hops), "cvt": any(">" in h for h in hops),
                         "reachable": not cut, "train_count": train_counts[q["q"]]})
            if nsm:
                records[split].append({"id": q["id"], "question": q["question"], "topic": q["topic"],
                                       "answers": q["answers"], "subgraph": [nb.triples[i] for i in graph]})
        paths[split] = out / f"{split}.jsonl"
        paths[split].write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths[f"gold_{split}"] = out / "gold" / f"{split}.jsonl"
        paths[f"gold_{split}"].write_text("".join(json.dumps(g) + "\n" for g in gold), encoding="utf-8")
        sizes.sort()
        rel_counts.sort()
        summary["splits"][split] = {
            "questions": len(rows), "unreachable": sum(not g["reachable"] for g in gold),
            "cvt_questions": sum(g["cvt"] for g in gold), "by_hops": dict(Counter(g["hops"] for g in gold)),
            "triples_per_subgraph": {"min": sizes[0], "median": sizes[len(sizes) // 2], "max": sizes[-1]},
            "relations_per_subgraph": {"min": rel_counts[0], "median": rel_counts[len(rel_counts) // 2],
                                       "max": rel_counts[-1]},
            "question_relations": len({"+".join(g["path"]) for g in gold})}
    summary["relations_in_subgraphs"] = len(relations_seen)
    summary["test_relations_without_training"] = sorted({"+".join(QUESTIONS[q["q"]][0]) for q in splits["test"]
                                                         if not train_counts[q["q"]]})
    summary["train_questions_per_relation"] = {"+".join(QUESTIONS[k][0]): c for k, c in train_counts.most_common()}
    if nsm:
        from rra.data.subgraph_generator import write_nsm

        names = {e: w.shown(e) for e in w.names}
        for split_records in records.values():
            for r in split_records:
                for h, _, t in r["subgraph"]:
                    for x in (h, t):
                        if x.startswith("lit:"):
                            names[x] = x[4:]
        paths.update({f"nsm_{k}": v for k, v in write_nsm(records, names, out / "nsm").items()})
    paths["stats"] = out / "stats.json"
    write_stats(paths["stats"], summary)
    return paths


def parser():
    """The command line of `python -m bench.kgs.freebase_subgraphs`."""
    ap = generator_parser("freebase_subgraphs", __doc__, "size of the world (and, below 1, of the splits)")
    ap.add_argument("--nsm", action="store_true", help="also write NSM / GNN-RAG files under DIR/nsm")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    paths = generate(args.out, args.scale, args.seed, nsm=args.nsm)
    print(json.dumps({k: str(v) for k, v in paths.items()}, indent=1))


if __name__ == "__main__":
    main()
