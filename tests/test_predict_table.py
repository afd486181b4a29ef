"""The coefficient table's digest (predict/_table.py): what a memo of predictions keys on."""

from __future__ import annotations

import copy

import pytest

from launchcard.predict import tables_digest
from launchcard.predict._table import coefficient_table


def test_the_digest_follows_the_tables_the_predictor_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from launchcard.predict import _coef, _kernels

    shipped = tables_digest()
    assert tables_digest() == shipped  # asked again: the same, each table hashed once
    same = copy.deepcopy(coefficient_table())
    monkeypatch.setattr(_coef, "_table", lambda: same)
    assert tables_digest() == shipped  # an equal table read again: the same figures follow
    changed = copy.deepcopy(same)
    changed["sets"]["gpu:vllm"]["values"]["bw_eff"] = 0.5
    monkeypatch.setattr(_coef, "_table", lambda: changed)
    assert tables_digest() != shipped
    monkeypatch.undo()
    kernels = copy.deepcopy(coefficient_table())
    kernels["kernels"]["changed by a test"] = {}
    monkeypatch.setattr(_kernels, "_table", lambda: kernels)  # any predictor module's own table counts
    assert tables_digest() != shipped
    monkeypatch.undo()
    assert tables_digest() == shipped
