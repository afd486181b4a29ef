"""The server's own prefix-cache counters, read from its Prometheus /metrics.

A benchmark's "cold cache" is a claim about the server, so it is measured
there: vLLM counts prompt tokens looked up in the prefix cache
(``vllm:prefix_cache_queries_total``) and those found
(``vllm:prefix_cache_hits_total``).  The difference of two readings taken
around the load is the hit rate the run saw.  Servers without the counters
(other engines, metrics off) give None and the condition says "not measured".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import httpx

_HITS = "vllm:prefix_cache_hits_total"
_QUERIES = "vllm:prefix_cache_queries_total"


class CacheCounters(NamedTuple):
    hits: float
    queries: float


def parse_cache_counters(text: str) -> CacheCounters | None:
    """Sum the counters over their label sets (one per engine / model)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in (_HITS, _QUERIES):
            try:
                found[name] = found.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                return None
    if len(found) < 2:
        return None
    return CacheCounters(found[_HITS], found[_QUERIES])


METRICS_TIMEOUT_S = 2.0  # a side reading: it must never add much to a run that ends on a dead server


def read_cache_counters(client: httpx.Client, endpoint: str) -> CacheCounters | None:
    """The counters now, or None when /metrics does not answer with them."""
    import httpx

    try:
        resp = client.get(f"{endpoint}/metrics", timeout=METRICS_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    return parse_cache_counters(resp.text) if resp.status_code == 200 else None


def hit_rate(before: CacheCounters | None, after: CacheCounters | None) -> tuple[float, float] | None:
    """(hit rate, prompt tokens looked up) between two readings; None when not measurable."""
    if before is None or after is None or after.queries <= before.queries or after.hits < before.hits:
        return None
    queried = after.queries - before.queries
    return (after.hits - before.hits) / queried, queried
