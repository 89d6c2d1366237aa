"""The micro-batcher alone (no model): clients with one request open at a time end up in full
batches, a lone client is not kept waiting, and a failing batch costs only the job that fails."""
import asyncio
import time

import pytest

from rra.serve.batcher import MicroBatcher


def run_clients(batcher, clients: int, requests: int, question=lambda c, k: f"{c}-{k}"):
    async def main():
        await batcher.start()

        async def client(c):
            out = []
            for k in range(requests):
                try:
                    result, info = await batcher.submit([question(c, k)])
                    out.append((result, info))
                except Exception as err:  # noqa: BLE001
                    out.append(err)
            return out
        try:
            return await asyncio.gather(*(client(c) for c in range(clients)))
        finally:
            await batcher.stop()
    return asyncio.run(main())


def slow_echo(examples):
    time.sleep(0.03)  # a batch costs the same whatever its size (an encoder pass)
    return [q.upper() for q in examples]


def test_steady_clients_fill_whole_batches():
    batcher = MicroBatcher(slow_echo, max_batch=32, max_wait_ms=200)
    results = run_clients(batcher, clients=8, requests=6)
    assert [r[0] for r in results[3]] == [[f"3-{k}".upper()] for k in range(6)]  # each its own answer
    # without waiting for the clients just answered, 8 clients settle into batches taking turns
    assert batcher.questions / batcher.batches >= 6, (batcher.questions, batcher.batches)
    # the answering thread's busy time: each batch sleeps 30 ms
    assert 0.03 * batcher.batches <= batcher.busy_s < 0.03 * batcher.batches + 0.5, (batcher.busy_s, batcher.batches)


def test_a_lone_client_is_not_kept_waiting():
    batcher = MicroBatcher(slow_echo, max_batch=32, max_wait_ms=2000)
    start = time.perf_counter()
    results = run_clients(batcher, clients=1, requests=5)
    assert time.perf_counter() - start < 2.0  # five requests, no 2 s wait for company
    assert all(info.batch_size == 1 for _, info in results[0])


def test_a_failing_batch_is_answered_job_by_job():
    def answer(examples):
        if "bad" in examples:
            raise RuntimeError("this question breaks the method")
        return slow_echo(examples)
    batcher = MicroBatcher(answer, max_batch=32, max_wait_ms=100)
    results = run_clients(batcher, clients=4, requests=2, question=lambda c, k: "bad" if (c, k) == (2, 0) else f"{c}-{k}")
    assert isinstance(results[2][0], RuntimeError)
    assert [r[0] for r in results[1]] == [["1-0"], ["1-1"]] and results[2][1][0] == ["2-1"]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="max_batch"):
        MicroBatcher(slow_echo, max_batch=0)
