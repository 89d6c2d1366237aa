"""bench_values_languages' figures on tiny sizes: the functions its JSON is made of."""
from bench.bench_values_languages import linking_rates, one_id_per_value, value_supervision


def test_value_answers_supervise_after_and_not_before():
    figures = value_supervision(60)
    assert figures["before"]["value_questions_covered"] < figures["after"]["value_questions_covered"]
    assert figures["after"]["value_questions_covered"] == figures["after"]["value_questions"]


def test_every_backend_gives_the_same_ids():
    figures = one_id_per_value(60, virtuoso=False)
    for name, backend in figures["rra_ids"].items():
        assert backend["triples_differing_from_networkx"] == 0 and backend["ill_typed_passing_a_comparison"] == 0
    assert figures["store_spellings"]["oxigraph"]["values_respelt"] > 0  # what rra evens out


def test_character_ngrams_link_chinese_questions():
    figures = linking_rates(30)
    assert figures["word_ngrams_only"]["linked_first"] == 0 and figures["char_ngrams"]["linked_first"] > 90
