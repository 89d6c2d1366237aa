import json

import pytest

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


KILL_DURING_REWRITE = r"""
import json, os, signal, sys
from rra.eval import report

calls = {"n": 0}
dumps = json.dumps

def dying_dumps(*a, **k):  # the rewrite of a torn file is under way: die in the middle of it
    calls["n"] += 1
    if calls["n"] == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return dumps(*a, **k)

def dying_replace(*a):  # the new file is complete but not yet in place
    os.kill(os.getpid(), signal.SIGKILL)

report.json.dumps = dying_dumps
report.os.replace = dying_replace
report.PredictionWriter(sys.argv[1], resume=sys.argv[3] == "resume")
"""


@pytest.mark.parametrize("mode", ["resume", "start-over"])
def test_a_kill_while_the_file_is_rewritten_loses_no_answer(tmp_path, mode):
    """Resuming after a kill that tore the last line rewrites the file without it; a second kill
    in the middle of that rewrite, or just before the new file replaces the old (resume=false
    starting over), leaves the old file whole."""
    import subprocess
    import sys

    path = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"qid": f"q{i}", "status": "ok", "answers": ["x" * 20]}) + "\n" for i in range(40_000)]
    path.write_text("".join(lines) + '{"qid": "q40000", "sta', encoding="utf-8")  # torn by a kill
    before = path.read_bytes()
    proc = subprocess.run([sys.executable, "-c", KILL_DURING_REWRITE, str(path), "20000", mode],
                          capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert path.read_bytes() == before  # old file whole: 40,000 answers and the torn line
    writer = PredictionWriter(path)  # resuming without a kill drops only the torn line
    writer.close()
    assert path.read_text(encoding="utf-8") == "".join(lines) and len(writer.done) == 40_000


def test_a_clean_file_is_appended_to_not_rewritten(tmp_path):
    path = tmp_path / "predictions.jsonl"
    with PredictionWriter(path) as w:
        w.write({"qid": "a", "status": "ok"})
    inode = path.stat().st_ino
    with PredictionWriter(path) as w:
        w.write({"qid": "b", "status": "ok"})
    assert path.stat().st_ino == inode and len(path.read_text().splitlines()) == 2


def test_a_lone_surrogate_in_a_question_cannot_fail_the_write(tmp_path):
    """A cut emoji ("\ud83d") reaches the writer as a lone surrogate: the line is written with a
    \\u escape (and reads back the same), the summary escapes it too."""
    from rra.eval.report import read_predictions, summary_markdown, write_text

    path = tmp_path / "predictions.jsonl"
    with PredictionWriter(path) as w:
        w.write({"qid": "a", "question": "who loves \ud83d [Ann]", "status": "ok"})
        w.write({"qid": "b", "question": "plain é", "status": "ok"})
    got = read_predictions(path)
    assert got[0]["question"] == "who loves \ud83d [Ann]" and got[1]["question"] == "plain é"
    assert "plain é" in path.read_text(encoding="utf-8")  # other lines stay readable UTF-8
    text = summary_markdown({"n": 1}, failures=[{"qid": "a", "status": "x", "question": "who loves \ud83d"}])
    write_text(tmp_path / "summary.md", text)
    assert "\\ud83d" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_the_terminal_gets_the_summary_rendered_for_a_person():
    from rra.eval.report import summary_markdown, terminal_text

    failed = {"qid": "q_1", "status": "no_path", "question": "who wrote [x_y] -> z", "errors": ["not_found"]}
    text = summary_markdown({"n": 2, "hits@1": 50.0, "status": {"ok": 1, "no_path": 1}}, "rra infer: one_hop",
                            {"method": "one_hop"}, [failed], ["most LLM calls failed"])
    assert "one\\_hop" in text and "\\[x\\_y\\] -\\>" in text  # summary.md stays escaped markdown
    shown = terminal_text(text)
    assert "\\" not in shown and "**" not in shown and "|" not in shown
    assert "- method: one_hop" in shown and "Warning: most LLM calls failed" in shown
    assert "q_1 no_path: who wrote [x_y] -> z — not_found" in shown
    rows = [line for line in shown.splitlines() if line.startswith(("status", "ok ", "no_path"))]
    assert rows == ["status   questions", "ok       1", "no_path  1"]  # a table as aligned columns
