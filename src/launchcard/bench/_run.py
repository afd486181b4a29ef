"""The load generator: streamed completions, timed chunk by chunk.

Timing follows vLLM's own `bench serve`, so the two can be compared: a request
starts when it is sent (after the concurrency limit lets it go), TTFT is the
arrival of the first chunk carrying a choice, the end is the arrival of the
last such chunk (the usage chunk and ``[DONE]`` after it are not latency), ITL
the gaps between them, TPOT (end minus TTFT) over output tokens minus one,
output tokens what the final usage chunk says (chunks counted only when the
server sends no usage), throughput the output tokens of successful requests
over the wall time of the run.

Every request is bounded by ``timeout_s`` with asyncio, which holds even when
the transport itself never returns.  A request that gets no answer at all (a
timeout or a refused connection) ends the run: the requests in flight are
cancelled and the rest are not sent, each counted as failed with the cause.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from launchcard.bench._types import BenchResult, LoadCpu, RequestRecord, Sizing, Workload, summarize
from launchcard.bench._wire import OnData
from launchcard.card import Conditions
from launchcard.errors import EndpointError
from launchcard.verify import DONE, sse_event

if TYPE_CHECKING:
    import httpx

Progress = Callable[[int, int], None]
Send = Callable[[dict[str, Any], OnData], Awaitable[None]]


class _Stop:
    """Set by the first request that got no answer; the rest of the run is skipped."""

    def __init__(self) -> None:
        self.cause: str | None = None

    def record(self) -> RequestRecord:
        return RequestRecord(ok=False, error=f"not completed: the run stopped after a request got no answer "
                                             f"({self.cause})")


def httpx_send(client: httpx.AsyncClient, url: str, timeout_s: float) -> Send:
    """The same request through httpx (https endpoints, injected test transports)."""

    async def send(body: dict[str, Any], on_data: OnData) -> None:
        async with client.stream("POST", url, json=body, timeout=timeout_s) as resp:
            if resp.status_code != 200:
                text = (await resp.aread()).decode("utf-8", "replace")
                raise EndpointError(f"HTTP {resp.status_code}: {' '.join(text.split())[:160]}")
            async for data in resp.aiter_bytes():
                on_data(time.perf_counter(), data)

    return send


class _Timing:
    """One streamed completion, fed piece by piece as it arrives."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.began = time.perf_counter()
        self.first: float | None = None
        self.last: float | None = None
        self.gaps: list[float] = []
        self.usage: dict[str, Any] | None = None
        self.chunks = 0
        self.lines = 0
        self.done = False
        self.pending = b""

    def feed(self, now: float, data: bytes) -> None:
        *lines, self.pending = (self.pending + data).split(b"\n")
        for raw in lines:
            self._line(now, raw)

    def _line(self, now: float, raw: bytes) -> None:
        self.lines += 1
        event = sse_event(raw.decode("utf-8", "replace"), self.lines, where=self.where)
        if event is None:
            return
        if event is DONE:
            self.done = True
            return
        assert isinstance(event, dict)
        if event.get("usage"):
            self.usage = event["usage"]
        # A chunk with a choice is a token even when its text is empty (a
        # special token, half a UTF-8 character); vLLM's bench times it so too.
        if event.get("choices"):
            self.chunks += 1
            if self.first is None:
                self.first = now
            elif self.last is not None:
                self.gaps.append(now - self.last)
            self.last = now

    def finish(self) -> None:
        if self.pending.strip():
            self._line(time.perf_counter(), self.pending)
            self.pending = b""
        if not self.done:
            raise EndpointError("stream ended without data: [DONE]")


def _dead(exc: BaseException) -> bool:
    """No answer at all: the endpoint is down or stuck, not merely failing."""
    import httpx

    return isinstance(exc, (asyncio.TimeoutError, httpx.TimeoutException, httpx.ConnectError,
                            ConnectionRefusedError))


async def _one(send: Send, body: dict[str, Any], timeout_s: float, where: str) -> RequestRecord:
    import httpx

    t = _Timing(where)
    try:
        await asyncio.wait_for(send(body, t.feed), timeout=timeout_s)
        t.finish()
    except (TimeoutError, httpx.TimeoutException):
        return RequestRecord(ok=False, dead=True, error=f"timeout after {timeout_s:g}s")
    except EndpointError as exc:
        return RequestRecord(ok=False, error=exc.rule)
    except (httpx.HTTPError, OSError, asyncio.IncompleteReadError) as exc:
        what = str(exc) or "connection closed mid-answer"
        return RequestRecord(ok=False, dead=_dead(exc), error=f"{type(exc).__name__}: {what}"[:200])
    except ValueError as exc:  # a header line past asyncio's limit, a length that is not a number
        return RequestRecord(ok=False, error=f"malformed HTTP answer ({exc})"[:200])
    if t.first is None or t.last is None:
        return RequestRecord(ok=False, error="no tokens in the stream")
    out = t.usage.get("completion_tokens") if t.usage else None
    return RequestRecord(ok=True, prompt_tokens=(t.usage or {}).get("prompt_tokens"),
                         output_tokens=out if isinstance(out, int) else t.chunks,
                         ttft_s=t.first - t.began, e2e_s=t.last - t.began, itl_s=tuple(t.gaps))


async def canary(send: Send, model: str, w: Workload, *, where: str) -> RequestRecord:
    """One short streamed completion, bounded by the workload's per-request timeout."""
    body = {**request_body(model, "launchcard canary", w), "max_tokens": 2}
    return await _one(send, body, w.timeout_s, where)


def request_body(model: str, prompt: str, w: Workload) -> dict[str, Any]:
    # ignore_eos makes every answer exactly output_tokens long.  (min_tokens would
    # too, but it adds a logits processor to every decode step, which slows the
    # server and skews the comparison with vLLM's own bench.)
    return {"model": model, "prompt": prompt, "max_tokens": w.output_tokens, "ignore_eos": True,
            "temperature": w.temperature, "top_p": w.top_p, "stream": True, "stream_options": {"include_usage": True}}


async def _run_set(send: Send, where: str, bodies: list[dict[str, Any]], w: Workload, rng: random.Random,
                   progress: Callable[[], None], stop: _Stop) -> tuple[list[RequestRecord], float]:
    sem = asyncio.Semaphore(w.concurrency)
    inflight: set[asyncio.Task[RequestRecord]] = set()

    async def guarded(body: dict[str, Any]) -> RequestRecord:
        async with sem:
            if stop.cause is not None:
                rec = stop.record()
            else:
                task = asyncio.create_task(_one(send, body, w.timeout_s, where))
                inflight.add(task)
                try:
                    rec = await task
                except asyncio.CancelledError:
                    if not task.cancelled():
                        raise
                    rec = stop.record()
                inflight.discard(task)
                if rec.dead and stop.cause is None:
                    stop.cause = rec.error
                    for other in inflight:
                        other.cancel()
        progress()
        return rec

    began = time.perf_counter()
    tasks = []
    for body in bodies:
        tasks.append(asyncio.create_task(guarded(body)))
        if w.request_rate != float("inf") and stop.cause is None:
            await asyncio.sleep(rng.expovariate(w.request_rate))
    records = await asyncio.gather(*tasks)
    return list(records), time.perf_counter() - began


async def run_async(model: str, prompt_sets: list[list[str]], w: Workload, *, send: Send, where: str,
                    on_progress: Progress | None = None) -> tuple[list[list[RequestRecord]], list[float]]:
    """Warm-up, then one run per prompt set (a repetition gets prompts of its own: a repeated
    set would find the previous repetition's blocks in the server's prefix cache)."""
    rng = random.Random(w.seed)
    total = w.warmup + sum(len(p) for p in prompt_sets)
    done = 0
    stop = _Stop()

    def tick() -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, total)

    if w.warmup:
        first = prompt_sets[0]
        # Warm-up prompts get their own prefix so they do not pre-fill the cache
        # for the measured ones.
        warm = [request_body(model, "warmup " + first[i % len(first)], w) for i in range(w.warmup)]
        await _run_set(send, where, warm, w, rng, tick, stop)
    runs, durations = [], []
    for prompts in prompt_sets:
        records, duration = await _run_set(send, where, [request_body(model, p, w) for p in prompts], w, rng,
                                           tick, stop)
        runs.append(records)
        durations.append(duration)
    return runs, durations


def assemble(endpoint: str, model: str, w: Workload, runs: list[list[RequestRecord]], durations: list[float],
             *, sizing: Sizing, sizing_note: str, conditions: Conditions, runtime_version: str | None,
             started_at: datetime, load_generator_argv: tuple[str, ...] | None = None,
             load_generator_config: str | None = None, load_generator_cpu: LoadCpu | None = None) -> BenchResult:
    every = [r for run in runs for r in run]
    errors = Counter(r.error for r in every if r.error)
    return BenchResult(
        endpoint=endpoint, model=model, prompt_sizing=sizing, sizing_note=sizing_note, workload=w,
        conditions=conditions, runtime_version=runtime_version, started_at=started_at,
        load_generator_argv=load_generator_argv, load_generator_config=load_generator_config,
        load_generator_cpu=load_generator_cpu,
        summary=summarize(every, sum(durations)),
        runs=tuple(summarize(run, d) for run, d in zip(runs, durations, strict=False)),
        errors=tuple(f"{n} x {e}" for e, n in errors.most_common()))


def now_utc() -> datetime:
    return datetime.now(UTC)
