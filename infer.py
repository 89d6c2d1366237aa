"""Answer questions with a QA method (default: RRA) from the Hydra config in conf/infer.yaml.

    python infer.py                                         # built-in test split, after `python train.py`
    python infer.py question="what movies did [Ridley Scott] direct"
    python infer.py data=metaqa data.hop=2 split=test limit=500 retriever.ckpt=checkpoints/metaqa/best.ckpt
    python infer.py -m method=rra,tog llm=none              # compare methods on the same questions
    python infer.py hydra.run.dir=runs/big shard=0 num_shards=8   # one slice; python -m rra.eval.merge runs/big
    python infer.py runner=ray runner.num_workers=4          # Ray Data workers (docs/more_than_one_machine.md)

Logic lives in rra/eval/run.py; this file only composes the config.
"""
from __future__ import annotations

import rra  # noqa: F401  (first: sets how OpenMP threads wait, before torch loads)

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from rra.config import quote_question, register_resolvers

REPO = Path(__file__).resolve().parent
register_resolvers(REPO)  # ${repo_root:} (this checkout) and ${builtin_data:...}


@hydra.main(version_base="1.3", config_path="conf", config_name="infer")
def main(cfg: DictConfig) -> float | None:
    from hydra.utils import instantiate

    from rra.eval.run import INPUT_ERRORS, answer_question, optimized_metric

    try:
        if cfg.get("question"):
            answer_question(cfg)
            return None
        run = instantiate(cfg.runner)  # runner=local: rra.eval.run.run_split; runner=ray: rra.eval.ray_infer.run_ray
        return optimized_metric(run(cfg))  # the value a sweep optimises
    except INPUT_ERRORS as err:
        # bad input or a refused run: the message says what and where; a traceback would bury it
        # (a sweep job raises, so that Hydra records which job failed)
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        sys.exit(f"error: {type(err).__name__}: {err}")


if __name__ == "__main__":
    sys.argv = quote_question(sys.argv)
    main()
