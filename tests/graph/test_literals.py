"""rra.graph.literals: literal node ids and the values a condition on the answer compares."""
import datetime as dt

import pytest

from rra.graph.literals import (canonical_literal, compare, display, is_literal, literal_id, literal_term,
                                order_key, parse_literal, split_literal)

XSD = "http://www.w3.org/2001/XMLSchema#"


def test_literal_ids_round_trip_and_stay_apart_from_entities():
    assert literal_id("1985", XSD + "gYear") == '"1985"^^xsd:gYear'
    assert literal_id("x", XSD + "string") == '"x"' and literal_id("Ann", None, "EN") == '"Ann"@en'
    assert literal_id("5", "http://ex.org/unit") == '"5"^^<http://ex.org/unit>'
    odd = literal_id('say "hi"\n\\', XSD + "string")
    assert is_literal(odd) and split_literal(odd) == ('say "hi"\n\\', None, None) and display(odd) == 'say "hi"\n\\'
    assert literal_term('"1985"^^xsd:gYear') == f'"1985"^^<{XSD}gYear>'
    assert literal_term('"Ann"@en') == '"Ann"@en'
    for entity in ("1985", "Ann", '"quoted" title', '"unclosed', 'x"y"'):
        assert not is_literal(entity) and canonical_literal(entity) is None and display(entity) == entity
    assert canonical_literal('"7"^^<http://www.w3.org/2001/XMLSchema#integer>') == '"7"^^xsd:integer'


@pytest.mark.parametrize("node, value", [
    ('"1985"^^xsd:gYear', 1985), ('"7"^^xsd:integer', 7), ('"1.83"^^xsd:decimal', 1.83),
    ('"1e3"^^xsd:double', 1000.0), ('"1990-05-17"^^xsd:date', dt.date(1990, 5, 17)),
    ('"1990-05"^^xsd:gYearMonth', dt.date(1990, 5, 1)),
    ('"1990-05-17T10:00:00Z"^^xsd:dateTime', dt.datetime(1990, 5, 17, 10, tzinfo=dt.timezone.utc)),
    ("1985", 1985), ("-3", -3), ("2.5", 2.5), ("1990-05-17", dt.date(1990, 5, 17)), ('"42"', 42),
    ("Ann", "Ann"), ('"abc"^^xsd:integer', "abc"), ("1990-02-31", "1990-02-31"), ('"Annie"@en', "Annie"),
])
def test_parse_literal(node, value):
    assert parse_literal(node) == value


def test_compare_and_order():
    assert compare('"1992"^^xsd:gYear', ">", "1990") and not compare('"1985"^^xsd:gYear', ">", 1990)
    assert compare('"1990-05-17"^^xsd:date', "<", 1991) and compare('"1990-05-17"^^xsd:date', "=", 1990)
    assert compare('"1990-05-17"^^xsd:date', ">", '"1990-01-01"^^xsd:date')
    assert compare("30", ">=", 30) and compare('"1.83"^^xsd:decimal', "<", 2)
    assert not compare("Ann", ">", 3) and not compare("Ann", "<", "Bob")  # text has no order here
    assert compare("Spain", "=", '"spain"@en')
    with pytest.raises(ValueError, match="unknown comparison"):
        compare(1, "~", 2)
    values = ['"1990-05-17"^^xsd:date', '"1985"^^xsd:gYear', "1991", "Ann"]
    keyed = sorted((k, v) for v in values if (k := order_key(v)) is not None)
    assert [v for _, v in keyed] == ['"1985"^^xsd:gYear', '"1990-05-17"^^xsd:date', "1991"]
