"""Length, heads and quantization refusals vLLM makes at start-up (see :mod:`launchcard.limits`).

Each rule follows the engine's own code and quotes its wording as evidence (the vLLM 0.32.0
CPU wheel's source in ``.cache/vllm-venv``; ``tests/test_limits.py`` asks that engine):

* length: ``_get_and_verify_max_len`` (``vllm/config/model.py``) derives the longest context
  from the config (the smallest of ``max_position_embeddings`` and its sibling keys, times the
  RoPE scaling factor, except for RoPE types whose ``max_position_embeddings`` is already
  scaled) and refuses a larger ``--max-model-len`` unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``;
* heads: ``ModelConfig.verify_with_parallel_config`` refuses a tensor-parallel size that does
  not divide the attention heads;
* quantization: ``VllmConfig._get_quantization_config`` refuses a ``--dtype`` the method's
  kernels do not take and a GPU below the method's minimum compute capability (values captured
  from the engine by ``scripts/capture_engine_limits.py`` into ``data/engine_limits/``).

Standard library only: ``check`` and ``memory`` both call it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from launchcard.flagspec import release_numbers
from launchcard.limits._data import compute_capability, text_config
from launchcard.limits._data import table as captured

# Any in this module: config.json values as read.

SOURCE = "vllm 0.32.0"
LENGTH_RULE = (f'{SOURCE} vllm/config/model.py:2646 (_get_and_verify_max_len): "User-specified max_model_len '
               '({n}) is greater than the derived max_model_len ({key}={derived} or model_max_length={mml} in '
               "model's config.json). To allow overriding this maximum, set the env var "
               'VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."')
HEADS_RULE = (f'{SOURCE} vllm/config/model.py:1548 (verify_with_parallel_config): "Total number of attention '
              'heads ({heads}) must be divisible by tensor parallel size ({tp})."')
# TensorRT-LLM's PyTorch backend splits the heads over TP (over 1 under attention DP) when it builds each attention
# layer; KV heads it rounds up per rank (replicates), with no assert
TRTLLM_HEADS_RULE = ("NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/attention.py at 00547a25 Attention.__init__: "
                     "assert self.num_heads % (tp_size * cp_size) == 0 (tp_size 1 under enable_attention_dp), "
                     "num_key_value_heads rounded up per rank")
KV_HEADS_RULE = (f"{SOURCE} vllm/model_executor/layers/linear.py:1055-1057 (QKVParallelLinear): "
                 "num_kv_head_replicas = divide(tp_size, total_num_kv_heads) when TP >= KV heads, else "
                 "num_kv_heads = divide(total_num_kv_heads, tp_size); vllm/distributed/utils.py:53: "
                 '"{numerator} is not divisible by {denominator}" (the model fails to load)')
DTYPE_RULE = ('{source} {where} (_get_quantization_config): "{dtype} is not supported for quantization method '
              '{method}. Supported dtypes: {supported}"')
CAPABILITY_RULE = ('{source} {where} (_get_quantization_config): "The quantization method {method} is not supported '
                   'for the current GPU. Minimum capability: {need}. Current capability: {have}."')
ALLOW_LONG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"

# vllm/transformers_utils/model_arch_config_convertor.py: the keys whose smallest value is the length
_LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
# RoPE types whose max_position_embeddings is already the scaled length (vLLM >= 0.30; before: the first three,
# and "yarn" derived original_max_position_embeddings x factor)
_PRESCALED_NEW = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
_PRESCALED_OLD = ("su", "longrope", "llama3")


@dataclass(frozen=True, slots=True)
class MaxLen:
    """The longest ``--max-model-len`` vLLM accepts for a config, and how it got there."""

    derived: int  # vLLM's derived_max_model_len (after RoPE scaling)
    key: str  # the config key it starts from
    base: int  # that key's value
    factor: float  # RoPE scaling factor applied (1.0: none)
    model_max_length: int | None
    roped: bool = False  # vLLM multiplied by a RoPE factor (even 1.0), so its message prints a float

    @property
    def limit(self) -> int:
        """Largest accepted value: vLLM also lets a user length up to ``model_max_length`` through."""
        return max(self.derived, self.model_max_length or 0)

    def how(self) -> str:
        """``max_position_embeddings=40960`` or ``max_position_embeddings=32768 x rope factor 4.0 = 131072``."""
        if self.factor != 1.0:
            return f"{self.key}={self.base} x rope factor {self.factor:g} = {self.derived}"
        return f"{self.key}={self.base}"


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    return text_config(cfg, *_LENGTH_KEYS)


def length_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``config`` that :func:`max_len` reads (its text config's length keys, RoPE and model type)."""
    text = _text(config)
    out = {k: text[k] for k in (*_LENGTH_KEYS, "rope_parameters", "rope_scaling") if k in text}
    out["model_type"] = text.get("model_type") or config.get("model_type")
    return out


def _rope_parameters(text: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rp = text.get("rope_parameters") or text.get("rope_scaling")
    if not isinstance(rp, Mapping):
        return []
    if rp and all(isinstance(v, Mapping) for v in rp.values()):  # per layer type (full / sliding attention)
        return [v for v in rp.values() if isinstance(v, Mapping)]
    return [rp]


def max_len(config: Mapping[str, Any], version: str | None = None) -> MaxLen | None:
    """vLLM's derived maximum length for ``config`` (None when no length key is there: vLLM then accepts any)."""
    text = _text(config)
    found = [(k, text[k]) for k in _LENGTH_KEYS  # finite: JSON's 1e400 is inf, whose int() overflowed
             if isinstance(text.get(k), (int, float)) and not isinstance(text.get(k), bool) and 0 < text[k] < math.inf]
    if not found:
        return None
    key, base = min(found, key=lambda kv: kv[1])
    derived: float = base
    factor = 1.0
    params = _rope_parameters(text)
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    if params and "gemma3" not in model_type:
        new = not version or (release_numbers(version) or ()) >= (0, 30)  # an rc of 0.30 has its code
        for rp in params:
            rope_type = str(rp.get("rope_type") or rp.get("type") or "default")
            if rope_type in (_PRESCALED_NEW if new else _PRESCALED_OLD):
                continue
            value = rp.get("factor", factor)
            factor = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0
            original = rp.get("original_max_position_embeddings")
            if not new and rope_type == "yarn" and isinstance(original, (int, float)):
                derived = original
        derived *= factor
    mml = text.get("model_max_length")
    return MaxLen(derived=int(derived) if math.isfinite(derived) else int(base), key=key, base=int(base),
                  factor=factor, model_max_length=int(mml) if isinstance(mml, (int, float)) else None,
                  roped=bool(params) and "gemma3" not in model_type)


def allows_long(env: Mapping[str, str] | None) -> bool:
    """Whether the environment sets VLLM_ALLOW_LONG_MAX_MODEL_LEN (vllm.envs reads "1"/"true")."""
    return str((env or {}).get(ALLOW_LONG, "")).strip().lower() in ("1", "true")


def length_refusal(requested: int, limit: MaxLen | None, env: Mapping[str, str] | None = None) -> str | None:
    """vLLM's evidence text when it refuses ``--max-model-len requested`` (None when it starts)."""
    if limit is None or requested <= limit.limit or requested == -1 or allows_long(env):
        return None
    return LENGTH_RULE.format(n=requested, key=limit.key, derived=float(limit.derived) if limit.roped
                              else limit.derived, mml=limit.model_max_length)


def heads_refusal(heads: int | None, tp: int) -> str | None:
    if not heads or tp < 1 or heads % tp == 0:
        return None
    return HEADS_RULE.format(heads=heads, tp=tp)


def kv_heads_refusal(kv_heads: int | None, tp: int, mla: bool = False) -> str | None:
    """Where ``QKVParallelLinear`` fails to split the KV heads over TP (neither divides the other); an MLA
    model has one latent KV head, replicated on every rank."""
    if mla or not kv_heads or tp <= 1:
        return None
    if (kv_heads >= tp and kv_heads % tp) or (kv_heads < tp and tp % kv_heads):
        return KV_HEADS_RULE
    return None


def tp_refusal(heads: int | None, kv_heads: int | None, tp: int, mla: bool = False) -> str | None:
    """vLLM's refusal of a tensor-parallel size for the model's (KV) heads: the one test advice filters TPs with."""
    return heads_refusal(heads, tp) or kv_heads_refusal(kv_heads, tp, mla)


_DTYPE_NAMES = {"half": "float16", "float16": "float16", "fp16": "float16", "bfloat16": "bfloat16",
                "bf16": "bfloat16", "float": "float32", "float32": "float32", "fp32": "float32"}


def quant_dtype_refusal(method: str | None, dtype: str | None) -> str | None:
    """vLLM's refusal of an explicit ``--dtype`` the quantization method's kernels do not take."""
    table = captured()
    entry = (table.get("methods") or {}).get((method or "").lower())
    want = _DTYPE_NAMES.get((dtype or "auto").lower())
    if not entry or want is None or not entry.get("act_dtypes") or want in entry["act_dtypes"]:
        return None
    return DTYPE_RULE.format(source=f"vllm {table.get('version')}", where=table.get("dtype_rule"),
                             dtype=f"torch.{want}", method=method,
                             supported=", ".join(entry["act_dtypes"])) + f"; {entry['source']}"


def quant_capability_refusal(method: str | None, capability: str | None) -> str | None:
    """vLLM's refusal of a quantization method on a GPU below its minimum compute capability ("8.0" -> 80)."""
    table = captured()
    entry = (table.get("methods") or {}).get((method or "").lower())
    cc = compute_capability(capability)
    if not entry or cc is None:
        return None
    have = cc[0] * 10 + cc[1]
    need = int(entry.get("min_capability") or 0)
    if have >= need:
        return None
    return CAPABILITY_RULE.format(source=f"vllm {table.get('version')}", where=table.get("capability_rule"),
                                  method=method, need=need, have=have) + f"; {entry['source']}"
