"""Generators of realistic benchmark KGs and their question sets (bench/kgs/*.py)."""
