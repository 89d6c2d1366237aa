"""Messy replies as weak models write them: each is parsed to the intended value or reported as
ParseError, and no parser raises anything else on junk input."""
import pytest

from rra.llm.parse import (
    ParseError,
    clean_item,
    find_candidates_in_text,
    match_candidate,
    match_candidates,
    parse_answer,
    parse_choice,
    parse_json,
    parse_list,
    parse_scored_items,
    parse_yes_no,
    try_parse,
)

LIST_CASES = [
    ("1. Ridley Scott\n2. James Cameron", ["Ridley Scott", "James Cameron"]),
    ("Here are the relations:\n1) directed_by\n2) starred_actors\nHope this helps!", ["directed_by", "starred_actors"]),
    ("- Alien\n- Blade Runner\n* Gladiator", ["Alien", "Blade Runner", "Gladiator"]),
    ("• Amélie\n• Crouching Tiger, Hidden Dragon", ["Amélie", "Crouching Tiger, Hidden Dragon"]),
    ('["Alien", "Prometheus"]', ["Alien", "Prometheus"]),
    ('```json\n["Alien", "Prometheus"]\n```\nThese are the films.', ["Alien", "Prometheus"]),
    ('Sure! {"answers": ["Alien", "Gladiator"]} Let me know.', ["Alien", "Gladiator"]),
    ('{"entities": [{"name": "Alien"}, {"name": "Gladiator"}]}', ["Alien", "Gladiator"]),
    ("Alien, Gladiator, and Prometheus.", ["Alien", "Gladiator", "Prometheus"]),
    ("Answer: Alien; Gladiator", ["Alien", "Gladiator"]),
    ('The relevant relations are "directed_by" and "written_by".', ["directed_by", "written_by"]),
    ("Ridley Scott\nJames Cameron", ["Ridley Scott", "James Cameron"]),
    ("1. **Alien**\n2. **Alien**\n3. `Gladiator`", ["Alien", "Gladiator"]),
    ("1. {film.directed_by (Score: 0.6)}: it links films to directors", ["film.directed_by"]),
    ("<think>let me think, maybe Foo</think>\n1. Alien<|im_end|>", ["Alien"]),
    ("  Alien  ", ["Alien"]),
    ("['Alien', 'Schindler\\'s List']", ["Alien", "Schindler's List"]),
    ("Washington D.C.", ["Washington D.C."]),
    ("Alien (1979), Heat", ["Alien (1979)", "Heat"]),
]


@pytest.mark.parametrize("reply,expected", LIST_CASES)
def test_parse_list(reply, expected):
    assert parse_list(reply) == expected


def test_parse_list_max_items_and_failures():
    assert parse_list("1. a\n2. b\n3. c", max_items=2) == ["a", "b"]
    for junk in ["", "   ", None, "<|im_end|>", "```\n```", ",,,;"]:
        with pytest.raises(ParseError) as e:
            parse_list(junk)
        assert e.value.status == "unparseable"


JSON_CASES = [
    ('{"a": 1}', {"a": 1}),
    ('Here you go:\n```json\n{"answer": "Alien", "confidence": 0.9}\n```', {"answer": "Alien", "confidence": 0.9}),
    ('The result is {"x": [1, 2,],} as requested.', {"x": [1, 2]}),
    ("{'answer': 'Alien', 'sure': True}", {"answer": "Alien", "sure": True}),
    ('prose [1, "two", null] more prose', [1, "two", None]),
    ('{"text": "braces } inside { strings"} trailing', {"text": "braces } inside { strings"}),
    ('{"name": "Zoë Saldaña 🎬"}', {"name": "Zoë Saldaña 🎬"}),
    ('Result: {"t": "say \\"hi}\\" ok"} and [1]', {"t": 'say "hi}" ok'}),
]


@pytest.mark.parametrize("reply,expected", JSON_CASES)
def test_parse_json(reply, expected):
    assert parse_json(reply) == expected


@pytest.mark.parametrize("junk", ["", "no json here", "{unclosed", "{'a': }", "[" * 5000])
def test_parse_json_failures(junk):
    with pytest.raises(ParseError):
        parse_json(junk)


ANSWER_CASES = [
    ("Answer: Ridley Scott", "Ridley Scott"),
    ("Let me think. The film was directed by someone.\nAnswer: Ridley Scott.", "Ridley Scott"),
    ("**Answer:** Alien", "Alien"),
    ("The answer is Alien. It was released in 1979.", "Alien"),
    ("Based on the triples, the answer to the question is {Ridley Scott}.", "Ridley Scott"),
    ("{Yes}. The answer is {Washington D.C.}", "Washington D.C."),
    ('{"answer": "Blade Runner"}', "Blade Runner"),
    ('{"answer": ["Alien", "Heat"]}', "Alien, Heat"),
    ("Ridley Scott\nHe is a British director.", "Ridley Scott"),
    ("“Amélie”", "Amélie"),
    ("Final answer: 42", "42"),
]


@pytest.mark.parametrize("reply,expected", ANSWER_CASES)
def test_parse_answer(reply, expected):
    assert parse_answer(reply) == expected


YES_NO_CASES = [
    ("Yes", True), ("yes.", True), ("{Yes}. The triples answer it.", True), ("No", False),
    ("NO, more hops are needed", False), ("{No}", False),
    ("The knowledge is not enough to answer.", False), ("Insufficient information.", False),
    ("The information is sufficient.", True), ('{"sufficient": false}', False),
    ('{"answer": "yes"}', True), ("True", True), ("I cannot answer from these facts.", False),
    ("Y", True),
]


@pytest.mark.parametrize("reply,expected", YES_NO_CASES)
def test_parse_yes_no(reply, expected):
    assert parse_yes_no(reply) is expected


@pytest.mark.parametrize("junk", ["", "maybe", "I know the film well", "Nobody knows"])
def test_parse_yes_no_failures(junk):
    with pytest.raises(ParseError):
        parse_yes_no(junk)


CHOICE_CASES = [
    ("2", 4, 1), ("Option 3", 4, 2), ("(B)", 4, 1), ("B) Alien", 4, 1), ("answer: c", 4, 2),
    ("The correct choice is #4.", 4, 3), ("I pick 7, no wait, 2", 4, 1), ("1.", 3, 0),
    ("The answer is option (A).", 3, 0), ("  3\n", 3, 2),
]


@pytest.mark.parametrize("reply,n,expected", CHOICE_CASES)
def test_parse_choice(reply, n, expected):
    assert parse_choice(reply, n) == expected


def test_parse_choice_by_option_text_and_failures():
    opts = ["Alien", "Blade Runner", "Gladiator"]
    assert parse_choice("I think it is Blade Runner.", 3, opts) == 1
    for junk in ["", "none of them", "9", "option 5"]:
        with pytest.raises(ParseError):
            parse_choice(junk, 3, opts)


SCORED_CASES = [
    ("1. {film.directed_by (Score: 0.6)}: links films to directors\n2. {film.genre (Score: 0.3)}: genres",
     [("film.directed_by", 0.6), ("film.genre", 0.3)]),
    ("directed_by: 0.7\nwritten_by: 0.2", [("directed_by", 0.7), ("written_by", 0.2)]),
    ("- starred_actors (0.5)\n- has_genre (0.25)", [("starred_actors", 0.5), ("has_genre", 0.25)]),
    ('{"directed_by": 0.8, "has_tags": 0.2}', [("directed_by", 0.8), ("has_tags", 0.2)]),
    ('[{"relation": "directed_by", "score": 1}]', [("directed_by", 1.0)]),
    ("Sure!\n1. directed_by - score: .9\nThat is all.", [("directed_by", 0.9)]),
    ("{directed_by (Score: 0.6)}; {has_genre (Score: 0.4)}", [("directed_by", 0.6), ("has_genre", 0.4)]),
]


@pytest.mark.parametrize("reply,expected", SCORED_CASES)
def test_parse_scored_items(reply, expected):
    assert parse_scored_items(reply) == expected


def test_parse_scored_items_failure():
    for junk in ["", "no scores at all", "1. directed_by\n2. written_by"]:
        with pytest.raises(ParseError):
            parse_scored_items(junk)


CANDIDATES = ["directed_by", "^directed_by", "written_by", "starred_actors", "has_genre", "release_year"]
MATCH_CASES = [
    ("directed_by", "directed_by"), ("^directed_by", "^directed_by"), ("Directed_By", "directed_by"),
    ("directed by", "directed_by"), ("film.written_by", "written_by"),
    ("starred_actors: the actors of the film", "starred_actors"), ("genre", "has_genre"),
    ("starred_actor", "starred_actors"), ("release year", "release_year"), ("budget", None), ("", None),
]


@pytest.mark.parametrize("item,expected", MATCH_CASES)
def test_match_candidate(item, expected):
    assert match_candidate(item, CANDIDATES) == expected


def test_match_candidates_keeps_order_and_dedupes():
    items = parse_list("1. Written by\n2. directed_by\n3. directed by\n4. nonsense relation xyz")
    assert match_candidates(items, CANDIDATES) == ["written_by", "directed_by"]


def test_find_candidates_in_text():
    cands = ["Scott", "Ridley Scott", "Alien", "Heat", "Amélie"]
    text = "Alien was directed by Ridley Scott; not Heat. Also Amélie!"
    assert find_candidates_in_text(text, cands) == ["Alien", "Ridley Scott", "Heat", "Amélie"]
    assert find_candidates_in_text("Theater and heathen", cands) == []
    assert find_candidates_in_text("", cands) == []


def test_clean_item():
    assert clean_item(' "Alien." ') == "Alien"
    assert clean_item("{film.genre (Score: 0.3)}") == "film.genre"
    assert clean_item("**Heat**") == "Heat"
    assert clean_item("Martin Luther King Jr.") == "Martin Luther King Jr."


def test_try_parse_records_instead_of_raising():
    value, err = try_parse(parse_yes_no, "perhaps")
    assert value is None and err.startswith("unparseable: no yes/no")
    value, err = try_parse(parse_choice, "2", 3)
    assert (value, err) == (1, None)


JUNK = ["", None, " ", "\x00\x01", "{" * 300, "]]]", "```", "\n\n\n", "🎬" * 50, "a" * 20000,
        "1.\n2.\n3.", "(Score: )", "Answer:", "{}", "[]", '{"answer": null}', "<think>", "<|im_start|>"]


@pytest.mark.parametrize("junk", JUNK)
def test_parsers_never_raise_anything_but_parse_error(junk):
    cands = ["Alien", "Heat"]
    for fn, args in [(parse_list, ()), (parse_json, ()), (parse_answer, ()), (parse_yes_no, ()),
                     (parse_choice, (3, cands + ["x"])), (parse_scored_items, ())]:
        try:
            fn(junk, *args)
        except ParseError as e:
            assert str(e).startswith("unparseable")
    assert isinstance(find_candidates_in_text(junk, cands), list)
    assert match_candidate(junk or "", cands) in (None, "Alien", "Heat")
