"""The reference builder's JavaScript value rules, named once.

The recipes site builds commands in JavaScript, so "is this set?" means one of
two different things there, and the resolver must use the same one at each
place to produce the same command:

- **present**: ``value != null`` -- ``0``, ``""``, ``false`` and ``[]`` count as
  set (used for hardware-keyed lookups such as ``overrides[gen] ?? ...``);
- **truthy**: JavaScript truthiness -- ``null``, ``false``, ``0``, ``""`` and
  ``NaN`` are unset (used to drop empty argv tokens and for ``a || b`` chains).

Typed records keep ``None`` for "absent" and the real value otherwise, so both
rules stay expressible after the YAML boundary.
"""

from __future__ import annotations

import math
from typing import Any


def present(value: object) -> bool:
    """JavaScript ``value != null``."""
    return value is not None


def truthy(value: object) -> bool:
    """JavaScript truthiness of a YAML scalar (containers are always truthy there)."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)  # NaN is falsy too
    return True


def first_truthy(*values: Any) -> Any:
    """``a || b || c``: the first truthy value, else the last one (JavaScript semantics)."""
    for value in values:
        if truthy(value):
            return value
    return values[-1] if values else None


def is_flag(token: object) -> bool:
    """An argv token that starts an option (``-x`` / ``--name``)."""
    return isinstance(token, str) and token.startswith("-")
