"""Train a model from the Hydra config in conf/train.yaml (default: the RRA retriever on the built-in KG).

    python train.py                                   # retriever, built-in data, CPU, W&B offline
    python train.py experiment=metaqa                 # MetaQA (dev split for training)
    python train.py task=rewriter                     # any task: it picks data, datamodule, model and monitor
    python train.py -m hparams_search=optuna          # sweep; each run logged
    python train.py ckpt_path=.../last.ckpt           # resume

Logic lives in rra/training/run.py; this file only composes the config and returns the metric a sweep
optimises (`optimized_metric`).
"""
from __future__ import annotations

import rra  # noqa: F401  (first: sets how OpenMP threads wait, before torch loads)

from pathlib import Path

import hydra
from omegaconf import DictConfig

from rra.config import register_resolvers

REPO = Path(__file__).resolve().parent
register_resolvers(REPO)  # ${repo_root:} (this checkout) and ${builtin_data:...}


@hydra.main(version_base="1.3", config_path="conf", config_name="train")
def main(cfg: DictConfig) -> float | None:
    from rra.training.run import optimized, train

    return optimized(cfg, train(cfg))


if __name__ == "__main__":
    main()
