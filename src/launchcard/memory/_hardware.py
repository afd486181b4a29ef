"""The memory planner's view of the hardware catalog (:mod:`launchcard.hardware`).

vLLM multiplies ``--gpu-memory-utilization`` by the *reported* total (an "80 GB"
H100 reports 79.19 GiB), which is the catalog's ``memory_gib``.
"""

from __future__ import annotations

from launchcard.hardware import Accelerator, HardwareCatalog, catalog, find, gpus_per_node

Gpu = Accelerator  # the planner's name for a catalog entry


def find_gpu(name: str, *, where: str = "--gpu") -> Gpu:
    """Resolve a GPU by id, alias, runtime device name (``NVIDIA H100 80GB HBM3``) or recipes profile."""
    return find(name, where=where)


def load_catalog() -> HardwareCatalog:
    return catalog()


__all__ = ["Gpu", "find_gpu", "gpus_per_node", "load_catalog"]
