"""Virtuoso helpers that need no server: the private ini and what may reach isql."""
import pytest

from rra.graph.virtuoso import _sql_string, bulk_load, private_ini

TEMPLATE = """[Database]
DatabaseFile       = /var/lib/virtuoso-opensource-7/db/virtuoso.db
ErrorLogFile       = /var/lib/virtuoso-opensource-7/db/virtuoso.log
[Parameters]
ServerPort               = 1111
DirsAllowed              = ., /usr/share/virtuoso-opensource-7/vad
[HTTPServer]
ServerPort                  = 8890
[SPARQL]
ResultSetMaxRows           = 10000
"""


def test_private_ini_keeps_files_in_root_and_binds_loopback(tmp_path):
    template = tmp_path / "template.ini"
    template.write_text(TEMPLATE)
    text = private_ini(tmp_path / "db", 21111, 28890, template).read_text()
    assert f"DatabaseFile = {tmp_path / 'db' / 'virtuoso.db'}" in text and "/var/lib" not in text
    assert "ServerPort = 127.0.0.1:21111" in text and "ServerPort = 127.0.0.1:28890" in text
    assert text.count("ServerPort") == 2 and f", {tmp_path / 'db'}" in text
    assert "ResultSetMaxRows = 100000000" in text  # not 10,000: a cut result is an error (SparqlTruncatedError)


@pytest.mark.parametrize("value", ["kb'); DROP TABLE x; --", "a\\b", "x;y", "line\nbreak"])
def test_values_that_could_change_an_isql_script_are_refused(value):
    with pytest.raises(ValueError, match="refusing"):
        _sql_string(value)


def test_bulk_load_checks_the_graph_iri_and_file_first(tmp_path):
    nt = tmp_path / "kb.nt"
    nt.write_text("<http://a/x> <http://a/r> <http://a/y> .\n")
    with pytest.raises(ValueError, match="not an absolute IRI"):
        bulk_load(nt, "graph'); DROP --")
    with pytest.raises(FileNotFoundError):
        bulk_load(tmp_path / "missing.nt", "http://a/g")


@pytest.mark.virtuoso
def test_a_virtuoso_that_cuts_results_is_an_error_and_linking_goes_on(tmp_path, caplog):
    """A real Virtuoso with a small ResultSetMaxRows: a result it cut is refused (naming the
    setting), not read as the whole; a question whose answers fit is answered; linking from the text
    keeps its exact names and turns fuzzy matching off once, with a warning."""
    import logging

    from graph_small_kg import LABELS, TRIPLES, free_port
    from rra.graph import SparqlGraph, SparqlTruncatedError, write_ntriples
    from rra.graph.virtuoso import VirtuosoServer, binaries
    from rra.linking import TopicLinker
    from rra.records import QAExample

    if binaries() is None:
        pytest.skip("Virtuoso is not installed (apt-get install virtuoso-opensource)")
    write_ntriples(tmp_path / "kg.nt", TRIPLES, LABELS)
    with VirtuosoServer(tmp_path, free_port(), free_port(), result_rows=15) as server:  # the KG has 20 nodes
        server.load(tmp_path / "kg.nt", "http://rra.local/graph/cut")
        kg = SparqlGraph(server.endpoint, trust_env=False, graph_iri="http://rra.local/graph/cut")
        with pytest.raises(SparqlTruncatedError, match="ResultSetMaxRows"):
            kg.all_names()
        assert kg.neighbors("Alien", "directed_by") == ["Ridley Scott"]
        assert kg.names_in_memory  # a loopback endpoint: names read once, where they can be
        with caplog.at_level(logging.WARNING):
            links = TopicLinker(kg, use_gold_topic=False).link_batch(
                [QAExample("who directed Alien", [], [], qid="a"), QAExample("who directed Alein", [], [], qid="b")])
        assert [(x.status, x.entities[:1]) for x in links] == [("ok", ["Alien"]), ("no_topic_entity", [])]
        assert caplog.text.count("fuzzy linking is off") == 1
        # the names did not fit under the cap: case-insensitive lookups went to the store instead, once said
        assert not kg.names_in_memory and caplog.text.count("lookups go to the store") == 1
        assert kg.find_entities("ALIEN", "casefold") == ["Alien", "alien"]
