"""A tiny random Llama (SmolLM2's tokenizer) learns triples -> text; checkpoints round-trip."""
from pathlib import Path

import lightning as L
import pytest
import torch

from rra.graph.base import Triple
from rra.models.rewriter import TINY_CONFIG, CheckpointError, RewriterModule
from rra.pipeline.rewrite import TrainedRewriter

PAIRS = [
    ("<S> Alien <P> directed by <O> Ridley Scott", "Alien was directed by Ridley Scott."),
    ("<S> Heat <P> release year <O> 1995", "Heat came out in 1995."),
]


def tiny(tokenizer_state, **kw) -> RewriterModule:
    torch.manual_seed(0)
    return RewriterModule(model_config=TINY_CONFIG, pretrained=False, tokenizer_state=tokenizer_state,
                          freeze_embeddings=False, max_new_tokens=16, **kw)


def overfit(model: RewriterModule, steps: int = 40) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3)
    losses = []
    for _ in range(steps):
        loss = model.loss([s for s, _ in PAIRS], [t for _, t in PAIRS])
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def test_tiny_lm_overfits_and_greedy_reproduces_targets(tokenizer_state):
    model = tiny(tokenizer_state)
    losses = overfit(model)
    assert losses[-1] < 0.1 * losses[0]
    assert model.generate([s for s, _ in PAIRS]) == [t for _, t in PAIRS]


def test_sampled_candidates_differ_from_greedy_and_repeat_with_the_seed(tokenizer_state):
    """`temperature` samples (the answer-sensitive candidates); greedy stays the default."""
    model = tiny(tokenizer_state)
    sources = [s for s, _ in PAIRS] * 4
    greedy = model.generate(sources)
    torch.manual_seed(1)
    first = model.generate(sources, temperature=1.5)
    torch.manual_seed(1)
    assert model.generate(sources, temperature=1.5) == first
    assert first != greedy and model.generate(sources) == greedy


def test_loss_ignores_the_prompt(tokenizer_state):
    """The loss is cross-entropy over exactly the target tokens (prompt masked), recomputed here
    from the full-vocabulary logits the model would give without the masking shortcut."""
    model = tiny(tokenizer_state)
    source, target = PAIRS[0]
    prompt, answer = model.prompt_ids(source), model.target_ids(target)
    ids = torch.tensor([prompt + answer])
    with torch.no_grad():
        logits = model.model(input_ids=ids).logits[0]
        expected = torch.nn.functional.cross_entropy(logits[len(prompt) - 1:-1], torch.tensor(answer))
        assert torch.allclose(model.loss([source], [target]), expected, atol=1e-5)
    assert answer[-1] == model.eos_id
    # a prompt longer than max_source_len is cut in the facts, never in the template's tail
    model.hparams.max_source_len = 4
    assert model.tokenizer.decode(model.prompt_ids(source * 10)).endswith("\nText:")


def test_partial_freezing_leaves_only_top_blocks_trainable(tokenizer_state):
    model = tiny(tokenizer_state, train_last_layers=1)
    model.model.get_input_embeddings().requires_grad_(False)
    layers = model.model.model.layers
    assert not any(p.requires_grad for p in layers[0].parameters())
    assert all(p.requires_grad for p in layers[1].parameters())


def test_checkpoint_round_trip_through_lightning(tokenizer_state, tmp_path: Path):
    model = tiny(tokenizer_state, lr=3e-3, warmup_steps=0, schedule="constant")
    batch = {"source": [s for s, _ in PAIRS], "target": [t for _, t in PAIRS], "refs": [[t] for _, t in PAIRS]}
    trainer = L.Trainer(accelerator="cpu", max_steps=5, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    loader = torch.utils.data.DataLoader([batch], batch_size=None)
    trainer.fit(model, train_dataloaders=loader)
    ckpt = tmp_path / "rewriter.ckpt"
    trainer.save_checkpoint(ckpt)

    loaded = RewriterModule.load(ckpt)
    assert loaded.checkpoint_path == str(ckpt)
    for a, b in zip(model.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)
    assert loaded.generate(batch["source"]) == model.generate(batch["source"])

    # the pipeline-facing wrapper: Triple objects in, text out (inverse relations turned forward)
    rw = TrainedRewriter(ckpt, chunk_size=2)
    triples = [Triple("Alien", "directed_by", "Ridley Scott"), Triple("1995", "^release_year", "Heat")]
    assert rw.chunks(triples) == [[("Alien", "directed_by", "Ridley Scott")], [("Heat", "release_year", "1995")]]
    # pack=true fills chunks across heads, same-head triples still side by side
    packed = TrainedRewriter(module=rw.module, chunk_size=2, pack=True)
    three = triples + [Triple("Alien", "release_year", "1979")]
    assert packed.chunks(three) == [[("Alien", "directed_by", "Ridley Scott"), ("Alien", "release_year", "1979")],
                                    [("Heat", "release_year", "1995")]]
    assert isinstance(rw.rewrite("who directed Alien?", triples), str)
    assert rw.rewrite("q", []) == ""


def test_bad_checkpoints_fail_clearly(tokenizer_state, tmp_path: Path):
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        RewriterModule.load(tmp_path / "missing.ckpt")
    junk = tmp_path / "junk.ckpt"
    junk.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        RewriterModule.load(junk)
    other = tmp_path / "other.ckpt"
    torch.save({"state_dict": {}, "rra": {"format": "rra-retriever"}}, other)
    with pytest.raises(CheckpointError, match="not an rra rewriter checkpoint"):
        RewriterModule.load(other)
    # weights that do not fit the stored config
    model = tiny(tokenizer_state)
    ckpt = {"state_dict": {k: v for k, v in model.state_dict().items() if "layers.1" not in k},
            "hyper_parameters": dict(model.hparams)}
    model.on_save_checkpoint(ckpt)
    torch.save(ckpt, tmp_path / "mismatch.ckpt")
    with pytest.raises(CheckpointError, match="weights do not match"):
        RewriterModule.load(tmp_path / "mismatch.ckpt")
    with pytest.raises(ValueError, match="needs ckpt"):
        TrainedRewriter()


def test_prompt_without_facts_placeholder_is_rejected(tokenizer_state):
    with pytest.raises(ValueError, match=r"\{facts\}"):
        tiny(tokenizer_state, prompt="Text:")


def test_conf_rewriter_trained_instantiates_the_pipeline_rewriter(tokenizer_state, tmp_path: Path):
    """conf/rewriter/trained.yaml (what `infer.py rewriter=trained rewriter.ckpt=...` builds)."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from rra.pipeline.rewrite import Rewriter

    model = tiny(tokenizer_state)
    trainer = L.Trainer(accelerator="cpu", max_steps=0, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.strategy.connect(model)
    ckpt = tmp_path / "r.ckpt"
    trainer.save_checkpoint(ckpt)
    cfg = OmegaConf.load(Path(__file__).resolve().parents[2] / "conf" / "rewriter" / "trained.yaml")
    cfg.ckpt = str(ckpt)
    rw = instantiate(cfg)
    assert isinstance(rw, TrainedRewriter) and isinstance(rw, Rewriter) and rw.chunk_size == cfg.chunk_size


def test_init_from_starts_from_trained_weights_and_refuses_other_models(tokenizer_state, tmp_path: Path):
    """model.init_from: adapt a trained rewriter (e.g. to your KG's silver pairs) instead of the base LM."""
    trained = tiny(tokenizer_state)
    overfit(trained, steps=5)
    ckpt = {"state_dict": trained.state_dict(), "hyper_parameters": dict(trained.hparams)}
    trained.on_save_checkpoint(ckpt)
    torch.save(ckpt, tmp_path / "trained.ckpt")

    torch.manual_seed(123)  # another random init: init_from must overwrite it
    adapted = RewriterModule(model_config=TINY_CONFIG, pretrained=False, tokenizer_state=tokenizer_state,
                             freeze_embeddings=False, init_from=str(tmp_path / "trained.ckpt"))
    for k, v in trained.state_dict().items():
        assert torch.equal(v, adapted.state_dict()[k]), k
    assert adapted.hparams.init_from == str(tmp_path / "trained.ckpt")

    # a checkpoint saved from the adapted model loads without needing the file it started from
    ckpt2 = {"state_dict": adapted.state_dict(), "hyper_parameters": dict(adapted.hparams)}
    adapted.on_save_checkpoint(ckpt2)
    torch.save(ckpt2, tmp_path / "adapted.ckpt")
    (tmp_path / "trained.ckpt").rename(tmp_path / "moved.ckpt")
    assert RewriterModule.load(tmp_path / "adapted.ckpt").generate([PAIRS[0][0]]) == adapted.generate([PAIRS[0][0]])

    bigger = dict(TINY_CONFIG, hidden_size=TINY_CONFIG["hidden_size"] * 2)
    with pytest.raises(CheckpointError, match="do not fit"):
        RewriterModule(model_config=bigger, pretrained=False, tokenizer_state=tokenizer_state,
                       init_from=str(tmp_path / "moved.ckpt"))
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        tiny(tokenizer_state, init_from=str(tmp_path / "trained.ckpt"))


@pytest.mark.integration
def test_packaged_smollm2_rewriter_checkpoint_loads_with_weights_only(tmp_path: Path):
    """The GGUF loader marks the config as quantised (an enum); a rewriter checkpoint must not carry it,
    or Lightning's weights_only loading (trainer.test(ckpt_path=...)) refuses the file."""
    model = RewriterModule(train_last_layers=1)
    assert not hasattr(model.model.config, "quantization_config")
    ckpt = {"state_dict": {}, "hyper_parameters": dict(model.hparams)}
    model.on_save_checkpoint(ckpt)
    torch.save(ckpt, tmp_path / "meta.ckpt")
    loaded = torch.load(tmp_path / "meta.ckpt", weights_only=True)
    assert loaded["rra"]["model_config"]["model_type"] == "llama"
