"""Two runs compared question by question (rra.eval.paired, compare --baseline)."""
import json

import pytest

from rra.eval.compare import main as compare_main
from rra.eval.paired import main, paired_difference, sign_test


def rows(hits: list[bool], prefix: str = "q") -> list[dict]:
    return [{"qid": f"{prefix}{i}", "question": f"question {i}?", "answers": ["Alien" if h else "Titanic"],
             "gold_answers": ["Alien"]} for i, h in enumerate(hits)]


def test_counts_won_and_lost_questions_and_the_difference():
    a = rows([True] * 80 + [False] * 20)
    b = rows([True] * 70 + [False] * 10 + [True] * 20)  # loses q70-q79, wins q80-q99
    d = paired_difference(a, b)
    assert (d["n"], d["a"], d["b"], d["won"], d["lost"], d["tied"]) == (100, 80.0, 90.0, 20, 10, 70)
    assert d["difference"] == 10.0
    low, high = d["ci95"]
    assert low < 10.0 < high and high - low < 25  # an interval around the difference, not a point
    assert d["p_sign_test"] == round(sign_test(20, 10), 4) == 0.0987


def test_sign_test_matches_the_binomial_tail():
    # 2 * P(X <= 2), X ~ Binomial(10, 1/2) = 2 * (1 + 10 + 45) / 1024
    assert sign_test(8, 2) == pytest.approx(2 * 56 / 1024)
    assert sign_test(5, 5) == 1.0 and sign_test(0, 0) == 1.0
    assert 0.0 <= sign_test(0, 3000) < 1e-100  # thousands of questions: no overflow


def test_identical_runs_differ_by_nothing_with_certainty():
    a = rows([True, False] * 50)
    d = paired_difference(a, a)
    assert d["difference"] == 0.0 and d["ci95"] == [0.0, 0.0] and d["p_sign_test"] == 1.0


def test_questions_only_one_run_answered_are_left_out_and_counted():
    a = rows([True] * 10)
    b = rows([True] * 8) + [rows([False], prefix="other")[0]]
    d = paired_difference(a, b)
    assert (d["n"], d["only_a"], d["only_b"]) == (8, 2, 1)


def test_a_resumed_run_counts_each_question_once_by_its_last_row():
    a = rows([True] * 4)
    b = rows([False] * 4) + rows([True] * 4)  # the first rows answered again (a resume)
    assert paired_difference(a, b)["difference"] == 0.0


def test_runs_sharing_no_question_are_a_clear_error():
    with pytest.raises(ValueError, match="share no question"):
        paired_difference(rows([True]), rows([True], prefix="x"))


def test_cli_prints_one_line_and_names_a_missing_file(tmp_path, capsys):
    for name, hits in (("a", [True] * 9 + [False]), ("b", [True] * 10)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(hits)))
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "+10.00 points (90.00 -> 100.00" in out and "1 won / 0 lost of 10" in out
    assert main([str(tmp_path / "a"), str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl: no such predictions file" in capsys.readouterr().err


def test_compare_with_a_baseline_pairs_every_other_run(tmp_path, capsys):
    from rra.eval.metrics import compute_metrics

    for num, (method, hits) in enumerate([("tog", [True] * 6 + [False] * 4), ("rra", [True] * 9 + [False])]):
        run = tmp_path / "multi" / f"{num}_method={method}"
        (run / ".hydra").mkdir(parents=True)
        (run / ".hydra" / "overrides.yaml").write_text(f"- method={method}\n")
        preds = rows(hits)
        (run / "metrics.json").write_text(json.dumps(compute_metrics(preds)))
        (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in preds))
    assert compare_main([str(tmp_path / "multi"), "--out", str(tmp_path / "cmp"), "--baseline", "tog"]) == 0
    table = (tmp_path / "cmp" / "compare.md").read_text()
    assert "Question by question against tog" in table and "rra against tog: +30.00 points" in table
    saved = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert saved["paired"]["baseline"] == "tog" and saved["paired"]["runs"][0]["won"] == 3
    assert compare_main([str(tmp_path / "multi"), "--out", str(tmp_path / "cmp"), "--baseline", "kgqp"]) == 2
    assert "--baseline 'kgqp' names no run; the runs are: tog, rra" in capsys.readouterr().err


def test_trainings_of_several_seeds_are_paired_by_place_and_summed_up(tmp_path, capsys):
    runs = {"a1": [True] * 9 + [False], "a2": [True] * 8 + [False] * 2,
            "b1": [True] * 10, "b2": [True] * 7 + [False] * 3}
    for name, hits in runs.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(hits)))
    a, b = (",".join(str(tmp_path / f"{x}{i}.jsonl") for i in (1, 2)) for x in "ab")
    assert main([a, b]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "+10.00 points" in out[0] and "-10.00 points" in out[1]
    assert out[2] == "over 2 trainings: +0.00 points on average (from -10.00 to +10.00), better in 1, worse in 1; 1 won / 1 lost"
    assert main([a, str(tmp_path / "b1.jsonl")]) == 2
    assert "2 baseline run(s) against 1" in capsys.readouterr().err


def test_a_run_folder_whose_name_holds_a_comma_is_one_run(tmp_path, capsys):
    for name, hits in (("0_method=tog,llm=none", [False] * 4), ("1_method=rra,llm=none", [True] * 4)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(hits)))
    assert main([str(tmp_path / "0_method=tog,llm=none"), str(tmp_path / "1_method=rra,llm=none")]) == 0
    assert "+100.00 points" in capsys.readouterr().out
