"""How ``vllm bench serve`` sends a run's requests: their prompt and output lengths (exact, drawn from a range, or a
dataset's per-request table) and their send times (a closed loop, or Poisson arrivals).

Shared by the single-scheduler simulation (:mod:`launchcard.predict._sim`) and SGLang's DP-attention ranks
(:mod:`launchcard.predict._sglang_dp`), which both read them; a leaf module so neither imports the other's.
"""

from __future__ import annotations

import math
import random

from launchcard.predict._prefix import cached_prefix
from launchcard.predict._sched import _Cohort

# the R2 low-discrepancy sequence's steps (M. Roberts, "The unreasonable effectiveness of quasirandom sequences",
# 2018): 1/g and 1/g^2, g the plastic number (the real root of x^3 = x + 1)
_G = 1.32471795724474602596
_R2_A, _R2_B = 1.0 / _G, 1.0 / (_G * _G)


def length_range(length: int, ratio: float) -> tuple[int, int]:
    """The lengths a client draws from for ``length`` at ``ratio`` (vllm/benchmarks/datasets.py RandomDataset:
    ``floor(L (1 - r))`` to ``ceil(L (1 + r))``, at least 1)."""
    if ratio <= 0.0:
        return length, length
    return max(1, math.floor(length * (1.0 - ratio))), math.ceil(length * (1.0 + ratio))


def request_lengths(isl: int, osl: int, ratio: float, j: int,
                    table: tuple[tuple[int, int], ...] = ()) -> tuple[int, int]:
    """Prompt and output length of request ``j`` (0, 1, ... in the order they are issued): its entry of ``table``
    (a dataset's per-request lengths, :mod:`launchcard.predict._lengths`; repeating past its end) when given, else
    exact without a ``ratio``, else the request's own pair in :func:`length_range`: the ``j``-th point of the R2
    sequence over the square of (prompt, output) ranges.  The client draws both lengths independently and
    uniformly; the sequence stands for that draw without its sampling noise: every prefix of the run covers the
    square evenly (its mean lengths are the ranges' means, its shortest outputs are there), requests differ wherever
    the ranges leave room, and it is deterministic and needs no run length.  Not the client's own draw (its seeded NumPy
    generator), but the same distribution."""
    if table:
        return table[j % len(table)]
    if ratio <= 0.0:
        return isl, osl
    # the R2 low-discrepancy sequence (Roberts 2018: steps 1/g and 1/g^2, g the plastic number): each request its
    # own pair, any prefix of the run spread evenly over the square, as the client's independent uniform draws are
    u, v = (0.5 + j * _R2_A) % 1.0, (0.5 + j * _R2_B) % 1.0  # 0.5: Roberts' seed, off the ranges' edges

    def at(length: int, x: float) -> int:
        lo, hi = length_range(length, ratio)
        return max(1, min(hi, lo + int(x * (hi - lo + 1))))

    return at(isl, u), at(osl, v)


def new_requests(m: int, j0: int, isl: int, osl: int, ratio: float, prefix_hit: float,
                 table: tuple[tuple[int, int], ...] = (), block: int = 1) -> list[tuple[int, int, int, int]]:
    """``m`` requests numbered from ``j0``, as (count, prompt tokens to compute, cached tokens, output length),
    one entry per length pair in the order each pair first appears; the cached tokens by the engine's reuse
    granularity ``block`` (:func:`launchcard.predict._prefix.cached_prefix`)."""
    if ratio <= 0.0 and not table:
        cached = cached_prefix(isl, prefix_hit, block)
        return [(m, isl - cached, cached, osl)]
    groups: dict[tuple[int, int], int] = {}
    for j in range(j0, j0 + m):
        pair = request_lengths(isl, osl, ratio, j, table)
        groups[pair] = groups.get(pair, 0) + 1
    out = []
    for (i_len, o_len), n in groups.items():
        cached = cached_prefix(i_len, prefix_hit, block)
        out.append((n, i_len - cached, cached, o_len))
    return out


def arrival_times(requests: int, rate: float, seed: int = 0) -> list[float]:
    """When each of ``requests`` Poisson arrivals at ``rate`` is sent, as ``vllm bench serve`` schedules them:
    request i after the sum of i + 1 exponential gaps, all scaled so that the last is sent at exactly
    ``requests / rate`` (its get_request: vLLM 0.10.2 vllm/benchmarks/serve.py L185-195, 0.11.2 L205-225, 0.32.0
    L486-496, "to close the gap ... stabilizing the throughput"); the run's clock starts before the first."""
    rng = random.Random(seed)
    out: list[float] = []
    t = 0.0
    for _ in range(requests):
        t += rng.expovariate(rate)
        out.append(t)
    scale = requests / rate / t if t > 0 else 1.0
    return [x * scale for x in out]


def arrival(at: float, ahead: int, j: int, isl: int, osl: int, ratio: float, prefix_hit: float, need: int,
             cached: int, table: tuple[tuple[int, int], ...] = (), block: int = 1) -> _Cohort:
    """Request ``j`` arriving at ``at`` (Poisson), ``ahead`` in the server before it."""
    if ratio <= 0.0 and not table:
        return _Cohort(1, at, need, cached, osl, ahead)
    i_len, o_len = request_lengths(isl, osl, ratio, j, table)
    cached_j = cached_prefix(i_len, prefix_hit, block)
    return _Cohort(1, at, i_len - cached_j, cached_j, o_len, ahead)


def next_receive(wait: int, recv_n: int, count: int) -> int:
    """Decode passes from here to the first receive that finds a held request there: at least ``wait`` passes
    (at least one), at a receive (every pass with R 1; else when the count, ``count`` now, reaches a multiple of R)."""
    m = max(1, wait)
    if recv_n == 1:
        return m
    first = recv_n - count
    return first if m <= first else first + -(-(m - first) // recv_n) * recv_n
