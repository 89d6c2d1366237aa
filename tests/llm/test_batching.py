"""BatchingLLM pools concurrent generate() calls from threads into one backend call, and each caller
gets exactly its own replies back."""
import threading

import pytest

from rra.llm import BatchingLLM, LLMReply, ScriptedLLM


class Recording(ScriptedLLM):
    """Records the size of every backend call."""

    def __init__(self, **kw):
        super().__init__(lambda text: f"echo {text}", **kw)
        self.call_sizes = []

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        self.call_sizes.append((len(prompts), max_new_tokens))
        return super().generate(prompts, max_new_tokens, temperature)


def test_lone_caller_gets_its_replies_in_order():
    inner = Recording()
    llm = BatchingLLM(inner)
    out = llm.generate(["a", "b", "c"], max_new_tokens=7)
    assert [r.text for r in out] == ["echo a", "echo b", "echo c"]
    assert inner.call_sizes == [(3, 7)]
    assert llm.usage is inner.usage and inner.usage.calls == 3
    assert llm.generate([]) == []


def test_concurrent_callers_are_merged_and_answered_correctly():
    inner = Recording(delay_s=0.05)  # a slow backend: calls pile up while one runs
    llm = BatchingLLM(inner, max_batch=64, wait_s=0.2)
    results, start = {}, threading.Barrier(8)

    def worker(k):
        start.wait()
        for step in range(3):  # three sequential calls per thread, like a 3-step baseline
            results[(k, step)] = [r.text for r in llm.generate([f"q{k}s{step}a", f"q{k}s{step}b"], max_new_tokens=5)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[(k, s)] == [f"echo q{k}s{s}a", f"echo q{k}s{s}b"] for k in range(8) for s in range(3))
    assert sum(n for n, _ in inner.call_sizes) == 48
    assert len(inner.call_sizes) < 24, inner.call_sizes  # 24 calls unbatched; pooling merged them
    assert max(n for n, _ in inner.call_sizes) > 2
    assert llm.batches == len(inner.call_sizes)


def test_calls_with_different_settings_are_not_merged():
    inner = Recording(delay_s=0.02)
    llm = BatchingLLM(inner, wait_s=0.1)
    out = {}

    def worker(k, n):
        out[k] = llm.generate([f"p{k}"], max_new_tokens=n)[0].text

    threads = [threading.Thread(target=worker, args=(k, 4 if k % 2 else 9)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {k: f"echo p{k}" for k in range(6)}
    assert all(n in (4, 9) for _, n in inner.call_sizes)


def test_max_batch_caps_a_merged_call():
    inner = Recording(delay_s=0.05)
    llm = BatchingLLM(inner, max_batch=4, wait_s=0.2)
    threads = [threading.Thread(target=llm.generate, args=([f"x{k}", f"y{k}"],)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(n for n, _ in inner.call_sizes) == 12
    assert max(n for n, _ in inner.call_sizes) <= 4


def test_a_raising_backend_becomes_error_replies_for_every_waiting_caller():
    class Broken(ScriptedLLM):
        def generate(self, prompts, max_new_tokens=128, temperature=0.0):
            raise RuntimeError("CUDA out of memory")

    out = BatchingLLM(Broken()).generate(["a", "b"])
    assert [r.ok for r in out] == [False, False]
    assert "RuntimeError: CUDA out of memory" in out[0].error


def test_short_reply_list_is_padded_with_errors():
    class Short(ScriptedLLM):
        def generate(self, prompts, max_new_tokens=128, temperature=0.0):
            return [LLMReply("only one")]

    out = BatchingLLM(Short()).generate(["a", "b"])
    assert out[0].text == "only one" and out[1].error == "backend returned too few replies"


def test_bad_max_batch_is_rejected():
    with pytest.raises(ValueError, match="max_batch"):
        BatchingLLM(ScriptedLLM(), max_batch=0)
