"""What the builder offers and picks by default (spec §3 and §5)."""

from __future__ import annotations

from launchcard.resolve._context import Ctx, context
from launchcard.resolve._topology import fits_single_node, min_gpus_floor, nodes_needed
from launchcard.sources import Recipe, Variant
from launchcard.sources.vllm_recipes import RecipeRepo

_GENERATIONS_BY_PRECISION = {"nvfp4": ("NVIDIA", "blackwell"), "fp4": ("NVIDIA", "blackwell")}


def precision_constraint(variant: Variant) -> tuple[str | None, str | None]:
    if variant.precision_hardware is not None:
        return variant.precision_hardware
    return _GENERATIONS_BY_PRECISION.get((variant.precision or "").lower(), (None, None))


def hardware_reasons(repo: RecipeRepo, recipe: Recipe, variant_key: str, hw: str) -> list[str]:
    """Why ``hw`` is not usable for the variant (empty when it is), rules 1–4 of §3.1."""
    variant = recipe.variant(variant_key)
    prof = repo.hardware.profiles.get(hw)
    reasons = []
    brand, gen = precision_constraint(variant)
    gens = prof.generations if prof is not None else ()
    if brand and (prof.brand if prof is not None else None) != brand:
        reasons.append(f"precision {variant.precision} needs {brand} hardware")
    if gen and gen not in gens:
        reasons.append(f"precision {variant.precision} needs {gen} hardware")
    meta_hw = recipe.meta.hardware
    if meta_hw.get(hw) == "unsupported":
        reasons.append("the recipe marks it unsupported (meta.hardware)")
    allow = variant.supported_hardware
    if allow and hw not in allow:
        reasons.append(f"variant {variant_key!r} lists only {', '.join(allow)}")
    if prof is not None and prof.restricted and hw not in meta_hw:
        reasons.append("restricted profile the recipe does not declare in meta.hardware")
    return reasons


def usable_hardware(repo: RecipeRepo, recipe: Recipe, variant_key: str) -> list[str]:
    """The hardware profiles the variant resolves on (no reason of ``hardware_reasons`` against them)."""
    return [hw for hw in repo.hardware.profiles if not hardware_reasons(repo, recipe, variant_key, hw)]


def default_hardware(repo: RecipeRepo, recipe: Recipe, variant_key: str) -> str:
    cands = usable_hardware(repo, recipe, variant_key)
    meta_default = recipe.meta.default_hardware
    if meta_default is not None and meta_default in cands:
        return meta_default
    _, gen = precision_constraint(recipe.variant(variant_key))
    if gen == "blackwell":
        for hw in ("b200", "gb200"):
            if hw in cands:
                return hw
    if "h200" in cands:
        return "h200"
    order = {"NVIDIA": 0, "AMD": 1}
    profiles = repo.hardware.profiles
    cands.sort(key=lambda hw: (order.get(profiles[hw].brand or "", 2), hw))
    return cands[0] if cands else "h200"


def effective_compatible(repo: RecipeRepo, recipe: Recipe) -> list[str]:
    """compatible_strategies (KV stores aside) plus strategies strategy_hardware marks supported."""
    out = [s for s in recipe.compatible_strategies if not s.startswith("kv_store")]
    for sid, per_hw in recipe.strategy_hardware.items():
        if sid in out or sid.startswith("kv_store"):
            continue
        if "supported" in per_hw.values():
            out.append(sid)
    return out


def strategy_reasons(ctx: Ctx, sid: str) -> list[str]:
    """Why strategy ``sid`` is not usable on the context's hardware (§3.2)."""
    recipe = ctx.recipe
    reasons = []
    gate = recipe.strategy_hardware.get(sid)
    key = ctx.hw_key(gate) if gate is not None else None
    listed = sid in recipe.compatible_strategies
    if key is not None and gate is not None:
        if gate[key] == "unsupported":
            reasons.append(f"strategy_hardware.{sid}.{key} is unsupported")
    elif not listed:
        reasons.append("not in compatible_strategies")
    spec = ctx.repo.strategies.get(sid)
    deploy = spec.deploy_type if spec is not None else None
    floor = min_gpus_floor(recipe, sid, ctx.hw)
    max_nodes = 16 if deploy in ("multi_node", "pd_cluster") else 1
    if max_nodes * (ctx.prof.gpu_count or 8) < floor:
        reasons.append(f"needs {floor} GPUs")
    if not ctx.prof.scalable and (sid.startswith("multi_node") or sid == "pd_cluster"):
        reasons.append("hardware cannot be clustered (scalable: false)")
    return reasons


def recommend_strategy(ctx: Ctx, node_count: int) -> str:
    offered = effective_compatible(ctx.repo, ctx.recipe)
    default = ctx.recipe.default_strategy
    pick = None
    if default is not None and default in offered:
        if node_count > 1 and default.startswith("single_node_"):
            sibling = "multi_node_" + default[len("single_node_"):]
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
    return context(ctx.repo, ctx.doc, ctx.variant_key, ctx.hw, sid, ctx.node_count)


def default_features(recipe: Recipe, variant_key: str, hw: str) -> list[str]:
    """The features on by default: all but the opt-in ones (unless the variant picks a mode of one)."""
    off = set(recipe.opt_in_features) | set(recipe.hardware_opt_in_features.get(hw, ()))
    forced = recipe.variant(variant_key).default_modes
    return [f for f in recipe.features if f not in off or f in forced]


def default_node_count(ctx: Ctx) -> int:
    deploy = ctx.deploy_type
    floor = min_gpus_floor(ctx.recipe, ctx.strategy_name or "", ctx.hw)
    need = nodes_needed(floor, ctx.prof.gpu_count)
    if deploy == "multi_node":
        return max(2, need)
    return 1


def offers_multi_node(ctx: Ctx) -> bool:
    return ctx.prof.scalable and any(s.startswith("multi_node") for s in effective_compatible(ctx.repo, ctx.recipe)) \
        and not fits_single_node(ctx)
