"""launchcard/gitref.py: what git accepts as a revision name, judged as `git check-ref-format` judges it."""

from __future__ import annotations

import pytest

from launchcard.gitref import is_ref_name


@pytest.mark.parametrize("name", [
    "main", "v0.11.0", "a/b", "release/0.5.6.post2", "3325537", "feature-x_y", "a.b/c.d",
])
def test_names_git_takes(name: str) -> None:
    assert is_ref_name(name)


@pytest.mark.parametrize("name", [
    "", "a b", "x..y", "main:refs/heads/x", "a~1", "a^", "a?", "a*", "a[b", "a\\b", "a@{1}", "@", "/a", "a/",
    ".a", "a.", "a.lock", "a//b", "a\x7fb",
    # rule 1: no slash-separated component may begin with a dot or end with .lock (git check-ref-format refuses
    # both: git/Documentation/git-check-ref-format.adoc rule 1)
    "a/.b", "a.lock/b", "refs/.hidden/x",
])
def test_names_git_refuses(name: str) -> None:
    assert not is_ref_name(name)
