"""Every query text stays one well-formed read-only SELECT, whatever the values put into it."""
from __future__ import annotations

import pyoxigraph as ox
import pytest

from rra.graph import RdfMapping
from rra.graph import queries as q

PAYLOADS = ['"', "\\", "'", "}", "> } ; DROP ALL ; #", '" } ; DROP ALL ; #', "\\u0022 } ; DROP ALL",
            "\\\"", "a\nb\rc\td", "%3E", "<http://x>", "?s ?p ?o", "東京 🎬", "^r", "#", "x\x00y\x7f"]


def built(m: RdfMapping, text: str) -> list[str]:
    rel = text.lstrip("^") or "r"
    return [
        q.has_entity(m, text), q.labels(m, [text, "b"]), q.relations(m, text), q.triples(m, text),
        q.neighbors(m, [text, "b"], rel, False), q.neighbors(m, [text], rel, True),
        q.path(m, text, [rel, "^" + rel]),
        *(q.find_entities(m, text, mode) for mode in ("exact", "casefold", "substring")),
    ]


@pytest.mark.parametrize("text", PAYLOADS)
def test_payloads_stay_inside_their_terms(text):
    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode("http://x/a"), ox.NamedNode("http://x/r"), ox.NamedNode("http://x/b")))
    for query in built(RdfMapping(), text):
        assert query.startswith("SELECT ")
        list(store.query(query))  # parses (a broken-out payload would not) and runs
        with pytest.raises(SyntaxError):
            store.update(query)  # not an update, whatever the payload
    assert len(store) == 1


def test_bad_match_mode():
    with pytest.raises(ValueError):
        q.find_entities(RdfMapping(), "x", "regex")
