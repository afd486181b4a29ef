"""Last-resort architecture from a model name when no config.json is at hand.

"Qwen3-Coder-480B-A35B" says 480B total / 35B active parameters; a standard
width/depth ratio (about 80 hidden units per layer, 128-wide heads, 8 KV
heads) turns that into layers and widths.  Every field so invented is listed
in ``Arch.assumptions`` so the plan says how little it rests on.
"""

from __future__ import annotations

import re
from typing import Any

from launchcard.memory._arch import Arch, arch_from_config

# Any in this module: config.json-shaped dicts (JSON values of every type).


def params_from_name(name: str) -> tuple[float | None, float | None]:
    """(total, active) parameters in units, from "27B", "480B-A35B", "1.5T"."""
    total = active = None
    for m in re.finditer(r"(?<![A-Za-z])(A)?(\d+(?:\.\d+)?)([BbTtMm])\b", name):
        val = float(m.group(2)) * {"b": 1e9, "t": 1e12, "m": 1e6}[m.group(3).lower()]
        if m.group(1):
            active = val
        elif total is None:
            total = val
    return total, active


def _parse_params(text: object) -> float | None:
    if text is None:
        return None
    t, _ = params_from_name(str(text))
    return t


def guess_config(model_id: str, families: tuple[str, ...] = (),
                 partial: dict[str, Any] | None = None) -> dict[str, Any]:
    """A config.json-shaped dict, filled from the name where ``partial`` is silent."""
    p = {k: v for k, v in (partial or {}).items() if v is not None}
    total, active = params_from_name(model_id)
    total = _parse_params(p.get("total_params")) or total or 8e9
    active = _parse_params(p.get("active_params")) or active or total
    fam = " ".join(families).lower() + " " + str(p.get("layer_types_summary", "")).lower()
    moe = active < total * 0.6 or "moe" in fam
    dense_part = active if moe else total
    h = round((dense_part * 80 / 14) ** (1 / 3) / 256) * 256 or 1024
    layers = p.get("num_hidden_layers") or max(2, round(dense_part / (14 * h * h) / 2) * 2)
    cfg: dict[str, Any] = {
        "model_type": p.get("model_type") or "guessed",
        "num_hidden_layers": layers,
        "hidden_size": p.get("hidden_size") or h,
        "num_attention_heads": p.get("num_attention_heads") or max(1, h // 128),
        "num_key_value_heads": p.get("num_key_value_heads") or (4 if "linear" in fam else 8),
        "head_dim": p.get("head_dim") or (256 if "linear" in fam else 128),
        "intermediate_size": p.get("intermediate_size") or int(h * 3.4),
        "max_position_embeddings": p.get("max_position_embeddings") or 131072,
        "tie_word_embeddings": bool(p.get("tie_word_embeddings", False)),
    }
    for k in ("vocab_size", "sliding_window", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank",
              "layer_types_summary", "quantization_config_summary"):
        if k in p:
            cfg[k] = p[k]
    if "linear" in fam and "layer_types_summary" not in cfg:
        cfg["full_attention_interval"] = 4
        cfg.update(linear_num_key_heads=16, linear_num_value_heads=48, linear_key_head_dim=128,
                   linear_value_head_dim=128, mamba_ssm_dtype="float32")
    if "mla" in fam and "kv_lora_rank" not in cfg:
        cfg.update(kv_lora_rank=512, qk_rope_head_dim=p.get("qk_rope_head_dim", 64) or 0)
    if moe:
        n_exp = p.get("n_routed_experts") or 128
        topk = p.get("num_experts_per_tok") or 8
        per_layer_experts = max(0.0, (total - dense_part) / layers)
        moe_inter = p.get("moe_intermediate_size") or max(64, int(per_layer_experts / (3 * cfg["hidden_size"] * n_exp)))
        cfg.update(n_routed_experts=n_exp, num_experts_per_tok=topk, moe_intermediate_size=moe_inter)
    return cfg


def guess_arch(model_id: str, families: tuple[str, ...] = (), partial: dict[str, Any] | None = None) -> Arch:
    arch = arch_from_config(guess_config(model_id, families, partial), where=f"name {model_id!r}")
    from dataclasses import replace

    return replace(arch, assumptions=arch.assumptions + (
        f"no usable config.json: dimensions guessed from the name {model_id!r}",))
