"""The RRA method: link -> retrieve (relation paths, query plans, triple sampling) -> rewrite ->
answer. `method.py` is the pipeline itself (a `QAMethod`); the other modules are its steps."""
