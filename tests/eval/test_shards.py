"""`python infer.py shard=i num_shards=n` (no Ray, any scheduler) and `python -m rra.eval.merge`:
the merged shards answer exactly what one process answers, a shard killed mid-way is resumed with
nothing lost or counted twice, and shards that are not one run are refused."""
import json
import shutil

import pytest
from shard_checks import differences, read_predictions, same_answers

from rra.eval import merge, report, shards
from rra.eval.run import run_split


def run_shards(infer_cfg, out, n, *overrides):
    return [run_split(infer_cfg(f"shard={i}", f"num_shards={n}", *overrides), out) for i in range(n)]


class Killed(BaseException):
    """What a SIGKILL does to a run, as far as its files go: it stops between two written answers."""


def kill_after(monkeypatch, n: int) -> None:
    write = report.PredictionWriter.write
    count = {"n": 0}

    def counting(self, pred):
        if count["n"] == n:
            raise Killed()
        write(self, pred)
        count["n"] += 1

    monkeypatch.setattr(report.PredictionWriter, "write", counting)


def test_merged_shards_equal_one_process(infer_cfg, single_run, tmp_path):
    metrics, preds = single_run
    parts = run_shards(infer_cfg, tmp_path, 3)
    assert [p["n"] for p in parts] == [8, 8, 8]
    assert [d.name for d in shards.shard_dirs(tmp_path)] == ["shard-0-of-3", "shard-1-of-3", "shard-2-of-3"]
    assert merge.main([str(tmp_path)]) == 0
    merged = json.loads((tmp_path / "metrics.json").read_text())
    assert same_answers(merged, metrics) == {} and merged["num_shards"] == 3
    assert differences(read_predictions(tmp_path), preds) == []  # same answers, same order
    summary = (tmp_path / "summary.md").read_text()
    assert "3 shards merged" in summary and f"Questions: {metrics['n']}" in summary
    # the merged run dir is a finished run: a plain resume there answers nothing new
    again = run_split(infer_cfg(), tmp_path)
    assert again["new_questions"] == 0 and same_answers(again, metrics) == {}


def test_a_shard_killed_mid_way_resumes_with_nothing_lost_or_counted_twice(infer_cfg, single_run, tmp_path,
                                                                           monkeypatch):
    metrics, preds = single_run
    run_split(infer_cfg("shard=0", "num_shards=2"), tmp_path)
    kill_after(monkeypatch, 5)
    with pytest.raises(Killed):
        run_split(infer_cfg("shard=1", "num_shards=2"), tmp_path)
    monkeypatch.undo()
    killed = tmp_path / "shard-1-of-2"
    with (killed / "predictions.jsonl").open("a") as f:
        f.write('{"qid": "builtin-test-17", "quest')  # and the line it was writing when it died, cut short
    assert not (killed / "metrics.json").exists() and not shards.is_complete(killed)
    with pytest.raises(shards.ShardError, match="7 of 12 questions are not answered yet.*re-run shard 1"):
        merge.merge(shards.shard_dirs(tmp_path), tmp_path)
    # the scheduler resubmits both: the complete shard does no work, the killed one only its rest
    monkeypatch.setattr("rra.eval.run.build", lambda cfg: pytest.fail("a complete shard built the method"))
    assert run_split(infer_cfg("shard=0", "num_shards=2"), tmp_path)["n"] == 12
    monkeypatch.undo()
    resumed = run_split(infer_cfg("shard=1", "num_shards=2"), tmp_path)
    assert resumed["new_questions"] == 7 and resumed["n"] == 12
    qids = [p["qid"] for p in read_predictions(killed)]
    assert len(qids) == len(set(qids)) == 12  # the torn line dropped, nothing written twice
    merged = merge.merge(shards.shard_dirs(tmp_path), tmp_path)
    assert same_answers(merged, metrics) == {}
    assert differences(read_predictions(tmp_path), preds) == []


def test_merge_refuses_shards_that_are_not_one_run(infer_cfg, tmp_path):
    run_shards(infer_cfg, tmp_path / "a", 2)
    run_split(infer_cfg("shard=1", "num_shards=2", "seed=7"), tmp_path / "b")  # another setup
    other = tmp_path / "b" / "shard-1-of-2"
    with pytest.raises(shards.ShardError, match="another setup.*seed: 0 -> 7"):
        merge.merge([tmp_path / "a" / "shard-0-of-2", other], tmp_path / "m")
    with pytest.raises(shards.ShardError, match=r"shards \[1\] of 2 are missing"):
        merge.merge([tmp_path / "a" / "shard-0-of-2"], tmp_path / "m")
    with pytest.raises(shards.ShardError, match="shard-0-of-2 is given twice"):
        merge.merge([tmp_path / "a" / "shard-0-of-2"] * 2, tmp_path / "m")
    shutil.copytree(tmp_path / "a" / "shard-0-of-2", tmp_path / "copy")  # the same shard, from two machines
    with pytest.raises(shards.ShardError, match="shard 0 of 2 is given twice"):
        merge.merge([tmp_path / "a" / "shard-0-of-2", tmp_path / "copy"], tmp_path / "m")
    run_split(infer_cfg("shard=0", "num_shards=3"), tmp_path / "a")  # another slicing, in the same dir
    with pytest.raises(shards.ShardError, match="another question list or slicing"):
        merge.merge(shards.shard_dirs(tmp_path / "a"), tmp_path / "a")
    # an answer written into the wrong shard would be counted twice
    first = read_predictions(tmp_path / "a" / "shard-0-of-2")[0]
    with (tmp_path / "a" / "shard-1-of-2" / "predictions.jsonl").open("a") as f:
        f.write(json.dumps(first) + "\n")
    with pytest.raises(shards.ShardError, match="not this shard's.*count them twice"):
        merge.merge([tmp_path / "a" / "shard-0-of-2", tmp_path / "a" / "shard-1-of-2"], tmp_path / "m")
    assert not (tmp_path / "m" / "metrics.json").exists()
    assert merge.main([str(tmp_path / "a")]) == 2  # the CLI says why, in one line


def test_a_shard_resumed_over_another_question_list_is_refused(infer_cfg, tmp_path):
    from rra.eval.integrity import ResumeMismatchError

    run_split(infer_cfg("shard=0", "num_shards=2"), tmp_path)
    with pytest.raises(ResumeMismatchError, match="limit: 24 -> 30; split_n: 24 -> 30"):
        run_split(infer_cfg("shard=0", "num_shards=2", "limit=30"), tmp_path)
    started_over = run_split(infer_cfg("shard=0", "num_shards=2", "limit=30", "resume=false"), tmp_path)
    assert started_over["n"] == started_over["new_questions"] == 15


@pytest.mark.parametrize("overrides, message", [
    (["shard=0"], "give both shard=i and num_shards=n"),
    (["shard=2", "num_shards=2"], "0 <= shard < num_shards"),
    (["shard=0", "num_shards=0"], "num_shards >= 1"),
])
def test_bad_shard_settings_are_one_clear_error(infer_cfg, tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        run_split(infer_cfg(*overrides), tmp_path)
    assert not any(tmp_path.iterdir())


def test_slices_are_contiguous_cover_everything_once_and_differ_by_at_most_one():
    for total in (0, 1, 7, 24, 101):
        for n in (1, 2, 3, 8):
            parts = [shards.ShardSpec(i, n).select(list(range(total))) for i in range(n)]
            assert [x for p in parts for x in p] == list(range(total))
            assert max(map(len, parts)) - min(map(len, parts)) <= 1
