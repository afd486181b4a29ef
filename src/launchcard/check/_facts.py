"""The plan's facts, computed once: what every renderer of a plan shows.

``resolve`` (text and ``--json``), every ``emit`` target (header and resource requests), the
card's vLLM environments, ``page`` and the web catalog read these values from one
:class:`PlanFacts` rather than each deriving them again, so a fact (GPUs used, features
selected, verdict, memory figures, revision) has one value wherever a user looks.

    facts = plan_facts(plan, verdict)      # verdict from check_plan(plan, ...), or None (not judged)
    facts.gpus_per_node, facts.gpus_total, facts.processes[0].gpus, facts.verdict_label

Standard library only: it rides along every plain ``launchcard resolve``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from launchcard.check._argv import read_argv
from launchcard.check._types import Verdict, verdict_label

if TYPE_CHECKING:
    from launchcard.resolve import Command, ResolvedPlan

# The basis of an omni process's count: vLLM-Omni's stage configs (not the command) say which devices each
# stage uses, and launchcard does not read them, so the whole node is what an artifact must make visible.
OMNI_BASIS = ("the whole node: vLLM-Omni's stage configs place the pipeline's stages on devices; the command "
              "states no GPU count (no --num-gpus)")


@dataclass(frozen=True, kw_only=True)
class ProcessFacts:
    """One process of the plan and the GPUs it holds on its node."""

    name: str  # ``single``, ``head``, ``worker[rank 1]``, ``prefill`` ...
    role: str
    node_rank: int | None
    gpus: int | None  # None: a parallel size is not a number (``$DP_SIZE``), so it cannot be counted
    basis: str  # how ``gpus`` was counted

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object
        return {"name": self.name, "role": self.role, "node_rank": self.node_rank, "gpus": self.gpus,
                "basis": self.basis}


@dataclass(frozen=True, kw_only=True)
class MemoryFigures:
    """The memory planner's figures for one process, rounded once (GiB to 2 decimals, as every renderer prints)."""

    name: str
    gpu: str
    fits: bool
    weights_gib_per_gpu: float
    kv_cache_gib_per_gpu: float
    kv_cache_tokens: int
    max_model_len: int
    max_concurrency: float

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object
        return dict(self.__dict__)


@dataclass(frozen=True, kw_only=True)
class PlanFacts:
    """Every fact about one resolved plan that more than one command, page or artifact shows."""

    model: str
    model_id: str
    variant: str
    hardware: str
    strategy: str | None
    deploy_type: str
    node_count: int  # the plan's node count (per pool for prefill/decode)
    nodes_used: int  # machines the processes run on
    node_gpus: int  # GPUs one node of ``hardware`` has
    processes: tuple[ProcessFacts, ...]
    gpus_per_node: int | None  # the most GPUs the plan uses on one node; None when a process cannot be counted
    gpus_total: int | None  # GPUs the plan uses over all its nodes
    features: tuple[str, ...]
    feature_modes: dict[str, str] = field(default_factory=dict)
    revision: str | None = None  # the recipe revision the plan's evidence points at
    image: str | None = None
    verdict_status: str | None = None  # ok | warning | error; None: not judged
    verdict_label: str | None = None
    verdict_counts: dict[str, int] = field(default_factory=dict)
    memory: tuple[MemoryFigures, ...] = ()

    def process(self, name: str) -> ProcessFacts | None:
        return next((p for p in self.processes if p.name == name), None)

    def gpus_line(self) -> str:
        """``GPUs used: 1 of 8 per h100 node, 1 in total`` (the one wording every text surface prints)."""
        per = "?" if self.gpus_per_node is None else str(self.gpus_per_node)
        total = "?" if self.gpus_total is None else str(self.gpus_total)
        nodes = f" on {self.nodes_used} nodes" if self.nodes_used > 1 else ""
        return f"GPUs used: {per} of {self.node_gpus} per {self.hardware} node, {total} in total{nodes}"

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object for --json output
        return {
            "model": self.model, "model_id": self.model_id, "variant": self.variant, "hardware": self.hardware,
            "strategy": self.strategy, "deploy_type": self.deploy_type, "node_count": self.node_count,
            "nodes_used": self.nodes_used, "node_gpus": self.node_gpus, "gpus_per_node": self.gpus_per_node,
            "gpus_total": self.gpus_total,
            "processes": [p.to_json() for p in self.processes], "features": list(self.features),
            "feature_modes": dict(self.feature_modes), "revision": self.revision, "image": self.image,
            "verdict": None if self.verdict_status is None else {
                "status": self.verdict_status, "label": self.verdict_label, "counts": dict(self.verdict_counts)},
            "memory": [m.to_json() for m in self.memory],
        }


def visible_devices(cmd: Command) -> list[str] | None:
    """The host devices a recipe placed the process on (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES), if any."""
    raw = cmd.env.get("CUDA_VISIBLE_DEVICES") or cmd.env.get("HIP_VISIBLE_DEVICES")
    ids = [x.strip() for x in str(raw).split(",") if x.strip()] if raw is not None else []
    return ids or None


def process_name(cmd: Command) -> str:
    if cmd.role in ("head", "worker", "instance") and cmd.node_rank is not None:
        return f"{cmd.role}[rank {cmd.node_rank}]"
    return cmd.role


def process_gpus(cmd: Command, *, deploy_type: str, node_gpus: int) -> tuple[int | None, str]:
    """GPUs one process holds on its node, and how that was counted.

    The devices its CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES lists when the recipe places it; an omni
    pipeline the whole node (see :data:`OMNI_BASIS`); else what its parallel sizes put on its node
    (TP x PP, split over ``--nnodes``, x local DP; vLLM's default of 1 for a size not given).
    """
    ids = visible_devices(cmd)
    if ids:
        return len(ids), "the devices its CUDA_VISIBLE_DEVICES lists"
    if deploy_type == "omni" or cmd.role == "omni":
        stated = _omni_gpus(cmd)
        return (stated, "its --num-gpus (vLLM-Omni)") if stated else (node_gpus, OMNI_BASIS)
    v = read_argv(cmd.argv)
    if v.unreadable:
        return None, f"not countable: {'; '.join(v.unreadable)} is not a number"
    dp = (f" x {v.local_dp} local DP" if v.local_dp > 1 else
          f" (its {v.dp} DP-attention ranks inside the TP group)" if v.dp_attention and v.dp > 1 else "")
    split = f" / {v.nnodes} nodes" if v.nnodes > 1 else ""
    return v.gpus_on_node, f"TP {v.tp} x PP {v.pp}{split}{dp}"


def _omni_gpus(cmd: Command) -> int | None:
    """The GPU count a vLLM-Omni command states itself (``--num-gpus N``, its diffusion pipelines' device count)."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError

    try:
        n = parse_command(cmd.argv).try_int("--num-gpus")
    except ArgvError:
        return None
    return n if n is not None and n > 0 else None


def plan_facts(plan: ResolvedPlan, verdict: Verdict | None = None) -> PlanFacts:
    """The facts of ``plan``; ``verdict`` (``check_plan``'s) adds the verdict and the memory figures."""
    procs = tuple(_process(plan, cmd) for cmd in plan.commands)
    per_node, total, nodes = _totals(plan, procs)
    rev = plan.source.revision if plan.source is not None else None
    status = label = None
    counts: dict[str, int] = {}
    memory: tuple[MemoryFigures, ...] = ()
    if verdict is not None:
        status, label = verdict.status, verdict_label(verdict.status)
        counts = {s: sum(1 for f in verdict.findings if f.severity == s) for s in ("error", "warning", "info")}
        memory = tuple(_figures(name, mp) for name, mp in verdict.memory_plans)
    return PlanFacts(
        model=plan.model, model_id=plan.model_id, variant=plan.variant, hardware=plan.hardware,
        strategy=plan.strategy, deploy_type=plan.deploy_type, node_count=plan.node_count, nodes_used=nodes,
        node_gpus=plan.gpus_per_node, processes=procs, gpus_per_node=per_node, gpus_total=total,
        features=tuple(plan.features), feature_modes=dict(plan.feature_modes), revision=rev,
        image=plan.docker_image, verdict_status=status, verdict_label=label, verdict_counts=counts, memory=memory)


def _process(plan: ResolvedPlan, cmd: Command) -> ProcessFacts:
    gpus, basis = process_gpus(cmd, deploy_type=plan.deploy_type, node_gpus=plan.gpus_per_node)
    return ProcessFacts(name=process_name(cmd), role=cmd.role, node_rank=cmd.node_rank, gpus=gpus, basis=basis)


def _node_groups(plan: ResolvedPlan) -> list[int]:
    """The node each process runs on (an index).  single_node and omni plans run on one node; a multi-node
    plan's head and each worker rank on their own; prefill/decode and KV-store instances share one node when
    their CUDA_VISIBLE_DEVICES sets split it (the resolver's co-located pools), else each has its own."""
    n = len(plan.commands)
    if plan.deploy_type in ("single_node", "omni"):
        return [0] * n
    if plan.deploy_type in ("pd_cluster", "kv_store_lb"):
        sets = [set(visible_devices(cmd) or ()) for cmd in plan.commands]
        if all(sets) and sum(len(x) for x in sets) == len(set().union(*sets)):
            return [0] * n
    return list(range(n))


def _totals(plan: ResolvedPlan, procs: Sequence[ProcessFacts]) -> tuple[int | None, int | None, int]:
    """(most GPUs used on one node, GPUs used in total, nodes used)."""
    groups = _node_groups(plan)
    nodes = len(set(groups)) or 1
    if not procs or any(p.gpus is None for p in procs):
        return None, None, nodes
    per: dict[int, int] = {}
    for g, p in zip(groups, procs, strict=True):
        per[g] = per.get(g, 0) + (p.gpus or 0)
    return max(per.values()), sum(per.values()), nodes


def _figures(name: str, mp: Any) -> MemoryFigures:  # Any: a memory.MemoryPlan (pydantic, imported lazily)
    return MemoryFigures(name=name, gpu=str(mp.gpu), fits=bool(mp.fits),
                         weights_gib_per_gpu=round(float(mp.weights_gib_per_gpu), 2),
                         kv_cache_gib_per_gpu=round(float(mp.kv_cache_gib_per_gpu), 2),
                         kv_cache_tokens=int(mp.kv_cache_tokens), max_model_len=int(mp.max_model_len),
                         max_concurrency=round(float(mp.max_concurrency), 2))
