# Two entry points for a fresh machine; both install what they need into ./.venv first.
PY := .venv/bin/python

.PHONY: run test install install-test

install:
	bash scripts/install.sh

install-test:
	bash scripts/install.sh test,optuna
	bash scripts/install-virtuoso.sh

# Main job: train the retriever on the built-in KG, then answer its test questions.
run: install
	$(PY) train.py
	$(PY) infer.py

test: install-test
	$(PY) -m pytest -q
