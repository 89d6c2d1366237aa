"""Literal values in a KG: how they are told apart from entities, and what they are worth.

A literal node's id is its N-Triples form, with XSD datatypes abbreviated:

    "1985"^^xsd:gYear     "1.83"^^xsd:decimal     "1990-05-17"^^xsd:date     "Ann"@en     "Ann"

so an entity `1985` and the year "1985"^^xsd:gYear are two nodes on every backend (NetworkX, the
embedded store and a SPARQL endpoint, where the literal is an RDF literal and the entity an IRI),
`is_literal` tells them apart through the `KnowledgeGraph` protocol, and `literal_term` turns the
id back into the RDF term a query needs. Literals come from N-Triples / RDF files (typed, language
tagged or plain) and from TSV / pipe cells written in that syntax; a bare cell (`1985`) stays an
entity, as in MetaQA, and still compares as a number through `parse_literal`.

`parse_literal` is the one place where a value becomes comparable (int, float, date, datetime or
str); `compare` and `order_key` apply a question's condition ("after 2000", "the oldest") to it.
"""
from __future__ import annotations

import datetime as dt
import re

# the literal syntax of node ids lives with the other RDF term syntax (rdf.py); re-exported here
from rra.graph.rdf import (XSD, canonical_literal, display, is_literal, literal_id, literal_term,  # noqa: F401
                           split_literal)

INTEGER_TYPES = {"integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                 "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedLong", "unsignedShort",
                 "unsignedByte"}
FLOAT_TYPES = {"decimal", "double", "float"}
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$")
_DATE = re.compile(r"^(-?\d{4})-(\d{2})-(\d{2})(?:Z|[+-]\d{2}:\d{2})?$")
_YEAR_MONTH = re.compile(r"^(-?\d{4})-(\d{2})(?:Z|[+-]\d{2}:\d{2})?$")
_YEAR = re.compile(r"^(-?\d{4})(?:Z|[+-]\d{2}:\d{2})?$")

Value = int | float | dt.date | dt.datetime | str


def parse_literal(node: str, datatype: str | None = None) -> Value:
    """The value of a node: int, float, date, datetime, or the text itself.

    A literal id is read by its datatype (xsd:integer -> int, xsd:decimal/double -> float,
    xsd:gYear -> int year, xsd:date -> date, xsd:dateTime -> datetime, xsd:gYearMonth -> date on the
    1st); an untyped value (a plain literal, a TSV cell, an entity id like MetaQA's `1985`, or the
    text a question gives) by its form: integer, decimal, YYYY-MM-DD, else str. `datatype` forces
    a datatype for a bare lexical form."""
    if is_literal(node):
        node, datatype, _ = split_literal(node)
    text = node.strip()
    name = datatype[len(XSD):] if datatype and datatype.startswith(XSD) else None
    try:
        if name in INTEGER_TYPES:
            return _int(text)
        if name in FLOAT_TYPES:
            return float(text)
        if name == "gYear":
            return int(_YEAR.match(text).group(1))
        if name == "gYearMonth":
            m = _YEAR_MONTH.match(text)
            return dt.date(int(m.group(1)), int(m.group(2)), 1)
        if name == "date":
            m = _DATE.match(text)
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if name == "dateTime":
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (AttributeError, ValueError, OverflowError):
        return node  # ill-typed ("abc"^^xsd:integer): the text, which compares with nothing numeric
    if name is None or name == "string":
        if _INT.match(text):
            return _int(text)
        if _FLOAT.match(text):
            return float(text)
        m = _DATE.match(text)
        if m:
            try:
                return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                return node
    return node


# Python refuses to read an int of more than 4,300 digits from text (sys.get_int_max_str_digits);
# such a number (a 5,000-digit cell) is read as a float instead: inf, which still compares right.
MAX_INT_DIGITS = 4000


def _int(text: str) -> int | float:
    return int(text) if len(text) <= MAX_INT_DIGITS else float(text)


def _aligned(a: Value, b: Value) -> tuple | None:
    """The two values in one comparable kind, or None when they do not compare (text vs number).
    A date against a bare year compares by its year: "born after 1990" holds for 1992-03-01."""
    def number(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    def day(x):
        return x.date() if isinstance(x, dt.datetime) else x

    if number(a) and number(b):
        return a, b
    if isinstance(a, dt.date) and isinstance(b, dt.date):
        return day(a), day(b)
    if isinstance(a, dt.date) and isinstance(b, int):
        return a.year, b
    if isinstance(a, int) and isinstance(b, dt.date):
        return a, b.year
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold(), b.casefold()
    return None


OPERATORS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             ">=": lambda a, b: a >= b, "=": lambda a, b: a == b, "==": lambda a, b: a == b,
             "!=": lambda a, b: a != b}


def compare(value: Value | str, op: str, other: Value | str) -> bool:
    """`value op other` as values (strings are parsed first, so "1985"^^xsd:gYear > "1980" holds);
    False when the two do not compare (a name against a number). Text only supports = and !=."""
    if op not in OPERATORS:
        raise ValueError(f"unknown comparison {op!r}; expected one of {', '.join(OPERATORS)}")
    a = parse_literal(value) if isinstance(value, str) else value
    b = parse_literal(other) if isinstance(other, str) else other
    pair = _aligned(a, b)
    if pair is None or (isinstance(pair[0], str) and op not in ("=", "==", "!=")):
        return False
    return OPERATORS[op](*pair)


def order_key(value: Value | str) -> tuple[int, float] | None:
    """A sort key for "the largest / earliest": numbers by value, dates and years on one time line
    (a year sorts as its 1 January); None for text, which has no order here."""
    v = parse_literal(value) if isinstance(value, str) else value
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        try:
            return (0, float(v))
        except OverflowError:  # an int beyond the float range: as far out as a float goes
            return (0, float("inf") if v > 0 else float("-inf"))
    if isinstance(v, dt.datetime):
        v = v.date()
    if isinstance(v, dt.date):
        return (0, v.year + (v.timetuple().tm_yday - 1) / 366)
    return None


def value_forms(text: str) -> list[str]:
    """The literal node ids a value written as plain text may have in a KG, by value: "2017" (or
    "2017.0") may be `"2017"^^xsd:gYear`, `"2017"^^xsd:integer`, `"2017"^^xsd:decimal`,
    `"2.017E3"^^xsd:double` or the plain string `"2017"`; "1.50" may be `"1.5"^^xsd:decimal`;
    "2017-05-01" may be `"2017-05-01"^^xsd:date`. Canonical ids, as every backend's nodes are.

    Wikidata writes every time value as an xsd:dateTime at midnight UTC, whatever its precision (a
    year is its 1 January: "2017-01-01T00:00:00Z"), so a year or a day written as text may also be
    that dateTime, and a midnight dateTime written as text ("2017-05-01T00:00:00Z", as a dataset
    drawn from Wikidata gives it) may also be the day (and, on 1 January, the year)."""
    t = text.strip()
    forms = [literal_id(t)]
    value = parse_literal(t) if t and len(t) <= MAX_INT_DIGITS else t
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
        value = int(value)
    if isinstance(value, str) and _DATE_TIME.match(t):
        try:
            value = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
        except ValueError:
            pass
    if isinstance(value, int) and not isinstance(value, bool):
        n = str(value)
        forms += [literal_id(n), *(literal_id(n, XSD + name) for name in ("integer", "decimal", "double", "float"))]
        if -9999 <= value <= 9999:
            year = f"{'-' if value < 0 else ''}{abs(value):04d}"
            forms += [literal_id(year, XSD + "gYear"), *_midnight_forms(f"{year}-01-01")]
    elif isinstance(value, float):
        forms += [literal_id(repr(value)), literal_id(t, XSD + "decimal"), literal_id(repr(value), XSD + "decimal"),
                  literal_id(repr(value), XSD + "double"), literal_id(repr(value), XSD + "float")]
    elif isinstance(value, dt.datetime):
        forms.append(canonical_literal(literal_id(t, XSD + "dateTime")) or literal_id(t, XSD + "dateTime"))
        if _at_midnight_utc(value):
            day = value.date()
            forms += [literal_id(day.isoformat(), XSD + "date"), *_midnight_forms(day.isoformat())]
            if (day.month, day.day) == (1, 1):
                forms.append(literal_id(f"{day.year:04d}", XSD + "gYear"))
    elif isinstance(value, dt.date):
        forms += [literal_id(value.isoformat(), XSD + "date"), *_midnight_forms(value.isoformat())]
    elif _YEAR_MONTH.match(t):
        forms.append(literal_id(t, XSD + "gYearMonth"))
    return list(dict.fromkeys(forms))


_DATE_TIME = re.compile(r"^-?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?$")


def _at_midnight_utc(value: dt.datetime) -> bool:
    """A dateTime that only says which day: midnight, in UTC or with no zone (Wikidata's form)."""
    return value.time() == dt.time(0) and (value.tzinfo is None or value.utcoffset() == dt.timedelta(0))


def _midnight_forms(day: str) -> list[str]:
    """The dateTime ids of a day's midnight, with and without the UTC zone."""
    return [literal_id(f"{day}T00:00:00Z", XSD + "dateTime"), literal_id(f"{day}T00:00:00", XSD + "dateTime")]


def value_text(node: str) -> str | None:
    """A number's or a date's text as scoring compares it, one per value ("2017.0" and
    `"2.017E3"^^xsd:double` -> "2017", "1.50" -> "1.5"; a dateTime at midnight UTC, as Wikidata writes
    every date, -> its day "2017-05-01"); None for anything that is not one."""
    value = parse_literal(node) if len(node) <= MAX_INT_DIGITS else node
    if isinstance(value, bool) or isinstance(value, str):
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return str(int(value)) if value.is_integer() and abs(value) < 1e18 else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dt.datetime) and _at_midnight_utc(value):
        return value.date().isoformat()  # Wikidata's dates: a day, whatever the clock says at 00:00
    return value.isoformat()


_VALUE_KINDS = {"gYear": "year", "gYearMonth": "month", "date": "date", "dateTime": "date and time",
                "boolean": "true or false", "anyURI": "web address", "duration": "duration"}


def value_kind(node: str) -> str:
    """What kind of value a literal node is, in words a question uses for it: "year", "date",
    "number", "text" (plain, language-tagged and xsd:string), else its datatype's name in words
    (`xsd:gMonthDay` -> "g month day"). What the plan ranker reads of a chain ending in values
    ("in what year ..." against a chain that walks on from the year)."""
    _, datatype, _ = split_literal(node)
    if not datatype:
        return "text"
    name = datatype[len(XSD):] if datatype.startswith(XSD) else re.split(r"[/#:]", datatype)[-1]
    if name in INTEGER_TYPES or name in FLOAT_TYPES:
        return "number"
    if name in ("string", "langString", "normalizedString", "token"):
        return "text"
    if name == "dateTime" and isinstance(v := parse_literal(node), dt.datetime) and _at_midnight_utc(v):
        return "date"  # Wikidata's dates (and years) are dateTimes at midnight: a day, not a clock time
    return _VALUE_KINDS.get(name) or re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()
