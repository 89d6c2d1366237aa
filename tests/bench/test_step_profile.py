"""bench/bench_step_profile.py on a tiny random encoder: each encoder call is counted once, under the
part of the step that made it."""
from collections import defaultdict

from bench.bench_step_profile import counted, profile


def test_every_encoder_call_of_a_step_is_counted_under_its_part():
    figures = profile(["model=retriever_tiny", "datamodule.batch_size=8"], steps=3)
    parts = figures["parts"]
    assert figures["steps"] == 3 and figures["median_step_s"] > 0
    assert parts["scorer"]["with_gradients"] and parts["scorer"]["texts_per_step"] > 0
    assert not parts["plan bank, no gradients"]["with_gradients"]  # the ranker's candidates, banked
    assert parts["ranker questions"]["texts_per_step"] > 0 and parts["ranker plans"]["with_gradients"]
    shares = [p["share_of_gradient_tokens"] for p in parts.values() if p["with_gradients"]]
    assert abs(sum(shares) - 1.0) < 0.01
    assert figures["bank_texts_per_epoch"] > 0


def test_the_scorers_count_is_its_step_texts_and_relation_texts():
    from bench.common import retriever_and_data
    from rra.models.retriever import Retriever

    model, dm = retriever_and_data(["model=retriever_tiny", "datamodule.batch_size=8", "datamodule.plans=false"])
    batch = next(iter(dm.train_dataloader()))
    stats = defaultdict(lambda: [0, 0, 0.0, False])
    with counted(model, stats):
        model.model_step(batch)
    steps = sum(len(p) for p in batch["path"] if p)
    relations = {r for cands, path in zip(batch["candidates"], batch["path"]) if path
                 for step in cands for r in step} | {r for p in batch["path"] if p for r in p}
    assert stats["scorer"][0] == steps + len(relations)
    assert set(stats) == {"scorer"}  # no plan ranker: nothing else encoded
    assert "_tokens" not in vars(Retriever) and "_scorer_step" in vars(Retriever)  # the methods as they were
