"""What the user chose: the full input tuple of a resolution."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from launchcard.card import Frozen


class Choice(Frozen):
    """Inputs of one resolution.  ``None`` means "what the recipe builder picks"."""

    model: str = Field(description="Recipe id, e.g. zai-org/GLM-5.3-Flash.")
    variant: str | None = None
    hardware: str | None = None
    strategy: str | None = None
    node_count: int | None = None
    features: tuple[str, ...] | None = Field(None, description="Enabled features in order; None = defaults.")
    extra_features: tuple[str, ...] = Field((), description="Features turned on in addition to the defaults.")
    feature_modes: dict[str, str] = Field(default_factory=dict)
    pd_nodes: Any = None
    kv_offload: str | None = None
    kv_instances: Any = None
    advanced: tuple[str, ...] = ()
    advanced_args: tuple[str, ...] | None = None
    omni_task: str | None = None
