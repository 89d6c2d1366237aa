from rra.entity_linking import link_entities, strip_marks
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


def test_strip_marks():
    assert strip_marks("who directed [Alien] and [Heat]") == "who directed Alien and Heat"
