"""Every case of the reference golden file resolves to exactly the golden result."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GOLDEN


def _cases():
    if not GOLDEN.is_file():
        return []
    with GOLDEN.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_golden_file_is_complete():
    assert len(_cases()) == 5830


def test_every_golden_case_matches_exactly(recipe_repo):
    from launchcard.resolve import resolve_case

    failures = []
    for case in _cases():
        got = resolve_case(recipe_repo, case)
        want = case["result"]
        # dict equality ignores order; environment order is part of the result, so compare it too
        if got != want or list(got.get("env", {}).items()) != list(want.get("env", {}).items()):
            failures.append(case["id"])
    assert not failures, f"{len(failures)} cases differ, e.g. {failures[:5]}"


@pytest.mark.parametrize("role", ["prefill", "decode"])
def test_pd_role_env_order(recipe_repo, role):
    from launchcard.resolve import resolve_case

    case = next(c for c in _cases() if c["result"]["deploy_type"] == "pd_cluster")
    got = resolve_case(recipe_repo, case)
    assert list(got[role]["env"]) == list(case["result"][role]["env"])
