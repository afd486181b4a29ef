"""Which ``--kv-cache-dtype`` vLLM refuses on a platform: no attention backend it tries takes it.

vLLM picks an attention backend per layer when the model is built: the platform lists the
backends it tries (``vllm/platforms/cuda.py`` ``_get_backend_priorities`` per compute
capability and attention kind; ROCm's with and without AITER) and each backend's
``validate_configuration`` rejects a KV-cache dtype it does not list, a compute capability
it does not support, an MLA / sparse kind it is not.  When every backend rejects the layer
vLLM raises "No valid attention backend found ...".  The lists, kinds and capabilities are
captured from the engine (``scripts/capture_engine_limits.py``); this module only combines
them, and says "cannot decide" where the capture cannot: a backend the CPU wheel could not
import (capability unknown), one that overrides ``supports_kv_cache_dtype`` (its answer can
depend on the installed kernels), a GPU without a compute capability in the catalog, or a
platform not captured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from launchcard.limits._data import quote, source, table, text_config

# Any in this module: config.json values and the captured JSON as read.


@dataclass(frozen=True, slots=True)
class KvVerdict:
    """``refused``: vLLM's sentence (evidence) when it refuses; ``undecided``: why launchcard cannot tell."""

    refused: str | None = None
    undecided: str | None = None
    accepted_by: tuple[str, ...] = ()


# catalog (vendor, kind) -> vLLM's platform (vllm/platforms/: cuda.py, rocm.py, xpu.py; TPU from tpu_inference)
_PLATFORMS = {("NVIDIA", "gpu"): "cuda", ("AMD", "gpu"): "rocm", ("Intel", "gpu"): "xpu", ("Google", "tpu"): "tpu"}


def vllm_platform(vendor: str | None, kind: str | None) -> str | None:
    """vLLM's platform for a catalog entry (a CPU -> cpu); None: none vLLM has."""
    return "cpu" if kind == "cpu" else _PLATFORMS.get((vendor or "", kind or ""))


def platform_of(vendor: str | None, kind: str | None) -> str | None:
    """vLLM's platform for a catalog entry among those whose attention backends were captured (cuda, rocm,
    cpu); else None."""
    platform = vllm_platform(vendor, kind)
    return platform if platform in ("cuda", "rocm", "cpu") else None


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    return text_config(cfg, "model_type")


_KIND_KEYS = ("model_type", "kv_lora_rank", "index_topk", "is_causal", "compress_ratios", "head_dim")


def attention_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``config`` that :func:`attention_kind` and :func:`own_backends` read."""
    text = _text(config)
    out = {k: text[k] for k in _KIND_KEYS if k in text}
    out.setdefault("model_type", config.get("model_type"))
    if isinstance(config.get("architectures"), list):
        out["architectures"] = list(config["architectures"])
    return out


def attention_kind(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> tuple[bool, bool]:
    """(MLA, sparse) as vLLM decides them: ``ModelConfig.use_mla`` (the captured MLA model types with
    ``kv_lora_rank``, causal, ``VLLM_MLA_DISABLE`` unset); DeepSeek-V3.2-style models with ``index_topk``
    build sparse MLA layers."""
    text = _text(config)
    if str((env or {}).get("VLLM_MLA_DISABLE", "0")).strip() not in ("", "0"):
        return False, False
    types = (table().get("kv_cache") or {}).get("mla_model_types") or ()
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    if model_type not in types or text.get("is_causal", True) is False:
        return False, False
    mla = text.get("kv_lora_rank") is not None or ("compress_ratios" in text and text.get("head_dim") is not None)
    return mla, mla and "index_topk" in text


def own_backends(config: Mapping[str, Any]) -> str | None:
    """Why vLLM's platform selection does not decide this model's KV dtypes, or None: the model's package
    gives a layer its own attention backend (captured per architecture: ``own_attention``), e.g.
    DeepSeek-V4 maps any ``fp8*`` to its own ``fp8_ds_mla`` layout (``_resolve_dsv4_kv_cache_dtype``)."""
    support = table().get("pp_support") or {}
    archs = config.get("architectures")
    for arch in archs if isinstance(archs, (list, tuple)) else ():
        where = (support.get(arch) or {}).get("own_attention")
        if where:
            return f"vLLM's {arch} builds layers with its own attention backend ({where}), not the platform's list"
    if "compress_ratios" in _text(config):  # DeepSeek-V4-style config under another architecture name
        return "DeepSeek-V4-style attention picks its own backends and KV layout (vllm/models/deepseek_v4)"
    return None


def _kind(mla: bool, sparse: bool) -> str:
    return "mla_sparse" if sparse else "mla" if mla else "standard"


def _judge(name: str, b: Mapping[str, Any], kv: str, mla: bool, sparse: bool,
           cap: str | None) -> tuple[str, list[str]]:
    """("refuses" | "accepts" | "unknown", reasons) for one backend, as its validate_configuration would."""
    reasons: list[str] = []
    listed = kv in (b.get("kv_dtypes") or [])
    override = b.get("kv_override")
    if not listed and override:
        # the override's own answer for a dtype the backend does not list, asked in the capture
        answer = (b.get("override_unlisted") or {}).get(kv)
        if answer is False:
            override = None
    if not listed and not override:
        reasons.append("kv_cache_dtype not supported")
    if b.get("mla") is not None and bool(b["mla"]) != mla:
        reasons.append("MLA not supported" if mla else "non-MLA not supported")
    if b.get("sparse") is not None and bool(b["sparse"]) != sparse:
        reasons.append("sparse not supported" if sparse else "non-sparse not supported")
    capability = b.get("capability")
    known_cap: bool | None = True if capability == "any" else None
    if cap is not None and isinstance(capability, Mapping) and cap in capability:
        known_cap = bool(capability[cap])
    if known_cap is False:
        reasons.append("compute capability not supported")
    if reasons:
        return "refuses", reasons
    if listed and not override and known_cap:
        return "accepts", []
    why = (f"overrides supports_kv_cache_dtype ({override})" if override
           else "its compute-capability check was not captured (not importable in the CPU wheel)")
    return "unknown", [why]


def kv_dtype_verdict(kv: str | None, *, platform: str | None, capability: str | None = None,
                     mla: bool = False, sparse: bool = False, device: str = "this accelerator") -> KvVerdict:
    """Whether vLLM (the captured release) finds an attention backend for ``--kv-cache-dtype kv``.

    ``platform`` is vLLM's (``cuda``, ``rocm``, ``cpu``; None: not captured); ``capability`` the
    NVIDIA compute capability (``"9.0"``), needed on CUDA."""
    data = table().get("kv_cache") or {}
    if not kv or kv == "auto" or not data or kv not in (data.get("dtypes") or ()):
        return KvVerdict()  # auto, or a value the parser itself refuses (flags check says so)
    if kv.startswith("nvfp4") and not kv.endswith("_ds_mla") and mla:
        return KvVerdict(refused=quote("nvfp4_kv_mla"))
    backends: Mapping[str, Any] = data.get("backends") or {}
    if platform == "cpu":
        listed = backends.get("CPU_ATTN", {}).get("kv_dtypes")
        return KvVerdict(undecided=(
            f"{source()}'s CPU platform picks its attention backend without checking --kv-cache-dtype "
            "(vllm/platforms/cpu.py get_attn_backend_cls); whether the CPU kernels take "
            f"{kv} is not known offline" + (f" (CPU_ATTN lists {', '.join(listed)})" if listed else "")))
    if platform not in ("cuda", "rocm"):
        return KvVerdict(undecided=f"{source()}'s attention backends for {device} were not captured "
                                   "(only CUDA and ROCm are)")
    kind = _kind(mla, sparse)
    if platform == "cuda":
        if not capability:
            return KvVerdict(undecided=f"{device} has no compute capability in the hardware catalog; vLLM's "
                                       "CUDA backends depend on it")
        per_cap = (data.get("cuda") or {}).get("candidates") or {}
        if capability not in per_cap:
            return KvVerdict(undecided=f"compute capability {capability} was not captured "
                                       f"(captured: {', '.join(per_cap)})")
        names = list(per_cap[capability].get(kind) or [])
    else:
        names = list(((data.get("rocm") or {}).get("candidates") or {}).get(kind) or [])
    judged = {n: _judge(n, backends.get(n) or {}, kv, mla, sparse, capability if platform == "cuda" else None)
              for n in names}
    accepted = tuple(n for n, (state, _) in judged.items() if state == "accepts")
    if accepted:
        return KvVerdict(accepted_by=accepted)
    unknown = [f"{n} ({why[0]})" for n, (state, why) in judged.items() if state == "unknown"]
    if unknown:
        return KvVerdict(undecided=f"no backend {source()} tries on {platform} certainly takes {kv}; "
                                   f"these may: {'; '.join(unknown)}")
    # every backend refuses; the refusal is the KV dtype's only when "auto" finds one
    if not names or not any(_judge(n, backends.get(n) or {}, "auto", mla, sparse,
                                   capability if platform == "cuda" else None)[0] != "refuses" for n in names):
        return KvVerdict()
    reasons = "{" + ", ".join(f"{n}: [{', '.join(r)}]" for n, (_, r) in judged.items()) + "}"
    selector = f"AttentionSelectorConfig(..., kv_cache_dtype={kv}, use_mla={mla}, use_sparse={sparse}, ...)"
    hint = ""
    if platform == "rocm":
        takes = sorted({d for n, (_, r) in judged.items() if any("kv_cache_dtype" in x for x in r)
                        for d in (backends.get(n) or {}).get("kv_dtypes") or ()})
        hint = f" Supported kv_cache_dtype values: {', '.join(takes)}." if takes else ""
    return KvVerdict(refused=quote(f"kv_no_backend_{platform}", cls__device_name=platform, config_str=selector,
                                   reasons_str=reasons, hint=hint))


def kv_dtypes_accepted(*, platform: str | None, capability: str | None = None, mla: bool = False,
                       sparse: bool = False) -> tuple[str, ...]:
    """The ``--kv-cache-dtype`` values some backend certainly takes there (what a fix may propose)."""
    dtypes = (table().get("kv_cache") or {}).get("dtypes") or ()
    return tuple(d for d in dtypes if d != "auto" and kv_dtype_verdict(
        d, platform=platform, capability=capability, mla=mla, sparse=sparse).accepted_by)
