"""Per-question benchmark files as a user has them (issue 37 items 1, 2): hand-written WebQSP rows in
RoG format (bench/kgs/webqsp_rows.py), a retriever trained on them, then inference as the README
writes it, with the test file alone; the oracle LLM's ceiling on per-question graphs."""
import json

import pytest

from bench.kgs.webqsp_rows import ROG_ROWS, write_jsonl

TRAIN = ["model=retriever_tiny", "trainer.max_epochs=3", "callbacks.early_stopping=null",
         "callbacks.progress_bar=null", "test=false"]


@pytest.fixture(scope="session")
def subgraphs_cfg(compose_cfg):
    """subgraphs_cfg(name, root, overrides): conf/NAME.yaml with data=subgraphs, paths under `root`."""
    return lambda name, root, overrides: compose_cfg(name, ["data=subgraphs", *overrides], root)


@pytest.fixture(scope="module")
def webqsp(subgraphs_cfg, tmp_path_factory):
    """A retriever trained on the hand-written rows (train and dev files), and a test file."""
    from rra.training.run import train

    root = tmp_path_factory.mktemp("webqsp")
    train_file = write_jsonl(root / "train.jsonl", ROG_ROWS)
    dev_file = write_jsonl(root / "dev.jsonl", ROG_ROWS[:2])
    test_file = write_jsonl(root / "test.jsonl", ROG_ROWS)
    train(subgraphs_cfg("train", root, TRAIN + [f"data.train_file={train_file}", f"data.val_file={dev_file}",
                                              "name=webqsp"]))
    ckpt = root / "checkpoints" / "webqsp" / "best.ckpt"
    assert ckpt.is_file()
    return root, ckpt, test_file


def test_infer_reads_the_checkpoint_and_the_test_file_alone(subgraphs_cfg, webqsp, tmp_path):
    """README: `python infer.py data=subgraphs data.test_file=... retriever.ckpt=...`: no training
    file, and no relation vocabulary taken from the generated sample."""
    from rra.eval.run import run_split

    root, ckpt, test_file = webqsp
    cfg = subgraphs_cfg("infer", root, [f"data.test_file={test_file}", f"retriever.ckpt={ckpt}", "llm=none"])
    metrics = run_split(cfg, tmp_path)
    assert metrics["n"] == 3 and set(metrics["status"]) <= {"ok", "no_path"}
    preds = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert [p["qid"] for p in preds] == ["WebQTrn-0", "WebQTrn-1", "WebQTrn-2"]  # the file's, not the sample's
    assert metrics["cvts_folded"] >= 2  # the sibling and the performance CVTs


def test_a_split_without_its_file_names_the_key(subgraphs_cfg, webqsp, tmp_path):
    from rra.eval.run import run_split

    root, ckpt, test_file = webqsp
    cfg = subgraphs_cfg("infer", root, [f"data.test_file={test_file}", f"retriever.ckpt={ckpt}", "llm=none",
                                      "split=val"])
    with pytest.raises(ValueError, match=r"set data.val_file=FILE"):
        run_split(cfg, tmp_path)


@pytest.mark.parametrize("method", ["tog", "structgpt", "rra"])
def test_the_oracle_ceiling_on_per_question_graphs(subgraphs_cfg, webqsp, tmp_path, method):
    """llm=oracle learns each question's gold labels inside its own subgraph, on the package's own
    sample (its default) and on the hand-written rows."""
    from rra.eval.run import run_split

    root, ckpt, test_file = webqsp
    extra = ["rewriter=llm", "answer=llm", f"retriever.ckpt={ckpt}"] if method == "rra" else []
    for data, n in (([], 6), ([f"data.test_file={test_file}"], 3)):
        cfg = subgraphs_cfg("infer", root, [f"method={method}", "llm=oracle", "limit=6", *data, *extra])
        metrics = run_split(cfg, tmp_path / str(n))
        assert metrics["llm_oracle"] is True and metrics["n"] == n
        assert set(metrics["status"]) <= {"ok", "no_path"}, metrics["status"]
        assert metrics["hits@1"] > 0
