"""Resolving a vLLM recipe into launch commands, exactly as the recipes builder
does (``shared/docs/vllm-recipes-resolution.md``), with the reason for each token.

Public API: :func:`resolve` (a :class:`Choice` with defaults filled in →
:class:`ResolvedPlan`) and :func:`resolve_case` (explicit reference inputs →
the reference result object).
"""

from __future__ import annotations

from typing import Any

from launchcard.resolve._choice import Choice
from launchcard.resolve._defaults import default_features
from launchcard.resolve._fact_rows import recipe_fact_rows
from launchcard.resolve._features import check_features, selected_features
from launchcard.resolve._hardware import HardwareChoice, profile_id, resolvable_hardware
from launchcard.resolve._plan import (
    ArgUnit,
    Assumption,
    Command,
    EnvEntry,
    Input,
    Origin,
    ResolvedPlan,
    Router,
    env_value_str,
)
from launchcard.resolve._render import (
    accelerator_brand_key,
    builder_default_image,
    command_blocks,
    command_title,
    quote,
    shell_command,
)
from launchcard.resolve._run import ADVANCED_PRESETS, resolve, resolve_case

__all__ = ["ADVANCED_PRESETS", "ArgUnit", "Assumption", "Choice", "Command", "EnvEntry", "HardwareChoice", "Input",
           "Origin",
           "ResolvedPlan", "Router", "accelerator_brand_key", "builder_default_image", "check_features",
           "command_blocks", "command_title", "default_features", "env_value_str", "profile_id", "quote",
           "recipe_fact_rows", "resolvable_hardware", "resolve", "resolve_case", "selected_features", "shell_command"]


def __getattr__(name: str) -> Any:  # pragma: no cover
    raise AttributeError(name)
