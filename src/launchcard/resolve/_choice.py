"""What the user chose: the full input tuple of a resolution."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Choice:
    """Inputs of one resolution.  ``None`` means "what the recipe builder picks".

    ``features`` is the ordered list of enabled features (None = the recipe's
    defaults); ``extra_features`` are turned on in addition to them (``--feature``,
    ``feature=``) and ``removed_features`` turned off (``--no-feature``, ``no_feature=``):
    ``resolve._features.selected_features`` reads the three.
    """

    model: str  # recipe id, e.g. zai-org/GLM-5.3-Flash
    variant: str | None = None
    hardware: str | None = None
    strategy: str | None = None
    node_count: int | None = None
    features: tuple[str, ...] | None = None
    extra_features: tuple[str, ...] = ()
    removed_features: tuple[str, ...] = ()
    feature_modes: dict[str, str] = field(default_factory=dict)
    pd_nodes: Any = None
    kv_offload: str | None = None
    kv_instances: Any = None
    advanced: tuple[str, ...] = ()
    advanced_args: tuple[str, ...] | None = None
    omni_task: str | None = None


def suggest(value: str, known: list[str]) -> str:
    """The fix of an unknown choice: the close names, else every name."""
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.4)
    return ("did you mean " + ", ".join(close) + "?") if close else "choose one of: " + ", ".join(known)
