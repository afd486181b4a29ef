"""Where the verdict learns about the plan's hardware.

The recipes taxonomy profile gives what the resolver itself used (node size,
node VRAM, scalable, generation), so the verdict judges the plan the resolver
made; the accelerator behind the profile (device memory as the runtime reports
it, CPU or GPU) comes from the one hardware catalog, :mod:`launchcard.hardware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launchcard.memory import Gpu
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources import HwProfile
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
        from launchcard.hardware import lookup

        acc = lookup(self.key)
        return acc.is_cpu if acc is not None else (self.generation or "").lower() == "cpu"

    @property
    def vram_per_gpu_gb(self) -> float | None:
        if not self.node_vram_gb or not self.gpus_per_node:
            return None
        return self.node_vram_gb / self.gpus_per_node


def hardware_of(plan: ResolvedPlan, repo: RecipeRepo | None) -> Hardware:
    """The plan's hardware profile, from the taxonomy when the recipes are at hand, else from the plan."""
    prof: HwProfile | None = None
    evidence = f"hardware profile {plan.hardware} (as resolved: {plan.gpus_per_node} GPU(s)/node)"
    if repo is not None:
        from launchcard.errors import LaunchcardError

        try:
            prof = repo.profiles.get(plan.hardware)
            line = repo.taxonomy.line("hardware_profiles", plan.hardware)
            evidence = f"taxonomy.yaml#L{line} (hardware_profiles.{plan.hardware})" if line else evidence
        except LaunchcardError:  # a broken taxonomy already failed resolution; judge with what the plan has
            prof = None
    vram = prof.vram_gb if prof is not None else None
    return Hardware(
        key=plan.hardware, brand=plan.brand or (prof.brand if prof else None),
        generation=plan.generation or (prof.generation if prof else None),
        gpus_per_node=int((prof.gpu_count if prof else None) or plan.gpus_per_node or 1),
        node_vram_gb=float(vram) if isinstance(vram, (int, float)) and not isinstance(vram, bool) else None,
        scalable=prof.scalable if prof is not None else True, known=prof is not None or repo is None,
        evidence=evidence,
    )


def catalog_gpu(key: str) -> tuple[Gpu | None, str]:
    """The hardware catalog's accelerator for a profile id or name, with the evidence to cite."""
    from launchcard.errors import LaunchcardError
    from launchcard.hardware import find

    try:
        gpu = find(key, where=f"hardware {key}")
    except LaunchcardError as exc:
        return None, exc.one_line()
    source = gpu.source("memory_gib") or "no source"
    return gpu, f"hardware catalog {gpu.key} ({gpu.memory_gib:g} GiB reported; {source})"
