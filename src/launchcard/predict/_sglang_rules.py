"""SGLang's defaults that both the SGLang command reader (``_sglang``) and the plan facts (``_facts``) apply: the
rules of one release, each cited where it is defined."""

from __future__ import annotations

import math

RULES_RELEASE = "0.5.6.post2"
_SA = f"SGLang {RULES_RELEASE} python/sglang/srt/server_args.py"
# ServerArgs._handle_gpu_memory_settings (server_args.py:752-835): (MiB below which, chunked_prefill_size,
# cuda_graph_max_bs for tp < 4, for tp >= 4), CUDA GPUs (the NPU rows are skipped)
_BY_MEMORY = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
              (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (math.inf, 16384, 512, 512))


def _memory_row(gpu_mib: float | None) -> tuple[float, int, int, int] | None:
    return next((r for r in _BY_MEMORY if gpu_mib is not None and gpu_mib < r[0]), None)


def default_graph_bs(gpu_gib: float | None, tp: int) -> tuple[int, str]:
    """SGLang's --cuda-graph-max-bs when a launch gives none, and why (the rule ``sglang_plan`` applies)."""
    row = _memory_row(gpu_gib * 1024 if gpu_gib else None)
    bs = (row[2] if tp < 4 else row[3]) if row else 160
    what = f"{gpu_gib:g} GiB per GPU" if gpu_gib else "GPU memory unknown (SGLang's fallback)"
    return bs, f"SGLang's --cuda-graph-max-bs default for {what}, TP {tp} ({_SA}:752-835)"
