"""A measured kernel share read at the experts' N per rank: one interpolation for every record that keeps its
shares by N (vLLM's Marlin MoE, TensorRT-LLM's fused MoE).  A leaf module: ``_kernels`` and ``_marlin`` both read it
without importing each other."""

from __future__ import annotations

import itertools
import math


def share_at_n(by_n: tuple[tuple[float, float], ...], n: int, fit: float) -> tuple[float, str]:
    """A grouped MoE kernel's FLOP/s share at the experts' N per rank ``n`` from its shares by N (N ascending) and
    how it was read: interpolated in log N between the measured N around it, the nearest measured N outside their
    range; ``fit`` (the record's fit over every N) where no N is recorded or ``n`` is 0."""
    if not by_n or n <= 0:
        return fit, f"the fit over every shape ({fit:.3f})"
    span = f"measured at N {by_n[0][0]:g}-{by_n[-1][0]:g}"
    own = next((v for a, v in by_n if a == n), None)
    if own is not None:
        return own, f"{span}: N {n}'s own"
    if n < by_n[0][0] or n > by_n[-1][0]:
        near = by_n[0] if n < by_n[0][0] else by_n[-1]
        return near[1], f"{span}: N {n} is outside, read at the nearest, N {near[0]:g}"
    lo, hi = next((a, b) for a, b in itertools.pairwise(by_n) if a[0] <= n <= b[0])
    w = math.log(n / lo[0]) / math.log(hi[0] / lo[0])
    return lo[1] + w * (hi[1] - lo[1]), f"{span}: interpolated between N {lo[0]:g} and {hi[0]:g}"
