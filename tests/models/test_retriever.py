
import lightning as L
import pytest
import torch

from rra.data.datamodule import RetrieverDataModule, collate
from rra.data.dataset import Dataset
from rra.models.path_predictor import beam_search, step_text
from rra.text.questions import mask_topic
from rra.text.relations import relation_phrase
from rra.models.retriever import CheckpointError, RelationMismatchError, Retriever
from toy_data import toy_kg, toy_questions


def make_model(tiny_kwargs, path_head: str = "classifier", **kw) -> tuple[Retriever, RetrieverDataModule]:
    """A tiny retriever and its datamodule on the toy KG; this file tests the paper's classifier
    head (model.path_head=classifier), tests/models/test_relation_scorer.py the default scorer."""
    dm = RetrieverDataModule(Dataset(train=lambda: toy_questions(24), test=lambda: toy_questions(8, seed=1)), toy_kg,
                             val_fraction=0.0, batch_size=8, dedupe=True, train_paths="given", path_head=path_head)
    return Retriever(**dm.model_kwargs(), **tiny_kwargs, path_head=path_head, **kw), dm


def overfit(model: Retriever, batch: dict, steps: int = 80) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model.model_step(batch)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()


@pytest.fixture(scope="module")
def trained():
    """A tiny retriever overfitted on one example per toy template (8 questions, 1-3 hops)."""
    from rra.models.encoder import TINY_CONFIG

    L.seed_everything(0)
    model, dm = make_model(dict(encoder_config=dict(TINY_CONFIG), pretrained=False, dropout=0.0))
    dm.setup()
    batch = collate(dm.splits["train"])
    overfit(model, batch)
    return model, batch


def test_overfits_hops_and_paths_to_100_percent(trained):
    model, batch = trained
    assert len(batch["question"]) == 8 and {len(p) for p in batch["path"]} == {1, 2, 3}
    preds = model.predict(batch["question"], topk=3)
    assert [p[0].hop for p in preds] == [len(g) for g in batch["path"]]
    assert [p[0].path for p in preds] == batch["path"]


def test_beam_paths_have_predicted_length_sorted_by_product_score(trained):
    model, batch = trained
    preds = model.predict(batch["question"], topk=4)
    for q, paths in zip(batch["question"], preds):
        assert len(paths) == 4
        assert all(len(p.path) == p.hop == paths[0].hop for p in paths)
        scores = [p.score for p in paths]
        assert scores == sorted(scores, reverse=True)
        # the score is the product of the step probabilities, recomputed here step by step
        model.eval()
        with torch.no_grad():
            for p in paths:
                prob = 1.0
                for t, rel in enumerate(p.path):
                    text = step_text(model.mask(q), p.path[:t], model.sep)
                    probs = model.path_head(model.encoder([text])).softmax(-1)[0]
                    prob *= float(probs[model.rel_index[rel]])
                assert p.score == pytest.approx(prob, rel=1e-4)


def test_try_second_hop_and_forced_hops(trained):
    model, batch = trained
    preds = model.predict(batch["question"][:3], topk=2, try_second_hop=True)
    for paths in preds:
        hops = [p.hop for p in paths]
        assert len(set(hops)) == 2 and hops[:2] == [hops[0]] * 2  # predicted length first
        assert paths[0].hop_prob >= paths[-1].hop_prob
    forced = model.predict(batch["question"][:3], topk=2, hops=2)
    assert all(len(p.path) == 2 for paths in forced for p in paths)
    with pytest.raises(ValueError, match="hops=7"):
        model.predict(batch["question"][:1], hops=7)


def test_beam_search_matches_brute_force():
    torch.manual_seed(0)
    num_rel, beam = 5, 3
    # a fixed random next-step distribution per (query, prefix)
    table: dict = {}

    def logp(i, prefix):
        if (i, prefix) not in table:
            table[(i, prefix)] = torch.randn(num_rel).log_softmax(-1)
        return table[(i, prefix)]

    lengths = [1, 2, 3]
    first = torch.stack([logp(i, ()) for i in range(3)])
    found = beam_search(first, lengths, beam, lambda items: torch.stack([logp(i, p) for i, p in items]))
    for i, length in enumerate(lengths):
        assert all(len(p) == length for p, _ in found[i])
        scores = [s for _, s in found[i]]
        assert scores == sorted(scores, reverse=True)
        if length <= 2:  # exhaustive for short paths: beam search is exact when beam >= choices kept
            every = [((a,), float(logp(i, ())[a])) for a in range(num_rel)] if length == 1 else [
                ((a, b), float(logp(i, ())[a] + logp(i, (a,))[b])) for a in range(num_rel) for b in range(num_rel)]
            best = sorted(every, key=lambda x: -x[1])[:beam]
            assert found[i][0][0] == best[0][0]
            assert found[i][0][1] == pytest.approx(best[0][1])


def saved_checkpoint(tiny_kwargs, path):
    """A tiny retriever after 3 training steps, saved as a Lightning checkpoint at `path`."""
    L.seed_everything(1)
    model, dm = make_model(tiny_kwargs)
    trainer = L.Trainer(max_steps=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        num_sanity_val_steps=0, limit_val_batches=0, accelerator="cpu")
    trainer.fit(model, datamodule=dm)
    trainer.save_checkpoint(path)
    return model


def test_checkpoint_round_trip_predicts_identically(tiny_kwargs, tmp_path):
    path = tmp_path / "model.ckpt"
    model = saved_checkpoint(tiny_kwargs, path)
    questions = [e.question for e in toy_questions(10, seed=3)]
    before = model.predict(questions, topk=3, try_second_hop=True)
    loaded = Retriever.load(path)
    after = loaded.predict(questions, topk=3, try_second_hop=True)
    assert [[p.path for p in q] for q in after] == [[p.path for p in q] for q in before]
    for qa, qb in zip(after, before):
        for a, b in zip(qa, qb):
            assert a.score == pytest.approx(b.score, abs=1e-6) and a.hop_prob == pytest.approx(b.hop_prob, abs=1e-6)
    assert loaded.relations == model.relations and loaded.hparams.mask_token == "[E]"
    loaded.check_relations(toy_kg().relation_types())  # same KG: no error


def test_relations_the_kg_lacks_are_an_error_unseen_kg_relations_a_warning(trained, tmp_path):
    model, _ = trained
    kg_relations = [r for r in toy_kg().relation_types() if r != "has_genre"]
    with pytest.raises(RelationMismatchError, match="1 relation.*has_genre"):
        model.check_relations(kg_relations)
    # a store holding 200 more relations (a Virtuoso default graph): a short warning, not an error
    extra = [f"system_relation_{i:03d}" for i in range(200)]
    warning = model.check_relations(toy_kg().relation_types() + extra)
    assert "200 relation(s)" in warning and "system_relation_007" in warning
    assert "system_relation_008" not in warning and "(192 more)" in warning
    with pytest.raises(RelationMismatchError, match="strict_relations") as err:
        model.check_relations(toy_kg().relation_types() + extra, strict=True)
    assert len(str(err.value)) < 600


def test_corrupt_and_foreign_checkpoints_fail_naming_the_file(tmp_path):
    garbage = tmp_path / "garbage.ckpt"
    garbage.write_bytes(b"\x80\x04 not a checkpoint at all")
    with pytest.raises(CheckpointError, match="garbage.ckpt"):
        Retriever.load(garbage)
    foreign = tmp_path / "foreign.ckpt"
    torch.save({"state_dict": {"w": torch.zeros(2)}}, foreign)
    with pytest.raises(CheckpointError, match="foreign.ckpt.*not an rra retriever checkpoint"):
        Retriever.load(foreign)
    with pytest.raises(CheckpointError, match="missing.ckpt"):
        Retriever.load(tmp_path / "missing.ckpt")


def test_unknown_relation_in_training_path_is_named(tiny_kwargs):
    model, _ = make_model(tiny_kwargs)
    with pytest.raises(ValueError, match="'acted_in'"):
        model.model_step({"question": ["who acted in [X]"], "path": [["acted_in"]]})


def test_text_helpers():
    assert mask_topic("what did [Ridley Scott] direct") == "what did [E] direct"
    assert mask_topic("what did ridley scott direct", ["Ridley Scott"], "[E]") == "what did [E] direct"
    assert mask_topic("what did [Ridley Scott] direct", mask=None) == "what did [Ridley Scott] direct"
    assert relation_phrase("^directed_by") == "directed by (reverse)"
    assert relation_phrase("http://dbpedia.org/ontology/birthPlace") == "birth place"
    assert step_text("who [E]", ["^directed_by", "starred_actors"]) == \
        "who [E] [SEP] directed by (reverse) [SEP] starred actors"


@pytest.mark.integration
def test_packaged_minilm_checkpoint_reloads_without_the_pretrained_weights(tmp_path, monkeypatch):
    from rra.models import encoder as encoder_module

    model = Retriever(["directed_by", "^directed_by"], max_hops=2, path_head="classifier")  # packaged all-MiniLM-L6-v2
    assert model.encoder.dim == 384
    ckpt = {"state_dict": model.state_dict(), "hyper_parameters": dict(model.hparams)}
    model.on_save_checkpoint(ckpt)
    torch.save(ckpt, tmp_path / "minilm.ckpt")

    def no_download(*args, **kwargs):
        raise AssertionError("loading a checkpoint must not read pretrained weights")

    monkeypatch.setattr(encoder_module.AutoModel, "from_pretrained", no_download)
    monkeypatch.setattr(encoder_module.AutoTokenizer, "from_pretrained", no_download)
    loaded = Retriever.load(tmp_path / "minilm.ckpt")
    questions = ["who directed [Alien]", "what did [Ridley Scott] direct"]
    a, b = model.predict(questions, topk=2), loaded.predict(questions, topk=2)
    assert [[p.path for p in q] for q in a] == [[p.path for p in q] for q in b]
    assert [q[0].score for q in a] == pytest.approx([q[0].score for q in b], abs=1e-5)


def test_encoding_cache_reuses_templates_and_is_dropped_after_training(trained):
    model, batch = trained
    model.eval()
    model._predict_cache.clear()
    first = model.predict(batch["question"][:4], topk=2)
    passes = model.encoded_texts
    again = model.predict(batch["question"][:4], topk=2)  # same masked texts: nothing to encode
    assert model.encoded_texts == passes
    assert [[p.path for p in q] for q in again] == [[p.path for p in q] for q in first]
    model.train()  # a caller that trained in between must not get stale encodings
    model.predict(batch["question"][:1], topk=2)
    assert model.encoded_texts > passes


def test_exported_retriever_is_a_shareable_directory_that_predicts_alike(tiny_kwargs, tmp_path):
    import json

    from rra.training.export import main as export_main

    path = tmp_path / "model.ckpt"
    model = saved_checkpoint(tiny_kwargs, path)
    summary = tmp_path / "train_summary.json"
    summary.write_text(json.dumps({"name": "toy", "epochs": 3, "fit_seconds": 12.5,
                                   "metrics": {"test/path_acc": 0.97}, "data": {"train_questions": 48}}))
    out = tmp_path / "exported"
    assert export_main([str(path), str(out), "--train-summary", str(summary)]) == 0
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "config.json", "tokenizer.json", "README.md"}
    card = (out / "README.md").read_text()
    assert "test/path_acc 0.97" in card and "retriever.ckpt=" in card
    assert all(f"`{r}`" in card for r in model.relations if not r.startswith("^"))
    questions = [e.question for e in toy_questions(10, seed=3)]
    want = Retriever.load(path).predict(questions, topk=3)
    got = Retriever.load(out).predict(questions, topk=3)
    assert [[p.path for p in q] for q in got] == [[p.path for p in q] for q in want]
    assert [p.score for q in got for p in q] == pytest.approx([p.score for q in want for p in q], abs=1e-6)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="not an exported rra model"):
        Retriever.load(tmp_path / "empty")
    with pytest.raises(CheckpointError, match="no such checkpoint file"):
        Retriever.load(tmp_path / "missing.ckpt")
    # the weights are readable as any file the user writes (0666 less the umask), not owner-only
    import os

    umask = os.umask(0)
    os.umask(umask)
    assert (out / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~umask
    # a truncated copy names the file
    weights = (out / "model.safetensors").read_bytes()
    (out / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(CheckpointError, match=r"exported/model\.safetensors: cannot read the weights.*truncated"):
        Retriever.load(out)


def test_int8_quantized_retriever_still_predicts(tiny_kwargs):
    L.seed_everything(1)
    model, _ = make_model(tiny_kwargs)
    questions = [e.question for e in toy_questions(6, seed=3)]
    before = model.predict(questions, topk=3)
    after = model.quantize("int8").predict(questions, topk=3)
    assert [len(q) for q in after] == [len(q) for q in before]
    assert all(0.0 < p.score <= 1.0 for q in after for p in q)
    with pytest.raises(ValueError, match="int8"):
        model.quantize("int4")


def _plain_beam_search(first, lengths, beam, table_fn):
    """Reference: expand every beam at every depth, keep the top `beam` of the beam*R continuations."""
    out = []
    for i, length in enumerate(lengths):
        top = first[i].topk(beam)
        beams = [((int(r),), float(s)) for s, r in zip(top.values, top.indices)]
        for _ in range(1, length):
            cands = [(p + (r,), s + float(table_fn(i, p)[r])) for p, s in beams for r in range(first.shape[1])]
            beams = sorted(cands, key=lambda c: -c[1])[:beam]
        out.append(beams)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_lazy_beam_search_equals_plain_beam_search_with_fewer_rows(seed):
    torch.manual_seed(seed)
    num_rel, beam = 6, 3
    table: dict = {}

    def logp(i, prefix):
        if (i, prefix) not in table:  # peaked distributions, like a trained model's
            table[(i, prefix)] = (torch.randn(num_rel) * 4).log_softmax(-1)
        return table[(i, prefix)]

    lengths = [1, 2, 3, 2, 3]
    first = torch.stack([logp(i, ()) for i in range(len(lengths))])
    rows = []

    def score(items):
        rows.extend(items)
        return torch.stack([logp(i, p) for i, p in items])

    found = beam_search(first, lengths, beam, score)
    expected = _plain_beam_search(first, lengths, beam, logp)
    for got, want in zip(found, expected):
        assert [p for p, _ in got] == [p for p, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want])
    assert len(rows) <= beam * sum(max(0, n - 1) for n in lengths)
    assert len(set(rows)) == len(rows)  # no beam encoded twice


def test_beam_search_allowed_relations_prune_before_scoring():
    num_rel = 4
    first = torch.tensor([[0.0, -1.0, -2.0, -3.0]]).log_softmax(-1)
    scored = []

    def score(items):
        scored.extend(items)
        return torch.zeros(len(items), num_rel).log_softmax(-1)

    # relation 0 first is not allowed; after (1,) only relation 3; after (2,) nothing (dead end)
    rules = {(): {1, 2}, (1,): {3}, (2,): set()}
    found = beam_search(first, [2], 3, score, lambda items: [rules.get(p) for _, p in items])
    assert [p for p, _ in found[0]] == [(1, 3)]
    assert scored == [(0, (1,))]  # the dead-end beam (2,) was never encoded


def test_graph_pruning_keeps_paths_with_instances_and_cuts_passes(trained):
    model, _ = trained
    kg = toy_kg()
    examples = toy_questions(16, seed=3)
    questions, topics = [e.question for e in examples], [e.topic_entities[0] for e in examples]
    model.encoded_texts = 0
    plain = model.predict(questions, topk=3, use_cache=False)
    plain_passes, model.encoded_texts = model.encoded_texts, 0
    pruned = model.predict(questions, topk=3, use_cache=False, kg=kg, topics=topics)
    assert model.encoded_texts <= plain_passes
    gold = [e.relation_path for e in examples]
    assert [p[0].path for p in pruned] == gold == [p[0].path for p in plain]
    for topic, paths in zip(topics, pruned):
        assert paths and all(kg.follow_path(topic, p.path, limit=1) for p in paths)
    assert any(not kg.follow_path(t, p.path, limit=1) for t, ps in zip(topics, plain) for p in ps)
    off = model.predict(questions, topk=3, use_cache=False, kg=kg, topics=topics, graph_pruning=False)
    assert [[p.path for p in ps] for ps in off] == [[p.path for p in ps] for ps in plain]
    unknown = model.predict(questions[:2], topk=3, use_cache=False, kg=kg, topics=[None, None])
    assert [[p.path for p in ps] for ps in unknown] == [[p.path for p in ps] for ps in plain[:2]]
    with pytest.raises(ValueError, match="2 topics for 16 questions"):
        model.predict(questions, kg=kg, topics=topics[:2])


def test_int8_quantisation_keeps_the_paths(trained):
    import copy

    model, batch = trained
    q = copy.deepcopy(model).quantize("int8")
    assert type(q.encoder.model.encoder.layer[0].attention.self.query).__module__.startswith("torch.ao.nn.quantized")
    assert [p[0].path for p in q.predict(batch["question"], topk=3, use_cache=False)] == batch["path"]
    assert model.quantize(None) is model
    with pytest.raises(ValueError, match="quantize='int4'"):
        model.quantize("int4")


def test_frozen_embeddings_and_lower_blocks_get_no_gradient(tiny_kwargs):
    """model.freeze_embeddings / model.train_last_layers (the CPU budget knobs): what is frozen gets
    no gradient and is left out of the optimizer; the top blocks and the heads still learn."""
    from rra.models.encoder import transformer_blocks

    model, dm = make_model(tiny_kwargs, "scorer", freeze_embeddings=True, train_last_layers=1)
    dm.setup()
    model.model_step(collate(dm.splits["train"]))["loss"].backward()
    bert = model.encoder.model
    lower, top = transformer_blocks(bert)[:-1], transformer_blocks(bert)[-1]
    assert all(p.grad is None for p in bert.get_input_embeddings().parameters())
    assert all(p.grad is None for block in lower for p in block.parameters())
    assert all(p.grad is not None for p in top.parameters())
    with pytest.raises(ValueError, match="train_last_layers must be >= 0"):
        make_model(tiny_kwargs, "scorer", train_last_layers=-1)


def test_a_checkpoint_with_settings_this_version_does_not_know_names_them(tiny_kwargs, tmp_path):
    path = tmp_path / "model.ckpt"
    saved_checkpoint(tiny_kwargs, path)
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    ckpt["hyper_parameters"]["plan_kinds_untyped"] = True  # a setting of another version (a branch)
    torch.save(ckpt, tmp_path / "other_version.ckpt")
    with pytest.raises(CheckpointError, match=r"other_version\.ckpt.*does not know: plan_kinds_untyped.*another "
                                              r"version"):
        Retriever.load(tmp_path / "other_version.ckpt")


def test_fitting_on_a_cpu_trains_the_embedding_by_sparse_gradients_and_restores_it(tiny_kwargs):
    """rra.models.encoder.sparse_embedding_grads while Lightning fits in one CPU process: the optimizer
    gets a dense gradient each step, the embedding moves, and the module is as it was after fitting."""
    seen = []

    class Watch(L.Callback):
        def on_before_optimizer_step(self, trainer, module, optimizer):
            emb = module.encoder.model.get_input_embeddings()
            seen.append((emb.sparse, emb.weight.grad.is_sparse))

    L.seed_everything(1)
    model, dm = make_model(tiny_kwargs)
    emb = model.encoder.model.get_input_embeddings()
    before = emb.weight.detach().clone()
    trainer = L.Trainer(max_steps=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        num_sanity_val_steps=0, limit_val_batches=0, accelerator="cpu", callbacks=[Watch()])
    trainer.fit(model, datamodule=dm)
    assert seen == [(True, False)] * 2
    assert not emb.sparse and not emb.weight.equal(before)
