"""Weight quantization schemes and their real bytes per parameter.

Bytes include the scales a scheme stores next to the packed values, because
that is what the loader allocates: NVFP4 is 4 bits plus one FP8 scale per 16
values (0.5625 B/param), MXFP4 one E8M0 scale per 32 (0.53125), AWQ/GPTQ int4
an FP16 scale (and packed zero point) per group.  Which modules a scheme
covers matters as much as the bit width: embeddings, lm_head, routers and
often attention or the vision tower stay 16-bit.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

# Any in this module: quantization_config from config.json (JSON values of every type).

# Representative module names, one per component, tested against a
# checkpoint's ignore / modules_to_not_convert patterns.
PROBES: dict[str, tuple[str, ...]] = {
    "attn": ("model.layers.3.self_attn.q_proj", "model.layers.3.self_attn.o_proj"),
    "linear_attn": ("model.layers.0.linear_attn.in_proj_qkvz", "model.layers.0.linear_attn.out_proj"),
    "mlp": ("model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj"),
    "shared_experts": ("model.layers.5.mlp.shared_experts.gate_proj", "model.layers.5.mlp.shared_expert.gate_proj"),
    "experts": ("model.layers.5.mlp.experts.0.gate_proj", "model.layers.5.mlp.experts.0.down_proj"),
    "router": ("model.layers.5.mlp.gate", "model.layers.5.mlp.router"),
    "vision": ("model.visual.blocks.0.attn.qkv", "vision_tower.blocks.0.mlp.fc1"),
    "lm_head": ("lm_head",),
    "embed": ("model.embed_tokens",),
}
LINEAR_COMPONENTS = ("attn", "linear_attn", "mlp", "shared_experts", "experts")


@dataclass(frozen=True)
class Quant:
    """A checkpoint's (or runtime) weight format."""

    name: str  # "none", "fp8", "int8", "awq", "gptq", "nvfp4", "mxfp4", ...
    bytes_per_param: float  # for covered linear weights, scales included
    covers: frozenset[str] = field(default_factory=lambda: frozenset(LINEAR_COMPONENTS))
    detail: str = ""
    # routed experts stored in another format than the rest (config ``expert_dtype``)
    expert_bytes_per_param: float | None = None
    # FP8 weights scaled per 128 x 128 block (config ``weight_block_size``, compressed-tensors strategy "block"): the
    # engines run block-scaled GEMM kernels for them, not the per-tensor ones (launchcard.predict._kernels)
    block: bool = False

    def bytes_for(self, component: str, wbytes: float) -> float:
        """Bytes per parameter of one component (16-bit when the scheme does not cover it)."""
        if component == "experts" and self.expert_bytes_per_param is not None:
            return self.expert_bytes_per_param
        return self.bytes_per_param if component in self.covers else wbytes

    @property
    def is_quantized(self) -> bool:
        return self.name != "none"


NONE = Quant("none", 0.0, frozenset(), "unquantized")


def _group_bytes(bits: int, group: int | None, zero_point: bool) -> float:
    base = bits / 8
    if not group or group <= 0:  # per-channel: one scale per output row, negligible
        return base + (0.0005 if bits < 8 else 0.0)
    return base + 2.0 / group + ((bits / 8) / group if zero_point else 0.0)


def scheme(name: str, *, group: int | None = None, bits: int | None = None, block: bool = False) -> Quant:
    """A named scheme with its default packing."""
    n = name.lower().replace("-", "").replace("_", "")
    if n in ("nvfp4", "modeloptfp4", "fp4", "w4a4nvfp4", "w4a4"):
        return Quant("nvfp4", 0.5 + 1 / 16 + 1e-6, detail="NVFP4: 4-bit + FP8 scale per 16")
    if n in ("mxfp4", "w4a16mxfp4"):
        return Quant("mxfp4", 0.5 + 1 / 32, detail="MXFP4: 4-bit + E8M0 scale per 32")
    if n in ("fp8", "fbgemmfp8", "modeloptfp8", "ptpcfp8", "fp8e4m3"):
        extra = 4 / (128 * 128) if block else 4 / 4096
        return Quant("fp8", 1.0 + extra, detail="FP8 block 128x128" if block else "FP8 per-channel/tensor",
                     block=block)
    if n in ("int8", "w8a8", "w8a16", "smoothquant", "ascend"):
        return Quant("int8", 1.0 + 4 / 4096, detail="INT8 per-channel")
    if n in ("awq", "awqmarlin"):
        g = group or 128
        return Quant("awq", _group_bytes(bits or 4, g, True), detail=f"AWQ int{bits or 4} g{g}")
    if n in ("gptq", "gptqmarlin"):
        g = group or 128
        return Quant("gptq", _group_bytes(bits or 4, g, True), detail=f"GPTQ int{bits or 4} g{g}")
    if n in ("int4", "w4a16"):
        g = group or 128
        return Quant("int4", _group_bytes(bits or 4, g, False), detail=f"INT4 g{g}")
    if n in ("bitsandbytes", "bnb", "nf4"):
        return Quant("bitsandbytes", 0.5 + 4 / 64, detail="NF4 + fp32 absmax per 64")
    if n in ("none", "auto", "bf16", "fp16", ""):
        return NONE
    raise ValueError(name)


def _ignored(patterns: list[str], name: str) -> bool:
    for p in patterns:
        if p.startswith("re:"):
            if re.fullmatch(p[3:], name) or re.match(p[3:], name):
                return True
        elif (fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name, p + ".*") or p == name
              or ("*" not in p and (name.endswith(p) or (f"{p}." in f"{name}." and p in name)))):
            return True
    return False


# Where multimodal checkpoints nest the language model's modules (Gemma 3/4, Llama 4,
# Mistral 3, Qwen-VL): an ignore entry such as ``model.language_model.layers.0.self_attn*``
# names the same module as the text-only probe ``model.layers.0.self_attn.q_proj``.
NESTED_PREFIXES = ("model.language_model.", "language_model.model.", "model.text_model.")


def _probe_names(probe: str) -> tuple[str, ...]:
    if not probe.startswith("model."):
        return (probe,)
    rest = probe[len("model."):]
    return (probe, *(prefix + rest for prefix in NESTED_PREFIXES))


def _coverage(patterns: list[str]) -> frozenset[str]:
    return frozenset(
        c for c in LINEAR_COMPONENTS
        if not any(_ignored(patterns, name) for probe in PROBES[c] for name in _probe_names(probe))
    )


def from_config(qc: dict[str, Any] | None) -> Quant:
    """Read a config.json ``quantization_config``."""
    return read_config(qc)[0]


# Keys a quantization_config names its weights' bit width under (AutoAWQ w_bit, GPTQ/AutoRound bits, ...).
_BITS_KEYS = ("bits", "w_bit", "weight_bits", "wbits", "num_bits")


def _named_bits(qc: dict[str, Any], method: str) -> tuple[int | None, str]:
    """The weights' bit width and where it was read: a bits key, else the method's name when it spells one
    (w4afp8 -> 4, experts_int8 -> 8, fp8 -> 8); (None, "") when neither says."""
    for key in _BITS_KEYS:
        v = qc.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v, f"quantization_config.{key}"
    m = re.match(r"w(\d+)a", method) or re.search(r"(?:int|fp|uint)(\d+)", method)
    return (int(m.group(1)), f"the method name {method!r}") if m else (None, "")


def _unnamed_scheme(qc: dict[str, Any], method: str) -> tuple[Quant, str | None]:
    """A method with no packing of its own here: its bits from the config or its name; with neither, 4-bit is
    planned and said to be unknown (a GGUF checkpoint's bits are its tensors' types, in the .gguf file)."""
    bits, source = _named_bits(qc, method)
    group = qc.get("group_size") if isinstance(qc.get("group_size"), int) else None
    if bits is None:
        q = scheme("int4", group=group)
        why = ("GGUF keeps each tensor's type (Q4_K, Q8_0, ...) in the .gguf file" if method == "gguf"
               else "the config names no bit width")
        return q, (f"weights planned as {q.detail}, bit width unknown: quantization_config.quant_method {method!r} "
                   f"gives no bits ({why}); pass a config.json whose quantization_config gives bits, or "
                   "--safetensors-index for exact weight bytes")
    if bits == 8:
        return scheme("int8"), None
    g = group or 128
    q = Quant("int4" if bits < 8 else "int8", _group_bytes(bits, g, False),
              detail=f"int{bits} g{g} (bits from {source})")
    # the scales' share of the bytes rests on the group size: one not given is planned at 128 and said so
    return q, None if group else (f"weights planned as {q.detail}: quantization_config ({method}) gives no "
                                  "group_size, so one scale per 128 weights is assumed, not read")


# ModelOpt's quant_algo values vLLM reads (v0.32.0 quantization/modelopt.py L139-156 LINEAR_ALGOS + MIXED_PRECISION;
# any other is refused at start, L392-397 "ModelOpt currently only supports ...")
_MODELOPT_FP8 = ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO")
_MODELOPT_FP4 = ("NVFP4", "W4A16_NVFP4")
MODELOPT_ALGOS = (*_MODELOPT_FP8, *_MODELOPT_FP4, "MXFP8", "MIXED_PRECISION")


def modelopt_algo(qc: dict[str, Any]) -> tuple[str, str] | None:
    """(key, value) of a ModelOpt ``quantization_config``'s quant_algo (flat, or nested under ``quantization`` as
    hf_quant_config.json writes it); None for another method or when the config gives none (vLLM then reads
    hf_quant_config.json, not here)."""
    if str(qc.get("quant_method") or "").lower() not in ("modelopt", "modelopt_fp4"):
        return None
    inner = qc.get("quantization")
    if qc.get("quant_algo"):
        return "quantization_config.quant_algo", str(qc["quant_algo"])
    if isinstance(inner, dict) and inner.get("quant_algo"):
        return "quantization_config.quantization.quant_algo", str(inner["quant_algo"])
    return None


def _modelopt_scheme(algo: str) -> tuple[Quant, str | None]:
    """A ModelOpt checkpoint's weight format from its quant_algo, and what was planned without being read."""
    if algo in _MODELOPT_FP4:
        return scheme("nvfp4"), None
    if algo in _MODELOPT_FP8:
        return scheme("fp8", block=algo == "FP8_PB_WO"), None
    if algo == "MXFP8":  # e4m3 weights, one E8M0 scale per 32
        return Quant("fp8", 1.0 + 1 / 32, detail="MXFP8: 8-bit + E8M0 scale per 32"), None
    q = scheme("fp8")
    if algo == "MIXED_PRECISION":
        return q, ("weights planned as FP8: a ModelOpt MIXED_PRECISION checkpoint names each layer's algorithm "
                   "(quantized_layers), not read here")
    return q, (f"weights planned as FP8, format unknown: ModelOpt quant_algo {algo or 'absent'!s} is none of "
               f"{', '.join(MODELOPT_ALGOS)} that vLLM reads (it refuses the checkpoint at start)")


def read_config(qc: dict[str, Any] | None) -> tuple[Quant, str | None]:
    """Read a config.json ``quantization_config``; the second value names a bit width or packing that the
    config does not give and was planned anyway (an assumption to report), else None."""
    if not qc:
        return NONE, None
    note: str | None = None
    method = str(qc.get("quant_method") or qc.get("quant_algo") or "").lower()
    ignore = list(qc.get("ignore") or qc.get("modules_to_not_convert") or qc.get("exclude_modules") or [])
    cover = _coverage([str(p) for p in ignore]) if ignore else frozenset(LINEAR_COMPONENTS)
    q: Quant
    if method == "compressed-tensors":
        fmt = str(qc.get("format") or "").lower()
        groups: dict[str, Any] = qc.get("config_groups") or {}
        first: dict[str, Any] = next(iter(groups.values()), {}) if groups else {}
        w: dict[str, Any] = first.get("weights") or {}
        bits = int(w.get("num_bits") or 8)
        typ = str(w.get("type") or "int")
        if "nvfp4" in fmt or (bits == 4 and typ == "float"):
            q = scheme("nvfp4")
        elif "mxfp4" in fmt:
            q = scheme("mxfp4")
        elif bits == 8 and typ == "float":
            q = scheme("fp8", block=str(w.get("strategy")) == "block")
        elif bits == 8:
            q = scheme("int8")
        else:
            group = w.get("group_size") if w.get("strategy") == "group" else None
            q = Quant("int4", _group_bytes(bits, group, not w.get("symmetric", True)),
                      detail=f"compressed-tensors int{bits} g{group or 'channel'}")
    elif method in ("modelopt", "modelopt_fp4"):
        algo = str(qc.get("quant_algo") or qc.get("quantization", {}).get("quant_algo") or "").upper()
        q, note = _modelopt_scheme(algo)
        ex = qc.get("exclude_modules") or qc.get("quantization", {}).get("exclude_modules") or []
        cover = _coverage([str(p) for p in ex]) if ex else cover
    elif method == "fp8":
        q = scheme("fp8", block=bool(qc.get("weight_block_size")))
    elif method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        wbits, group = qc.get("bits") or qc.get("w_bit"), qc.get("group_size")
        q = scheme(method.split("_")[0], group=group, bits=wbits)
        missing = [k for k, v in (("bits", wbits), ("group_size", group)) if v is None]
        if missing:
            # vLLM's AWQConfig / GPTQConfig.from_config read both keys and refuse a config without them
            note = (f"weights planned as {q.detail}: quantization_config ({method}) gives no "
                    f"{' or '.join(missing)}, so the usual packing is assumed, not read")
    else:
        try:
            q = scheme(method)
        except ValueError:
            q, note = _unnamed_scheme(qc, method)
    if method == "mxfp4":
        # vLLM's Mxfp4Config quantizes the fused MoE experts only: every linear layer (attention, dense and shared
        # MLPs) gets UnquantizedLinearMethod ("MXFP4 linear layer is not implemented - falling back to
        # UnquantizedLinearMethod", vllm-project/vllm v0.32.0 vllm/model_executor/layers/quantization/mxfp4.py
        # L94-105; earlier releases raise NotImplementedError for such a layer instead, not modelled here)
        cover &= frozenset({"experts"})
    return Quant(q.name, q.bytes_per_param, cover, q.detail, block=q.block), note


def checkpoint_kv_dtype(qc: Any) -> str | None:
    """The KV cache format a ModelOpt checkpoint asks for, as vLLM reads it.

    vLLM resolves ``--kv-cache-dtype auto`` to the checkpoint's KV quantization
    (vllm/utils/torch_utils.py ``resolve_kv_cache_dtype_string`` /
    ``get_kv_cache_quant_algo_string``): a ModelOpt ``kv_cache_scheme`` of static
    8-bit floats, or ``kv_cache_quant_algo: FP8``, means an FP8 cache.
    """
    if not isinstance(qc, dict) or not str(qc.get("quant_method") or "").lower().startswith("modelopt"):
        return None
    nested = qc.get("quantization")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else qc
    algo = (inner.get("kv_cache_scheme") or qc.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
            or qc.get("kv_cache_quant_algo"))
    if isinstance(algo, dict):
        return "fp8" if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float" \
            else None
    return "fp8" if isinstance(algo, str) and algo.lower() == "fp8" else None


# Routed-expert formats named by a config's ``expert_dtype`` (DeepSeek-V4: FP4 e2m1
# values with one UE8M0 scale per 32, i.e. the MXFP4 layout).
EXPERT_DTYPES: dict[str, float] = {"fp4": 0.5 + 1 / 32, "mxfp4": 0.5 + 1 / 32, "nvfp4": 0.5 + 1 / 16,
                                   "fp8": 1.0 + 4 / (128 * 128), "int4": 0.5 + 2 / 128,
                                   "bf16": 2.0, "bfloat16": 2.0, "fp16": 2.0}


def with_expert_dtype(q: Quant, expert_dtype: str) -> Quant:
    """``q`` with routed experts stored as ``expert_dtype``; raises ValueError for an unknown name."""
    b = EXPERT_DTYPES[expert_dtype.lower()]
    name = q.name if q.is_quantized else expert_dtype.lower()
    detail = f"{q.detail}; routed experts {expert_dtype} ({b:.4g} B/param)" if q.detail else \
        f"routed experts {expert_dtype} ({b:.4g} B/param)"
    return Quant(name, q.bytes_per_param, q.covers, detail, expert_bytes_per_param=b, block=q.block)


def from_text(text: str | None) -> Quant:
    """Read a free-text description ("AWQ 4-bit", "modelopt NVFP4 W4A4", "fp8 block")."""
    if not text:
        return NONE
    t = text.lower()
    if "nvfp4" in t or "w4a4" in t:
        return scheme("nvfp4")
    if "mxfp4" in t:
        return scheme("mxfp4")
    if "awq" in t:
        return scheme("awq")
    if "gptq" in t:
        return scheme("gptq")
    if "fp8" in t:
        return scheme("fp8", block="block" in t)
    if "int8" in t or "w8a8" in t:
        return scheme("int8")
    if "int4" in t or "4-bit" in t or "4bit" in t:
        return scheme("int4")
    return NONE
