"""Messy LLM replies: each is parsed to what it says, or reported as None (never an exception)."""
import pytest

from rra.baselines.common import read_answers
from rra.baselines.replies import parse_answers, parse_choices, parse_scores, parse_yes_no
from rra.text.matching import mentioned_entities as mentioned

RELS = ["directed_by", "^directed_by", "release_year", "starred_actors"]
SHOWN = {"^directed_by": "directed_by (reverse)"}


@pytest.mark.parametrize("reply, expected", [
    ("{directed_by (Score: 0.7)}; {release_year (Score: 0.3)}", {"directed_by": 0.7, "release_year": 0.3}),
    ("1. {directed_by (Score: 0.6)}: the question asks who directed\n2. {starred_actors (Score: 0.4)}",
     {"directed_by": 0.6, "starred_actors": 0.4}),
    ('```json\n{"directed_by": 0.8, "release_year": 0.2}\n```', {"directed_by": 0.8, "release_year": 0.2}),
    ('[{"relation": "starred_actors", "score": 1.0}]', {"starred_actors": 1.0}),
    ("directed_by (reverse) (Score: 1.0)", {"^directed_by": 1.0}),
    ("I think the relevant relation is release year, maybe directed by too.", {"release_year": 1.0, "directed_by": 1.0}),
    ("- Directed_By\n- Release_Year", {"directed_by": 1.0, "release_year": 1.0}),
    ("2, 3", {"^directed_by": 1.0, "release_year": 1.0}),
    ("", None),
    ("   \n ", None),
    ("I cannot help with that.", None),
    ("99", None),
])
def test_choices(reply, expected):
    got = parse_choices(reply, RELS, SHOWN)
    assert got == expected


@pytest.mark.parametrize("reply, n, expected", [
    ("0.7, 0.2, 0.1", 3, [0.7, 0.2, 0.1]),
    ("Scores: 1. 0.5  2. 0.5", 2, [0.5, 0.5]),
    ("no numbers", 2, None),
    ("0.3", 2, None),
])
def test_positional_scores(reply, n, expected):
    assert parse_scores(reply, n) == expected


@pytest.mark.parametrize("reply, expected", [
    ("{Yes}. The answer is Alien.", True), ("No.", False), ("**No**, the triplets lack it", False),
    ('{"sufficient": true}', True), ("There is not enough information.", False), ("", None),
    ("Paris", None),
])
def test_yes_no(reply, expected):
    assert parse_yes_no(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    ("{Yes}. Answer: Ridley Scott | James Cameron", ["Ridley Scott", "James Cameron"]),
    ("Based on the triplets, the answer is {Ridley Scott}.", ["Ridley Scott"]),
    ("1. Alien\n2. Aliens", ["Alien", "Aliens"]),
    ('["Alien", "Aliens"]', ["Alien", "Aliens"]),
    ('{"answers": ["Alien"]}', ["Alien"]),
    ("**Answer:** Ridley Scott", ["Ridley Scott"]),
    ("<think>hmm</think>Alien", ["Alien"]),
    ("", None), ("No", None), ("None.", None), ("{", None),
])
def test_answers(reply, expected):
    assert parse_answers(reply) == expected


def test_mentioned_prefers_longer_labels_and_keeps_order():
    labels = {"a": "Alien", "b": "Aliens", "r": "Ridley Scott"}
    assert mentioned("Aliens was directed by Ridley Scott, unlike Alien", labels) == ["b", "r", "a"]
    assert mentioned("", labels) == []


def test_read_answers_entities_first_topic_last():
    labels = {"A": "Alien", "W": "Sigourney Weaver", "R": "Ridley Scott"}
    assert read_answers("Sigourney Weaver starred; the answer is Ridley Scott", labels, ["W"]) == ["R"]
    assert read_answers("Answer: Sigourney Weaver and Alien", labels, ["W"]) == ["A", "W"]
    assert read_answers("Answer: Someone Unknown", labels) == ["Someone Unknown"]
    assert read_answers("", labels) is None


@pytest.mark.parametrize("reply", ["\x00\x01", "{" * 5000, "[" + "1," * 3000, "Score: " * 2000, "é" * 10000])
def test_garbage_never_raises(reply):
    parse_choices(reply, RELS, SHOWN)
    parse_scores(reply, 3)
    parse_yes_no(reply)
    parse_answers(reply)
