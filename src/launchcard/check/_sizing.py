"""What the plan rests on and what it wastes.

* ``assumed`` / ``selection-replaced`` - every value resolve or the memory planner supplied because the
  input did not (a catalog name mapped onto a profile, vLLM's defaults, an unknown weight format), and every
  selection the recipe could not honour here (``--mode spec_decoding=dflash`` on AMD), each naming the value,
  why, and how to give the real one;
* ``oversized-plan`` / ``smallest-plan`` - the smallest TP x PP that fits, re-planned by the memory planner
  with everything else of the command held, against the GPUs the plan takes: whole nodes more than needed
  are a warning, extra GPUs inside one node an info (they buy KV capacity).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from launchcard.check._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch, Gpu, MemoryPlan, Settings
    from launchcard.resolve import ResolvedPlan

MAX_SEARCH_GPUS = 128  # TP x PP sizes tried when looking for the smallest plan that fits


def plan_assumptions(plan: ResolvedPlan) -> list[Finding]:
    """Resolve's own assumptions and replaced selections."""
    return [Finding(severity="warning" if a.code == "selection-replaced" else "info", code=a.code,
                    message=a.message, evidence=a.evidence, fix=a.fix) for a in plan.assumed]


def memory_assumptions(plans: list[tuple[str, MemoryPlan]], evidence: str) -> list[Finding]:
    """The memory planner's ``assumed`` entries, once per plan (the same entry for every role is one finding)."""
    seen: dict[str, list[str]] = {}
    for role, mplan in plans:
        for a in mplan.assumed:
            roles = seen.setdefault(a.what, [])
            if role not in roles:
                roles.append(role)
    return [Finding(severity="info", code="assumed", message=what, evidence=evidence, role=", ".join(roles) or None,
                    fix="give the value (flag or config field) to plan the real one")
            for what, roles in seen.items()]


def smallest_fit(arch: Arch, settings: Settings, gpu: Gpu | None, mem: float, *, max_gpus: int = MAX_SEARCH_GPUS,
                 tp_first: bool = False) -> tuple[int, int] | None:
    """(TP, PP) of the smallest fitting plan with everything else of ``settings``; None when none up to
    ``max_gpus`` fits.  TP must divide the heads and suit the KV heads, PP must not exceed the layers.
    ``tp_first``: every TP-only plan (PP 1) is tried before any pipeline split (one node's fast links)."""
    from launchcard.memory import fits_with, tp_ok

    tps = [t for t in range(1, 65) if tp_ok(arch, t)]
    sizes = sorted(((t, p) for t in tps for p in range(1, arch.num_layers + 1) if t * p <= max_gpus),
                   key=lambda tp: (tp_first and tp[1] > 1, tp[0] * tp[1], tp[1]))
    for t, p in sizes:
        try:
            if fits_with(arch, replace(settings, tp=t, pp=p), gpu, mem):
                return t, p
        except Exception:  # noqa: BLE001 - a layout the planner cannot plan is simply not the answer
            continue
    return None


def oversized(plan: ResolvedPlan, role: str, arch: Arch, settings: Settings, mplan: MemoryPlan, gpu: Gpu | None,
              gpus_per_node: int, evidence: str) -> list[Finding]:
    """Whole nodes (warning) or GPUs of a node (info) beyond the smallest TP x PP that fits."""
    world = settings.tp * settings.pp
    if not mplan.fits or world <= 1:
        return []
    best = smallest_fit(arch, settings, gpu, mplan.breakdown.gpu_memory_gib)
    if best is None or best[0] * best[1] >= world:
        return []
    tp, pp = best
    need = tp * pp
    replicas = settings.dp
    used_nodes = max(1, plan.node_count)
    need_nodes = math.ceil(need * replicas / max(1, gpus_per_node))
    extra = (world - need) * replicas
    smallest = f"TP {tp}" + (f" x PP {pp}" if pp > 1 else "") + f" ({need} GPU(s) per replica)"
    what = (f"the smallest plan that fits is {smallest}; this plan uses TP {settings.tp}"
            + (f" x PP {settings.pp}" if settings.pp > 1 else "") + f" = {world} GPU(s) per replica, "
            f"{extra} GPU(s) more than needed (weights {mplan.weights_gib_per_gpu:.2f} GiB per GPU)")
    strategy = "single_node_tp" if need_nodes == 1 else f"a multi-node strategy with --nodes {need_nodes}"
    if used_nodes > need_nodes:
        return [Finding(
            severity="warning", code="oversized-plan", role=role, evidence=evidence,
            message=f"{what}; it spans {used_nodes} nodes where {need_nodes} "
                    f"{'suffices' if need_nodes == 1 else 'suffice'}, so {used_nodes - need_nodes} whole node(s) only "
                    "add KV capacity across the slowest links",
            fix=f"use {strategy} with --tensor-parallel-size {tp}"
                + (f" --pipeline-parallel-size {pp}" if pp > 1 else "")
                + ", and serve more traffic with replicas (data parallel) of that plan")]
    return [Finding(severity="info", code="smallest-plan", role=role, evidence=evidence,
                    message=f"{what}; the extra GPUs add KV capacity and speed, not the ability to start",
                    fix=f"--tensor-parallel-size {tp}" + (f" --pipeline-parallel-size {pp}" if pp > 1 else "")
                        + " is enough to start; replicas of it serve more requests than one wider plan")]
