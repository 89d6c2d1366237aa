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


# -- one spelling per value (issue 35) -------------------------------------------------------------
@pytest.mark.parametrize("written, node", [
    ('"+5"^^xsd:integer', '"5"^^xsd:integer'), ('"0123"^^xsd:integer', '"123"^^xsd:integer'),
    ('"-0"^^xsd:integer', '"0"^^xsd:integer'), ('" 7 "^^xsd:integer', '"7"^^xsd:integer'),
    ('"5"^^xsd:byte', '"5"^^xsd:integer'), ('"300"^^xsd:byte', '"300"'), ('"-5"^^xsd:nonNegativeInteger', '"-5"'),
    ('"1.50"^^xsd:decimal', '"1.5"^^xsd:decimal'), ('"2.0"^^xsd:decimal', '"2"^^xsd:decimal'),
    ('"+.5"^^xsd:decimal', '"0.5"^^xsd:decimal'), ('"1"^^xsd:boolean', '"true"^^xsd:boolean'),
    ('"0"^^xsd:boolean', '"false"^^xsd:boolean'), ('"1.9e3"^^xsd:double', '"1.9E3"^^xsd:double'),
    ('"1900.0"^^xsd:double', '"1.9E3"^^xsd:double'), ('"0"^^xsd:double', '"0.0E0"^^xsd:double'),
    ('"1.1"^^xsd:float', '"1.1E0"^^xsd:float'), ('"1e40"^^xsd:float', '"INF"^^xsd:float'),
    ('"2017+00:00"^^xsd:gYear', '"2017Z"^^xsd:gYear'), ('"2016-02-29"^^xsd:date', '"2016-02-29"^^xsd:date'),
    ('"2017-02-29"^^xsd:date', '"2017-02-29"'), ('"2017-12-31T24:00:00"^^xsd:dateTime', '"2018-01-01T00:00:00"^^xsd:dateTime'),
    ('"2017-01-05T10:00:00.500-00:00"^^xsd:dateTime', '"2017-01-05T10:00:00.5Z"^^xsd:dateTime'),
    ('"abc"^^xsd:integer', '"abc"'), ('"x"^^<http://ex.org/unit>', '"x"^^<http://ex.org/unit>'),
    ('"1985"^^<http://www.w3.org/2001/XMLSchema#gYear>', '"1985"^^xsd:gYear'),
])
def test_a_value_has_one_canonical_id(written, node):
    assert canonical_literal(written) == node


def test_no_size_of_input_fails_parsing():
    """A 5,000-digit cell is past Python's int-from-text limit (4,300 digits): read, never a crash."""
    from rra.plans.plan import literal_value

    huge = "9" * 5000
    assert parse_literal(huge) == float("inf") and compare(huge, ">", 13) and literal_value(huge) == float("inf")
    assert canonical_literal(f'"+{huge}"^^xsd:integer') == f'"{huge}"^^xsd:integer'
    assert parse_literal(f'"{huge}"^^xsd:integer') == float("inf")
    assert order_key("9" * 400) == (0, float("inf"))  # an int past the float range
    assert canonical_literal(f'"1e{huge}"^^xsd:double') == '"INF"^^xsd:double'
    assert canonical_literal(f'"{huge}"^^xsd:byte') == f'"{huge}"'  # out of range: text


def test_loading_keeps_ill_typed_values_as_text_and_says_so(tmp_path, caplog):
    from rra.graph import load_graph

    kb = tmp_path / "kb.tsv"
    kb.write_text('Ann\tage\t"abc"^^xsd:integer\nBob\tage\t"+41"^^xsd:integer\nCid\tid\t' + "9" * 5000 + "\n")
    kg = load_graph(kb)
    assert kg.neighbors("Ann", "age") == ['"abc"'] and kg.neighbors("Bob", "age") == ['"41"^^xsd:integer']
    assert kg.load_report.ill_typed == 1 and "line 1" in kg.load_report.ill_typed_first[0]
    assert "not values of their datatype" in caplog.text and "not of their datatype" in str(kg.load_report)


@pytest.mark.parametrize("node, kind", [
    ('"1998"^^xsd:gYear', "year"), ('"12"^^xsd:integer', "number"), ('"1.5"^^xsd:double', "number"),
    ('"1998-05-01"^^xsd:date', "date"), ('"Ann"', "text"), ('"Ann"@de', "text"),
    ('"x"^^<http://example.org/dt#shoeSize>', "shoe size")])
def test_a_value_says_what_kind_it_is(node, kind):
    from rra.graph.literals import value_kind

    assert value_kind(node) == kind
