from concurrent.futures import ThreadPoolExecutor

import pytest

from rra.llm import CachedLLM, OpenAICompatibleLLM, ScriptedLLM, TransformersLLM, build_llm


def test_hits_skip_the_inner_backend_and_survive_reopening(tmp_path):
    inner = ScriptedLLM(lambda p: f"reply to {p}")
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    first = llm.generate(["a", "b"], max_new_tokens=5)
    again = llm.generate(["a", "c", "b"], max_new_tokens=5)
    assert [r.text for r in again] == ["reply to a", "reply to c", "reply to b"]
    assert [r.cached for r in again] == [True, False, True]
    assert again[0].completion_tokens == first[0].completion_tokens  # original cost kept
    assert inner.prompt_texts == ["a", "b", "c"]  # misses only, batched together
    assert llm.usage.calls == 5 and llm.usage.cache_hits == 2 and inner.usage.calls == 3
    llm.close()

    reopened_inner = ScriptedLLM([])
    reopened = CachedLLM(reopened_inner, tmp_path / "c.sqlite")
    assert reopened.generate(["c"], max_new_tokens=5)[0].text == "reply to c"
    assert reopened_inner.usage.calls == 0 and len(reopened) == 3


def test_key_includes_generation_params_and_errors_are_not_cached(tmp_path):
    inner = ScriptedLLM(["x", ScriptedLLM.timeout(), "y", "z"])
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    assert llm.generate(["p"], max_new_tokens=5)[0].text == "x"
    assert llm.generate(["p"], max_new_tokens=9)[0].error.startswith("timeout")  # other params: miss
    assert llm.generate(["p"], max_new_tokens=9)[0].text == "y"  # the failure was not stored
    assert llm.generate(["p"], max_new_tokens=9)[0].cached
    assert llm.usage.failures == 1


def test_sampled_replies_not_cached_by_default(tmp_path):
    inner = ScriptedLLM(["one", "two"])
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    assert [llm.generate(["p"], temperature=0.7)[0].text for _ in range(2)] == ["one", "two"]


def test_scores_cached(tmp_path):
    inner = ScriptedLLM(scores=lambda p, c: float(len(c)))
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    assert llm.score("q", ["ab", "abc"]) == [2.0, 3.0]
    assert llm.score("q", ["ab", "abc"]) == [2.0, 3.0]
    assert len(inner.score_calls) == 1 and llm.usage.cache_hits == 1 and llm.usage.calls == 2
    assert llm.score("q", ["ab", "abc"], reduction="mean") == [2.0, 3.0]  # one word each
    assert len(inner.score_calls) == 2  # another reduction is another key


def test_concurrent_threads_share_one_cache(tmp_path):
    inner = ScriptedLLM(lambda p: p[::-1])
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    prompts = [f"prompt {i % 20}" for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(lambda p: llm.generate([p])[0].text, prompts))
    assert out == [p[::-1] for p in prompts]
    assert len(llm) == 20 and llm.usage.calls == 200
    assert llm.usage.cache_hits == 200 - inner.usage.calls


@pytest.mark.parametrize("choice,kind", [
    ("fake", ScriptedLLM), ("none", type(None)), ("openai", OpenAICompatibleLLM),
    ("smollm2", TransformersLLM), ("transformers", TransformersLLM),
])
def test_hydra_llm_configs_build(cfg_infer, choice, kind, tmp_path):
    overrides = [f"llm={choice}", "llm.extra_body={top_p: 1.0}"] if choice == "openai" else [f"llm={choice}"]
    if choice == "transformers":
        overrides.append("llm.model=some/hub-model")
    cfg = cfg_infer(overrides)
    llm = build_llm(cfg.get("llm"))  # backends load their model lazily: building costs nothing
    assert isinstance(llm, kind)
    if llm is not None:
        assert isinstance(build_llm(cfg.llm, cache_path=tmp_path / "c.sqlite"), CachedLLM)
    if choice == "openai":
        assert type(llm.extra_body) is dict and llm.extra_body == {"top_p": 1.0}
