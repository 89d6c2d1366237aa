"""Serving rra over HTTP: `python serve.py` (conf/serve.yaml) builds the graph, the LLM and the QA
method once (rra.serve.service), micro-batches concurrent questions into the method's batched call
(rra.serve.batcher), and answers through a FastAPI app (rra.serve.app) with an OpenAI-compatible chat
face (rra.serve.chat) and a page (rra/serve/static). FastAPI and uvicorn come with the `serve` extra.
"""
