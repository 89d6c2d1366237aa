"""Training: the run train.py calls (`run.py`), the callbacks it adds (the step budget and the
convergence verdict in `budget.py`, dashboards in `dashboard.py`) and sharing what it made (`export.py`)."""
