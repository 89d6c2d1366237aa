"""The LLM protocol's defaults: a backend that subclasses `LLM` and writes only `generate` and
`score` works behind the cache and the batcher; anything else is refused by name."""
import pytest

from rra.llm import LLM, BatchingLLM, CachedLLM, LLMReply, LLMUsage, build_llm


class Echo(LLM):
    name = "echo"

    def __init__(self):
        self.usage = LLMUsage()

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        replies = [LLMReply(f"echo {p}") for p in prompts]
        for r in replies:
            self.usage.record(r)
        return replies

    def score(self, prompt, continuations):
        raise NotImplementedError


def test_minimal_backend_gets_cache_params_and_close_from_the_protocol(tmp_path):
    llm = build_llm(Echo(), cache_path=tmp_path / "cache.sqlite")
    assert isinstance(llm, CachedLLM) and llm.cache_params() == {}
    assert llm.generate(["a"])[0].text == llm.generate(["a"])[0].text == "echo a"
    assert llm.usage.cache_hits == 1 and llm.inner.usage.calls == 1
    llm.close()
    pooled = BatchingLLM(Echo())
    assert pooled.name == "echo" and pooled.cache_params() == {}
    assert pooled.generate(["b"])[0].text == "echo b"
    pooled.close()


def test_an_object_that_is_not_an_llm_backend_is_refused_by_name():
    class Half:  # has generate, lacks the rest of the protocol
        def generate(self, prompts, max_new_tokens=128, temperature=0.0):
            return []

    with pytest.raises(TypeError, match="Half is not an LLM backend"):
        build_llm(Half())
