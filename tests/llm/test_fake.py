from concurrent.futures import ThreadPoolExecutor

import pytest

from rra.llm import LLM, LLMReply, ScriptedLLM


def test_list_script_in_order_then_default_and_usage():
    llm = ScriptedLLM(["first", "second words here"], default="fallback")
    assert isinstance(llm, LLM)
    replies = llm.generate(["p1", [{"role": "user", "content": "p2"}], "p3"], max_new_tokens=7)
    assert [r.text for r in replies] == ["first", "second words here", "fallback"]
    assert all(r.ok for r in replies)
    assert llm.prompt_texts == ["p1", "user: p2", "p3"]
    assert llm.generate_kwargs[0] == {"max_new_tokens": 7, "temperature": 0.0}
    assert llm.usage.calls == 3 and llm.usage.failures == 0
    assert llm.usage.completion_tokens == 1 + 3 + 1


def test_exhausted_script_without_default_is_an_error_reply():
    llm = ScriptedLLM(["only"])
    a, b = llm.generate(["x", "y"])
    assert a.text == "only" and b.error == "fake: no scripted reply" and b.text == ""
    assert llm.usage.failures == 1


def test_dict_script_matches_first_substring():
    llm = ScriptedLLM({"relations": "1. directed_by", "sufficient": "Yes"}, default="")
    r = llm.generate(["Pick relations for: who directed Alien?", "Is this sufficient?", "other"])
    assert [x.text for x in r] == ["1. directed_by", "Yes", ""]


def test_function_script_and_simulated_failures():
    def reply(prompt: str):
        if "timeout" in prompt:
            return ScriptedLLM.timeout()
        if "boom" in prompt:
            raise RuntimeError("bad script")
        if "500" in prompt:
            return ScriptedLLM.failure("http 500: server error")
        return prompt.upper()

    llm = ScriptedLLM(reply)
    ok, slow, err, boom = llm.generate(["abc", "timeout please", "500", "boom"])
    assert ok.text == "ABC"
    assert slow.error.startswith("timeout") and not slow.ok
    assert err.error.startswith("http 500")
    assert boom.error.startswith("fake: script raised RuntimeError")
    assert llm.usage.failures == 3 and llm.usage.calls == 4


def test_scripted_reply_objects_are_copied():
    shared = LLMReply("same")
    llm = ScriptedLLM([shared, shared])
    a, b = llm.generate(["x", "y"])
    assert a is not b and a is not shared


def test_score_default_overlap_prefers_mentioned_candidate():
    llm = ScriptedLLM()
    s = llm.score("Knowledge: Alien was directed by Ridley Scott. Question: who directed Alien?",
                  ["Ridley Scott", "James Cameron", ""])
    assert s[0] > s[1] > s[2]
    assert llm.usage.calls == 1 and llm.score_calls[0][1] == ["Ridley Scott", "James Cameron", ""]


def test_score_dict_and_function():
    assert ScriptedLLM(scores={"a": -1.0}).score("p", ["a", "b"]) == [-1.0, -100.0]
    assert ScriptedLLM(scores=lambda p, c: float(len(c))).score("p", ["ab", "abc"]) == [2.0, 3.0]
    assert ScriptedLLM(scores=lambda p, c: 6.0).score("p", ["a b c", "d"], reduction="mean") == [2.0, 6.0]


def test_thread_safe_list_script_hands_each_reply_once():
    llm = ScriptedLLM([str(i) for i in range(200)])
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(lambda p: llm.generate([p])[0].text, [f"p{i}" for i in range(200)]))
    assert sorted(out, key=int) == [str(i) for i in range(200)]
    assert llm.usage.calls == 200 and len(llm.prompts) == 200


def test_usage_snapshot_and_since():
    llm = ScriptedLLM(default="x y", delay_s=0.001)
    llm.generate(["a"])
    snap = llm.usage.snapshot()
    llm.generate(["b", "c"])
    d = llm.usage.since(snap)
    assert d.calls == 2 and d.completion_tokens == 4 and len(d.per_call_latency) == 2
    assert d.seconds == pytest.approx(sum(d.per_call_latency))
    assert snap.calls == 1  # the snapshot did not move
    summary = llm.usage.to_dict()
    assert summary["calls"] == 3 and summary["latency_p95_s"] >= summary["latency_p50_s"] > 0
