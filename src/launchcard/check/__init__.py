"""The verdict on a resolved plan: will it start, will it fit, is it sized right.

    from launchcard.check import check_plan
    verdict = check_plan(plan, recipes=repo)          # Verdict
    verdict.ok, verdict.exit_code, verdict.findings   # Finding(severity, code, message, evidence, fix, role)

Standard library only until the memory planner is asked for (``memory=True`` with a config).
"""

from launchcard.check._argv import ArgvView, read_argv
from launchcard.check._config import ModelConfig, corpus_config, find_config, load_config, no_config_error
from launchcard.check._context import distinct_roles, role_of
from launchcard.check._derive import DERIVED_LABEL, ENGINES, derive_plan
from launchcard.check._facts import MemoryFigures, PlanFacts, ProcessFacts, plan_facts, process_gpus, visible_devices
from launchcard.check._hardware import catalog_gpu
from launchcard.check._limits import (
    flag_rules,
    kv_dtype_findings,
    limit_rules,
    refuse_heads,
    refuse_unstartable,
    said_by_limits,
    sglang_rank_rules,
    startup_refusal,
    startup_warnings,
    without_repeats,
)
from launchcard.check._locate import hub_cache_file, locate_config, looks_like_repo_id, synced_config_dirs
from launchcard.check._plan import RECIPE_CODES, check_command, check_plan, sglang_parser_release
from launchcard.check._types import VERDICT_LABELS, Finding, Severity, Verdict, sort_findings, verdict_label

__all__ = ["DERIVED_LABEL", "ENGINES", "RECIPE_CODES", "VERDICT_LABELS", "ArgvView", "Finding", "MemoryFigures",
           "ModelConfig", "PlanFacts", "ProcessFacts", "Severity", "Verdict", "catalog_gpu", "check_command",
           "check_plan", "corpus_config", "derive_plan", "distinct_roles", "find_config", "flag_rules",
           "hub_cache_file", "kv_dtype_findings", "limit_rules", "load_config", "locate_config", "looks_like_repo_id",
           "no_config_error", "plan_facts", "process_gpus", "read_argv", "refuse_heads", "refuse_unstartable",
           "role_of", "said_by_limits", "sglang_parser_release", "sglang_rank_rules", "sort_findings",
           "startup_refusal", "startup_warnings", "synced_config_dirs", "verdict_label", "visible_devices",
           "without_repeats"]
