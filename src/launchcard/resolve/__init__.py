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
from launchcard.resolve._plan import ArgUnit, Command, EnvEntry, Origin, ResolvedPlan, Router, env_value_str
from launchcard.resolve._render import quote, shell_command
from launchcard.resolve._run import resolve, resolve_case

ADVANCED_PRESETS: dict[str, list[str]] = {
    "max_batched_8k": ["--max-num-batched-tokens", "8192"],
    "max_num_seqs_256": ["--max-num-seqs", "256"],
    "gpu_mem_095": ["--gpu-memory-utilization", "0.95"],
    "max_model_len_auto": ["--max-model-len", "auto"],
    "dcp_8": ["--decode-context-parallel-size", "8"],
    "no_flashinfer_autotune": ["--no-enable-flashinfer-autotune"],
    "ep_weight_filter": ["--enable-ep-weight-filter"],
}

__all__ = ["ADVANCED_PRESETS", "ArgUnit", "Choice", "Command", "EnvEntry", "Origin", "ResolvedPlan", "Router",
           "default_features", "env_value_str", "quote", "resolve", "resolve_case", "shell_command"]


def __getattr__(name: str) -> Any:  # pragma: no cover
    raise AttributeError(name)
