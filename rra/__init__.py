"""rra: Retrieve-Rewrite-Answer KGQA, with ToG, StructGPT and KGQP on the same graph and LLM layers."""
import os

# OpenMP threads that wait for work spin a few microseconds, then sleep. A training step is hundreds
# of small parallel regions: with threads put to sleep at once, each region wakes them through the
# kernel (393,000 futex calls in 15 steps), and a short spin catches the next region instead (the
# built-in training's first 40 steps on 2 cores: 69 s sleeping at once, 55 s spinning 3,000 times,
# 50 s at 10,000). Long spins take the cores from every other process (a SPARQL store, an LLM
# server, a second training): two trainings side by side took 74-77 s sleeping at once, 85 s at
# 3,000, 105 s at 10,000, 278 s at libgomp's own 300,000. Must be set before torch loads its
# OpenMP runtime, hence here; an explicit setting of either wins (docs/retriever.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "3000")

__version__ = "0.1.0"
