"""The OpenAI backend and a baseline against a real third-party OpenAI-compatible server:
llm-katan's echo backend with injected faults (HTTP 500s, latency, 504s after N requests), bound to
127.0.0.1. Skipped when llm-katan is not installed (it is in the `test` extra)."""
import time



from rra.llm import OpenAICompatibleLLM


def llm(url: str, **kwargs) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(**{"model": "echo", "base_url": url, "max_retries": 0, "backoff_s": 0.01,
                                  "timeout_s": 5.0, "api_key_env": "KATAN_API_KEY", **kwargs})


def test_echo_replies_carry_the_prompt(katan):
    (reply,) = llm(katan()).generate(["who directed Alien?"], max_new_tokens=16)
    assert reply.ok and "who directed Alien?" in reply.text and reply.completion_tokens > 0


def test_http_500s_become_error_replies_and_retries_recover_some(katan):
    # the circuit breaker kept shut: three failed prompts in a row (1 in 8 at this error rate) would
    # open it and fail every prompt after them, which is the breaker's test, not this one
    url = katan(error_rate=0.5)
    replies = llm(url, breaker_threshold=10_000).generate([f"question {i}" for i in range(30)], max_new_tokens=8)
    failed = [r for r in replies if not r.ok]
    assert len(replies) == 30 and 3 <= len(failed) <= 27 and all("500" in r.error for r in failed)
    retried = llm(url, max_retries=4, breaker_threshold=10_000).generate([f"question {i}" for i in range(30)],
                                                                         max_new_tokens=8)
    assert sum(not r.ok for r in retried) < len(failed)


def test_latency_beyond_the_timeout_is_an_error_reply_not_a_hang(katan):
    url = katan(latency_ms=3000)
    start = time.monotonic()
    (reply,) = llm(url, timeout_s=0.5).generate(["slow"], max_new_tokens=8)
    assert not reply.ok and "tim" in reply.error.lower() and time.monotonic() - start < 3


def test_a_baseline_run_finishes_with_per_question_statuses_when_the_server_starts_failing(katan):
    """ToG on the small movie KG: the server answers 2 requests, then 504s for everything."""
    from rra.baselines import ToG
    from rra.graph import NetworkXGraph, Triple
    from rra.records import QAExample

    kg = NetworkXGraph([Triple("Alien", "directed_by", "Ridley Scott"), Triple("Heat", "directed_by", "Michael Mann"),
                        Triple("Alien", "release_year", "1979"), Triple("Heat", "release_year", "1995")])
    tog = ToG(kg, llm(katan(timeout_after=2)), depth=1)
    preds = [tog.answer(QAExample(f"who directed [{m}]", [m], [d], qid=m))
             for m, d in [("Alien", "Ridley Scott"), ("Heat", "Michael Mann"), ("Alien", "Ridley Scott")]]
    assert len(preds) == 3 and preds[-1].status == "llm_error"
    assert any("504" in e for e in preds[-1].errors)
