"""What change would make a plan fit: each suggestion is re-planned, not guessed."""

from __future__ import annotations

from dataclasses import replace

from launchcard.memory import _quant
from launchcard.memory._arch import Arch
from launchcard.memory._hardware import Gpu
from launchcard.memory._limits import accepts, mla_kind
from launchcard.memory._model import Accounting, account, model_max_len
from launchcard.memory._settings import Settings


def tp_ok(a: Arch, tp: int) -> bool:
    """Whether vLLM accepts TP ``tp`` for the model's attention and KV heads (:func:`launchcard.limits.tp_refusal`)."""
    from launchcard.limits import tp_refusal

    return tp_refusal(a.num_heads, a.num_kv_heads, tp, mla_kind(a)[0]) is None


def fits_with(a: Arch, s: Settings, g: Gpu | None, mem: float) -> bool:
    """Whether ``s`` (a TP vLLM accepts for the heads) gives a plan that fits."""
    return tp_ok(a, s.tp) and _fits(a, s, g, mem) is not None


def _fits(a: Arch, s: Settings, g: Gpu | None, mem: float) -> Accounting | None:
    try:
        acc = account(a, s, gpu=g, gpu_memory_gib=mem)
    except Exception:  # noqa: BLE001 - an impossible variant is simply not advice
        return None
    return acc if acc.kv_pool_gib > 0 and acc.max_concurrency >= 1 else None


def advise(a: Arch, s: Settings, g: Gpu | None, mem: float, acc: Accounting) -> list[str]:
    """Single changes that make the plan fit, each one vLLM accepts at start-up (:func:`accepts`)."""
    out: list[str] = []
    for tp in (2, 4, 8, 16):
        if tp > s.tp and tp_ok(a, tp) and accepts(a, replace(s, tp=tp), g):
            got = _fits(a, replace(s, tp=tp), g, mem)
            if got:
                out.append(f"--tensor-parallel-size {tp}: {got.kv_cache_tokens} KV tokens, "
                           f"{got.max_concurrency:.2f}x concurrency at {got.max_model_len}")
                break
    if not (s.kv_cache_dtype or "auto").startswith("fp8") and accepts(a, replace(s, kv_cache_dtype="fp8"), g):
        got = _fits(a, replace(s, kv_cache_dtype="fp8"), g, mem)
        if got:
            out.append(f"--kv-cache-dtype fp8: {got.kv_cache_tokens} KV tokens")
    if acc.kv_pool_gib > 0 and 0 < acc.estimated_max_model_len < acc.max_model_len:
        # estimated_max_model_len is already capped at the length vLLM accepts for the model
        limit = model_max_len(a, s)
        why = ("the longest vLLM accepts for this model" if limit and acc.estimated_max_model_len == limit.limit
               else "largest one request fits")
        out.append(f"--max-model-len {acc.estimated_max_model_len} ({why})")
    if s.utilization < 0.95:
        got = _fits(a, replace(s, gpu_memory_utilization=0.95), g, mem)
        if got:
            out.append("--gpu-memory-utilization 0.95")
    if not a.quant.is_quantized and not s.quantization:
        for name in (("fp8", "nvfp4") if g is not None and g.supports_fp4 else ("fp8",)):
            if not accepts(a, s, g, variant=name):
                continue
            q = _quant.scheme(name)
            got = _fits(replace(a, quant=q), s, g, mem)
            if got:
                out.append(f"a {name.upper()}-quantized variant of the checkpoint: weights "
                           f"{got.weights_gib:.1f} GiB/GPU, {got.kv_cache_tokens} KV tokens")
                break
    if not out:
        out.append("no single change fits: add GPUs (TP or PP) or choose a smaller model")
    return out
