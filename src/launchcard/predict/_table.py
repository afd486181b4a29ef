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

COEFFICIENTS_FILE = "predict_coefficients.json"


@lru_cache(maxsize=1)
def coefficient_table() -> dict[str, Any]:
    raw = data_path(COEFFICIENTS_FILE).read_text(encoding="utf-8")
    doc = json.loads(raw)
    if not isinstance(doc, dict) or not isinstance(doc.get("sets"), dict):
        raise InputError("no coefficient sets", where=f"launchcard/data/{COEFFICIENTS_FILE}",
                         fix="regenerate it with bench/predict_accuracy.py --write")
    return doc


# id of a table -> (the table, its digest): kept with the table, so an id reused by another object never matches
_DIGESTS: dict[int, tuple[dict[str, Any], str]] = {}


def tables_digest() -> str:
    """sha256 of the coefficient tables the predictor reads now: :func:`coefficient_table` and each loaded
    ``launchcard.predict`` module's own ``_table`` (the same object, unless a table was read again or a test put
    its own in place).  What a memo of predictions keys on besides its inputs, so that a changed set is never
    answered from figures of the old one; each table is hashed once."""
    import hashlib
    import sys

    tables = {id(t): t for t in [coefficient_table(), *(
        m._table() for name, m in list(sys.modules.items())
        if name.startswith("launchcard.predict.") and callable(getattr(m, "_table", None)))]}
    digests = []
    for key, table in tables.items():
        hit = _DIGESTS.get(key)
        if hit is None or hit[0] is not table:
            text = json.dumps(table, sort_keys=True, separators=(",", ":"), default=str)
            hit = _DIGESTS[key] = (table, hashlib.sha256(text.encode()).hexdigest())
        digests.append(hit[1])
    return hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()
