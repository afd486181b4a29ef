"""Plan search: the best plan the sources allow for a workload under an SLO, and fleet sweeps of it.

    space = SearchSpace(model="openai/gpt-oss-120b", gpu="h100", gpus=8, gpus_per_node=8,
                        options=(checkpoint_option("openai/gpt-oss-120b", "config.json"),))
    result = search(space, Workload(isl=1024, osl=256, concurrency=64), Slo.parse("ttft=2000,tpot=40"))
    result.winner, result.pareto, result.rejected_by_reason()

Every candidate is memory-planned by :mod:`launchcard.memory` and predicted by :mod:`launchcard.predict`.
"""

from __future__ import annotations

from launchcard.plansearch._candidates import candidates, count, load_clients
from launchcard.plansearch._options import (
    card_options,
    checkpoint_option,
    derived_option,
    emit_layout_refusal,
    recipe_options,
    sglang_spec_offers,
    winner_plan,
    with_sglang_specs,
)
from launchcard.plansearch._rank import pareto
from launchcard.plansearch._render import result_to_json, result_to_text
from launchcard.plansearch._search import KV_TRANSFER_BPS, clear_caches, evaluate, prefix_cache_off, search
from launchcard.plansearch._sweep import SweepTask, load_sweep, run_sweep, run_task
from launchcard.plansearch._types import (
    MAX_NUM_SEQS,
    Candidate,
    Figures,
    Option,
    Outcome,
    SearchResult,
    SearchSpace,
    Slo,
)

__all__ = [
    "KV_TRANSFER_BPS",
    "MAX_NUM_SEQS",
    "Candidate",
    "Figures",
    "Option",
    "Outcome",
    "SearchResult",
    "SearchSpace",
    "Slo",
    "SweepTask",
    "candidates",
    "card_options",
    "checkpoint_option",
    "clear_caches",
    "count",
    "derived_option",
    "emit_layout_refusal",
    "evaluate",
    "load_clients",
    "load_sweep",
    "pareto",
    "prefix_cache_off",
    "recipe_options",
    "result_to_json",
    "result_to_text",
    "run_sweep",
    "run_task",
    "search",
    "sglang_spec_offers",
    "winner_plan",
    "with_sglang_specs",
]
