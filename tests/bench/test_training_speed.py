"""bench/bench_training_speed.py on a tiny random encoder: both variants train, time and validate, and
compute the same function."""
from bench.bench_training_speed import measure


def test_both_variants_train_on_the_same_batches_and_compute_the_same_function():
    figures = measure(["model=retriever_tiny", "datamodule.batch_size=8"], steps=3, rounds=1)
    assert figures["steps"] == 3 and set(figures["median_step_s"]) == {"one_call", "grouped"}
    assert all(v > 0 for v in figures["median_step_s"].values())
    assert all(v > 0 for v in figures["validation_s"].values())
    check = figures["same_function"]
    assert abs(check["loss"]["grouped"] - check["loss"]["one_call"]) < 1e-4
    assert check["gradient_relative_difference"] < 1e-3
