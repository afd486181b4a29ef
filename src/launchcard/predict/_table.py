"""The recorded coefficient table (data/predict_coefficients.json), read once.

Its own module so that both the cost model and the rules that ask which kernels were measured (``_mxfp4``) read
it without importing each other.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from launchcard.datadir import data_path
from launchcard.errors import InputError
from launchcard.idmemo import IdMemo

COEFFICIENTS_FILE = "predict_coefficients.json"


@lru_cache(maxsize=1)
def coefficient_table() -> dict[str, Any]:
    raw = data_path(COEFFICIENTS_FILE).read_text(encoding="utf-8")
    doc = json.loads(raw)
    if not isinstance(doc, dict) or not isinstance(doc.get("sets"), dict):
        raise InputError("no coefficient sets", where=f"launchcard/data/{COEFFICIENTS_FILE}",
                         fix="regenerate it with bench/predict_accuracy.py --write")
    return doc


# a table -> its digest (by identity: a table is a dict); bounded low, as it keeps the tables of tests gone by alive
_DIGESTS: IdMemo[dict[str, Any], str] = IdMemo(64)


def tables_digest() -> str:
    """sha256 of the coefficient tables the predictor reads now: :func:`coefficient_table` and each loaded
    ``launchcard.predict`` module's own ``_table`` (the same object, unless a table was read again or a test put
    its own in place).  What a memo of predictions keys on besides its inputs, so that a changed set is never
    answered from figures of the old one.  Each table is hashed once; a module's table equal to the shipped one
    adds nothing, so the digest does not depend on which modules happen to be imported."""
    import hashlib
    import sys

    base = _digest(coefficient_table())
    own = sorted(f"{name}={d}" for name, m in list(sys.modules.items())
                 if name.startswith("launchcard.predict.") and callable(getattr(m, "_table", None))
                 and (d := _digest(m._table())) != base)
    return hashlib.sha256("\n".join([base, *own]).encode()).hexdigest()


def _digest(table: dict[str, Any]) -> str:
    return _DIGESTS.get(table, _sha256)


def _sha256(table: dict[str, Any]) -> str:
    import hashlib

    text = json.dumps(table, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
