import json

from rra.eval.metrics import compute_metrics
from rra.eval.report import PredictionWriter, read_predictions, summary_markdown
from rra.records import Prediction


def test_writer_streams_and_resume_skips_written_qids(tmp_path):
    path = tmp_path / "run" / "predictions.jsonl"
    with PredictionWriter(path) as w:
        w.write(Prediction("a", "q1", ["x"]))
        w.write(Prediction("b", "q2", ["y"]))
        # flushed per line: readable while the writer is still open
        assert [d["qid"] for d in read_predictions(path)] == ["a", "b"]
    with path.open("a") as f:
        f.write('{"qid": "c", "quest')  # a line torn by a kill
    w2 = PredictionWriter(path)
    assert w2.done == {"a", "b"}
    w2.write(Prediction("c", "q3", ["z"]))
    w2.close()
    lines = path.read_text().splitlines()
    assert [json.loads(x)["qid"] for x in lines] == ["a", "b", "c"]


def test_summary_says_how_free_form_replies_are_scored():
    preds = [Prediction("a", "q", ["x"], reply="x", gold_answers=["x"], hits_mode="reply"),
             Prediction("b", "q", [], status="no_path", gold_answers=["y"], errors=["no path from y"])]
    text = summary_markdown(compute_metrics(preds), "test", {"method": "rra"},
                            [p.to_dict() for p in preds if p.status != "ok"])
    assert "| Hits@1 (%) | 50.00 |" in text
    assert "appearing anywhere in the reply" in text
    assert "| no_path | 1 |" in text and "no path from y" in text
