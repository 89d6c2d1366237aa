"""Evaluation: metrics (one definition of every figure), run reports."""
