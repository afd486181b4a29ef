"""launchcard.flagspec._release: the one order of engine release strings is PEP 440's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launchcard.flagspec import release_key, release_numbers, version_key

Version = pytest.importorskip("packaging.version").Version

_SEP = st.sampled_from(["", ".", "-", "_"])
_NUM = st.integers(min_value=0, max_value=12)
_PRE = st.tuples(_SEP, st.sampled_from(["a", "b", "rc", "alpha", "beta", "c", "pre", "preview", "RC"]), _SEP,
                 st.one_of(st.just(""), _NUM.map(str)))
_POST = st.one_of(_NUM.map(lambda n: f"-{n}"),
                  st.tuples(_SEP, st.sampled_from(["post", "rev", "r"]), _SEP, st.one_of(st.just(""), _NUM.map(str)))
                  .map("".join))


@st.composite
def releases(draw: st.DrawFn) -> str:
    """Release strings as engines write them and PEP 440 permits them (every suffix, separator and spelling)."""
    text = draw(st.sampled_from(["", "v"])) + ".".join(map(str, draw(st.lists(_NUM, min_size=1, max_size=5))))
    if draw(st.booleans()):
        sep, name, sep2, n = draw(_PRE)
        text += sep + name + (sep2 + n if n else "")
    if draw(st.booleans()):
        text += draw(_POST)
    if draw(st.booleans()):
        n = draw(st.one_of(st.just(""), _NUM.map(str)))
        text += draw(_SEP) + "dev" + (draw(_SEP) + n if n else "")
    if draw(st.booleans()):
        text += "+" + draw(st.sampled_from(["cu128", "g99a10304d", "rocm6.4", "local.1"]))
    return text


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


@settings(max_examples=400, deadline=None)
@given(releases(), releases())
def test_order_agrees_with_pep_440(a: str, b: str) -> None:
    ka, kb = release_key(a), release_key(b)
    assert ka is not None and kb is not None, (a, b)
    va, vb = Version(Version(a).public), Version(Version(b).public)  # a local label names a build of the release
    assert _sign((ka > kb) - (ka < kb)) == _sign((va > vb) - (va < vb)), (a, b)
    assert (version_key(a) < version_key(b)) == (va < vb)


def test_engine_releases_in_order_and_what_is_no_release() -> None:
    order = ["0.5.1.post1", "0.5.6", "0.5.6.post2", "0.5.10.post1", "0.26.1rc1.dev608+g99a10304d", "0.26.1rc1",
             "0.26.1", "1.0.0rc3", "1.0.0", "1.0.0.post1", "1.2.0rc2", "1.2.0rc6.post3", "1.2.0rc10", "1.3.0rc1"]
    assert sorted(reversed(order), key=version_key) == order
    assert release_key("0.10") == release_key("0.10.0") == release_key("v0.10.0") == release_key(" 0.10.0+cu128 ")
    for text in ("nightly", "nightly-dev", "glm5-hopper", "latest", "1!2.0", "0.5.6-cu129", "", None):
        assert release_key(text) is None, text
    # what is no release sorts before every release, by its text: a captured index stays sortable
    assert sorted(["0.1.0", "nightly", "0.0.1", "glm5"], key=version_key) == ["glm5", "nightly", "0.0.1", "0.1.0"]


def test_release_numbers_name_the_release_line() -> None:
    assert release_numbers("0.30.0rc1") == (0, 30) == release_numbers("v0.30.0.post1")
    assert release_numbers("0.29.1") == (0, 29, 1) and release_numbers("nightly") is None
