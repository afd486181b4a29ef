"""Benchmark a live endpoint under stated, recorded conditions."""

from launchcard.bench._bench import cache_state, run_bench, weight_hash
from launchcard.bench._drivers import DRIVERS, Driver, DriverCall, DriverRun, driver, run_driver
from launchcard.bench._facts import measured_facts
from launchcard.bench._metrics import CacheCounters, hit_rate, parse_cache_counters, read_cache_counters
from launchcard.bench._prompts import Tokenizer, exact_text, local_tokenizer, make_prompts, server_tokenizer
from launchcard.bench._types import (
    BenchResult,
    LoadCpu,
    Percentiles,
    RequestRecord,
    Summary,
    Workload,
    percentile,
    summarize,
)

__all__ = [
    "DRIVERS",
    "BenchResult",
    "CacheCounters",
    "Driver",
    "DriverCall",
    "DriverRun",
    "LoadCpu",
    "Percentiles",
    "RequestRecord",
    "Summary",
    "Tokenizer",
    "Workload",
    "cache_state",
    "driver",
    "exact_text",
    "hit_rate",
    "local_tokenizer",
    "make_prompts",
    "measured_facts",
    "parse_cache_counters",
    "percentile",
    "read_cache_counters",
    "run_bench",
    "run_driver",
    "server_tokenizer",
    "summarize",
    "weight_hash",
]
