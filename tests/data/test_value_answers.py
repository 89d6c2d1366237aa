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
