"""The ONE place the verdict learns about the plan's hardware.

Today: the recipes taxonomy profile (node size, node VRAM, scalable,
restricted, generation) and, only when memory is planned, the memory
planner's GPU catalog (``memory/_hardware.py``).  When the hardware catalog
(``launchcard/hardware.py``) lands, :func:`hardware_of` and :func:`catalog_gpu`
switch to it; the rules do not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launchcard.memory import Gpu
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo

MAX_NODES = 16  # the recipes builder's max_nodes for multi_node and pd_cluster (resolution spec §3.2 rule 2)
MAX_NODES_EVIDENCE = "vllm-recipes builder: max_nodes 16 (docs/vllm-recipes-resolution.md §3.2)"


@dataclass(frozen=True)
class Hardware:
    key: str
    brand: str | None
    generation: str | None
    gpus_per_node: int
    node_vram_gb: float | None  # whole node, decimal GB (taxonomy vram_gb)
    scalable: bool
    known: bool
    evidence: str  # taxonomy.yaml#Lnn (hardware_profiles.<key>)

    @property
    def is_cpu(self) -> bool:
        return (self.generation or "").lower() == "cpu"

    @property
    def vram_per_gpu_gb(self) -> float | None:
        if not self.node_vram_gb or not self.gpus_per_node:
            return None
        return self.node_vram_gb / self.gpus_per_node

    @property
    def fp4_native(self) -> bool:
        """FP4 tensor cores: NVIDIA Blackwell (the recipes' precision constraint for nvfp4/fp4)."""
        return (self.brand or "").lower() == "nvidia" and (self.generation or "").lower() == "blackwell"


def hardware_of(plan: ResolvedPlan, repo: RecipeRepo | None) -> Hardware:
    """The plan's hardware profile, from the taxonomy when the recipes are at hand, else from the plan."""
    prof: dict[str, Any] = {}  # Any: the taxonomy's profile entry (YAML values)
    evidence = f"hardware profile {plan.hardware} (as resolved: {plan.gpus_per_node} GPU(s)/node)"
    if repo is not None:
        from launchcard.errors import LaunchcardError

        try:
            raw = repo.profiles.get(plan.hardware)
            prof = raw if isinstance(raw, dict) else {}
            line = repo.taxonomy.line("hardware_profiles", plan.hardware)
            evidence = f"taxonomy.yaml#L{line} (hardware_profiles.{plan.hardware})" if line else evidence
        except LaunchcardError:  # a broken taxonomy already failed resolution; judge with what the plan has
            prof = {}
    vram = prof.get("vram_gb")
    return Hardware(
        key=plan.hardware, brand=plan.brand or prof.get("brand"), generation=plan.generation or prof.get("generation"),
        gpus_per_node=int(prof.get("gpu_count") or plan.gpus_per_node or 1),
        node_vram_gb=float(vram) if isinstance(vram, (int, float)) and not isinstance(vram, bool) else None,
        scalable=prof.get("scalable") is not False, known=bool(prof) or repo is None, evidence=evidence,
    )


def catalog_gpu(key: str) -> tuple[Gpu | None, str]:
    """The memory planner's catalog entry for a profile (imports the planner: call only when planning)."""
    from launchcard.errors import LaunchcardError
    from launchcard.memory import find_gpu

    try:
        gpu = find_gpu(key, where=f"hardware {key}")
    except LaunchcardError as exc:
        return None, exc.one_line()
    return gpu, f"GPU catalog {gpu.key} ({gpu.memory_gib:g} GiB reported)"
