"""`runner=ray` (rra.eval.ray_infer): Ray Data actors answer the split into shards that merge into
what one process answers; a driver killed mid-way resumes with nothing lost or counted twice.
One local Ray session (2 CPUs) for the module: Ray starts in several seconds."""
import pytest
from shard_checks import differences, read_predictions, same_answers

from rra.eval import report, shards

ray = pytest.importorskip("ray", reason="runner=ray needs the `ray` extra (pip install 'rra[ray]')")
pytest.importorskip("ray.data")


@pytest.fixture(scope="module", autouse=True)
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def run_ray(infer_cfg, out, *overrides):
    from hydra.utils import instantiate

    cfg = infer_cfg("runner=ray", *overrides)
    cfg.paths.output_dir = str(out)
    return instantiate(cfg.runner)(cfg)  # what infer.py does


def test_two_ray_workers_answer_what_one_process_answers(infer_cfg, single_run, tmp_path):
    metrics, preds = single_run
    got = run_ray(infer_cfg, tmp_path, "runner.num_workers=2", "runner.num_shards=3")
    assert got["new_questions"] == metrics["n"] and got["num_workers"] == 2 and got["num_shards"] == 3
    assert same_answers(got, metrics) == {}
    assert differences(read_predictions(tmp_path), preds) == []
    assert [len(read_predictions(d)) for d in shards.shard_dirs(tmp_path)] == [8, 8, 8]
    assert "3 shards merged" in (tmp_path / "summary.md").read_text()
    # run again: every shard is complete, nothing is asked
    again = run_ray(infer_cfg, tmp_path, "runner.num_workers=2")
    assert again["new_questions"] == 0 and same_answers(again, metrics) == {}


def test_a_killed_ray_run_resumes_with_nothing_lost_or_counted_twice(infer_cfg, single_run, tmp_path, monkeypatch):
    """The driver is the only writer of the shards: killed after 10 answers (between two lines, and
    a torn line left behind), the same command answers only the other 14."""
    metrics, preds = single_run
    write = report.PredictionWriter.write
    written = []

    def dies(self, pred):
        if len(written) == 10:
            with self.path.open("a") as f:
                f.write('{"qid": "torn')
            raise KeyboardInterrupt  # what the driver sees on Ctrl-C; a SIGKILL leaves the same files
        write(self, pred)
        written.append(pred["qid"])

    monkeypatch.setattr(report.PredictionWriter, "write", dies)
    with pytest.raises(KeyboardInterrupt):
        run_ray(infer_cfg, tmp_path, "runner.num_workers=2")
    monkeypatch.undo()
    assert not (tmp_path / "metrics.json").exists()
    resumed = run_ray(infer_cfg, tmp_path, "runner.num_workers=2")
    assert resumed["new_questions"] == metrics["n"] - 10
    qids = [p["qid"] for d in shards.shard_dirs(tmp_path) for p in read_predictions(d)]
    assert sorted(qids) == sorted(p["qid"] for p in preds)  # each once
    assert same_answers(resumed, metrics) == {}
    assert differences(read_predictions(tmp_path), preds) == []


def test_a_worker_that_cannot_start_names_the_cause(infer_cfg, tmp_path):
    """No checkpoint where the config says: the driver raises the workers' own error (one line in
    infer.py), not Ray's restarts and wrapped tracebacks."""
    with pytest.raises(FileNotFoundError, match="no retriever checkpoint at .*missing.ckpt"):
        run_ray(infer_cfg, tmp_path, "runner.num_workers=1", f"retriever.ckpt={tmp_path / 'missing.ckpt'}")
