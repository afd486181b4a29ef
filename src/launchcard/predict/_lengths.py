"""Per-request lengths of a dataset workload: what ``vllm bench serve --dataset-name sharegpt`` sends.

ShareGPT's requests are not alike: vLLM's sampler takes each conversation's first turn as the prompt and its first
reply's length as ``max_tokens`` (data/sharegpt_lengths.json says how those lengths were read, from which copy of the
file and with which tokenizer; bench/sharegpt_lengths.py rebuilds it).  Prompts run from 4 to 1024 tokens (median
105, mean 220), outputs from 4 to ~1,850 (median 135, mean 203): a burst of them ends with a few long outputs decoding
at a small batch, which a run of equal requests of the mean lengths never has.

A run of ``n`` requests takes the pool's pairs in one fixed shuffled order (``random.Random(seed)``: the pool is a
prefix of the file, not vLLM's own shuffle of the whole file, so the pairs are a sample like vLLM's, not its exact
sample), each length then scaled so that the run's mean prompt and output lengths are the workload's ``isl`` and
``osl`` (a run's printed totals over its requests; another tokenizer, or replies cut short at EOS, change the means,
and the scaling keeps the shape).
"""

from __future__ import annotations

import json
import random
from functools import lru_cache

from launchcard.datadir import data_path
from launchcard.errors import InputError

DATASETS = ("sharegpt",)
LENGTHS_FILE = {"sharegpt": "sharegpt_lengths.json"}
# what a dataset's lengths are, in a finding's words ({n}: the pool's size)
ABOUT = {"sharegpt": "the lengths vllm bench serve's ShareGPT sampler sends (first turn as prompt, first reply's "
                     "length as max_tokens, replies assumed to run to it), drawn in a fixed shuffled order from {n:,} "
                     "first turns of a truncated copy of ShareGPT_V3 read with Qwen's tokenizer "
                     "(launchcard/data/sharegpt_lengths.json)"}


@lru_cache(maxsize=len(DATASETS))
def _pool(name: str) -> tuple[tuple[int, int], ...]:
    if name not in LENGTHS_FILE:
        raise InputError(f"unknown dataset {name!r}", field="dataset",
                         fix=f"pass one of: {', '.join(DATASETS)} (or leave it out for exact lengths)")
    doc = json.loads(data_path(LENGTHS_FILE[name]).read_text(encoding="utf-8"))
    return tuple((int(p), int(o)) for p, o in doc["pairs"])


def describe(name: str) -> str:
    """Where ``name``'s lengths come from, for the prediction's finding."""
    return ABOUT[name].format(n=len(_pool(name)))


@lru_cache(maxsize=8)
def _order(name: str, seed: int) -> tuple[int, ...]:
    order = list(range(len(_pool(name))))
    random.Random(seed).shuffle(order)
    return tuple(order)


@lru_cache(maxsize=64)  # dataset_lengths, scale_factors and dataset_means each read one run's draw
def drawn(name: str, n: int, seed: int = 0) -> tuple[tuple[int, int], ...]:
    """The pool's first ``n`` pairs in the run's shuffled order (the pool repeats past its size)."""
    pool, order = _pool(name), _order(name, seed)
    return tuple(pool[order[j % len(order)]] for j in range(n))


def dataset_means(name: str, n: int, seed: int = 0) -> tuple[int, int]:
    """Mean prompt and output length of ``n`` requests as drawn (the pool's tokenizer's counts), rounded."""
    d = drawn(name, n, seed)
    return max(1, round(sum(p for p, _ in d) / len(d))), max(1, round(sum(o for _, o in d) / len(d)))


@lru_cache(maxsize=64)
def dataset_lengths(name: str, n: int, isl: int, osl: int, seed: int = 0) -> tuple[tuple[int, int], ...]:
    """(prompt, output) of each of ``n`` requests in the order they are issued, scaled to mean ``isl`` / ``osl``
    (kept as counted where a mean is already the counts' own, rounded)."""
    d = drawn(name, n, seed)
    a, b = scale_factors(name, n, isl, osl, seed)
    if a == 1.0 and b == 1.0:
        return d
    return tuple((max(1, round(p * a)), max(1, round(o * b))) for p, o in d)


def scale_factors(name: str, n: int, isl: int, osl: int, seed: int = 0) -> tuple[float, float]:
    """How much the run's prompt and output lengths are scaled from the pool's counts: 1.0 where ``isl`` (``osl``)
    is the counts' own mean, rounded (``dataset_means``)."""
    d = drawn(name, n, seed)
    sp, so = max(1, sum(p for p, _ in d)), max(1, sum(o for _, o in d))
    own = dataset_means(name, n, seed)
    return (1.0 if isl == own[0] else isl * len(d) / sp), (1.0 if osl == own[1] else osl * len(d) / so)
