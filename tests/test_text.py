"""rra.text: the one place relations, questions and mentions are turned into text."""
from rra.text.matching import find_mentions, normalize, normalize_answer
from rra.text.questions import mask_topic, strip_brackets
from rra.text.relations import relation_display, relation_phrase, relation_words


def test_relations_read_three_ways_by_purpose():
    assert relation_display("^directed_by") == "directed_by (reverse)"  # prompts that name it back
    assert relation_display("film.directed_by") == "film.directed_by"
    assert relation_phrase("^film.directed_by") == "film directed by (reverse)"  # encoder input
    assert relation_phrase("http://dbpedia.org/ontology/birthPlace") == "birth place"
    assert relation_words("film.film.directed_by") == "directed by"  # prose: last name part
    assert relation_words("dbo:birthPlace") == "birth place"
    assert relation_words("^hasGenre") == "has genre"


def test_brackets_and_masks():
    assert strip_brackets("who directed [Alien] and [Heat]") == "who directed Alien and Heat"
    assert mask_topic("who directed [Alien]") == "who directed [E]"
    assert mask_topic("who directed alien", ["Alien"]) == "who directed [E]"


def test_normalisation_loose_for_matching_strict_for_scoring():
    assert normalize("AC/DC's  Back_in.Black") == "ac dc s back in black"
    assert normalize_answer("  AC/DC ") == "ac/dc" != normalize_answer("AC DC")


def test_find_mentions_longest_first_whole_words_by_first_mention():
    names = ["Alien", "Aliens", "Ridley Scott", "Scott"]
    assert find_mentions("Aliens, then Ridley Scott's Alien", names) == ["Aliens", "Ridley Scott", "Alien"]
    assert find_mentions("Scottish films", names) == []


def test_negated_comparatives_read_as_the_bound_they_mean():
    """"no lower than 7" is `>=`: read word by word it would match "lower than" (`<`) fully, so the
    plan ranker reads it as "at least"; a "no more" without a comparison is left alone, and so are
    the entities' names (masked first)."""
    from rra.plans.text import plain_comparatives, ranker_text

    assert plain_comparatives("an h-index no lower than 7") == "an h-index at least 7"
    assert plain_comparatives("papers Not later than 2020, not before 1990") == "papers at most 2020, at least 1990"
    assert plain_comparatives("there are no more papers") == "there are no more papers"
    assert ranker_text("papers of No Later Than Press no earlier than 1991", ["No Later Than Press"]) == \
        ("papers of [E] at least [N1]", {"1991": "[N1]"})


def test_a_walked_relation_reads_without_its_direction_mark_and_keeps_its_kind():
    from rra.text.relations import relation_phrase, without_direction

    assert without_direction(relation_phrase("^directed_by")) == "directed by"
    assert without_direction("place of birth (reverse) giving person") == "place of birth giving person"
    assert without_direction(relation_phrase("directed_by")) == "directed by"  # a forward relation as it is
