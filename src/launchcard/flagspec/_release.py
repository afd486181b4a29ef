"""The one order of engine release strings (``0.10.1.1``, ``v0.5.23``, ``0.5.6.post2``, ``1.2.0rc6.post2``,
``0.26.1rc1.dev608+g99a10304d``).

PEP 440's order (https://peps.python.org/pep-0440/, "Version scheme" and "Summary of permitted suffixes and relative
ordering"), which vLLM, SGLang and TensorRT-LLM version their wheels by: release numbers (trailing zeros do not
count: ``0.10`` is ``0.10.0``), then a pre-release (a < b < rc) before the release itself, post releases after it,
and a developmental build before whatever it is a build of (``1.0.dev0`` < ``1.0a1``; ``1.0rc1.dev6`` < ``1.0rc1``).
A local label (``+g99a10304d``, ``+cu128``) names a build of the same release and is not ordered on; epochs
(``1!2.0``) are not used by the engines and are no release here.  Here, in flagspec, the lowest layer every
reader of a release (flags, limits, explain, memory, predict, store) may import.
"""

from __future__ import annotations

import functools
import re

# PEP 440's permitted spellings (its Appendix B, "Parsing version strings with regular expressions"), epoch left out:
# separators ``.``, ``-``, ``_`` or none before a suffix, the alternative pre-release names, ``-N`` as a post release
_FORM = re.compile(
    r"v?(?P<nums>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_bare>\d+)|[-_.]?(?:post|rev|r)[-_.]?(?P<post_n>\d+)?(?P<post_named>))?"
    r"(?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?",
    re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "pre": 2, "preview": 2, "rc": 2}
_DEV_ONLY, _FINAL = -1, 3  # the pre-release rank of ``1.0.dev0`` (before ``1.0a0``) and of no pre-release at all

# (release numbers without trailing zeros, pre-release rank, its number, post number or -1 for none,
#  0 for a developmental build / 1 for none, its number): tuples compare in PEP 440's order
ReleaseKey = tuple[tuple[int, ...], int, int, int, int, int]


@functools.lru_cache(maxsize=4096)  # pure; asked tens of thousands of times by range checks and plan searches
def release_key(text: str | None) -> ReleaseKey | None:
    """The order key of the release ``text`` (see the module); None for what is no release (``nightly-...``,
    ``glm5-hopper``, None)."""
    m = _FORM.fullmatch((text or "").strip())
    if m is None:
        return None
    nums = tuple(int(p) for p in m["nums"].split("."))
    while len(nums) > 1 and nums[-1] == 0:
        nums = nums[:-1]
    post_text = m["post_bare"] or m["post_n"]
    post = int(post_text or 0) if m["post_bare"] is not None or m["post_named"] is not None else -1
    dev = m["dev"] is not None
    if m["pre"] is not None:
        pre = (_PRE_RANK[m["pre"].lower()], int(m["pre_n"] or 0))
    else:
        pre = (_DEV_ONLY if dev and post < 0 else _FINAL, 0)
    return (nums, *pre, post, 0 if dev else 1, int(m["dev_n"] or 0))


def release_numbers(text: str | None) -> tuple[int, ...] | None:
    """The release numbers of ``text`` without trailing zeros (``0.30.0rc1`` -> (0, 30)), None when it is no
    release: the release line a rule that changed "in 0.30" compares (a pre-release of 0.30 carries 0.30's code)."""
    key = release_key(text)
    return None if key is None else key[0]


def final_release(text: str | None) -> tuple[tuple[int, ...], int] | None:
    """(the release numbers without trailing zeros, the post release's number or 0) of a final release or a post
    release of one (``0.5.6.post2`` -> ((0, 5, 6), 2)); None for a pre-release, a developmental build or what is
    no release: for tables keyed by final releases, where such a build's code lies between two of them."""
    key = release_key(text)
    if key is None or key[1] != _FINAL or not key[4]:
        return None
    return key[0], max(key[3], 0)
