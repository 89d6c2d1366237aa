"""rra: Retrieve-Rewrite-Answer KGQA, with ToG, StructGPT and KGQP on the same graph and LLM layers."""

__version__ = "0.1.0"
