"""Model architecture as the memory planner needs it, read from config.json.

Reads a Hugging Face ``config.json`` (multimodal ones nest the language model
under ``text_config``) or the normalised summary form used by the test data,
and, when given, a ``model.safetensors.index.json`` for the exact byte count.
Each decoder layer gets an attention kind, because the KV cache is sized per
layer kind: full, sliding window, MLA latent, or a linear-attention / SSM layer
that keeps a fixed-size state instead of per-token KV.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from launchcard.errors import InputError
from launchcard.memory import _quant
from launchcard.memory._quant import Quant

# Any in this module: config.json as read (JSON values of every type).

FULL, SLIDING, MLA, LINEAR = "full", "sliding", "mla", "linear"
# a decoder layer with neither KV nor recurrent state (Nemotron-H "-" MLP and "E" MoE layers)
NONE = "none"

# vocab sizes by family, used only when a config omits vocab_size
_VOCAB = {"qwen": 151936, "llama": 128256, "gemma": 262144, "deepseek": 129280,
          "kimi": 163840, "glm": 151552, "mistral": 131072, "gpt_oss": 201088}


@dataclass(frozen=True)
class LinearAttn:
    """Fixed-size recurrent state of a linear-attention / SSM layer."""

    kind: str  # "gdn" (gated delta net, also KDA), "mamba2", or "mamba1" (num_v_heads = d_inner, heads of 1,
    # num_k_heads = dt_rank)
    num_k_heads: int
    num_v_heads: int
    k_head_dim: int
    v_head_dim: int
    conv_kernel: int = 4
    ssm_state_size: int = 0  # mamba2 only
    n_groups: int = 1  # mamba2 only
    state_dtype_bytes: int | None = None  # None = model dtype
    # Mamba2 SSD kernel chunk (config mamba_chunk_size / chunk_size): prefix caching in
    # vLLM's mamba_cache_mode "all" aligns the attention block to it
    chunk_size: int = 0


@dataclass(frozen=True)
class Arch:
    model_type: str
    num_layers: int
    hidden_size: int
    vocab_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    layer_kinds: tuple[str, ...]
    intermediate_size: int
    sliding_window: int | None = None
    # full-attention layers of some sliding hybrids use other dims (Gemma 4)
    full_kv_heads: int | None = None
    full_head_dim: int | None = None
    # MLA
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # DeepSeek Sparse Attention (DeepSeek-V3.2): a lightning indexer of ``index_n_heads`` x ``index_head_dim``
    # scores every context token per query, and the MLA layer attends only to the best ``index_topk`` (0: dense)
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    # MoE
    num_experts: int = 0
    experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate: int = 0  # total over shared experts
    dense_layers: int = 0  # leading dense (non-MoE) layers
    moe_dense_mlp: bool = False  # every MoE layer also runs a dense MLP of intermediate_size (Gemma 4)
    checkpoint_kv_dtype: str | None = None  # KV cache format a ModelOpt checkpoint asks for ("fp8")
    linear_attn: LinearAttn | None = None
    tie_word_embeddings: bool = False
    has_lm_head: bool = True
    vision_params: int = 0
    mtp_layers: int = 0
    torch_dtype: str = "bfloat16"
    quant: Quant = _quant.NONE
    # the method vLLM verifies for the checkpoint's quantization_config (launchcard.limits.checkpoint_quant_method)
    quant_method: str | None = None
    max_position_embeddings: int | None = None
    # what vLLM derives the longest accepted --max-model-len from (length keys, RoPE scaling, model_type):
    # read by launchcard.limits.max_len at the plan's vLLM version
    length_config: tuple[tuple[str, Any], ...] = ()
    # what vLLM decides MLA / sparse attention from (model_type, kv_lora_rank, index_topk ...): its attention
    # backends and so the KV-cache dtypes it accepts depend on it (launchcard.limits.attention_kind)
    attention_config: tuple[tuple[str, Any], ...] = ()
    architectures: tuple[str, ...] = ()  # the config's, as vLLM's model registry reads them
    exact_weight_bytes: int | None = None  # from the safetensors index
    assumptions: tuple[str, ...] = field(default=())
    # the one of them that plans a config without a known torch_dtype as bf16: a --dtype given replaces it
    precision_note: str | None = None

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def kind_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for k in self.layer_kinds:
            out[k] = out.get(k, 0) + 1
        return out


def _first(d: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = d.get(k)
        if v is not None:
            return v
    return default


def _int(d: dict[str, Any], *keys: str, default: int | None = None) -> int | None:
    v = _first(d, *keys)
    if v is None:
        return default
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


# Integer fields a config must spell as integers; a string such as "4k" is refused, not skipped.
_INT_FIELDS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
               "vocab_size", "intermediate_size", "max_position_embeddings", "sliding_window", "kv_lora_rank",
               "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "n_routed_experts",
               "num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
               "num_nextn_predict_layers", "first_k_dense_replace", "n_shared_experts", "index_n_heads",
               "index_head_dim", "index_topk")


def _check_ints(cfg: dict[str, Any], where: str, prefix: str = "") -> None:
    for key in _INT_FIELDS:
        v = cfg.get(key)
        if v is None:
            continue
        ok = isinstance(v, int) and not isinstance(v, bool)
        ok = ok or (isinstance(v, float) and v.is_integer())
        ok = ok or (isinstance(v, str) and v.strip().isdigit())
        if not ok:
            raise InputError(f"{prefix}{key} is not an integer ({v!r})", where=where,
                             fix=f"write {key} as a plain integer, e.g. 32768")


# What transformers fills in when a nested text_config leaves a field out: the
# defaults of the text model type's config class (LLaVA's text_config defaults
# to "llama"; LlamaConfig, MistralConfig, Qwen2Config __init__ defaults).
# gemma3_text: transformers 5.19.0 models/gemma3/configuration_gemma3.py Gemma3TextConfig (class fields, and
# __post_init__'s sliding_window_pattern 6); google/gemma-3-27b-it's text_config leaves these out.
_TYPE_DEFAULTS: dict[str, dict[str, int | bool]] = {
    "gemma3_text": {"vocab_size": 262208, "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131072, "sliding_window": 4096, "sliding_window_pattern": 6,
                    "tie_word_embeddings": True},
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
              "num_attention_heads": 32, "max_position_embeddings": 2048},
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072},
    "qwen2": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32768},
}
_TEXT_TYPE_OF = {"llava": "llama", "llava_next": "llama", "llava_onevision": "qwen2", "mistral3": "mistral",
                 "pixtral": "mistral"}


def _fill_text_defaults(top: dict[str, Any], text: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """A nested text_config with transformers' defaults for the fields it leaves out."""
    ttype = str(text.get("model_type") or _TEXT_TYPE_OF.get(str(top.get("model_type", "")).lower(), "")).lower()
    defaults = _TYPE_DEFAULTS.get(ttype)
    if not defaults:
        return text
    filled = dict(text)
    for key, val in defaults.items():
        if filled.get(key) is None:
            filled[key] = val
            notes.append(f"text_config.{key} absent: {ttype} default {val} applied (as transformers' config "
                         "class does)")
    return filled


# where the real dtype is given: predict and plan take no --dtype of their own, the served command does
_DTYPE_FIX = ("give the served command's --dtype (predict --command '... --dtype D', memory --dtype D) to plan the "
              "real one")
# the names a config's torch_dtype / dtype takes for the three dtypes vLLM serves unquantized (transformers writes
# str(torch.dtype) without "torch."; older configs and some tools write the short names)
_DTYPES = {"float32": "float32", "float": "float32", "fp32": "float32", "float16": "float16", "half": "float16",
           "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


def _known_dtype(v: object) -> str | None:
    """The config's dtype as one of float32 / float16 / bfloat16, or None when absent or none of them."""
    if not isinstance(v, str):
        return None
    return _DTYPES.get(v.strip().lower().removeprefix("torch."))


def _dtype(v: object) -> str:
    # absent or unrecognised: planned as bfloat16, and the arch reader names that assumption (one rule for both)
    return _known_dtype(v) or "bfloat16"


def _feature_depth(top: dict[str, Any], depth: int) -> int:
    """Encoder layers vLLM builds for a LLaVA-style tower: only up to ``vision_feature_layer``
    (llava.py ``_get_num_hidden_layers``/``get_layer_index``: -2 of 24 builds 23; a list builds
    up to its deepest entry)."""
    fl = top.get("vision_feature_layer")
    idx = [fl] if isinstance(fl, int) and not isinstance(fl, bool) else fl if isinstance(fl, list) else []
    idx = [i for i in idx if isinstance(i, int) and not isinstance(i, bool)]
    return max((depth + i + 1 if i < 0 else i) for i in idx) if idx else depth


_TOWER_FIELDS = (("depth", ("depth", "num_hidden_layers", "vt_num_hidden_layers", "num_layers"), "24 layers"),
                 ("width", ("embed_dim", "hidden_size", "vt_hidden_size", "width"), "1152 (SigLIP-so400m)"),
                 ("MLP size", ("intermediate_size", "vt_intermediate_size", "mlp_ratio"), "4 x width"))


def _vision_params(vc: object, top: dict[str, Any] | None = None, notes: list[str] | None = None) -> int:
    """Parameters of the vision tower and its projector into the text model (``top``: the
    multimodal config around ``vc``, for the projector and the layers vLLM builds); a tower size the
    vision_config does not give is supplied and named in ``notes``."""
    if not isinstance(vc, dict) or not vc:
        return 0
    top = top or {}
    for what, keys, default in _TOWER_FIELDS:
        if notes is not None and not any(k in vc for k in keys):
            notes.append(f"vision tower {what}: vision_config gives none of {', '.join(keys)}; {default} assumed "
                         "(give the checkpoint's full vision_config to plan the real tower)")
    depth = _int(vc, "depth", "num_hidden_layers", "vt_num_hidden_layers", "num_layers", default=24) or 24
    if "embed_dim" in vc:  # Qwen2-VL: embed_dim is the tower's width, hidden_size the merger's output
        h = _int(vc, "embed_dim", default=1280) or 1280
        out = _int(vc, "hidden_size", "out_hidden_size", default=h) or h
    else:
        h = _int(vc, "hidden_size", "vt_hidden_size", "width", default=1152) or 1152
        out = _int(vc, "out_hidden_size", "text_hidden_size", default=h) or h
    ratio = vc.get("mlp_ratio")
    inter = _int(vc, "intermediate_size", "vt_intermediate_size",
                 default=int(ratio * h) if isinstance(ratio, (int, float)) else 4 * h) or 4 * h
    depth = _feature_depth(top, depth)
    # Qwen2.5-VL's vision blocks use a gated SiLU MLP (gate, up, down: qwen2_5_vl.py
    # Qwen2_5_VisionMLP); the other towers a plain fc1 / fc2.
    gated = "qwen2_5" in str(vc.get("model_type", "")) + str(top.get("model_type", "")) \
        or "fullatt_block_indexes" in vc
    block = 4 * h * h + (3 if gated else 2) * h * inter  # qkv + o, then the MLP
    if str(vc.get("model_type", "")) in ("siglip_vision_model", "clip_vision_model"):
        block += 9 * h + inter  # their q/k/v/o and fc1/fc2 biases and two LayerNorms
    patch = _int(vc, "patch_size", default=0) or 0
    side = _int(vc, "image_size", default=0) or 0
    # patch embedding: a conv over channels x patch^2 (x the temporal patch of video towers);
    # CLIP / SigLIP also learn one position embedding per patch of their fixed image size
    embed = (_int(vc, "num_channels", "in_channels", "in_chans", default=3) or 3) * patch * patch * h \
        * (_int(vc, "temporal_patch_size", default=1) or 1)
    if side and patch and str(vc.get("model_type", "")) in ("siglip_vision_model", "clip_vision_model"):
        embed += (side // patch) ** 2 * h
    text_h = _int(top.get("text_config") or {}, "hidden_size") or out
    mtype = str(top.get("model_type", ""))
    if mtype == "paligemma":  # paligemma.py: one Linear(vision hidden -> projection_dim, bias)
        proj = _int(vc, "projection_dim", default=None) or _int(top, "projection_dim", default=text_h) or text_h
        connector = h * proj + proj
    elif "vision_feature_layer" in top:  # LLaVA family: Linear(h -> text) + act + Linear(text -> text)
        connector = h * text_h + text_h * text_h + 2 * text_h
    else:  # Qwen-VL-style patch merger: 2x2 patches (4h) -> 4h -> out
        connector = 4 * h * (4 * h + out)
        # Qwen3-VL adds one more merger per DeepStack layer (qwen3_vl.py deepstack_merger_list)
        stack = vc.get("deepstack_visual_indexes")
        connector *= 1 + (len(stack) if isinstance(stack, list) else 0)
    return depth * block + embed + connector


def _summary_kinds(summary: str, n_layers: int | None) -> tuple[int | None, dict[str, int]]:
    """Parse "50 sliding_attention (1024) + 10 full_attention" and similar."""
    s = summary.lower()
    counts: dict[str, int] = {}
    for m in re.finditer(r"(\d+)\s*(?:x\s*)?(sliding|full|linear|kda|mamba|gdn|mla|swa)", s):
        kind = {"swa": SLIDING, "kda": LINEAR, "mamba": LINEAR, "gdn": LINEAR}.get(m.group(2), m.group(2))
        counts[kind] = counts.get(kind, 0) + int(m.group(1))
    lm = re.match(r"\s*(\d+)\s*layers", s)
    total = int(lm.group(1)) if lm else (sum(counts.values()) or n_layers)
    return total, counts


def _ssm_cache_bytes(cfg: dict[str, Any], model_type: str, notes: list[str]) -> int | None:
    """Bytes per element of a Mamba2 SSM state, None = the model dtype.

    vLLM's NemotronHForCausalLMConfig turns --mamba-ssm-cache-dtype auto into the
    config's mamba_ssm_cache_dtype, or float32 when the config has none; other Mamba2
    models keep the model dtype unless the config names one.
    """
    named = str(cfg.get("mamba_ssm_cache_dtype") or cfg.get("mamba_ssm_dtype") or "")
    if named:
        return 4 if named.endswith("32") else 2
    if model_type.startswith("nemotron_h"):
        notes.append("mamba_ssm_cache_dtype absent: float32 SSM state (vLLM's Nemotron-H default)")
        return 4
    return None


def _layer_kinds(cfg: dict[str, Any], n: int, mla: bool, notes: list[str]) -> tuple[str, ...]:
    attn = MLA if mla else FULL
    lt = cfg.get("layer_types")
    if isinstance(lt, list) and len(lt) >= n:
        out = []
        for t in lt[:n]:
            t = str(t).lower()
            if "linear" in t or "mamba" in t or "delta" in t or "kda" in t:
                out.append(LINEAR)
            elif "sliding" in t or "local" in t or "chunk" in t:
                out.append(SLIDING)
            else:
                out.append(attn)
        return tuple(out)
    pat = cfg.get("hybrid_override_pattern")
    if isinstance(pat, str) and len(pat) >= n:
        # Nemotron-H: M mamba, * attention, - MLP and E MoE layers (no attention, so no
        # KV and no state: vLLM gives them no KV cache spec)
        return tuple(LINEAR if c == "M" else attn if c == "*" else NONE for c in pat[:n])
    period = _int(cfg, "attn_layer_period")
    if period and period > 0 and (cfg.get("mamba_d_state") or cfg.get("mamba_expand")):
        # Jamba: attention on layers i % attn_layer_period == attn_layer_offset, Mamba on the rest
        offset = _int(cfg, "attn_layer_offset", default=0) or 0
        return tuple(attn if i % period == offset else LINEAR for i in range(n))
    interval = _int(cfg, "full_attention_interval")
    if interval and interval > 1:  # Qwen3-Next / 3.5: every k-th layer is full attention
        return tuple(attn if (i + 1) % interval == 0 else LINEAR for i in range(n))
    sw = _int(cfg, "sliding_window")
    model_type = str(cfg.get("model_type", ""))
    if sw and cfg.get("use_sliding_window") is not False and model_type.startswith(("gemma", "cohere")):
        p = _int(cfg, "sliding_window_pattern", "_sliding_window_pattern", default=2) or 2
        return tuple(FULL if (i + 1) % p == 0 else SLIDING for i in range(n))
    if sw and cfg.get("use_sliding_window") and str(cfg.get("model_type", "")).startswith("qwen"):
        mw = _int(cfg, "max_window_layers", default=n) or n
        return tuple(SLIDING if i >= mw else FULL for i in range(n))  # vLLM: layers >= max_window_layers slide
    if (sw and model_type.startswith("mistral") and cfg.get("use_sliding_window", True)
            and sw < (_int(cfg, "max_position_embeddings") or 0)):
        return tuple(SLIDING for _ in range(n))
    return tuple(attn for _ in range(n))


def arch_from_config(config: dict[str, Any], *, where: str = "config.json") -> Arch:
    """Build an :class:`Arch` from a config.json dict (raw or summary form)."""
    if not isinstance(config, dict):
        raise InputError("config is not a JSON object", where=where, fix="pass a Hugging Face config.json")
    top: dict[str, Any] = config["config"] if isinstance(config.get("config"), dict) else config
    if top.get("is_encoder_decoder") is True:  # T5, BART, Whisper: said as what it is, not as missing decoder fields
        named = ", ".join(map(str, top.get("architectures") or [])) or str(top.get("model_type") or "this model")
        raise InputError(f"{named} is an encoder-decoder model (is_encoder_decoder: true): launchcard plans "
                         "decoder-only models (one decoder stack and its self-attention KV cache; no encoder, no "
                         "cross-attention cache)", where=where,
                         fix="plan a decoder-only checkpoint; this one has no launchcard plan")
    text_key = next((k for k in ("text_config", "language_config", "llm_config") if top.get(k)), None)
    raw_text = top.get(text_key) if text_key else {}
    notes: list[str] = []
    if not isinstance(raw_text, dict):
        raise InputError("text_config is not a JSON object", where=where, fix="pass a Hugging Face config.json")
    text: dict[str, Any] = raw_text
    _check_ints(top, where)
    _check_ints(text, where, "text_config.")
    if text:
        text = _fill_text_defaults(top, text, notes)
    cfg = {**{k: v for k, v in top.items() if k not in ("text_config", "vision_config")}, **text}
    raw_dtype = _first(cfg, "torch_dtype", "dtype")
    precision: str | None = None
    if raw_dtype is None:
        precision = ("precision: the config gives no torch_dtype, so --dtype auto is planned as bfloat16 (2 bytes "
                     "per weight); " + _DTYPE_FIX)
    elif _known_dtype(raw_dtype) is None:  # never read as bf16 silently: the same assumption, named with its value
        precision = (f"precision: the config's torch_dtype {raw_dtype!r} is none of float32, float16, bfloat16, so "
                     "--dtype auto is planned as bfloat16 (2 bytes per weight); " + _DTYPE_FIX)
    if precision is not None:
        notes.append(precision)
    model_type = str(_first(cfg, "model_type", default="") or "")
    archs = cfg.get("architectures") or top.get("architectures") or []
    family = (model_type or (archs[0] if archs else "")).lower()

    n = _int(cfg, "num_hidden_layers", "num_layers", "n_layer")
    summary = cfg.get("layer_types_summary")
    sum_counts: dict[str, int] = {}
    if isinstance(summary, str):
        total, sum_counts = _summary_kinds(summary, n)
        n = n or total
    hidden = _int(cfg, "hidden_size", "d_model", "n_embd")
    heads = _int(cfg, "num_attention_heads", "n_head")
    required = (("num_hidden_layers", n), ("hidden_size", hidden), ("num_attention_heads", heads))
    bad = [f"{k} = {v}" for k, v in required if v is not None and v <= 0]
    if bad:  # present but not a size: say so, not "lacks"
        raise InputError(f"config field(s) {', '.join(bad)} must be positive", where=where,
                         fix="pass the model's own config.json (these are sizes of the model)")
    missing = [k for k, v in required if not v]
    if missing:
        raise InputError(
            f"config lacks required field(s) {', '.join(missing)}",
            where=where,
            fix="pass the model's full config.json (for multimodal models the text_config must carry them)",
        )
    assert n and hidden and heads
    kv_lora = _int(cfg, "kv_lora_rank", default=0) or 0
    mla = kv_lora > 0
    if mla is False and "mla" in sum_counts:
        mla, kv_lora = True, 512
        notes.append("MLA latent size not in config; assumed kv_lora_rank 512 + rope 64")
    kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "multi_query_group_num")
    if kv_heads is not None and kv_heads <= 0:  # 0 KV heads planned a KV cache of 0 bytes a token
        raise InputError(f"config field(s) num_key_value_heads = {kv_heads} must be positive", where=where,
                         fix="pass the model's own config.json (these are sizes of the model)")
    if kv_heads is None:
        kv_heads = 1 if cfg.get("multi_query") else heads
        if not mla:
            notes.append(f"num_key_value_heads missing; assumed {kv_heads} (no GQA)")
    given_head_dim, vocab = _int(cfg, "head_dim", "head_dim_effective"), _int(cfg, "vocab_size", "padded_vocab_size")
    inter_given = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner")
    # present but not a size (head_dim 0 fell back to hidden / heads, vocab_size -1 took bytes off the weights)
    bad = [f"{k} = {v}" for k, v, least in (("head_dim", given_head_dim, 1), ("vocab_size", vocab, 1),
                                            ("intermediate_size", inter_given, 0)) if v is not None and v < least]
    if bad:
        raise InputError(f"config field(s) {', '.join(bad)} must be positive", where=where,
                         fix="pass the model's own config.json (these are sizes of the model)")
    head_dim = given_head_dim or hidden // heads
    if not vocab:
        vocab = next((v for k, v in _VOCAB.items() if k in family), 128000)
        notes.append(f"vocab_size missing; assumed {vocab}")
    inter = inter_given or 4 * hidden

    kinds = list(_layer_kinds(cfg, n, mla, notes))
    if sum_counts and not isinstance(cfg.get("layer_types"), list):
        # summary form: rebuild the mix from the counts (full layers last in each period)
        n_lin, n_sw = sum_counts.get(LINEAR, 0), sum_counts.get(SLIDING, 0)
        other = n - n_lin - n_sw
        if n_lin or n_sw:
            if other <= 0:
                other = max(1, n // 4)
                n_lin = n - other if n_lin else 0
                n_sw = n - other - n_lin
                notes.append(f"layer mix partly unknown; assumed {other} attention layers of {n}")
            slow = LINEAR if n_lin else SLIDING
            period = max(1, round(n / other))
            kinds = [(MLA if mla else FULL) if (i + 1) % period == 0 else slow for i in range(n)]
            while kinds.count(slow) > (n_lin or n_sw):
                kinds[kinds.index(slow)] = MLA if mla else FULL

    n_exp = _int(cfg, "n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts", default=0) or 0
    if not n_exp and isinstance(summary, str) and "moe" in summary.lower():
        n_exp = 128
        notes.append("expert count missing; assumed 128")
    topk = _int(cfg, "num_experts_per_tok", "experts_per_token", "moe_topk", default=0) or 0
    moe_inter = _int(cfg, "moe_intermediate_size", "expert_intermediate_size", default=0) or (inter if n_exp else 0)
    shared = _int(cfg, "shared_expert_intermediate_size", default=0) or 0
    n_shared = _int(cfg, "n_shared_experts", "num_shared_experts", default=0) or 0
    if n_shared and not shared:
        shared = n_shared * moe_inter
    dense = _int(cfg, "first_k_dense_replace", default=0) or 0
    if n_exp and cfg.get("mlp_only_layers"):
        dense += len(cfg["mlp_only_layers"])
    every = _int(cfg, "expert_layer_period")
    if n_exp and every and every > 1:  # Jamba: experts on layers i % period == offset, a dense MLP elsewhere
        at = _int(cfg, "expert_layer_offset", default=0) or 0
        dense = sum(1 for i in range(n) if i % every != at)

    lin = None
    if LINEAR in kinds:
        if cfg.get("mamba_expand") and not (cfg.get("mamba_num_heads") or cfg.get("mamba_n_heads")
                                            or cfg.get("mamba_head_dim")):
            # Mamba-1 (Jamba): one state row per inner channel, no heads or groups (vLLM mamba_mixer.py:
            # conv (d_inner, d_conv - 1) and ssm (d_inner, d_state) per request)
            inner = (_int(cfg, "mamba_expand", default=2) or 2) * hidden
            lin = LinearAttn("mamba1", _int(cfg, "mamba_dt_rank", default=-(-hidden // 16)) or -(-hidden // 16),
                             inner, 1, 1, _int(cfg, "mamba_d_conv", default=4) or 4,
                             _int(cfg, "mamba_d_state", default=16) or 16, 0,
                             state_dtype_bytes=_ssm_cache_bytes(cfg, model_type, notes))
        elif cfg.get("mamba_d_state") or cfg.get("ssm_state_size") or cfg.get("state_size"):
            nh = _int(cfg, "mamba_num_heads", "mamba_n_heads", default=hidden // 32) or hidden // 32
            hd = _int(cfg, "mamba_head_dim", "mamba_d_head", default=64) or 64
            chunk = _int(cfg, "mamba_chunk_size", "chunk_size")
            if chunk is None:
                chunk = 2048  # vLLM ModelConfig.get_mamba_chunk_size's fallback
                notes.append("mamba chunk size absent: vLLM's fallback 2048 applied")
            lin = LinearAttn("mamba2", nh, nh, hd, hd, _int(cfg, "mamba_d_conv", "conv_kernel", default=4) or 4,
                             _int(cfg, "mamba_d_state", "ssm_state_size", "state_size", default=128) or 128,
                             _int(cfg, "mamba_n_groups", "n_groups", default=8) or 8,
                             state_dtype_bytes=_ssm_cache_bytes(cfg, model_type, notes), chunk_size=chunk)
        else:
            nk = _int(cfg, "linear_num_key_heads", default=None)
            if nk is None:
                notes.append("linear-attention dims missing; assumed 16 key / 32 value heads of 128")
            lin = LinearAttn(
                "gdn", nk or 16, _int(cfg, "linear_num_value_heads", default=None) or (32 if nk is None else nk),
                _int(cfg, "linear_key_head_dim", default=128) or 128,
                _int(cfg, "linear_value_head_dim", default=128) or 128,
                _int(cfg, "linear_conv_kernel_dim", default=4) or 4,
                state_dtype_bytes=4 if str(cfg.get("mamba_ssm_dtype", "")).endswith("32") else None,
            )

    tie = bool(_first(cfg, "tie_word_embeddings", default=top.get("tie_word_embeddings", False)))
    if text and isinstance(top.get("vision_config"), dict) and "tie_word_embeddings" in top:
        # multimodal: vLLM copies the top-level flag onto the language model's config
        # (VllmConfig.with_hf_config, vLLM 0.32: under transformers 5 the flag belongs to the
        # class that sees both tensors), whatever text_config says
        tie = bool(top["tie_word_embeddings"])
    is_embed = any(str(a).endswith(("Model", "ForSequenceClassification", "ForEmbedding")) for a in archs) and not any(
        "Causal" in str(a) or "Generation" in str(a) for a in archs)
    from launchcard.limits import mtp_layer_count  # the one count SGLang's predict / check read too
    mtp = mtp_layer_count(top)
    sw = _int(cfg, "sliding_window") if SLIDING in kinds else None
    _known_quant_method(cfg.get("quantization_config") or top.get("quantization_config"), where)
    qc = cfg.get("quantization_config") or top.get("quantization_config")
    if isinstance(qc, dict):
        quant, qnote = _quant.read_config(qc)
        notes += [qnote] if qnote else []
    else:
        quant = _quant.from_text(cfg.get("quantization_config_summary"))
    expert_dtype = cfg.get("expert_dtype")
    if expert_dtype is not None and n_exp:
        try:
            quant = _quant.with_expert_dtype(quant, str(expert_dtype))
        except KeyError:
            raise InputError(f"unknown expert_dtype ({expert_dtype!r})", where=where,
                             fix=f"use one of {', '.join(sorted(_quant.EXPERT_DTYPES))}") from None
    dsa = _dsa_fields(cfg, mla, notes)
    return Arch(
        model_type=model_type or family,
        num_layers=n,
        hidden_size=hidden,
        vocab_size=vocab,
        num_heads=heads,
        num_kv_heads=1 if mla else kv_heads,
        head_dim=head_dim,
        layer_kinds=tuple(kinds),
        intermediate_size=inter,
        sliding_window=sw,
        full_kv_heads=_int(cfg, "num_global_key_value_heads"),
        full_head_dim=_int(cfg, "global_head_dim"),
        kv_lora_rank=kv_lora,
        q_lora_rank=_int(cfg, "q_lora_rank", default=0) or 0,
        qk_rope_head_dim=(_int(cfg, "qk_rope_head_dim", default=64 if mla else 0) or 0) if mla else 0,
        qk_nope_head_dim=_int(cfg, "qk_nope_head_dim", default=128 if mla else 0) or 0,
        v_head_dim=_int(cfg, "v_head_dim", default=128 if mla else 0) or 0,
        index_topk=dsa[0], index_n_heads=dsa[1], index_head_dim=dsa[2],
        num_experts=n_exp,
        experts_per_tok=topk,
        moe_intermediate_size=moe_inter,
        shared_expert_intermediate=shared,
        dense_layers=min(dense, n),
        moe_dense_mlp=bool(n_exp and cfg.get("enable_moe_block") and _int(cfg, "intermediate_size")),
        checkpoint_kv_dtype=_quant.checkpoint_kv_dtype(
            cfg.get("quantization_config") or top.get("quantization_config")
        ),
        linear_attn=lin,
        tie_word_embeddings=tie,
        has_lm_head=not is_embed,
        vision_params=_vision_params(top.get("vision_config"), top, notes),
        mtp_layers=mtp,
        torch_dtype=_dtype(_first(cfg, "torch_dtype", "dtype")),
        quant=quant,
        quant_method=_vllm_quant_method(cfg.get("quantization_config") or top.get("quantization_config")),
        max_position_embeddings=_int(cfg, "max_position_embeddings", "max_sequence_length", "n_positions"),
        # with the text config's class defaults filled in (vLLM reads the config object transformers built)
        length_config=_length_config({**top, text_key: text} if text_key else top),
        attention_config=_attention_config(top),
        architectures=tuple(str(x) for x in (top.get("architectures") or archs) if isinstance(x, str)),
        assumptions=tuple(notes),
        precision_note=precision,
    )


def _dsa_fields(cfg: dict[str, Any], mla: bool, notes: list[str]) -> tuple[int, int, int]:
    """(index_topk, index_n_heads, index_head_dim) of a DeepSeek-V3.2-style MLA model (``index_topk`` with an MLA
    latent), zeros for any other; DeepSeek-V4's compressed attention (``compress_ratios``, no ``kv_lora_rank``) is
    another mechanism and stays out."""
    topk = _int(cfg, "index_topk", default=0) or 0
    if not (mla and topk > 0) or "compress_ratios" in cfg:
        return 0, 0, 0
    heads, dim = _int(cfg, "index_n_heads"), _int(cfg, "index_head_dim")
    if heads is None or dim is None:
        # vLLM's Indexer reads both without a default (deepseek_v2.py); its comments give DeepSeek-V3.2's 64 x 128
        notes.append("index_n_heads / index_head_dim absent: DeepSeek-V3.2's 64 indexer heads of 128 assumed")
    return topk, heads or 64, dim or 128


def _length_config(top: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The fields vLLM's ``_get_and_verify_max_len`` reads, from the text config vLLM uses."""
    from launchcard.limits import length_fields

    return tuple(sorted(length_fields(top).items()))


def _attention_config(top: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    from launchcard.limits import attention_fields

    # a list or object field counts by its presence (compress_ratios), architectures as a tuple: hashable
    return tuple(sorted((k, tuple(v) if k == "architectures" else True if isinstance(v, (list, dict)) else v)
                        for k, v in attention_fields(top).items()))


def load_arch(config_path: str | Path, safetensors_index: str | Path | None = None) -> Arch:
    """Read config.json (and optionally the safetensors index) from disk (``jsonread.read_object``: the wording
    every command gives a bad --config)."""
    from launchcard.jsonread import read_object

    path = Path(config_path)
    arch = arch_from_config(read_object(path, "config.json", field="config"), where=str(path))
    if safetensors_index is not None:
        ipath = Path(safetensors_index)
        idx = read_object(ipath, "model.safetensors.index.json", field="safetensors_index")
        meta, weight_map = idx.get("metadata"), idx.get("weight_map") or {}
        total = meta.get("total_size") if isinstance(meta, dict) else None
        # a positive byte count that is a number of bytes (1e400 is inf, its int() overflowed); named by the option
        if isinstance(total, bool) or not isinstance(total, (int, float)) or not 0 < total < math.inf \
                or not isinstance(weight_map, dict):
            said = "weight_map is not an object" if not isinstance(weight_map, dict) else (
                "index has no metadata.total_size" if total is None else
                f"metadata.total_size must be a positive number of bytes (got {total!r})")
            raise InputError(said, where=str(ipath), field="safetensors_index",
                             fix="pass the model.safetensors.index.json from the checkpoint")
        names = list(weight_map.keys())
        mtp = any(re.match(rf"(model\.)?(mtp|layers\.{arch.num_layers})\b", k) for k in names)
        arch = replace(arch, exact_weight_bytes=int(total), mtp_layers=arch.mtp_layers or (1 if mtp else 0))
    return arch


def _vllm_quant_method(qc: object) -> str | None:
    from launchcard.limits import checkpoint_quant_method

    return checkpoint_quant_method(qc)


def _known_quant_method(qc: object, where: str) -> None:
    """A checkpoint whose quantization_config names a method vLLM does not have is refused by vLLM at start
    ("Unknown quantization method", vllm/config/model.py _verify_quantization); its weights' size is then unknown
    too, so it is bad input here rather than a guessed 4- or 8-bit scheme.  The config is read before the engine
    is known, and another engine may take such a checkpoint (TensorRT-LLM reads ModelOpt's W4A8_AWQ, say), so the
    message says what launchcard cannot size and what vLLM does, not that the plan's engine refuses it."""
    from launchcard.memory._settings import QUANTIZATION_METHODS

    if not isinstance(qc, dict):
        return
    algo = _quant.modelopt_algo(qc)
    if algo is not None and algo[1].upper() not in _quant.MODELOPT_ALGOS:
        # vLLM 0.32.0 quantization/modelopt.py L392-397 ("ModelOpt currently only supports ..."): refused at start,
        # before any weight is read, so there is no format to plan it with
        raise InputError(f"{algo[0]} {algo[1]!r} is a ModelOpt algorithm launchcard cannot size the weights of: it "
                         f"reads the ones vLLM reads ({', '.join(_quant.MODELOPT_ALGOS)}; vLLM refuses any other "
                         "at start)", where=where,
                         fix="pass a checkpoint quantized with one of them (or its own config.json)")
    method = str(qc.get("quant_method") or qc.get("quant_algo") or "").lower()
    if not method or method in QUANTIZATION_METHODS:
        return
    try:
        _quant.scheme(method)
    except ValueError:
        raise InputError(f"quantization_config.quant_method {method!r} is not a quantization method launchcard can "
                         "size the weights of: it reads vLLM's (vLLM refuses any other at start: unknown "
                         "quantization method)", where=where,
                         fix="pass the checkpoint's own config.json; vLLM's methods include fp8, awq, gptq, "
                             "compressed-tensors, mxfp4, modelopt, bitsandbytes, gguf") from None

