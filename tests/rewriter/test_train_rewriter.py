"""`python train.py task=rewriter` end to end (compose API) with a tiny random Llama and a WebNLG-
shaped fixture folder: fit, validation loss, test BLEU/chrF, published self-describing checkpoint."""
from pathlib import Path

from rra.training.run import train


def test_train_task_rewriter_publishes_a_loadable_checkpoint(cfg_train, tmp_path: Path, webnlg_root: Path):
    train_tiny_rewriter(cfg_train, tmp_path, webnlg_root, ["data.batch_size=2", "trainer.max_steps=4", "trainer.val_check_interval=2"])


def test_a_step_budget_shorter_than_the_validation_interval_still_validates(cfg_train, tmp_path: Path,
                                                                            webnlg_root: Path):
    """`trainer.max_steps=150` with the task's interval of 200 once ended with no validation: no best
    checkpoint published and the sweep metric missing (val/loss_best)."""
    # 4 batches an epoch: an interval of 3 batches is valid, but 2 steps end training before it
    train_tiny_rewriter(cfg_train, tmp_path, webnlg_root, ["data.batch_size=1", "trainer.max_steps=2", "trainer.val_check_interval=3"])


def train_tiny_rewriter(cfg_train, tmp_path: Path, webnlg_root: Path, budget: list[str]):
    from rra.models.rewriter import RewriterModule, TINY_CONFIG

    tiny = "{" + ",".join(f"{k}:{v}" for k, v in TINY_CONFIG.items()).replace("True", "true") + "}"
    data = [o for o in budget if o.startswith("data=")]
    overrides = [
        "task=rewriter", *data, "callbacks.progress_bar=null", "callbacks.early_stopping=null",
        f"data.root={webnlg_root}", "data.test_size=2",  # a data= in `budget` replaces WebNLG
        f"model.model_config={tiny}", "model.pretrained=false", "model.freeze_embeddings=false",
        "model.train_last_layers=null", "model.max_new_tokens=8", "model.lr=3e-3", "model.warmup_steps=0",
        *[o for o in budget if o not in data],
    ]
    metrics = train(cfg_train(overrides))
    assert {"train/loss_step", "val/loss", "val/loss_best", "test/loss", "test/bleu", "test/chrf"} <= set(metrics)
    assert 0.0 <= metrics["test/chrf"] <= 100.0
    best = tmp_path / "checkpoints" / "rewriter" / "best.ckpt"
    assert best.is_file() and (tmp_path / "run" / "checkpoints" / "last.ckpt").is_file()
    loaded = RewriterModule.load(best)
    assert isinstance(loaded.generate(["<S> Alien <P> directed by <O> Ridley Scott"])[0], str)


def test_train_task_rewriter_on_the_rra_corpus(cfg_train, tmp_path: Path):
    """`python train.py task=rewriter data=rra_kg2text data.parts=[metaqa]` on corpus-shaped files."""
    import json

    corpus = tmp_path / "rra_kg2text"
    corpus.mkdir()
    head = "Your task is to transform a knowledge graph to a sentence or multiple sentences. The knowledge graph is: "
    metaqa = [{"instruction": f"{head}(Film {i}, directed_by, Ann, Jr.) (Film {i}, release_year, 19{i:02d}). "
                              "The sentence is:", "input": "", "output": f"Film {i} was directed by Ann, Jr."}
              for i in range(12)]
    (corpus / "metaqa_dev.json").write_text(json.dumps(metaqa))
    train_tiny_rewriter(cfg_train, tmp_path, corpus, ["data=rra_kg2text", "data.parts=[metaqa]",
                                                      "data.sources.metaqa.heldout=4", "data.val_size=2",
                                                      "data.batch_size=2", "trainer.max_steps=3",
                                                      "trainer.val_check_interval=2"])
