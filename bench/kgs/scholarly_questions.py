"""Chain questions (1-3 hops) on the scholarly KG, phrased as people ask them.

Each path below has everyday phrasings that vary word order and vocabulary; the topic entity's
label goes in verbatim, never in brackets. The phrasings after `|` in a path's list are *held
out*: used only in test, so a share of test questions (about 15% of those on trained paths) asks
in words training never used. Training questions follow Zipf-like counts over the paths (a few
with hundreds of questions, many with 3-20); the paths that use a relation of `UNSEEN` have no
training question at all (about 10% of the test paths). Train and val carry answers only; test
carries the gold `relation_path`, `hops`, `shape: "chain"` and `extra` = {seen_relation,
seen_phrasing, relation_train_count, path_train_count, template}. The gold paths of train and val
are written apart, to gold/{train,val}.jsonl, which no loader reads.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from bench.kgs.common import fill, run_gold, surface, write_jsonl, zipf_counts

# Relations no training question uses (so a retriever must read them by name).
UNSEEN = ("issn", "designedBy", "firstReleased", "datasetLicence", "fundingAmount", "orcid", "nativeLanguage",
          "headquarters", "softwareLicence", "population")
MAX_ANSWERS = 30
HELD_OUT_SHARE = 0.15  # of a trained path's test questions asked in a held-out phrasing (where it has one)
# the paths people ask most (the head of the Zipf curve), by (path, topic kind)
COMMON = {(("author",), "Paper"), (("^author",), "Person"), (("affiliation",), "Person"),
          (("publicationYear",), "Paper"), (("presentedAt",), "Paper"), (("mainTopic",), "Paper"),
          (("doctoralAdvisor",), "Person"), (("country",), "Institution"), (("citationCount",), "Paper"),
          (("birthPlace",), "Person"), (("inCountry",), "City"), (("researchInterest",), "Person")}

# (relation path, topic kind, "phrasing | phrasing || held-out phrasing | ...")
PATHS = [
    # papers, 1 hop
    (["author"], "Paper", "who wrote {X}|{X} was written by whom|name the authors of {X}|which researchers authored {X}"
     "|who are the authors of the paper {X}||whose work is {X}|{X}: who is behind this paper"),
    (["presentedAt"], "Paper", "at which conference was {X} presented|where did {X} appear|{X} was presented at what "
     "conference|which conference published {X}||which venue accepted {X}"),
    (["publishedInJournal"], "Paper", "which journal published {X}|in what journal did {X} appear|{X} came out in "
     "which journal||where was the article {X} printed"),
    (["publicationYear"], "Paper", "when was {X} published|in what year did {X} come out|{X} appeared in which year"
     "|what is the publication year of {X}|what year is {X} from||{X} dates from what year"),
    (["publicationDate"], "Paper", "on what date was {X} published|what is the exact publication date of {X}"
     "|{X} was published on which day||give the day {X} was released"),
    (["citationCount"], "Paper", "how many citations does {X} have|what is the citation count of {X}"
     "|how often has {X} been cited||{X} has been cited how many times"),
    (["pageCount"], "Paper", "how many pages does {X} have|what is the page count of {X}|how long is {X} in pages"),
    (["doi"], "Paper", "what is the DOI of {X}|give me the DOI for {X}||{X} has which digital object identifier"),
    (["mainTopic"], "Paper", "what is {X} about|what topic does {X} address|which research area does {X} belong to"
     "|what subject does {X} cover||{X} deals with which field"),
    (["cites"], "Paper", "which papers does {X} cite|what works are referenced by {X}|{X} cites which papers"
     "||what does {X} build on in its references"),
    (["^cites"], "Paper", "which papers cite {X}|what cites {X}|{X} is cited by which papers||who refers to {X}"),
    (["usesDataset"], "Paper", "which datasets does {X} use|what data was {X} evaluated on|{X} experiments on which "
     "dataset||what benchmark does {X} report results on"),
    (["paperLanguage"], "Paper", "in which language is {X} written|what language is the paper {X} in"),
    (["resultOf"], "Paper", "which project produced {X}|{X} is an output of which project|what project funded the "
     "work in {X}||under which grant project was {X} written"),
    (["honouredWith"], "Paper", "what award did the paper {X} receive|which prize went to {X}"),
    # people, 1 hop
    (["^author"], "Person", "what did {X} write|which papers has {X} authored|list the publications of {X}"
     "|{X} is an author of which papers|name papers by {X}||show me the bibliography of {X}"),
    (["affiliation"], "Person", "where does {X} work|which institution is {X} affiliated with|{X} is employed where"
     "|what is {X}'s affiliation|at which university is {X}||{X} holds a position at which institution"),
    (["doctoralAdvisor"], "Person", "who was {X}'s doctoral advisor|who supervised {X}'s PhD|{X} did a PhD under whom"
     "|who was the thesis advisor of {X}||who mentored {X} through the doctorate"),
    (["^doctoralAdvisor"], "Person", "whose PhD did {X} supervise|which students did {X} advise|who were the "
     "doctoral students of {X}||who got a doctorate under {X}"),
    (["almaMater"], "Person", "where did {X} study|which university did {X} graduate from|{X} is an alumnus of which "
     "institution||where was {X} educated"),
    (["birthPlace"], "Person", "where was {X} born|what is {X}'s city of birth|{X} was born in which city"
     "||what is the hometown of {X}"),
    (["nationality"], "Person", "what nationality is {X}|which country is {X} a citizen of|{X} holds the citizenship "
     "of which country||what passport does {X} hold"),
    (["birthDate"], "Person", "when was {X} born|what is the date of birth of {X}|{X}'s birthday is on which date"),
    (["hIndex"], "Person", "what is the h-index of {X}|{X} has what h-index|how high is {X}'s h-index"
     "||what Hirsch index does {X} have"),
    (["orcid"], "Person", "what is the ORCID iD of {X}|give the ORCID of {X}|{X}'s ORCID identifier"),
    (["memberOf"], "Person", "which societies is {X} a member of|what learned societies does {X} belong to"
     "||{X} has joined which associations"),
    (["researchInterest"], "Person", "what does {X} research|what are {X}'s research interests|what field does {X} "
     "work in|{X} works on what topics||what is the research focus of {X}"),
    (["awardReceived"], "Person", "what awards has {X} won|which prizes did {X} receive|{X} was honoured with which "
     "award"),
    (["worksInDepartment"], "Person", "which department does {X} belong to|in what department does {X} work"
     "||{X} is on the faculty of which department"),
    (["nativeLanguage"], "Person", "what is {X}'s native language|what is the mother tongue of {X}|which language "
     "did {X} grow up speaking"),
    (["^developer"], "Person", "what software has {X} developed|which tools did {X} build|{X} is a developer of which "
     "software||which code bases does {X} maintain"),
    (["^creator"], "Person", "which datasets did {X} create|what data sets were built by {X}"),
    (["^principalInvestigator"], "Person", "which projects does {X} lead|what projects is {X} the PI of"
     "|{X} heads which research projects"),
    (["^editorInChief"], "Person", "which journal does {X} edit|{X} is editor-in-chief of which journal"),
    # institutions, departments, places
    (["locatedIn"], "Institution", "in which city is {X}|where is {X} located|{X} is in what city"
     "||what town is home to {X}"),
    (["country"], "Institution", "in what country is {X}|which country is {X} in|{X} is in which country"
     "|in which country is {X} located||{X} belongs to the academic system of which country"),
    (["foundingYear"], "Institution", "when was {X} founded|in what year was {X} established|what is the "
     "founding year of {X}||since what year has {X} existed"),
    (["^affiliation"], "Institution", "who works at {X}|which researchers are affiliated with {X}|name people "
     "employed by {X}||who is on the staff of {X}"),
    (["^partOf"], "Institution", "what departments does {X} have|which departments are part of {X}"),
    (["partOf"], "Department", "which institution is the {X} part of|{X} belongs to which university"),
    (["headOfDepartment"], "Department", "who heads the {X}|who is the head of {X}|who chairs the {X}"),
    (["inCountry"], "City", "which country is {X} in|{X} is a city in which country|in what country is the city "
     "of {X}||{X} lies in which country"),
    (["population"], "City", "what is the population of {X}|how many people live in {X}|how big is {X} by population"),
    (["^locatedIn"], "City", "which universities are in {X}|what institutions are located in {X}"
     "||where can one study in {X}"),
    (["onContinent"], "Country", "which continent is {X} on|{X} is on what continent|on which continent is {X}"),
    (["capital"], "Country", "what is the capital of {X}|which city is the capital of {X}|{X}'s capital is what"
     "||where is the seat of government of {X}"),
    (["officialLanguage"], "Country", "what language is spoken in {X}|what is the official language of {X}"
     "|which languages are official in {X}||what do people speak in {X}"),
    (["^country"], "Country", "which institutions are in {X}|name universities in {X}|what research institutions "
     "does {X} have"),
    # venues, journals, publishers, topics, awards, societies
    (["organiser"], "Conference", "who organises {X}|which society runs {X}|{X} is organised by whom"
     "||who is behind the {X} series"),
    (["hostCity"], "Conference", "where is {X} held|in which city does {X} take place|{X} takes place in what city"),
    (["coversTopic"], "Conference", "what topics does {X} cover|which areas are in scope for {X}"),
    (["^presentedAt"], "Conference", "which papers were presented at {X}|what was published at {X}"
     "|list papers from {X}||what appeared in the proceedings of {X}"),
    (["publisher"], "Journal", "who publishes {X}|which publisher puts out {X}|{X} is published by which house"),
    (["editorInChief"], "Journal", "who is the editor-in-chief of {X}|who edits {X}|{X} is edited by whom"
     "||who runs the editorial board of {X}"),
    (["issn"], "Journal", "what is the ISSN of {X}|give the ISSN for {X}"),
    (["scope"], "Journal", "what is the scope of {X}|which subjects does {X} publish on"),
    (["headquarters"], "Publisher", "where is {X} headquartered|in which city is {X} based"),
    (["headquarters"], "Society", "where is the {X} headquartered|in which city does the {X} have its seat"),
    (["foundingYear"], "Society", "when was the {X} founded|in what year was the {X} established"),
    (["broaderTopic"], "Topic", "{X} is a subfield of what|what is the parent field of {X}|which broader area "
     "includes {X}||{X} falls under which discipline"),
    (["^broaderTopic"], "Topic", "what are the subfields of {X}|which areas belong to {X}"),
    (["conferredBy"], "Award", "who awards the {X}|which society gives out the {X}|the {X} is conferred by whom"),
    (["^awardReceived"], "Award", "who has won the {X}|who received the {X}|name the winners of the {X}"
     "||who has been honoured with the {X}"),
    # projects, funders, datasets, software, programming languages
    (["funder"], "Project", "who funds {X}|which agency finances {X}|{X} is funded by whom||where does the money "
     "for {X} come from"),
    (["principalInvestigator"], "Project", "who leads {X}|who is the PI of {X}|who is the principal investigator "
     "of {X}"),
    (["hostInstitution"], "Project", "which institution hosts {X}|where is {X} based|{X} is hosted by which "
     "university"),
    (["startDate"], "Project", "when did {X} start|what is the start date of {X}|{X} began on what date"),
    (["fundingAmount"], "Project", "what is the budget of {X}|how much funding did {X} get|how much money was "
     "awarded to {X}"),
    (["basedIn"], "Funder", "which country is the {X} based in|where is the {X} from"),
    (["creator"], "Dataset", "who created {X}|who built the dataset {X}|{X} was made by whom||who compiled {X}"),
    (["datasetLicence"], "Dataset", "under which licence is {X} released|what is the licence of the dataset {X}"),
    (["about"], "Dataset", "what is the dataset {X} about|which topic does {X} cover"),
    (["^usesDataset"], "Dataset", "which papers use {X}|what papers evaluate on {X}|{X} is used by which papers"),
    (["developer"], "Software", "who developed {X}|who wrote the software {X}|{X} was developed by whom|who are "
     "the developers of {X}||who maintains {X}"),
    (["programmingLanguage"], "Software", "what language is {X} written in|which programming language is {X} "
     "implemented in|{X} is coded in what language||what is {X} programmed in"),
    (["softwareLicence"], "Software", "what licence does {X} use|under which licence is {X} distributed"),
    (["describedIn"], "Software", "which paper describes {X}|where is {X} described|what is the reference paper "
     "for {X}||what should one cite for {X}"),
    (["designedBy"], "ProgrammingLanguage", "who designed {X}|who created the programming language {X}"),
    (["firstReleased"], "ProgrammingLanguage", "when did {X} first appear|in what year was {X} first released"),
    # 2 hops
    (["author", "affiliation"], "Paper", "where do the authors of {X} work|which institutions are the authors of "
     "{X} from|the authors of {X} are affiliated with which institutions||what are the affiliations behind {X}"),
    (["author", "nationality"], "Paper", "what nationalities do the authors of {X} have|which countries are the "
     "authors of {X} citizens of"),
    (["author", "doctoralAdvisor"], "Paper", "who advised the authors of {X}|who were the doctoral advisors of the "
     "people who wrote {X}"),
    (["doctoralAdvisor", "affiliation"], "Person", "where does the advisor of {X} work|{X}'s doctoral advisor is "
     "employed where|at which institution does {X}'s PhD supervisor work|what is the affiliation of {X}'s advisor"
     "||the person who supervised {X} works at which university"),
    (["doctoralAdvisor", "hIndex"], "Person", "what is the h-index of {X}'s advisor|how high is the h-index of the "
     "person who supervised {X}"),
    (["affiliation", "country"], "Person", "in which country does {X} work|{X} works in what country|what country "
     "is {X}'s institution in||where, country-wise, is {X} employed"),
    (["affiliation", "locatedIn"], "Person", "in which city does {X} work|{X} works in what city|what city is "
     "{X}'s employer in"),
    (["presentedAt", "hostCity"], "Paper", "in which city was {X} presented|where was the conference that "
     "accepted {X} held"),
    (["presentedAt", "organiser"], "Paper", "which society organises the conference where {X} appeared|who runs "
     "the conference that published {X}"),
    (["publishedInJournal", "publisher"], "Paper", "who published the journal that {X} appeared in|which "
     "publisher is behind the journal of {X}"),
    (["^author", "presentedAt"], "Person", "at which conferences has {X} presented|where has {X} published "
     "conference papers|which conferences did {X} present at||{X} has given talks at which conferences"),
    (["^author", "mainTopic"], "Person", "what topics has {X} written about|on which subjects has {X} published"
     "|what do {X}'s papers cover"),
    (["^author", "publishedInJournal"], "Person", "in which journals has {X} published|which journals carried "
     "articles by {X}"),
    (["birthPlace", "inCountry"], "Person", "in which country was {X} born|{X} was born in what country"
     "|what is the country of birth of {X}"),
    (["hostCity", "inCountry"], "Conference", "in which country is {X} held|{X} takes place in what country"),
    (["describedIn", "presentedAt"], "Software", "at which conference was the paper describing {X} presented"
     "|where was {X} presented"),
    (["developer", "affiliation"], "Software", "where do the developers of {X} work|which institutions are the "
     "developers of {X} affiliated with"),
    (["principalInvestigator", "affiliation"], "Project", "where does the PI of {X} work|which institution is the "
     "leader of {X} affiliated with"),
    (["^doctoralAdvisor", "affiliation"], "Person", "where do the students of {X} work|where are {X}'s former "
     "doctoral students employed now"),
    (["editorInChief", "affiliation"], "Journal", "where does the editor of {X} work|the editor-in-chief of {X} is "
     "affiliated with which institution"),
    (["country", "capital"], "Institution", "what is the capital of the country where {X} is|{X} is in a country "
     "whose capital is what"),
    (["creator", "affiliation"], "Dataset", "where does the creator of {X} work|which institution built {X}"),
    (["usesDataset", "creator"], "Paper", "who created the datasets used in {X}|who built the data that {X} "
     "evaluates on"),
    (["^awardReceived", "affiliation"], "Award", "where do the winners of the {X} work|at which institutions "
     "are the recipients of the {X}"),
    (["hostInstitution", "country"], "Project", "in which country is {X} hosted|{X} runs in what country"),
    (["partOf", "country"], "Department", "in which country is the {X}|the {X} is in what country"),
    (["funder", "basedIn"], "Project", "in which country is the funder of {X} based|which country funds {X}"),
    (["conferredBy", "headquarters"], "Award", "where is the society that gives the {X} based|in which city is "
     "the body that awards the {X}"),
    (["describedIn", "publicationYear"], "Software", "when was the paper on {X} published|in what year was {X} "
     "first described"),
    (["affiliation", "foundingYear"], "Person", "when was the institution where {X} works founded|how old is "
     "{X}'s university, what year was it founded"),
    # 3 hops
    (["author", "affiliation", "country"], "Paper", "in which countries are the authors of {X} based|the "
     "authors of {X} work in what countries||which countries contributed authors to {X}"),
    (["doctoralAdvisor", "affiliation", "country"], "Person", "in which country does {X}'s advisor work|the "
     "doctoral advisor of {X} works in what country"),
    (["author", "doctoralAdvisor", "affiliation"], "Paper", "where do the advisors of the authors of {X} work"
     "|at which institutions are the doctoral advisors of {X}'s authors employed"),
    (["^author", "presentedAt", "hostCity"], "Person", "in which cities has {X} presented papers|where has {X} "
     "travelled to present at conferences"),
    (["describedIn", "author", "affiliation"], "Software", "where do the authors of the paper describing {X} "
     "work|which institutions wrote the reference paper of {X}"),
    (["principalInvestigator", "affiliation", "locatedIn"], "Project", "in which city does the PI of {X} work"
     "|the leader of {X} works in what city"),
    (["birthPlace", "inCountry", "onContinent"], "Person", "on which continent was {X} born|{X} was born on what "
     "continent"),
    (["editorInChief", "affiliation", "country"], "Journal", "in which country does the editor of {X} work|the "
     "editor-in-chief of {X} works in what country"),
    (["presentedAt", "hostCity", "inCountry"], "Paper", "in which country was {X} presented|{X} was presented "
     "in what country||which country hosted the conference of {X}"),
    (["hostCity", "inCountry", "onContinent"], "Conference", "on which continent is {X} held|{X} takes place on "
     "what continent"),
    (["affiliation", "country", "officialLanguage"], "Person", "what is the official language of the country "
     "where {X} works|what language is official where {X} is employed"),
    (["developer", "affiliation", "country"], "Software", "in which countries do the developers of {X} work"
     "|the developers of {X} are based in what countries"),
    (["^author", "mainTopic", "broaderTopic"], "Person", "which broad fields has {X} published in|what "
     "disciplines do {X}'s papers fall under"),
]


def phrasings(spec: str) -> tuple[list[str], list[str]]:
    """(training phrasings, held-out phrasings) of a `PATHS` entry."""
    seen, _, held = spec.partition("||")
    return [p.strip() for p in seen.split("|") if p.strip()], [p.strip() for p in held.split("|") if p.strip()]


def chain_gold(topic: str, path: list[str]) -> dict:
    from bench.kgs.scholarly_names import rel

    return {"anchors": [topic], "paths": [[rel(r) for r in path]]}


def answerable(world, topic: str, path: list[str]) -> list[str] | None:
    """The answers of `path` from `topic`, or None when the question would be bad (no answer,
    too many, or the topic among its own answers)."""
    answers = run_gold(world.store, chain_gold(topic, path))
    if not answers or len(answers) > MAX_ANSWERS or topic in answers:
        return None
    return answers


class ChainMaker:
    """Draws chain questions of the scholarly KG; remembers which (path, topic) pairs test holds so
    that train and val never ask the same thing."""

    def __init__(self, world, seed: int):
        self.world, self.rng = world, random.Random(seed * 7919 + 1)
        self.paths = [(path, kind, *phrasings(spec)) for path, kind, spec in PATHS]
        self.reserved: set[tuple[int, str]] = set()
        self._pool: dict[int, list[tuple[str, list[str]]]] = {}

    def pool(self, i: int) -> list[tuple[str, list[str]]]:
        """(topic, answers) of every good question of path `i`, in a seeded order."""
        if i not in self._pool:
            path, kind = self.paths[i][:2]
            found = [(t, a) for t in self.world.of(kind) if (a := answerable(self.world, t, path)) is not None]
            random.Random(i).shuffle(found)
            self._pool[i] = found
        return self._pool[i]

    def question(self, i: int, topic: str, answers: list[str], held_out: bool, qid: str) -> dict:
        path, kind, train_phr, held_phr = self.paths[i]
        template = self.rng.choice(held_phr if held_out and held_phr else train_phr)
        text = surface(self.rng, fill(template, X=self.world.label(topic)))
        return {"question": text, "topic_entities": [topic], "answers": answers, "qid": qid,
                "_path": i, "_template": template}

    def draw(self, i: int, n: int, held_out_share: float, prefix: str, start: int, reserve: bool) -> list[dict]:
        pool = [x for x in self.pool(i) if (i, x[0]) not in self.reserved] or self.pool(i)
        out = []
        for k in range(n):
            topic, answers = pool[k % len(pool)] if reserve else self.rng.choice(pool)
            if reserve:
                self.reserved.add((i, topic))
            held = self.rng.random() < held_out_share
            out.append(self.question(i, topic, answers, held, f"{prefix}-{start + len(out):05d}"))
        return out


def is_unseen(path: list[str]) -> bool:
    return any(r in UNSEEN for r in path)


def _public(row: dict) -> dict:
    return {k: v for k, v in row.items() if not k.startswith("_")}


def draw_test(maker: ChainMaker, counts: dict) -> list[dict]:
    """The chain test set, drawn first: equal shares per path; its (path, topic) pairs are then
    kept out of every training and validation set."""
    usable = [i for i in range(len(maker.paths)) if len(maker.pool(i)) >= 2]
    test = []
    per_path = max(1, counts["test"] // len(usable))
    extra = counts["test"] - per_path * len(usable)
    for k, i in enumerate(usable):
        n = per_path + (1 if k < extra else 0)
        test += maker.draw(i, min(n, len(maker.pool(i))), HELD_OUT_SHARE, "test", len(test), reserve=True)
    return test


def write_chains(maker: ChainMaker, out: Path, counts: dict, seed: int, summary: dict,
                 test: list[dict]) -> dict[str, Path]:
    """train/val/test.jsonl of chain questions (`test` from `draw_test`); adds the chain figures
    to `summary`."""
    from bench.kgs.scholarly_names import rel

    usable = [i for i in range(len(maker.paths)) if len(maker.pool(i)) >= 2]
    # the most asked paths are the everyday ones (COMMON, in a seeded order), then the rest
    rng = random.Random(seed)
    trained = [i for i in usable if not is_unseen(maker.paths[i][0])]
    common = [i for i in trained if (tuple(maker.paths[i][0]), maker.paths[i][1]) in COMMON]
    rest = [i for i in trained if i not in common]
    rng.shuffle(common)
    rng.shuffle(rest)
    trained = common + rest
    least = min(3, counts["train"] // (4 * len(trained)))  # 3 at full size; a small set keeps its long tail
    weights = zipf_counts(len(trained), counts["train"], None, s=1.0, minimum=least)
    train = []
    for i, n in zip(trained, weights):
        train += maker.draw(i, n, 0.0, "train", len(train), reserve=False)
    val_counts = zipf_counts(len(trained), counts["val"], None, s=1.0, minimum=0)
    val = []
    for i, n in zip(trained, val_counts):
        val += maker.draw(i, n, 0.0, "val", len(val), reserve=False)
    rng.shuffle(train)
    rng.shuffle(val)

    path_count = Counter(r["_path"] for r in train)
    relation_count = Counter(name for r in train for name in set(maker.paths[r["_path"]][0]))
    seen_templates = {(r["_path"], r["_template"]) for r in train}
    for r in test:
        path = maker.paths[r["_path"]][0]
        r.update({"relation_path": [rel(x) for x in path], "hops": len(path), "shape": "chain",
                  "extra": {"seen_relation": all(relation_count[x] > 0 for x in path),
                            "seen_phrasing": (r["_path"], r["_template"]) in seen_templates,
                            "relation_train_count": min(relation_count[x] for x in path),
                            "path_train_count": path_count[r["_path"]], "template": r["_template"]}})
    files = {"train": write_jsonl(out / "train.jsonl", [_public(r) for r in train]),
             "val": write_jsonl(out / "val.jsonl", [_public(r) for r in val]),
             "test": write_jsonl(out / "test.jsonl", [_public(r) for r in test])}
    # the gold paths of the answers-only sets, kept apart (no loader reads gold/): for checking
    # the generator and for measuring how well KG-derived supervision recovers them
    (out / "gold").mkdir(exist_ok=True)
    for split, rows in (("train", train), ("val", val)):
        files[f"gold_{split}"] = write_jsonl(out / "gold" / f"{split}.jsonl", [
            {"qid": r["qid"], "relation_path": [rel(x) for x in maker.paths[r["_path"]][0]],
             "template": r["_template"]} for r in rows])
    test_paths = sorted({r["_path"] for r in test})
    name = lambda i: ".".join(maker.paths[i][0]) + f" ({maker.paths[i][1]})"  # noqa: E731
    summary["chains"] = {
        "train": len(train), "val": len(val), "test": len(test),
        "paths": len(test_paths),
        "test_by_hops": dict(sorted(Counter(r["hops"] for r in test).items())),
        "unseen_relations": sorted(UNSEEN),
        "test_paths_without_training": sorted(name(i) for i in test_paths if path_count[i] == 0),
        "test_questions_unseen_relation": sum(not r["extra"]["seen_relation"] for r in test),
        "test_questions_unseen_phrasing": sum(not r["extra"]["seen_phrasing"] for r in test),
        "test_questions_unseen_phrasing_on_trained_paths": sum(
            not r["extra"]["seen_phrasing"] for r in test if r["extra"]["path_train_count"]),
        "train_questions_per_path": {name(i): path_count[i] for i in sorted(path_count, key=lambda i: -path_count[i])},
    }
    return files
