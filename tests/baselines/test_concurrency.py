"""Baselines answering several questions at once in threads (`concurrency` in infer.py) give the same
predictions and per-question LLM counts as one at a time, while their calls are pooled into batches."""
from rra.baselines import StructGPT, ToG
from rra.eval.run import answer_all
from rra.llm import BatchingLLM, ScriptedLLM
from rra.records import QAExample

from test_tog import tog_script


class Recording(ScriptedLLM):
    def __init__(self, script, **kw):
        super().__init__(script, **kw)
        self.call_sizes = []

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        self.call_sizes.append(len(prompts))
        return super().generate(prompts, max_new_tokens, temperature)


def questions():
    topics = ["Sigourney Weaver", "Kate Winslet", "Harrison Ford", "Alien", "Titanic", "Blade Runner"]
    return [QAExample(f"who directed the movies starred by [{t}]", [t], ["Ridley Scott"], qid=f"q{i}")
            for i, t in enumerate(topics)]


def run(method_cls, kg, concurrency):
    inner = Recording(tog_script, delay_s=0.02)
    llm = BatchingLLM(inner, wait_s=0.2) if concurrency > 1 else inner
    out = [(ex.qid, p) for ex, p in answer_all(method_cls(kg, llm), questions(), concurrency=concurrency)]
    return out, inner


def test_tog_threads_match_sequential_and_pool_calls(kg):
    serial, inner1 = run(ToG, kg, 1)
    pooled, inner4 = run(ToG, kg, 4)
    assert [q for q, _ in pooled] == [ex.qid for ex in questions()]  # order kept
    for (_, a), (_, b) in zip(serial, pooled):
        assert (a.answers, a.llm_calls, a.status, a.extra["visited"]) == (b.answers, b.llm_calls, b.status, b.extra["visited"])
    assert sum(inner1.call_sizes) == sum(inner4.call_sizes) == sum(p.llm_calls for _, p in serial)
    assert len(inner4.call_sizes) < len(inner1.call_sizes)  # fewer, larger backend calls


def test_structgpt_threads_match_sequential(kg):
    serial, _ = run(StructGPT, kg, 1)
    pooled, _ = run(StructGPT, kg, 3)
    assert [(p.answers, p.llm_calls, p.status) for _, p in serial] == [(p.answers, p.llm_calls, p.status) for _, p in pooled]
