"""What the builder offers and picks by default (spec §3 and §5)."""

from __future__ import annotations

from typing import Any

from launchcard.resolve._context import Ctx, as_dict, as_list
from launchcard.resolve._topology import fits_single_node, min_gpus_floor, nodes_needed
from launchcard.sources.vllm_recipes import RecipeRepo

_GENERATIONS_BY_PRECISION = {"nvfp4": ("NVIDIA", "blackwell"), "fp4": ("NVIDIA", "blackwell")}


def precision_constraint(variant: dict[str, Any]) -> tuple[str | None, str | None]:
    ph = variant.get("precision_hardware")
    if isinstance(ph, dict):
        return ph.get("brand"), ph.get("generation")
    return _GENERATIONS_BY_PRECISION.get(str(variant.get("precision") or "").lower(), (None, None))


def hardware_reasons(repo: RecipeRepo, data: dict[str, Any], variant_key: str, hw: str) -> list[str]:
    """Why ``hw`` is not usable for the variant (empty when it is), rules 1–4 of §3.1."""
    variant = as_dict(as_dict(data.get("variants")).get(variant_key))
    prof = as_dict(repo.profiles.get(hw))
    reasons = []
    brand, gen = precision_constraint(variant)
    gens = prof.get("generation")
    gens = gens if isinstance(gens, list) else [gens]
    if brand and prof.get("brand") != brand:
        reasons.append(f"precision {variant.get('precision')} needs {brand} hardware")
    if gen and gen not in gens:
        reasons.append(f"precision {variant.get('precision')} needs {gen} hardware")
    meta_hw = as_dict(as_dict(data.get("meta")).get("hardware"))
    if meta_hw.get(hw) == "unsupported":
        reasons.append("the recipe marks it unsupported (meta.hardware)")
    allow = variant.get("supported_hardware")
    if isinstance(allow, list) and allow and hw not in allow:
        reasons.append(f"variant {variant_key!r} lists only {', '.join(map(str, allow))}")
    if prof.get("restricted") is True and hw not in meta_hw:
        reasons.append("restricted profile the recipe does not declare in meta.hardware")
    return reasons


def usable_hardware(repo: RecipeRepo, data: dict[str, Any], variant_key: str) -> list[str]:
    return [hw for hw in repo.profiles if not hardware_reasons(repo, data, variant_key, hw)]


def default_hardware(repo: RecipeRepo, data: dict[str, Any], variant_key: str) -> str:
    cands = usable_hardware(repo, data, variant_key)
    meta_default = as_dict(data.get("meta")).get("default_hardware")
    if meta_default in cands:
        return meta_default
    _, gen = precision_constraint(as_dict(as_dict(data.get("variants")).get(variant_key)))
    if gen == "blackwell":
        for hw in ("b200", "gb200"):
            if hw in cands:
                return hw
    if "h200" in cands:
        return "h200"
    order = {"NVIDIA": 0, "AMD": 1}
    cands.sort(key=lambda hw: (order.get(as_dict(repo.profiles.get(hw)).get("brand"), 2), hw))
    return cands[0] if cands else "h200"


def effective_compatible(repo: RecipeRepo, data: dict[str, Any]) -> list[str]:
    listed = [s for s in as_list(data.get("compatible_strategies")) if isinstance(s, str)]
    out = [s for s in listed if not s.startswith("kv_store")]
    for sid, per_hw in as_dict(data.get("strategy_hardware")).items():
        if sid in out or sid.startswith("kv_store"):
            continue
        if isinstance(per_hw, dict) and "supported" in per_hw.values():
            out.append(sid)
    return out


def strategy_reasons(ctx: Ctx, sid: str) -> list[str]:
    """Why strategy ``sid`` is not usable on the context's hardware (§3.2)."""
    data = ctx.data
    reasons = []
    gate = as_dict(data.get("strategy_hardware")).get(sid)
    key = ctx.hw_key(gate) if isinstance(gate, dict) else None
    listed = sid in as_list(data.get("compatible_strategies"))
    if key is not None:
        if gate[key] == "unsupported":
            reasons.append(f"strategy_hardware.{sid}.{key} is unsupported")
    elif not listed:
        reasons.append("not in compatible_strategies")
    spec = as_dict(ctx.repo.strategies.get(sid))
    deploy = spec.get("deploy_type")
    floor = min_gpus_floor(data, sid, ctx.hw)
    max_nodes = 16 if deploy in ("multi_node", "pd_cluster") else 1
    if max_nodes * (ctx.prof.gpu_count or 8) < floor:
        reasons.append(f"needs {floor} GPUs")
    if not ctx.prof.scalable and (sid.startswith("multi_node") or sid == "pd_cluster"):
        reasons.append("hardware cannot be clustered (scalable: false)")
    return reasons


def recommend_strategy(ctx: Ctx, node_count: int) -> str:
    offered = effective_compatible(ctx.repo, ctx.data)
    default = ctx.data.get("default_strategy")
    pick = None
    if default in offered:
        if node_count > 1 and str(default).startswith("single_node_"):
            sibling = "multi_node_" + str(default)[len("single_node_"):]
            pick = sibling if sibling in offered else None
        else:
            pick = default
    if pick is None and node_count > 1:
        pick = next((s for s in ("multi_node_tp", "multi_node_dep", "multi_node_tep") if s in offered), None)
    if pick is None:
        pick = "single_node_tp" if "single_node_tp" in offered else (offered[0] if offered else "single_node_tp")
    if strategy_reasons(_with(ctx, pick), pick):
        usable = [s for s in offered if not strategy_reasons(_with(ctx, s), s)]
        usable.sort(key=lambda s: s == "pd_cluster")
        if usable:
            pick = usable[0]
    return pick


def _with(ctx: Ctx, sid: str) -> Ctx:
    return Ctx(ctx.repo, ctx.doc, ctx.variant_key, ctx.prof, sid, ctx.node_count, ctx.warnings)


def default_features(data: dict[str, Any], variant_key: str, hw: str) -> list[str]:
    features = list(as_dict(data.get("features")))
    off = set(as_list(data.get("opt_in_features"))) | set(as_list(as_dict(data.get("hardware_opt_in_features"))
                                                                  .get(hw)))
    forced = set(as_dict(as_dict(as_dict(data.get("variants")).get(variant_key)).get("default_modes")))
    return [f for f in features if f not in off or f in forced]


def default_node_count(ctx: Ctx) -> int:
    deploy = ctx.deploy_type
    floor = min_gpus_floor(ctx.data, ctx.strategy_name or "", ctx.hw)
    need = nodes_needed(floor, ctx.prof.gpu_count)
    if deploy == "multi_node":
        return max(2, need)
    if deploy == "pd_cluster":
        return 1
    return 1


def offers_multi_node(ctx: Ctx) -> bool:
    return ctx.prof.scalable and any(s.startswith("multi_node") for s in effective_compatible(ctx.repo, ctx.data)) \
        and not fits_single_node(ctx)
