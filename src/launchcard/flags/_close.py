"""``difflib.get_close_matches(word, candidates, n=1, cutoff)``, with each ratio computed once per process.

Checking one command against every captured release asks for the same unknown flag's closest
spelling once per release (25 releases: 25 near-identical option lists), and a corpus of cards
asks again per command; the ratio of a word to a candidate never changes, so it is kept.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# (word, cutoff) -> candidate -> ratio; 0.0 where the quick upper bounds already fall below cutoff
_RATIOS: dict[tuple[str, float], dict[str, float]] = {}
# (word, cutoff) -> candidate -> quick_ratio(), an upper bound of its ratio, for candidates whose ratio was not needed
_BOUNDS: dict[tuple[str, float], dict[str, float]] = {}
_LIMIT = 4096  # words kept; a long-running process (the web app) clears the table when it is full


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate ``difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)`` returns, or None.

    The same result, ties included: the highest (ratio, candidate) pair at or above ``cutoff``.  The full
    ratio (the costly part) is computed only for candidates whose upper bound (``quick_ratio``, which is never
    below the ratio) could still beat the best pair found, highest bound first.
    """
    key = (word, cutoff)
    ratios = _RATIOS.get(key)
    bounds = _BOUNDS.get(key)
    if ratios is None or bounds is None:
        if len(_RATIOS) >= _LIMIT:
            _RATIOS.clear()
            _BOUNDS.clear()
        ratios = _RATIOS[key] = {}
        bounds = _BOUNDS[key] = {}
    matcher: difflib.SequenceMatcher[str] | None = None
    best: tuple[float, str] | None = None
    open_: list[tuple[float, str]] = []
    for x in candidates:
        r = ratios.get(x)
        if r is not None:
            if r >= cutoff and (best is None or (r, x) > best):
                best = (r, x)
            continue
        bound = bounds.get(x)
        if bound is None:
            if matcher is None:
                matcher = difflib.SequenceMatcher()
                matcher.set_seq2(word)
            matcher.set_seq1(x)
            # difflib's own order: two cheap upper bounds before the real ratio
            bound = matcher.quick_ratio() if matcher.real_quick_ratio() >= cutoff else 0.0
            if bound < cutoff:
                ratios[x] = 0.0
                continue
            bounds[x] = bound
        open_.append((bound, x))
    open_.sort(reverse=True)
    for bound, x in open_:
        if best is not None and (bound, x) < best:
            break  # neither this candidate nor any later one (lower bounds) can beat ``best``
        if matcher is None:
            matcher = difflib.SequenceMatcher()
            matcher.set_seq2(word)
        matcher.set_seq1(x)
        r = ratios[x] = matcher.ratio()
        bounds.pop(x, None)  # a list may name a candidate twice
        if r >= cutoff and (best is None or (r, x) > best):
            best = (r, x)
    return best[1] if best is not None else None
