"""Serve a QA method over HTTP, from the Hydra config in conf/serve.yaml (the same groups as infer.py).

    python serve.py                                   built-in KG, graph scorer, http://127.0.0.1:8000
    python serve.py port=8080 data=metaqa retriever.ckpt=checkpoints/metaqa/best.ckpt
    curl -s localhost:8000/v1/answer -H 'content-type: application/json' -d '{"question": "who wrote [The Narrow Tide]"}'

The KG, the retriever and the LLM are loaded once; logic lives in rra/serve. Needs the `serve` extra
(FastAPI, uvicorn). Ctrl-C / SIGTERM: stop taking requests, finish those in flight, exit.
"""
from __future__ import annotations

import rra  # noqa: F401  (first: sets how OpenMP threads wait, before torch loads)

import logging
from pathlib import Path

import hydra
from omegaconf import DictConfig

from rra.config import register_resolvers

REPO = Path(__file__).resolve().parent
register_resolvers(REPO)
log = logging.getLogger("serve")


@hydra.main(version_base="1.3", config_path="conf", config_name="serve")
def main(cfg: DictConfig) -> None:
    import uvicorn

    from rra.serve.app import create_app
    from rra.serve.service import Service

    service = Service.from_config(cfg)
    info = service.info()
    log.info("serving %s on %s (%d entities, %d triples) at http://%s:%s", info["method"], info["graph"],
             info["kg"]["entities"], info["kg"]["triples"], cfg.host, cfg.port)
    uvicorn.run(create_app(service), host=str(cfg.host), port=int(cfg.port), log_level=str(cfg.log_level),
                timeout_graceful_shutdown=int(cfg.shutdown_timeout_s))


if __name__ == "__main__":
    main()
