"""The load generator: streamed completions, timed chunk by chunk.

Timing follows vLLM's own `bench serve`, so the two can be compared: TTFT is
the time to the first chunk carrying a choice, ITL the gaps between such chunks,
TPOT (end-to-end minus TTFT) over output tokens minus one, throughput the
output tokens of successful requests over the wall time of the run.
Every request is bounded by ``timeout_s`` with asyncio, which holds even when
the transport itself never returns.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from launchcard.bench._types import BenchResult, RequestRecord, Workload, summarize
from launchcard.card import Conditions
from launchcard.errors import EndpointError
from launchcard.verify._sse import DONE, sse_event

if TYPE_CHECKING:
    import httpx

Progress = Callable[[int, int], None]


async def _one(client: httpx.AsyncClient, url: str, body: dict[str, Any], timeout_s: float) -> RequestRecord:
    import httpx

    began = time.perf_counter()
    ttft: float | None = None
    last: float | None = None
    gaps: list[float] = []
    usage: dict[str, Any] | None = None
    chunks = 0

    async def consume_stream() -> None:
        nonlocal ttft, last, usage, chunks
        async with client.stream("POST", url, json=body, timeout=timeout_s) as resp:
            if resp.status_code != 200:
                text = (await resp.aread()).decode("utf-8", "replace")
                raise EndpointError(f"HTTP {resp.status_code}: {' '.join(text.split())[:160]}")
            done = False
            pending = b""
            n = 0
            # Raw bytes split by hand: the client shares the CPU with the server
            # under test, so it does as little per chunk as it can.
            async for data in resp.aiter_bytes():
                now = time.perf_counter()
                pending += data
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    n += 1
                    event = sse_event(raw.decode("utf-8", "replace"), n, where=url)
                    if event is None:
                        continue
                    if event is DONE:
                        done = True
                        continue
                    assert isinstance(event, dict)
                    if event.get("usage"):
                        usage = event["usage"]
                    # A chunk with a choice is a token even when its text is
                    # empty (a special token, half a UTF-8 character); vLLM's
                    # bench times it the same way.
                    if event.get("choices"):
                        chunks += 1
                        if ttft is None:
                            ttft = now - began
                        else:
                            gaps.append(now - (last or now))
                        last = now
            if pending.strip():
                n += 1
                if sse_event(pending.decode("utf-8", "replace"), n, where=url) is DONE:
                    done = True
            if not done:
                raise EndpointError("stream ended without data: [DONE]")

    try:
        await asyncio.wait_for(consume_stream(), timeout=timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        return RequestRecord(ok=False, error=f"timeout after {timeout_s:g}s")
    except httpx.HTTPError as exc:
        return RequestRecord(ok=False, error=f"{type(exc).__name__}: {exc}"[:200])
    except EndpointError as exc:
        return RequestRecord(ok=False, error=exc.rule)
    e2e = time.perf_counter() - began
    if ttft is None:
        return RequestRecord(ok=False, error="no tokens in the stream")
    out = usage.get("completion_tokens") if usage else None
    return RequestRecord(ok=True, prompt_tokens=(usage or {}).get("prompt_tokens"),
                         output_tokens=out if isinstance(out, int) else chunks,
                         ttft_s=ttft, e2e_s=e2e, itl_s=tuple(gaps))


def request_body(model: str, prompt: str | list[int], w: Workload) -> dict[str, Any]:
    # ignore_eos makes every answer exactly output_tokens long.  (min_tokens would
    # too, but it adds a logits processor to every decode step, which slows the
    # server and skews the comparison with vLLM's own bench.)
    return {"model": model, "prompt": prompt, "max_tokens": w.output_tokens, "ignore_eos": True, "temperature": w.temperature, "top_p": w.top_p, "stream": True,
            "stream_options": {"include_usage": True}}


async def _run_set(client: httpx.AsyncClient, url: str, bodies: list[dict[str, Any]], w: Workload,
                   rng: random.Random, progress: Callable[[], None]) -> tuple[list[RequestRecord], float]:
    sem = asyncio.Semaphore(w.concurrency)

    async def guarded(body: dict[str, Any]) -> RequestRecord:
        async with sem:
            rec = await _one(client, url, body, w.timeout_s)
        progress()
        return rec

    began = time.perf_counter()
    tasks = []
    for body in bodies:
        tasks.append(asyncio.create_task(guarded(body)))
        if w.request_rate != float("inf"):
            await asyncio.sleep(rng.expovariate(w.request_rate))
    records = await asyncio.gather(*tasks)
    return list(records), time.perf_counter() - began


async def run_async(endpoint: str, model: str, prompts: list, w: Workload, *, client: httpx.AsyncClient,
                    on_progress: Progress | None = None) -> tuple[list[list[RequestRecord]], list[float]]:
    url = f"{endpoint}/v1/completions"
    rng = random.Random(w.seed)
    total = w.warmup + len(prompts) * w.repetitions
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, total)

    if w.warmup:
        warm = [request_body(model, prompts[i % len(prompts)], w) for i in range(w.warmup)]
        # Warm-up prompts get their own prefix so they do not pre-fill the cache
        # for the measured ones.
        for b in warm:
            b["prompt"] = ("warmup " + b["prompt"]) if isinstance(b["prompt"], str) else b["prompt"][::-1]
        await _run_set(client, url, warm, w, rng, tick)
    runs, durations = [], []
    for _ in range(w.repetitions):
        records, duration = await _run_set(client, url, [request_body(model, p, w) for p in prompts], w, rng, tick)
        runs.append(records)
        durations.append(duration)
    return runs, durations


def assemble(endpoint: str, model: str, w: Workload, runs: list[list[RequestRecord]], durations: list[float],
             *, sizing: str, sizing_note: str, conditions: Conditions, runtime_version: str | None,
             started_at: datetime) -> BenchResult:
    every = [r for run in runs for r in run]
    errors = Counter(r.error for r in every if r.error)
    return BenchResult(
        endpoint=endpoint, model=model, prompt_sizing=sizing, sizing_note=sizing_note, workload=w,
        conditions=conditions, runtime_version=runtime_version, started_at=started_at,
        summary=summarize(every, sum(durations)),
        runs=tuple(summarize(run, d) for run, d in zip(runs, durations)),
        errors=tuple(f"{n} x {e}" for e, n in errors.most_common()))


def now_utc() -> datetime:
    return datetime.now(timezone.utc)
