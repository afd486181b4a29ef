"""Benchmark a live endpoint under stated, recorded conditions."""

from launchcard.bench._bench import run_bench, weight_hash
from launchcard.bench._facts import measured_facts
from launchcard.bench._prompts import local_tokenizer, make_prompts, server_tokenizer
from launchcard.bench._types import BenchResult, Percentiles, RequestRecord, Summary, Workload, percentile, summarize

__all__ = ["BenchResult", "Percentiles", "RequestRecord", "Summary", "Workload", "local_tokenizer",
           "make_prompts", "measured_facts", "percentile", "run_bench", "server_tokenizer", "summarize",
           "weight_hash"]
