"""bench/bench_training_speed.py on a tiny random encoder: every variant trains, times and validates,
and computes the same function (bf16 to its rounding)."""
from bench import bench_training_speed as B
from bench.bench_training_speed import measure


def test_every_variant_trains_on_the_same_batches_and_computes_the_same_function(monkeypatch):
    monkeypatch.setattr(B, "cpu_precision", lambda: "bf16-mixed")  # measured where the CPU has it; here always
    figures = measure(["model=retriever_tiny", "datamodule.batch_size=8"], steps=3, rounds=1)
    assert figures["steps"] == 3 and set(figures["median_step_s"]) == {"one_call", "dense_embedding", "grouped", "bf16"}
    assert all(v > 0 for v in figures["median_step_s"].values())
    assert all(v > 0 for v in figures["validation_s"].values())
    assert figures["bf16_over_grouped"] > 0
    check = figures["same_function"]
    assert abs(check["loss"]["grouped"] - check["loss"]["one_call"]) < 1e-4
    assert check["gradient_relative_difference"]["one_call"] < 1e-3
    assert check["gradient_relative_difference"]["dense_embedding"] < 1e-5  # sparse, made dense: the same sums
    assert figures["grouped_over_dense_embedding"] > 0
    assert abs(check["loss"]["bf16"] - check["loss"]["grouped"]) < 0.05 * abs(check["loss"]["grouped"])
    assert check["gradient_relative_difference"]["bf16"] < 0.1


def test_no_bf16_variant_where_the_cpu_lacks_it(monkeypatch):
    monkeypatch.setattr(B, "cpu_precision", lambda: "32-true")
    figures = measure(["model=retriever_tiny", "datamodule.batch_size=8"], steps=2, rounds=1)
    assert set(figures["median_step_s"]) == {"one_call", "dense_embedding", "grouped"} and "bf16_over_grouped" not in figures
