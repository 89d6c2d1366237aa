"""A KG and questions in Chinese through train.py and infer.py (issue 35), with the packaged English
encoder: both runs say, with the figure, that the encoder reads most of the questions' tokens as
[UNK] and how to switch it; the questions still link from their text (character n-grams); and a run
whose questions mostly name nothing in the KG is flagged as failed, as an LLM-dead run is."""
import json
from pathlib import Path

import pytest

from rra.data.coverage import UNKNOWN_LIMIT
from rra.eval.run import run_split
from rra.training.run import train

FILMS = [("卧虎藏龙", "李安", "周润发"), ("饮食男女", "李安", "郎雄"), ("霸王别姬", "陈凯歌", "张国荣"),
         ("黄土地", "陈凯歌", "薛白"), ("红高粱", "张艺谋", "巩俐"), ("英雄", "张艺谋", "李连杰"),
         ("无间道", "刘伟强", "刘德华"), ("花样年华", "王家卫", "梁朝伟")]
TEMPLATES = [("谁导演了{}", "导演", 1), ("{}的导演是谁", "导演", 1), ("谁主演了{}", "主演", 2), ("{}的主演是谁", "主演", 2)]


def write_dataset(root: Path) -> dict[str, Path]:
    kb = root / "kb.tsv"
    kb.write_text("".join(f"{f}\t导演\t{d}\n{f}\t主演\t{a}\n" for f, d, a in FILMS), encoding="utf-8")
    rows = [{"question": t.format(f[0]), "topic_entities": [f[0]], "answers": [f[k]], "relation_path": [r]}
            for f in FILMS for t, r, k in TEMPLATES]
    files = {"kb": kb, "train": root / "train.jsonl", "test": root / "test.jsonl", "unknown": root / "unknown.jsonl"}
    files["train"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    test = [{k: v for k, v in r.items() if k != "topic_entities"} for r in rows[::3]]  # linked from the text
    files["test"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in test), encoding="utf-8")
    unknown = [{"question": f"谁导演了{name}", "answers": ["?"]} for name in ("大红灯笼", "活着", "秋菊打官司")]
    files["unknown"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in unknown), encoding="utf-8")
    return files


@pytest.fixture(scope="module")
def files_cfg(compose_cfg):
    """files_cfg(name, root, overrides): the real train / infer config with data=files, paths under `root`."""
    return lambda name, root, overrides: compose_cfg(name, ["data=files", *overrides], root)


@pytest.fixture(scope="module")
def trained(files_cfg, tmp_path_factory):
    root = tmp_path_factory.mktemp("zh")
    files = write_dataset(root)
    cfg = files_cfg("train", root, [f"data.kb_path={files['kb']}", f"data.train_file={files['train']}",
                                    "model=retriever_tiny", "trainer.max_epochs=2", "trainer.min_steps=0", "test=false",
                                    "callbacks.progress_bar=null"])
    train(cfg)
    return root, files


def test_train_summary_warns_that_the_encoder_does_not_read_the_language(trained):
    root, _ = trained
    summary = json.loads((root / "run" / "train_summary.json").read_text())
    coverage = summary["encoder_coverage"][0]
    assert coverage["split"] == "train" and coverage["unknown_share"] > UNKNOWN_LIMIT
    assert any(f"{100 * coverage['unknown_share']:.1f}%" in w and "model.encoder=" in w for w in summary["warnings"])


def test_infer_links_chinese_questions_and_warns_about_the_encoder(files_cfg, trained, tmp_path):
    root, files = trained
    cfg = files_cfg("infer", root, [f"data.kb_path={files['kb']}", f"data.test_file={files['test']}",
                                    "method.use_gold_topic=false", "llm=none", "show_summary=false"])
    metrics = run_split(cfg, tmp_path)
    assert metrics["status"] == {"ok": metrics["n"]}  # every topic linked from the text
    assert metrics["encoder_coverage"]["unknown_share"] > UNKNOWN_LIMIT and not metrics["run_failed"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "encoder coverage" in summary and "model.encoder=" in summary


def test_a_run_whose_questions_never_reach_retrieval_is_flagged(files_cfg, trained, tmp_path):
    root, files = trained
    cfg = files_cfg("infer", root, [f"data.kb_path={files['kb']}", f"data.test_file={files['unknown']}",
                                    "method.use_gold_topic=false", "llm=none", "show_summary=false"])
    metrics = run_split(cfg, tmp_path)
    assert metrics["status"] == {"no_topic_entity": 3} and metrics["run_failed"]
    assert any("ended before retrieval" in w for w in metrics["warnings"])
    assert "This run failed as a measurement" in (tmp_path / "summary.md").read_text(encoding="utf-8")
