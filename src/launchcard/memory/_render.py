"""Plain-text (rich) and JSON renderings of a MemoryPlan."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from launchcard.errors import NOT_STARTED
from launchcard.memory._plan import MemoryPlan

if TYPE_CHECKING:
    from rich.console import Group, RenderableType

_SEGMENTS = (("weights", "weights_gib", "magenta"), ("activations", "activation_peak_gib", "yellow"),
             ("non-torch", "non_torch_gib", "red"), ("KV cache", "kv_cache_gib", "green"),
             ("CUDA graphs", "cuda_graph_gib", "cyan"))


def plan_to_json(plan: MemoryPlan) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2)


def plan_to_text(plan: MemoryPlan, width: int = 60) -> Group:
    """A rich renderable: a per-GPU bar plus the key figures."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    b = plan.breakdown
    total = max(b.gpu_memory_gib, 1e-9)
    bar = Text()
    used = 0
    cpu = plan.device == "cpu"
    parts = [(label, getattr(b, attr), color) for label, attr, color in _SEGMENTS
             if not (cpu and label in ("CUDA graphs", "non-torch"))]  # the CPU backend has neither
    for _label, gib, color in parts:
        n = min(width - used, round(width * max(0.0, gib) / total))
        bar.append("█" * n, style=color)
        used += n
    bar.append("░" * max(0, width - used), style="dim")
    legend = Text("  ")
    for label, gib, color in parts:
        legend.append(f"■ {label} {gib:.2f} GiB  ", style=color)
    unit = "NUMA node" if cpu else "GPU"
    if cpu:
        legend.append(f"□ free {b.free_gib:.2f} GiB of the node" if b.gpu_memory_gib else "□ node memory not given",
                      style="dim")
    else:
        legend.append(f"□ free {b.free_after_graphs_gib:.2f} GiB after CUDA graphs ({b.free_gib:.2f} before)",
                      style="dim")
    t = Table(show_header=False, box=None, pad_edge=False)
    if cpu:
        node = f"{b.gpu_memory_gib:.2f} GiB host memory each" if b.gpu_memory_gib else "host memory not given"
        t.add_row("CPU workers", f"{plan.gpu} x {plan.gpu_count}, one per NUMA node ({node}, taken "
                                 f"{b.budget_gib:.2f} GiB)")
    else:
        t.add_row("GPU", f"{plan.gpu} x {plan.gpu_count}  ({b.gpu_memory_gib:.2f} GiB each, budget "
                         f"{b.budget_gib:.2f} GiB)")
    t.add_row(f"weights / {unit}", f"{plan.weights_gib_per_gpu:.2f} GiB")
    t.add_row(f"KV cache / {unit}", f"{plan.kv_cache_gib_per_gpu:.2f} GiB")
    t.add_row("KV tokens", f"{plan.kv_cache_tokens:,} as vLLM prints it ({plan.max_concurrency:.2f} requests x "
                           f"{plan.max_model_len:,} tokens)")
    t.add_row("KV blocks", f"{plan.num_blocks:,} blocks of {plan.block_size} tokens "
                           f"({plan.kv_bytes_per_token_per_gpu:,.0f} B/token on this {unit})")
    t.add_row("concurrency", f"{plan.max_concurrency:.2f}x at {plan.max_model_len:,} tokens")
    # a refused setting and too little memory are one fact (the engine does not start): check's one wording
    verdict = Text("fits" if plan.fits else NOT_STARTED, style="bold green" if plan.fits else "bold red")
    lines: list[RenderableType] = [Text(f"per-{unit} memory"), bar, legend, t, verdict]
    lines += [Text(f"  problem: {p}", style="red") for p in plan.problems]
    lines += [Text(f"  warning: {w}", style="yellow") for w in plan.warnings]
    lines += [Text(f"  try: {a}", style="cyan") for a in plan.advice]
    lines += [Text(f"  assumed ({a.confidence}): {a.what}", style="dim") for a in plan.assumed]
    lines += [Text(f"  note: {n}", style="dim") for n in plan.assumptions
              if n.startswith(("weights:", "weights scaled"))]
    return Group(*lines)
