"""One spelling per value: the canonical lexical form of an XSD-typed literal.

RDF stores do not agree on how they spell a typed value they read: Oxigraph gives back
`"+5"^^xsd:integer` as "5" and `"1.9e3"^^xsd:double` as "1900", Virtuoso gives "1900.0", NetworkX
keeps what the file says. rra therefore spells every literal node itself, whatever a backend hands
back, so one value has one node id on every backend (rra/graph/rdf.py `literal_id` calls
`canonical` for each typed literal it makes):

    integer and its derived types (int, long, byte, nonNegativeInteger, ...) -> xsd:integer, "123"
    decimal          "1.50" -> "1.5", "2.0" -> "2" (XSD 1.1's form: no point when integral)
    double / float   "1.9e3" -> "1.9E3", "0" -> "0.0E0", "inf" forms -> "INF" / "-INF" / "NaN"
    boolean          "1" -> "true", "0" -> "false"
    date and time types: a zero timezone offset as "Z", trailing zeros of fractional seconds
                     dropped, "24:00:00" as 00:00:00 of the next day; the offset itself is kept
    other datatypes  unchanged

Integer types all become xsd:integer, as Oxigraph does: "5"^^xsd:byte and "5"^^xsd:integer are
the same value. The numeric forms are made from the text, never through Python's int (whose
string conversion refuses more than 4,300 digits), so no input size can make this fail.

A value its datatype does not allow ("abc"^^xsd:integer, "300"^^xsd:byte, "2017-02-30"^^xsd:date)
is *ill-typed*: `canonical` returns None and the caller keeps it as text (a plain literal). That
is the only spelling every store keeps: Virtuoso would load "abc"^^xsd:integer as the integer 0,
which then passes "< 1960".
"""
from __future__ import annotations

import re
import struct
from decimal import Decimal

XSD = "http://www.w3.org/2001/XMLSchema#"
INTEGER = XSD + "integer"

# (lowest, highest) of each integer type; None where XSD sets no bound.
INTEGER_RANGES = {
    "integer": (None, None), "nonNegativeInteger": (0, None), "positiveInteger": (1, None),
    "nonPositiveInteger": (None, 0), "negativeInteger": (None, -1),
    "long": (-2**63, 2**63 - 1), "int": (-2**31, 2**31 - 1), "short": (-2**15, 2**15 - 1), "byte": (-128, 127),
    "unsignedLong": (0, 2**64 - 1), "unsignedInt": (0, 2**32 - 1), "unsignedShort": (0, 2**16 - 1),
    "unsignedByte": (0, 255),
}
WHITESPACE = " \t\n\r"  # what XSD's whiteSpace=collapse removes around a value

_INTEGER = re.compile(r"([+-]?)0*(\d+)")
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?")
_FLOAT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIAL_FLOATS = {"INF": "INF", "+INF": "INF", "-INF": "-INF", "NaN": "NaN"}
_TZ = r"(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?"
_YEAR = r"(-?(?:[1-9]\d{4,}|\d{4}))"
_MONTH, _DAY = r"(0[1-9]|1[0-2])", r"(0[1-9]|[12]\d|3[01])"
_CLOCK = r"(?:([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d+))?|(24):(00):(00)(?:\.(0+))?)"
_DATE_TIME = {
    "gYear": re.compile(_YEAR + _TZ), "gYearMonth": re.compile(f"{_YEAR}-{_MONTH}{_TZ}"),
    "date": re.compile(f"{_YEAR}-{_MONTH}-{_DAY}{_TZ}"),
    "dateTime": re.compile(f"{_YEAR}-{_MONTH}-{_DAY}T{_CLOCK}{_TZ}"), "time": re.compile(_CLOCK + _TZ),
}


def canonical(lexical: str, datatype: str) -> tuple[str, str] | None:
    """(canonical lexical form, datatype IRI) of a typed value, or None when it is ill-typed.
    Datatypes without a rule here come back as they are."""
    name = datatype[len(XSD):] if datatype.startswith(XSD) else None
    rule = _RULES.get(name)
    if rule is None:
        return lexical, datatype
    if name in INTEGER_RANGES:
        text = _integer(lexical.strip(WHITESPACE), *INTEGER_RANGES[name])
        return (text, INTEGER) if text is not None else None
    text = rule(lexical.strip(WHITESPACE), name)
    return (text, datatype) if text is not None else None


def _integer(text: str, low: int | None, high: int | None) -> str | None:
    m = _INTEGER.fullmatch(text)
    if m is None:
        return None
    digits = m.group(2).lstrip("0") or "0"
    text = "-" + digits if m.group(1) == "-" and digits != "0" else digits
    if low is None and high is None:
        return text
    if len(digits) > 25:  # beyond every bounded type; no need to read it as a number
        return None
    value = int(text)
    return text if (low is None or value >= low) and (high is None or value <= high) else None


def _decimal(text: str, _name: str = "") -> str | None:
    m = _DECIMAL.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        return None
    whole = m.group(2).lstrip("0") or "0"
    fraction = (m.group(3) or "").rstrip("0")
    body = f"{whole}.{fraction}" if fraction else whole
    return "-" + body if m.group(1) == "-" and body != "0" else body


def _float(text: str, name: str) -> str | None:
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if _FLOAT.fullmatch(text) is None:
        return None
    value = float(text)  # any length: too large a value reads as inf, as XSD says
    if name == "float":
        return _float32_text(value)
    return _scientific(value, repr(value))


def _float32_text(value: float) -> str:
    """The shortest decimal that reads back as the same 32-bit float."""
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return "INF" if value > 0 else "-INF"
    if single != single or single in (float("inf"), float("-inf")) or single == 0:
        return _scientific(single, repr(single))
    for digits in range(1, 10):
        text = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return _scientific(single, text)
    return _scientific(single, repr(single))


def _scientific(value: float, text: str) -> str:
    """XSD's canonical double: one digit before the point, at least one after, then E and the
    exponent ("1.9E3", "-0.0E0", "1.0E-7")."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0.0E0" if str(value).startswith("-") else "0.0E0"
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    shown = "".join(map(str, digits))
    mantissa = shown[0] + "." + (shown[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{exponent + len(digits) - 1}"


def _boolean(text: str, _name: str = "") -> str | None:
    return {"true": "true", "1": "true", "false": "false", "0": "false"}.get(text)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _zone(tz: str | None) -> str:
    return "Z" if tz in ("+00:00", "-00:00", "Z") else (tz or "")


def _date_time(text: str, name: str) -> str | None:
    m = _DATE_TIME[name].fullmatch(text)
    if m is None:
        return None
    g = m.groups()
    if name == "gYear":
        return g[0] + _zone(g[1])
    if name == "gYearMonth":
        return f"{g[0]}-{g[1]}{_zone(g[2])}"
    if name == "time":
        return _clock(g[:8])[0] + _zone(g[8])
    year, month, day = int(g[0]), int(g[1]), int(g[2])
    if day > _days_in_month(year, month):
        return None
    date = f"{g[0]}-{g[1]}-{g[2]}"
    if name == "date":
        return date + _zone(g[3])
    clock, next_day = _clock(g[3:11])
    if next_day:  # 24:00:00 is the first instant of the next day
        day += 1
        if day > _days_in_month(year, month):
            day, month = 1, month + 1
            if month > 12:
                month, year = 1, year + 1
        sign = "-" if year < 0 else ""
        date = f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"
    return f"{date}T{clock}{_zone(g[11])}"


def _clock(g) -> tuple[str, bool]:
    """("hh:mm:ss[.fff]", whether it was 24:00:00) from the eight groups of _CLOCK."""
    if g[4] is not None:
        return "00:00:00", True
    fraction = (g[3] or "").rstrip("0")
    return f"{g[0]}:{g[1]}:{g[2]}" + (f".{fraction}" if fraction else ""), False


_RULES = {**{name: _integer for name in INTEGER_RANGES}, "decimal": _decimal, "double": _float, "float": _float,
          "boolean": _boolean, **{name: _date_time for name in _DATE_TIME}}
