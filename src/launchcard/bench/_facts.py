"""Bench results as measured facts for the card (and the catalog)."""

from __future__ import annotations

from launchcard.bench._types import BenchResult
from launchcard.card import Evidence, Fact


def measured_facts(result: BenchResult) -> list[Fact]:
    """One measured Fact per figure that was actually measured (None skipped)."""
    ev = Evidence(kind="endpoint", url=result.endpoint, fetched_at=result.started_at,
                  revision=result.runtime_version)
    s = result.summary
    rows: list[tuple[str, object, str]] = [
        ("bench.output_tokens_per_s", s.output_tokens_per_s, "tokens/s"),
        ("bench.requests_per_s", s.requests_per_s, "requests/s"),
        ("bench.failed_requests", s.failed, "requests"),
        ("bench.completed_requests", s.completed, "requests"),
    ]
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        pct = getattr(s, metric)
        if pct is not None:
            rows += [(f"bench.{metric[:-3]}.{q}", getattr(pct, q), "ms") for q in ("p50", "p90", "p99")]
    facts = [Fact(name=name, value=value, classification="measured", evidence=ev,
                  conditions=result.conditions, unit=unit)
             for name, value, unit in rows if value is not None]
    if result.gpus is not None:
        # Not read off the server (an OpenAI endpoint does not say what it runs on): the user stated it with
        # `bench --gpus`, so it is reported, not measured; same evidence and conditions, so it joins this run.
        facts.append(Fact(name="bench.gpus", value=result.gpus, classification="source_reported", evidence=ev,
                          conditions=result.conditions, unit="GPUs (stated with bench --gpus)"))
    return facts
