"""Benchmarks of rra: each a module run from the checkout, writing one JSON record to bench/results/.

    python -m bench.bench_graph              # KG load time and path latency per backend (MetaQA)
    python -m bench.bench_pipeline metaqa    # RRA on the MetaQA test splits
    python -m bench.bench_scale --help       # what each one measures, its arguments and outputs

bench/common.py holds what they share: the result record (figures, command, config, machine, load),
the composed infer config their methods are built from, and the servers they start.
"""
