"""Typed workload, per-request records and results of `launchcard bench`."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import Field

from launchcard.card import Conditions, Frozen

Sizing = Literal["exact", "approximate"]


class Workload(Frozen):
    """What to send.  Fixed sizes so two runs (or two tools) are comparable."""

    input_tokens: int = Field(128, ge=1)
    output_tokens: int = Field(64, ge=1)
    num_prompts: int = Field(16, ge=1)
    concurrency: int = Field(4, ge=1)
    request_rate: float = Field(math.inf, gt=0, description="Requests per second (Poisson); inf = all at once.")
    warmup: int = Field(2, ge=0)
    repetitions: int = Field(1, ge=1)
    # what vLLM's SamplingParams takes (0.32.0 vllm/sampling_params.py L653-676: finite, non-negative temperature;
    # top_p in (0, 1]); a run of requests every server refuses measures nothing
    temperature: float = Field(0.0, ge=0, allow_inf_nan=False)
    top_p: float = Field(1.0, gt=0, le=1)
    seed: int = 0
    timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False, description="Limit for one request, first byte to last.")


class RequestRecord(Frozen):
    """One request.  ``e2e_s`` runs from sending to the last token (as vLLM's
    bench counts latency); ``dead`` marks a request that got no answer at all."""

    ok: bool
    error: str | None = None
    dead: bool = False
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    itl_s: tuple[float, ...] = ()

    @property
    def tpot_s(self) -> float | None:
        if not self.ok or self.ttft_s is None or self.e2e_s is None or not self.output_tokens \
                or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


class Percentiles(Frozen):
    mean: float
    p50: float
    p90: float
    p99: float


class Summary(Frozen):
    """Aggregates over the successful requests; None where nothing was measured."""

    completed: int
    failed: int
    duration_s: float
    output_tokens_per_s: float | None
    requests_per_s: float | None
    total_output_tokens: int
    mean_prompt_tokens: float | None
    ttft_ms: Percentiles | None
    tpot_ms: Percentiles | None
    itl_ms: Percentiles | None
    e2e_ms: Percentiles | None


class LoadCpu(Frozen):
    """The load generator's own CPU use (user + system) over the time it ran.

    On a machine the server shares, a load generator that needs a large part
    of a core slows the server it measures; this says how much it took."""

    cpu_s: float = Field(ge=0)
    wall_s: float = Field(gt=0)
    startup_included: bool = Field(False, description=(
        "An external tool is measured from outside: its whole run, start-up (imports, tokenizer) included."))

    @property
    def share(self) -> float:
        """Cores' worth of CPU: 0.25 = a quarter of one core."""
        return self.cpu_s / self.wall_s


class BenchResult(Frozen):
    endpoint: str
    model: str
    api: str = "/v1/completions"
    prompt_sizing: Sizing
    sizing_note: str
    workload: Workload
    conditions: Conditions
    runtime_version: str | None
    started_at: datetime
    summary: Summary
    runs: tuple[Summary, ...]
    errors: tuple[str, ...] = Field((), description="Distinct failure causes, most frequent first.")
    load_generator_argv: tuple[str, ...] | None = Field(None, description=(
        "The external load generator's command line (--driver); null for the built-in client."))
    load_generator_cpu: LoadCpu | None = Field(None, description=(
        "CPU the load generator itself used while it ran; null where it could not be read."))
    load_generator_config: str | None = Field(None, description=(
        "The config file the external load generator was given, verbatim (guidellm's scenario); null otherwise."))
    gpus: int | None = Field(None, ge=1, description=(
        "Accelerators the endpoint's deployment runs on, as the user stated them (`bench --gpus`); an endpoint "
        "does not report it, so null unless stated. Tokens/s per GPU needs it."))


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def percentiles_ms(values: list[float]) -> Percentiles | None:
    if not values:
        return None
    ms = sorted(v * 1000.0 for v in values)
    return Percentiles(mean=round(sum(ms) / len(ms), 3), p50=round(percentile(ms, 50), 3),
                       p90=round(percentile(ms, 90), 3), p99=round(percentile(ms, 99), 3))


def summarize(records: list[RequestRecord], duration_s: float) -> Summary:
    good = [r for r in records if r.ok]
    out_tokens = sum(r.output_tokens or 0 for r in good)
    prompts = [r.prompt_tokens for r in good if r.prompt_tokens is not None]
    measured = bool(good) and duration_s > 0
    return Summary(
        completed=len(good), failed=len(records) - len(good), duration_s=round(duration_s, 4),
        output_tokens_per_s=round(out_tokens / duration_s, 3) if measured else None,
        requests_per_s=round(len(good) / duration_s, 4) if measured else None,
        total_output_tokens=out_tokens,
        mean_prompt_tokens=round(sum(prompts) / len(prompts), 2) if prompts else None,
        ttft_ms=percentiles_ms([r.ttft_s for r in good if r.ttft_s is not None]),
        tpot_ms=percentiles_ms([t for r in good if (t := r.tpot_s) is not None]),
        itl_ms=percentiles_ms([g for r in good for g in r.itl_s]),
        e2e_ms=percentiles_ms([r.e2e_s for r in good if r.e2e_s is not None]),
    )
