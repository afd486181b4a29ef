"""Benchmark a live endpoint under stated, recorded conditions."""

from launchcard.bench._bench import cache_state, run_bench, weight_hash
from launchcard.bench._facts import measured_facts
from launchcard.bench._metrics import CacheCounters, hit_rate, parse_cache_counters, read_cache_counters
from launchcard.bench._prompts import local_tokenizer, make_prompts, server_tokenizer
from launchcard.bench._types import BenchResult, Percentiles, RequestRecord, Summary, Workload, percentile, summarize

__all__ = [
           "BenchResult",
           "CacheCounters",
           "Percentiles",
           "RequestRecord",
           "Summary",
           "Workload",
           "cache_state",
           "hit_rate",
           "local_tokenizer",
           "make_prompts",
           "measured_facts",
           "parse_cache_counters",
           "percentile",
           "read_cache_counters",
           "run_bench",
           "server_tokenizer",
           "summarize",
           "weight_hash",
]
