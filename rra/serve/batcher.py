"""Micro-batching: questions of concurrent requests go to the method's batched call together.

Each request puts a job (its questions) on a queue and waits. One loop takes the first job, then
whatever else is queued (waiting at most `max_wait_ms` for the requests it expects, see _next_batch), and
hands the batch to `answer(examples)` in a single worker thread: the model is never called from two
threads at once, and under load the next batch fills while the current one runs. A job is never
split between batches, so its questions are answered together; a job larger than `max_batch` is a
batch of its own (the answer function cuts it into chunks for the method).

Answers do not depend on the company a question keeps: the method answers each question of a batch
as it would alone (tests/serve check this against infer.py). If the batched call raises, each job is
answered again by itself, so a question that breaks the method costs only its own request.
"""
from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass
class Job:
    examples: list
    future: asyncio.Future
    queued_at: float = field(default_factory=time.perf_counter)


@dataclass
class BatchInfo:
    """What a request learns about how it was answered (reported in its timings)."""

    queue_s: float  # waiting for its batch to start
    batch_s: float  # the batch's answering time
    batch_size: int  # questions in the batch (its own and other requests')


class MicroBatcher:
    def __init__(self, answer: Callable[[Sequence], list], max_batch: int = 32, max_wait_ms: float = 25.0):
        if max_batch < 1 or max_wait_ms < 0:
            raise ValueError(f"batching: max_batch must be >= 1 and max_wait_ms >= 0, got {max_batch}, {max_wait_ms}")
        self.answer, self.max_batch, self.max_wait = answer, int(max_batch), float(max_wait_ms) / 1000
        self._queue: asyncio.Queue[Job] | None = None
        self._held: Job | None = None  # the job that did not fit the last batch: first in the next
        self._last_jobs = 0  # jobs in the last batch
        self._task: asyncio.Task | None = None
        self._pool: ThreadPoolExecutor | None = None
        self.batches = 0
        self.questions = 0
        self.busy_s = 0.0  # time the answering thread spent on batches (over the uptime: its utilisation)

    async def start(self) -> None:
        if self._task is not None:  # one event loop owns the queue: a second app on the same batcher would hang
            raise RuntimeError("this batcher is already started (one server per Service)")
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rra-answer")
        self._queue, self._held = asyncio.Queue(), None
        self._task = asyncio.create_task(self._loop(), name="rra-micro-batcher")

    async def stop(self) -> None:
        """After the server stopped taking requests: finish what is queued, then stop the loop."""
        if self._task is None:
            return
        while not self._task.done() and (self._held is not None or not self._queue.empty()):
            await asyncio.sleep(0.01)
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._pool.shutdown(wait=True)
        self._task = self._queue = None

    async def submit(self, examples: list) -> tuple[list, BatchInfo]:
        """The method's predictions for `examples`, in order, and how their batch went."""
        if self._queue is None:
            raise RuntimeError("the batcher is not started")
        job = Job(list(examples), asyncio.get_running_loop().create_future())
        await self._queue.put(job)
        return await job.future

    async def _next_batch(self) -> list[Job]:
        # Who is likely to ask next: the jobs that queued while the last batch ran, and the clients
        # the last batch just answered (a client with one request open asks again once answered).
        # Waiting for those (at most max_wait) keeps a steady load in full batches instead of two
        # half batches taking turns; a lone client is never kept waiting (it is the whole expectation).
        expected = self._queue.qsize() + (self._held is not None) + self._last_jobs
        first = self._held or await self._queue.get()
        self._held = None
        jobs, n = [first], len(first.examples)
        deadline = time.perf_counter() + self.max_wait
        while n < self.max_batch:
            try:
                job = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                left = deadline - time.perf_counter()
                if left <= 0 or len(jobs) >= expected:
                    break
                try:
                    job = await asyncio.wait_for(self._queue.get(), left)
                except asyncio.TimeoutError:
                    break
            if n + len(job.examples) > self.max_batch:
                self._held = job  # never split a job: it opens the next batch
                break
            jobs.append(job)
            n += len(job.examples)
        self._last_jobs = len(jobs)
        return jobs

    async def _loop(self) -> None:
        while True:
            jobs = await self._next_batch()
            try:
                await self._run(jobs)
            except Exception as err:  # noqa: BLE001 - a bug here must fail these requests, not stop the loop
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(err)

    async def _run(self, jobs: list[Job]) -> None:
        loop = asyncio.get_running_loop()
        examples = [ex for job in jobs for ex in job.examples]
        start = time.perf_counter()
        try:
            results = await loop.run_in_executor(self._pool, self.answer, examples)
            per_job = []
            for job in jobs:
                per_job.append(results[:len(job.examples)])
                results = results[len(job.examples):]
        except Exception:  # noqa: BLE001 - answered again job by job below, each keeping its own error
            per_job = [await self._alone(loop, job) for job in jobs]
        spent = time.perf_counter() - start
        self.busy_s += spent
        self.batches += 1
        self.questions += len(examples)
        for job, result in zip(jobs, per_job):
            if job.future.done():  # the client went away
                continue
            if isinstance(result, Exception):
                job.future.set_exception(result)
            else:
                job.future.set_result((result, BatchInfo(start - job.queued_at, spent, len(examples))))

    async def _alone(self, loop, job: Job):
        try:
            return await loop.run_in_executor(self._pool, self.answer, job.examples)
        except Exception as err:  # noqa: BLE001 - this request's own failure, reported to it
            return err
