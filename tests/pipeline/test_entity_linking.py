from dataclasses import dataclass

from rra.linking import link_entities
from rra.text.questions import strip_brackets
from rra.graph import NetworkXGraph, Triple


def kg():
    return NetworkXGraph(
        [Triple("m1", "directed_by", "Ridley Scott"), Triple("m2", "directed_by", "Ridley Scott"),
         Triple("Blade", "directed_by", "Nobody"), Triple("m3", "directed_by", "The")],
        labels={"m1": "Blade Runner", "m2": "Heat", "m3": "Heat"},
    )


def test_marked_mention_exact_and_casefold():
    g = kg()
    r = link_entities(g, "what movies did [Ridley Scott] direct")
    assert (r.status, r.entities, r.source) == ("ok", ["Ridley Scott"], "marked")
    assert link_entities(g, "what did [ridley scott] direct").entities == ["Ridley Scott"]


def test_unmarked_longest_match_wins_and_punctuation_is_ignored():
    r = link_entities(kg(), "who directed blade runner?")
    assert r.status == "ok" and r.entities[0] == "m1" and r.source == "lexical"
    assert r.mentions[0] == "blade runner"


def test_ambiguous_label_is_reported():
    r = link_entities(kg(), "who directed Heat")
    assert r.entities[0] in ("m2", "m3")
    assert sorted(r.ambiguous["Heat"]) == ["m2", "m3"]


def test_stopword_only_span_is_not_an_entity():
    # "The" is an entity of this KG, but a question's "the" must not link to it
    r = link_entities(kg(), "who is the director")
    assert r.status == "no_topic_entity" and r.entities == [] and r.error


def test_unknown_marked_and_given_entities_give_status_not_exception():
    g = kg()
    assert link_entities(g, "who directed [Zzz]").status == "unknown_entity"
    assert link_entities(g, "who directed it", given=["Zzz"]).status == "unknown_entity"
    ok = link_entities(g, "who directed it", given=["m1"])
    assert ok.entities == ["m1"] and ok.mentions == ["Blade Runner"]


def test_strip_brackets():
    assert strip_brackets("who directed [Alien] and [Heat]") == "who directed Alien and Heat"


def test_ranked_lexical_linking_demotes_common_and_relation_words():
    g = NetworkXGraph(
        [Triple("writer", "profession_of", "person/julie_london"), Triple("Album", "type_of", "m9"),
         Triple("person/julie_london", "recorded", "m9"), Triple("julie_london", "genre", "jazz")],
        labels={"person/julie_london": "Julie London", "m9": "Calendar Girl", "writer": "Writer"},
    )
    r = link_entities(g, "which writer recorded the album Calendar Girl")
    assert r.entities[0] == "m9" and r.mentions[0] == "Calendar Girl"
    ranked = [(c.mention, c.common_word) for c in r.candidates]
    assert ("writer", True) in ranked and ranked[0] == ("Calendar Girl", False)
    # "genre" is one of the KG's relation words: the question's relation, not its topic
    r = link_entities(g, "what genre does Julie London sing")
    assert r.entities[0] == "person/julie_london"
    # ids with underscores link from the words they spell, whatever the case
    assert link_entities(g, "what genre is julie london in").entities[0] == "julie_london"
    assert link_entities(g, "what genre is Julie_London in").entities[0] == "julie_london"
    assert link_entities(g, "Who wrote Calendar Girl?").mentions[0] == "Calendar Girl"


@dataclass
class Scored:
    path: list
    score: float
    hop: int = 1


class Scripted:
    """A retriever whose candidate paths for each (marked) question `paths_for` gives; `asked` lists
    the questions it was asked."""

    def __init__(self, paths_for):
        self.paths_for, self.asked = paths_for, []

    def predict(self, questions, topk, hops=None, try_second_hop=False, **kw):
        self.asked += questions
        return [self.paths_for(q) for q in questions]


def pipeline(g, model):
    from rra.pipeline.answer import GraphScorer
    from rra.pipeline.method import RRAPipeline
    from rra.pipeline.retrieve import PathRetrieval
    from rra.pipeline.rewrite import TripleRewriter

    return RRAPipeline(g, PathRetrieval(model), TripleRewriter(), GraphScorer(), use_gold_topic=False)


def test_pipeline_lets_the_retriever_choose_between_candidate_topics():
    from rra.records import QAExample

    g = NetworkXGraph([Triple("Heat", "directed_by", "Michael Mann"), Triple("Director", "job_of", "Michael Mann")])
    model = Scripted(lambda q: [Scored(["directed_by"], 0.9)])  # whatever is marked: only Heat has an instance
    pipe = pipeline(g, model)
    (pred,) = pipe.answer_batch([QAExample("which Director made Heat", [], ["Michael Mann"])])
    assert link_entities(g, "which Director made Heat").entities[0] == "Director"  # lexical rank alone
    assert set(model.asked) == {"which [Director] made Heat", "which Director made [Heat]"}
    assert pred.topic_entities[0] == "Heat" and pred.answers == ["Michael Mann"]
    assert pred.extra["linking"]["chosen_by"] == "retriever"


def test_given_topics_may_be_names_as_well_as_ids():
    """A dataset that names its topic entities ("Blade Runner" for id m1) links like one that gives
    ids, for RRA and the baselines alike; a name the KG lacks is unknown_entity, named."""
    from rra.baselines.common import topic_entities
    from rra.records import QAExample

    g = kg()
    assert link_entities(g, "who directed it", ["m1"]).entities == ["m1"]
    by_name = link_entities(g, "who directed it", ["blade runner"])
    assert (by_name.status, by_name.entities, by_name.source) == ("ok", ["m1"], "given")
    missing = link_entities(g, "who directed it", ["Alien"])
    assert missing.status == "unknown_entity" and "'Alien' is not in the knowledge graph" in missing.error
    assert topic_entities(g, QAExample("who directed it", ["Blade Runner", "m2"], [])) == ["m1", "m2"]


def test_rra_links_given_names_in_a_batch(movie_kg):
    from dataclasses import dataclass

    from rra.pipeline.answer import GraphScorer
    from rra.pipeline.method import RRAPipeline
    from rra.records import QAExample
    from rra.pipeline.retrieve import PathRetrieval
    from rra.pipeline.rewrite import TripleRewriter

    @dataclass
    class P:
        path: list
        score: float
        hop: int = 1

    class DirectedBy:
        def predict(self, questions, topk, hops=None, try_second_hop=False):
            return [[P(["directed_by"], 0.9)] for _ in questions]

    pipe = RRAPipeline(movie_kg, PathRetrieval(DirectedBy()), TripleRewriter(), GraphScorer())
    exs = [QAExample("who directed [Alien]", ["Alien"], ["Ridley Scott"], qid="id"),
           QAExample("who directed it", ["alien"], ["Ridley Scott"], qid="name"),
           QAExample("who directed it", ["Nothing Like It"], ["Ridley Scott"], qid="none")]
    ok_id, ok_name, missing = pipe.answer_batch(exs)
    assert ok_id.answers[:1] == ok_name.answers[:1] == ["Ridley Scott"] and ok_name.status == "ok"
    assert missing.status == "unknown_entity" and "'Nothing Like It'" in missing.errors[0]


def sports_kg():
    return NetworkXGraph(
        [Triple("p1", "plays_for", "club/real_madrid"), Triple("p1", "nationality", "country/spain"),
         Triple("p2", "plays_for", "club/real_madrid"), Triple("p2", "nationality", "country/france"),
         Triple("club/real_madrid", "based_in", "city/madrid"), Triple("b1", "written_by", "p2")],
        labels={"p1": "Ana Ruiz", "p2": "Luc Martin", "club/real_madrid": "Real Madrid", "country/spain": "Spain",
                "country/france": "France", "city/madrid": "Madrid", "b1": "The Iron Atlas"},
    )


def test_several_anchors_without_brackets_ranked_and_not_overlapping():
    """Two anchors of a conjunction are both linked, best first; "Madrid" inside "Real Madrid" is
    a candidate but not a third anchor."""
    r = link_entities(sports_kg(), "which player in Real Madrid is from Spain")
    assert r.status == "ok" and r.entities == ["club/real_madrid", "country/spain"]
    assert r.mentions == ["Real Madrid", "Spain"]
    assert "city/madrid" in {c.entity for c in r.candidates}
    r = link_entities(sports_kg(), "name a player who is from France and plays for Real Madrid")
    assert r.entities == ["club/real_madrid", "country/france"]  # the longer mention first
    # one lower-case word could be a common word ("writer"): an anchor only when it is the sole match
    assert link_entities(sports_kg(), "who in real madrid is from france").entities == ["club/real_madrid"]
    assert link_entities(sports_kg(), "who is from france").entities == ["country/france"]


def test_partial_and_misspelt_names_link_through_the_fuzzy_index_below_exact_ones():
    from rra.linking import FuzzyIndex

    g = sports_kg()
    fuzzy = FuzzyIndex(g)
    for q in ("who wrote Iron Atlas", "who wrote The Iron Atlass?", "who wrote iron atlas"):
        assert link_entities(g, q).status == "no_topic_entity"  # exact lookups alone find nothing
        r = link_entities(g, q, fuzzy=fuzzy)
        assert r.status == "ok" and r.entities == ["b1"] and r.candidates[0].fuzzy, q
    assert link_entities(g, "who wrote [Iron Atlass]", fuzzy=fuzzy).entities == ["b1"]  # a marked typo too
    # a misspelt anchor next to an exact one: both anchors, the exact one first
    r = link_entities(g, "which player in Real Madird is from Spain", fuzzy=fuzzy)
    assert r.entities == ["country/spain", "club/real_madrid"]
    assert [c.fuzzy for c in r.candidates if c.entity in r.entities][:2] == [False, True]
    # an exact name is never second-guessed, and a far-off word matches nothing
    assert link_entities(g, "where is Madrid", fuzzy=fuzzy).entities == ["city/madrid"]
    assert link_entities(g, "who wrote Pancake Recipes", fuzzy=fuzzy).status == "no_topic_entity"


def test_a_misspelt_name_with_a_possessive_or_an_initial_links():
    """The fuzzy lookups try the forms the exact ones do ("S. McAlilster's" as "S. McAlilster"), and
    an initial ("H.") begins a name even where "h" is a word of a relation name ("h-index")."""
    from rra.graph import NetworkXGraph, Triple
    from rra.linking import FuzzyIndex, relation_vocabulary

    g = NetworkXGraph([Triple("p1", "h-index", '"12"^^xsd:integer'), Triple("p1", "affiliation", "u1"),
                       Triple("p2", "affiliation", "u1")],
                      labels={"p1": "S. McAllister", "p2": "H. Hoffmann", "u1": "Uppsala University"})
    words, fuzzy = relation_vocabulary(g), FuzzyIndex(g)
    assert "h" in words
    for q, gold in [("what is S. McAlilster's affiliation?", "p1"), ("where does H. Hoffman work", "p2"),
                    ("H. Hoffman's h-index?", "p2")]:
        r = link_entities(g, q, rel_words=words, fuzzy=fuzzy)
        assert r.entities[:1] == [gold] and r.candidates[0].fuzzy, (q, r)
    assert link_entities(g, "what is S. McAlilster's affiliation?", rel_words=words, fuzzy=fuzzy).mentions[0] == "S. McAlilster"


def test_rra_pipeline_passes_every_anchor_and_links_misspelt_names(movie_kg):
    """use_gold_topic=false: the pipeline's linker is fuzzy, and the prediction lists its anchors."""
    from rra.linking import TopicLinker
    from rra.records import QAExample

    linker = TopicLinker(sports_kg(), use_gold_topic=False)
    links = linker.link_batch([QAExample(question="which player in Real Madrid is from Spain", topic_entities=[],
                                         answers=[], qid="q1"),
                               QAExample(question="who wrote The Iron Atlass?", topic_entities=[], answers=[],
                                         qid="q2")])
    assert [link.entities for link in links] == [["club/real_madrid", "country/spain"], ["b1"]]
    assert TopicLinker(sports_kg(), use_gold_topic=False, fuzzy=False).link_batch(
        [QAExample(question="who wrote The Iron Atlass?", topic_entities=[], answers=[], qid="q2")]
    )[0].status == "no_topic_entity"


def test_long_titles_possessives_and_a_closing_bracket_before_the_question_mark():
    """Real KGs name papers with long, punctuated titles and people in the possessive."""
    from rra.graph.networkx_graph import NetworkXGraph
    from rra.linking import link_entities
    from rra.records import Triple

    title = "What Makes Entity Linking Work? Lessons from Question Answering over Knowledge Graphs"
    kg = NetworkXGraph([Triple("p1", "topic", "t1"), Triple("p2", "author", "a1"), Triple("p3", "topic", "t2")],
                       {"p1": title, "t1": "Question Answering", "a1": "Jürgen MacDonald",
                        "p3": "Self-Supervised Neural Machine Translation (Extended Version)", "t2": "Machine Translation"})
    assert link_entities(kg, f"Who wrote {title}?").entities[0] == "p1"  # 13 words: longer than the topic inside it
    assert link_entities(kg, "what is Jürgen MacDonald's affiliation?").entities == ["a1"]
    assert link_entities(kg, "How long is Self-Supervised Neural Machine Translation (Extended Version)?").entities[0] == "p3"


def test_a_class_named_in_the_question_comes_after_the_entity_it_types():
    """"Which programming language is parseflow implemented in": the class (an object of rdf:type,
    labelled "Programming language", a longer mention) names the answer's type; the software is
    where the path starts. The class stays linked (baselines receive it), not a query plan's anchor,
    and a class that is the question's only entity is still its topic."""
    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    g = NetworkXGraph(
        [Triple("sw/parseflow", "programmingLanguage", "pl/ocaml"), Triple("pl/ocaml", rdf_type, "cls/Language"),
         Triple("sw/parseflow", rdf_type, "cls/Software"), Triple("pl/ocaml", "designedBy", "person/ada")],
        labels={"sw/parseflow": "parseflow-ng", "pl/ocaml": "OCaml", "cls/Language": "programming language",
                "cls/Software": "Software", "person/ada": "Ada Byron"},
    )
    r = link_entities(g, "Which programming language is parseflow-ng implemented in?")
    assert r.entities == ["sw/parseflow", "cls/Language"]
    assert {c.entity: c.type_node for c in r.candidates} == {"sw/parseflow": False, "cls/Language": True}
    assert link_entities(g, "Who created the programming language OCaml").entities == ["pl/ocaml", "cls/Language"]
    assert link_entities(g, "list every programming language").entities == ["cls/Language"]
    # a query plan is not anchored on a class (given topics, which plans train on, never hold one),
    # unless it is all the question names; the baselines still receive it
    from rra.linking import link_anchors

    assert link_anchors(r, classes=False) == (["sw/parseflow"], ["parseflow-ng"])
    assert link_anchors(r) == (["sw/parseflow", "cls/Language"], ["parseflow-ng", "programming language"])
    only = link_entities(g, "list every programming language")
    assert link_anchors(only, classes=False) == (["cls/Language"], ["programming language"])


def test_a_relation_named_by_its_label_is_not_taken_for_the_topic(tmp_path):
    """A Wikidata extract holds the property entity wd:P569 "date of birth" (a statement of its own, its
    P31, makes it an entity; its directClaim triple is schema): the question's "date of birth" names the
    relation, the person is the topic."""
    from rra.graph import load_graph
    from rra.linking import relation_vocabulary

    wd, wdt = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    path = tmp_path / "wd.nt"
    path.write_text(
        f'<{wd}Q1> <{wdt}P569> "1952-03-11"^^<http://www.w3.org/2001/XMLSchema#date> .\n'
        f'<{wd}Q1> {label} "Chloé Fischer"@en .\n<{wd}P569> {label} "date of birth"@en .\n'
        f'<{wd}P569> <http://wikiba.se/ontology#directClaim> <{wdt}P569> .\n'
        f'<{wd}P569> <{wdt}P31> <{wd}Q18636219> .\n', encoding="utf-8")
    g = load_graph(path)
    assert {"date of birth", "birth"} <= relation_vocabulary(g)
    r = link_entities(g, "What is the date of birth of Chloé Fischer?")
    assert r.entities[0] == f"{wd}Q1" and r.mentions[0] == "Chloé Fischer"
    assert link_entities(g, "what is Date of Birth").entities == [f"{wd}P569"]  # named alone, it is the topic


def test_the_fuzzy_index_scores_only_names_that_can_reach_the_cut_off_and_answers_as_a_full_scan():
    """Count filtering (shared trigrams, length) keeps every name a ratio scan would return: the same
    matches, scores and order as scoring every name, for typos, dropped and added letters, short and
    long names, repeated letters, cut-offs of 80-95, on 3,000 names built to be alike."""
    import random

    from rapidfuzz import fuzz, process

    from rra.linking import FuzzyIndex, normalize_name

    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ren", "sto", "va", "dor", "el", "an", "ther", "aa", "is", "bal", "mor", "o"]

    def name() -> str:
        return " ".join("".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))).capitalize()
                        for _ in range(rng.randint(1, 3)))

    labels = {f"e{i}": name() for i in range(3000)}
    g = NetworkXGraph([Triple(e, "knows", "e0") for e in labels], labels=labels)
    letters = "abdeiklmnorstv "

    def typo(text: str) -> str:
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(max(1, len(text)))
            text = rng.choice([text[:i] + text[i + 1:], text[:i] + rng.choice(letters) + text[i:],
                               text[:i] + rng.choice(letters) + text[i + 1:]])
        return text

    mentions = [typo(rng.choice(list(labels.values()))) for _ in range(400)]
    for cut_off in (80.0, 88.0, 95.0):
        fuzzy = FuzzyIndex(g, min_score=cut_off)
        fuzzy.match("warm up the index")
        found = 0
        for mention in mentions:
            key = normalize_name(mention)
            if len(key) < 4 or key in fuzzy.names:
                continue
            scan = process.extract(key, fuzzy.keys, scorer=fuzz.ratio, score_cutoff=cut_off, limit=3)
            assert fuzzy.match(mention) == [(e, float(s)) for k, s, _ in scan for e in fuzzy.names[k]], (cut_off, mention)
            found += bool(scan)
        assert found > 50  # the typos mostly land within the cut-off: the comparison is not of empty lists
        if cut_off == 88.0:  # the default: the filter leaves a few of these alike names to score
            assert len(fuzzy._reachable("kalo renmi")) < len(fuzzy.keys) / 10


def test_a_kg_whose_names_cannot_be_read_links_without_the_fuzzy_index(caplog):
    """A store too large to list its names within the deadline (or one that cuts results) turns
    fuzzy linking off once, with a warning; exact names still link, and no question pays for it."""
    import logging

    from rra.graph.base import GraphError
    from rra.linking import FuzzyIndex

    class NamesTimeOut(NetworkXGraph):
        calls = 0

        def all_names(self):
            NamesTimeOut.calls += 1
            raise GraphError("SPARQL endpoint http://127.0.0.1:1/query timed out after 10 s")

    base = sports_kg()
    g = NamesTimeOut(list(base.all_triples()), {e: base.label(e) for e in ("b1", "club/real_madrid", "country/spain")})
    fuzzy = FuzzyIndex(g)
    with caplog.at_level(logging.WARNING, logger="rra.linking"):
        r = link_entities(g, "which player in Real Madird is from Spain", fuzzy=fuzzy)
        assert r.entities == ["country/spain"]  # the exact one; the misspelt club is not found
        assert link_entities(g, "who wrote The Iron Atlass?", fuzzy=fuzzy).status == "no_topic_entity"
        assert link_entities(g, "who wrote The Iron Atlas", fuzzy=fuzzy).entities == ["b1"]
    assert NamesTimeOut.calls == 1 and "fuzzy linking is off" in caplog.text and "timed out" in caplog.text


def test_a_name_ending_in_a_full_stop_links_when_the_question_mark_follows_it():
    """"Who works for Acme Ltd.?": the question's mark goes, the name's full stop stays (companies,
    "Jr.", "St."); stripping both found only the album "Acme" inside it."""
    g = NetworkXGraph([Triple("acme_ltd", "employer_of", "Ann"), Triple("acme_album", "artist", "Bo")],
                      labels={"acme_ltd": "Acme Ltd.", "acme_album": "Acme"})
    for q in ("Who works for Acme Ltd.?", "who works for Acme Ltd.", "Where is Acme Ltd.'s office?"):
        assert link_entities(g, q).entities == ["acme_ltd"], q


def test_the_retriever_does_not_choose_a_class_over_the_entity_the_question_is_about():
    """"what is the capital of the country where [Acme] is based": `Country` is a class (an object of
    rdf:type) the question names; from it `^type, capital` reaches every country's capital, and a
    retriever sure of that path would make it the topic. The entity is chosen; a class alone is still
    a topic."""
    from rra.records import QAExample

    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    model = Scripted(lambda q: [Scored(["^" + rdf_type, "capital"], 0.99)] if "[country]" in q else
                     [Scored(["headquarter", "country", "capital"], 0.6)])
    g = NetworkXGraph([Triple("acme", "headquarter", "lyon"), Triple("lyon", "country", "fr"),
                       Triple("fr", "capital", "paris"), Triple("de", "capital", "berlin"),
                       Triple("fr", rdf_type, "Country"), Triple("de", rdf_type, "Country")],
                      labels={"acme": "Acme", "Country": "country", "fr": "France", "de": "Germany",
                              "paris": "Paris", "berlin": "Berlin", "lyon": "Lyon"})
    pipe = pipeline(g, model)
    (pred,) = pipe.answer_batch([QAExample("what is the capital of the country where Acme is based", [], ["Paris"])])
    assert "what is the capital of the [country] where Acme is based" not in model.asked
    assert pred.topic_entities[0] == "acme" and pred.answers[0] == "paris"
    (alone,) = pipeline(g, Scripted(lambda q: [Scored(["^" + rdf_type], 0.9)])).answer_batch(
        [QAExample("list every country", [], ["France", "Germany"])])
    assert alone.topic_entities == ["Country"] and sorted(alone.answers) == ["de", "fr"]
