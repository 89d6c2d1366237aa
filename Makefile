# Two entry points for a fresh machine; both install what they need into ./.venv first.
PY := .venv/bin/python

.PHONY: run test install install-test

install:
	bash scripts/install.sh serve

install-test:
	bash scripts/install.sh test,optuna,serve,ray,launchers
	bash scripts/install-virtuoso.sh
	bash scripts/install-chromium.sh

# Main job: train the retriever on the built-in KG, then answer its test questions.
run: install
	$(PY) train.py
	$(PY) infer.py

test: install-test
	$(PY) -m pytest -q
