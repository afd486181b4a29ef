"""Predict how fast a resolved plan serves a workload, and what bounds it.

    facts = serving_facts("config.json", Settings(tp=2, kv_cache_dtype="fp8"), gpu="h100")
    p = predict(facts, Workload(isl=1024, osl=256, concurrency=32))
    p.tpot_ms_mean, p.output_tok_per_s_per_gpu, p.decode.bound

``serving_facts`` runs the memory planner once; ``predict`` is arithmetic over the frozen
facts (a step-level scheduler simulation), cheap enough for a plan search.
"""

from __future__ import annotations

from launchcard.predict._clock import Schedules
from launchcard.predict._coef import PARAMS, Coefficients, Stages, coefficients, on_host
from launchcard.predict._cost import StepWork, step_terms, step_work
from launchcard.predict._domain import domain_findings, plans_outside
from launchcard.predict._engine_rules import ENGINES, release_refusal, untimed_vllm_flags
from launchcard.predict._facts import (
    ServingFacts,
    facts_from_memory_plan,
    facts_with,
    graph_tokens_at,
    with_limits,
)
from launchcard.predict._figures import HardwareFigures
from launchcard.predict._launch import (
    SGLANG_EP_FLAG,
    SGLANG_FLAGS,
    PlanPrediction,
    in_command,
    plan_verdict,
    predict_launch,
    predict_plan,
    sglang_words,
    trtllm_unstated,
    trtllm_words,
    vllm_words,
    with_options,
)
from launchcard.predict._lengths import DATASETS, dataset_lengths, dataset_means
from launchcard.predict._mxfp4 import unused_backend_note
from launchcard.predict._predict import (
    check_command_context,
    check_context,
    check_generates,
    lockstep_group,
    predict,
    served_command,
    serving_facts,
    undecided_findings,
)
from launchcard.predict._prefix import prefix_off, prefix_off_error
from launchcard.predict._render import figure_text, prediction_to_text
from launchcard.predict._sglang import (
    SglangPlan,
    sglang_command_facts,
    sglang_model_traits,
    sglang_plan,
    sglang_serving_facts,
)
from launchcard.predict._sglang_pool import sglang_running
from launchcard.predict._sglang_rules import RULES_RELEASE as SGLANG_RULES_RELEASE
from launchcard.predict._sim import accepted_per_step, simulate
from launchcard.predict._table import tables_digest
from launchcard.predict._trtllm import SETTING_OPTIONS as TRTLLM_OPTIONS
from launchcard.predict._trtllm import TrtllmLaunch, platform_refusal, read_serve_command, serve_words
from launchcard.predict._types import (
    DOMAIN_CODES,
    FIGURE_DIGITS,
    MAX_REQUESTS,
    TERMS,
    Domain,
    Finding,
    Phase,
    Prediction,
    Workload,
    bound_json,
    figures_json,
    outside_json,
    outside_read,
    read_number,
)

__all__ = [
    "DATASETS",
    "DOMAIN_CODES",
    "ENGINES",
    "FIGURE_DIGITS",
    "MAX_REQUESTS",
    "PARAMS",
    "SGLANG_EP_FLAG",
    "SGLANG_FLAGS",
    "SGLANG_RULES_RELEASE",
    "TERMS",
    "TRTLLM_OPTIONS",
    "Coefficients",
    "Domain",
    "Finding",
    "HardwareFigures",
    "Phase",
    "PlanPrediction",
    "Prediction",
    "Schedules",
    "ServingFacts",
    "SglangPlan",
    "Stages",
    "StepWork",
    "TrtllmLaunch",
    "Workload",
    "accepted_per_step",
    "bound_json",
    "check_command_context",
    "check_context",
    "check_generates",
    "coefficients",
    "dataset_lengths",
    "dataset_means",
    "domain_findings",
    "facts_from_memory_plan",
    "facts_with",
    "figure_text",
    "figures_json",
    "graph_tokens_at",
    "in_command",
    "lockstep_group",
    "on_host",
    "outside_json",
    "outside_read",
    "plan_verdict",
    "plans_outside",
    "platform_refusal",
    "predict",
    "predict_launch",
    "predict_plan",
    "prediction_to_text",
    "prefix_off",
    "prefix_off_error",
    "read_number",
    "read_serve_command",
    "release_refusal",
    "serve_words",
    "served_command",
    "serving_facts",
    "sglang_command_facts",
    "sglang_model_traits",
    "sglang_plan",
    "sglang_running",
    "sglang_serving_facts",
    "sglang_words",
    "simulate",
    "step_terms",
    "step_work",
    "tables_digest",
    "trtllm_unstated",
    "trtllm_words",
    "undecided_findings",
    "untimed_vllm_flags",
    "unused_backend_note",
    "vllm_words",
    "with_limits",
    "with_options",
]
