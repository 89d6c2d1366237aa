"""Gold answers that are values (issue 35): "2017", "2017.0", the N-Triples form and the internal id
all name the KG's `"2017"^^xsd:gYear`, supervise the path that reaches it, and score against it;
dates and decimals alike, on every backend."""
import pytest

from rra.data.supervision import ANSWER_MISSING, label_examples
from rra.eval.metrics import compute_metrics
from rra.eval.run import name_gold_answers, with_gold
from rra.graph import load_graph
from rra.records import Prediction, QAExample

E, R, X = "http://rra.local/entity/", "http://rra.local/relation/", "http://www.w3.org/2001/XMLSchema#"
SCHOLARLY_NT = "".join(f"{line} .\n" for line in [
    f'<{E}paper1> <{R}published_in> "2017"^^<{X}gYear>',
    f'<{E}paper1> <{R}published_on> "2017-05-01"^^<{X}date>',
    f'<{E}paper1> <{R}impact> "1.50"^^<{X}decimal>',
    f'<{E}paper1> <{R}written_by> <{E}ann>',
    f'<{E}paper2> <{R}published_in> "2019"^^<{X}gYear>',
    f'<{E}paper2> <{R}written_by> <{E}ann>',
    f'<{E}paper2> <{R}cited_by> <{E}paper1>',
    f'<{E}paper1> <http://www.w3.org/2000/01/rdf-schema#label> "Deep Values"',
])
YEAR = '"2017"^^xsd:gYear'
# (relation the question asks, gold answer as a dataset may write it)
WRITTEN = [
    ("published_in", "2017"), ("published_in", "2017.0"), ("published_in", f'"2017"^^<{X}gYear>'),
    ("published_in", YEAR), ("published_on", "2017-05-01"), ("published_on", f'"2017-05-01"^^<{X}date>'),
    ("impact", "1.5"), ("impact", "1.50"), ("impact", '"1.50"^^xsd:decimal'),
]


@pytest.fixture(params=["networkx", "oxigraph"])
def scholarly(request, tmp_path):
    path = tmp_path / "papers.nt"
    path.write_text(SCHOLARLY_NT, encoding="utf-8")
    return load_graph(path, backend=request.param)


def examples():
    return [QAExample(f"what is the {rel} of [Deep Values]", ["paper1"], [answer], qid=str(i), hops=1)
            for i, (rel, answer) in enumerate(WRITTEN)]


def test_value_answers_written_as_text_supervise_their_path(scholarly):
    exs = examples() + [QAExample("when was [Deep Values] published", ["paper1"], ["1999"], qid="x", hops=1)]
    report = label_examples(scholarly, exs, cache_dir=None)
    for ex, (rel, answer) in zip(exs, WRITTEN):
        assert ex.relation_path == [rel], (answer, ex.extra.get("no_path_reason"))
    assert report.covered == len(WRITTEN)
    # the one answer the KG does not hold is the only "no answer in KG"
    assert report.reasons == {ANSWER_MISSING: 1} and exs[-1].extra["no_path_reason"] == ANSWER_MISSING


def test_value_answers_score_against_the_kg_value(scholarly):
    exs = examples()
    name_gold_answers(exs, scholarly)
    held = {rel: scholarly.neighbors("paper1", rel)[0] for rel, _ in WRITTEN}
    assert held == {"published_in": YEAR, "published_on": '"2017-05-01"^^xsd:date', "impact": '"1.5"^^xsd:decimal'}
    preds = [with_gold(Prediction(ex.qid, ex.question, [held[rel]]), ex) for ex, (rel, _) in zip(exs, WRITTEN)]
    for p, (_, answer) in zip(preds, WRITTEN):
        assert compute_metrics([p])["hits@1"] == 100, (answer, p.gold_aliases)
    wrong = with_gold(Prediction("w", "q", ['"2019"^^xsd:gYear']), exs[0])
    assert compute_metrics([wrong])["hits@1"] == 0


def test_a_value_scores_by_value_without_the_kg():
    """"2017.0" against a predicted year, "1900" against a double: one value, one answer."""
    def hits(gold, predicted):
        return compute_metrics([Prediction("q", "q", [predicted], gold_answers=[gold])])["hits@1"]

    assert hits("2017.0", YEAR) == 100 and hits("1900", '"1.9E3"^^xsd:double') == 100
    assert hits("1.50", '"1.5"^^xsd:decimal') == 100 and hits("2017", '"2018"^^xsd:gYear') == 0


# Wikidata writes every time value as an xsd:dateTime at midnight UTC, whatever its precision: a
# year is its 1 January ("2017-01-01T00:00:00Z"), a day its midnight.
WIKIDATA_NT = "".join(f"{line} .\n" for line in [
    f'<{E}paper1> <{R}publication_year> "2017-01-01T00:00:00Z"^^<{X}dateTime>',
    f'<{E}paper1> <{R}publication_date> "2017-05-01T00:00:00Z"^^<{X}dateTime>',
    f'<{E}paper1> <{R}recorded_at> "2017-05-01T09:30:00Z"^^<{X}dateTime>',
    f'<{E}paper2> <{R}publication_year> "2019-01-01T00:00:00Z"^^<{X}dateTime>',
    f'<{E}paper2> <{R}recorded_at> "2019-03-02T09:30:00Z"^^<{X}dateTime>',
    f'<{E}paper2> <{R}cited_by> <{E}paper1>',
])
DATED = [("publication_year", "2017"), ("publication_year", "2017-01-01T00:00:00Z"),
         ("publication_date", "2017-05-01"), ("publication_date", "2017-05-01T00:00:00Z"),
         ("publication_date", f'"2017-05-01T00:00:00Z"^^<{X}dateTime>'), ("recorded_at", "2017-05-01T09:30:00Z")]


@pytest.fixture(params=["networkx", "oxigraph"])
def wikidata_dates(request, tmp_path):
    path = tmp_path / "papers.nt"
    path.write_text(WIKIDATA_NT, encoding="utf-8")
    return load_graph(path, backend=request.param)


def test_wikidata_datetimes_are_the_years_and_days_a_dataset_writes(wikidata_dates):
    """A gold "2017" names the year-precision "2017-01-01T00:00:00Z", "2017-05-01" the day's midnight:
    both supervise the path that reaches it and score against it; a clock time other than midnight
    is not a day, and a year is not any day of it."""
    from rra.data.plan_check import check_questions

    kg = wikidata_dates
    exs = [QAExample(f"what is the {rel} of [paper1]", ["paper1"], [answer], qid=str(i), hops=1)
           for i, (rel, answer) in enumerate(DATED)]
    misses = [QAExample("when was [paper2] recorded", ["paper2"], ["2019-03-02"], qid="clock", hops=1),
              QAExample("in what year was [paper1] published", ["paper1"], ["2018"], qid="year", hops=1)]
    report = label_examples(kg, exs + misses, cache_dir=None)
    for ex, (rel, answer) in zip(exs, DATED):
        assert ex.relation_path == [rel], (answer, ex.extra.get("no_path_reason"))
    assert [m.relation_path for m in misses] == [None, None], [m.extra for m in misses]
    assert report.covered == len(DATED) and report.reasons == {ANSWER_MISSING: 2}
    assert check_questions(exs, kg) == 0  # their paths reach their answers: nothing doubtful
    name_gold_answers(exs, kg)
    preds = [with_gold(Prediction(ex.qid, ex.question, kg.neighbors("paper1", rel)), ex)
             for ex, (rel, _) in zip(exs, DATED)]
    assert [compute_metrics([p])["hits@1"] for p in preds] == [100] * len(DATED)
    day = kg.neighbors("paper1", "publication_date")[0]
    year_gold = with_gold(Prediction("d", "q", [day]), exs[0])  # gold "2017" against 1 May 2017
    assert compute_metrics([year_gold])["hits@1"] == 0


def test_a_midnight_datetime_reads_as_its_day():
    from rra.graph.literals import value_kind, value_text

    assert value_text('"2017-05-01T00:00:00Z"^^xsd:dateTime') == "2017-05-01"
    assert value_text('"2017-05-01T09:30:00Z"^^xsd:dateTime') == "2017-05-01T09:30:00+00:00"
    assert value_kind('"2017-05-01T00:00:00Z"^^xsd:dateTime') == "date"
    assert value_kind('"2017-05-01T09:30:00Z"^^xsd:dateTime') == "date and time"
    hits = compute_metrics([Prediction("q", "q", ['"2017-05-01T00:00:00Z"^^xsd:dateTime'],
                                       gold_answers=["2017-05-01"])])["hits@1"]
    assert hits == 100
