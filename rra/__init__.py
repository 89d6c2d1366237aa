"""rra: Retrieve-Rewrite-Answer KGQA, with ToG, StructGPT and KGQP on the same graph and LLM layers."""
import os

# OpenMP threads that wait for work sleep instead of spinning. On a small shared CPU box (or
# beside a SPARQL server / LLM process) spinning threads steal the cores the other work needs;
# must be set before torch loads its OpenMP runtime, hence here. An explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
