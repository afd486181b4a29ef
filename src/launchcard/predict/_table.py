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
