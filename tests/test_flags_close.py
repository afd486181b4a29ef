"""``flags._close.closest`` is ``difflib.get_close_matches(word, candidates, n=1, cutoff)``, ties included,
also when the per-process cache was filled by other candidate lists (25 releases share one table) and when the
full ratio is skipped for candidates whose upper bound cannot beat the best one found."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from launchcard.flags import _close

WORDS = st.text(alphabet="-abcdeiklmnopqrstuvx_", min_size=1, max_size=14)


@settings(max_examples=300, deadline=None)
@given(word=WORDS, lists=st.lists(st.lists(WORDS, max_size=25), min_size=1, max_size=3),
       cutoff=st.sampled_from([0.0, 0.5, 0.6, 0.8, 1.0]))
def test_closest_is_difflibs_answer(word: str, lists: list[list[str]], cutoff: float) -> None:
    _close._RATIOS.clear()
    _close._BOUNDS.clear()
    for candidates in lists:  # one word against several candidate lists: the cache carries over
        expected = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
        assert _close.closest(word, iter(candidates), cutoff) == (expected[0] if expected else None)


def test_ties_go_to_the_greater_candidate_as_in_difflib() -> None:
    # "--ab" and "--ba" are equally close to "--aa"; difflib keeps the greater (ratio, candidate) pair
    for candidates in (["--ab", "--ba"], ["--ba", "--ab"]):
        assert _close.closest("--aa", candidates) == difflib.get_close_matches("--aa", candidates, n=1)[0]
