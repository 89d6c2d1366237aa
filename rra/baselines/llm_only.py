"""LLM-only: the same LLM, the same answer prompt, no knowledge at all (the floor every
retrieval method should beat)."""
from __future__ import annotations

import time

from rra.baselines.common import read_answers, set_answers, start_prediction
from rra.methods import QAMethod
from rra.records import Prediction, QAExample, Trace
from rra.text.prompts import OWN_KNOWLEDGE_PROMPT
from rra.text.questions import strip_brackets


class LLMOnly(QAMethod):
    name = "llm_only"

    def __init__(self, llm, max_new_tokens: int = 64, kg=None, **_ignored):
        # `kg` is accepted (and unused) so every method config instantiates the same way
        if llm is None:
            raise ValueError("llm_only needs an `llm` (set llm=... in the config)")
        self.llm, self.max_new_tokens = llm, max_new_tokens

    def answer(self, example: QAExample) -> Prediction:
        pred = start_prediction(example)
        trace = Trace(self.llm, self.max_new_tokens)
        reply = trace.ask([OWN_KNOWLEDGE_PROMPT.format(question=strip_brackets(example.question))])[0]
        pred.reply = reply.text
        answers = read_answers(reply.text, {}, [])
        if answers is None:
            trace.bad_reply("answer", reply)
        set_answers(pred, answers or [], True)
        pred.status = trace.status()
        pred.extra["mode"] = "llm"
        pred.latency_s = time.perf_counter() - trace.start
        return trace.fill(pred)
