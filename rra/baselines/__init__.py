"""Baselines on the same graph and LLM layers as RRA: ToG, StructGPT, KGQP, vector RAG, LLM-only.
Each is a `rra.methods.QAMethod` (`answer(example) -> Prediction`) with an LLM mode and (except
LLM-only) a heuristic mode where MiniLM similarity replaces the LLM."""
from rra.baselines.kgqp import KGQP
from rra.baselines.llm_only import LLMOnly
from rra.baselines.structgpt import StructGPT
from rra.baselines.tog import ToG
from rra.baselines.vector import VectorRAG

__all__ = ["KGQP", "LLMOnly", "StructGPT", "ToG", "VectorRAG"]
