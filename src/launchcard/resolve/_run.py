"""Entry points: fill in defaults, check the choice, build, attach provenance."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from launchcard.errors import ResolveError
from launchcard.resolve._builder import Built, Outcome, build
from launchcard.resolve._choice import Choice, suggest
from launchcard.resolve._context import Ctx, Given, Src, context, generations
from launchcard.resolve._defaults import (
    default_features,
    default_hardware,
    default_node_count,
    effective_compatible,
    hardware_reasons,
    offers_multi_node,
    recommend_strategy,
    strategy_reasons,
)
from launchcard.resolve._features import check_features, selected_features
from launchcard.resolve._omni import build_omni, omni_tasks
from launchcard.resolve._plan import (
    ArgUnit,
    Assumption,
    Command,
    DeployType,
    EnvEntry,
    Input,
    Origin,
    ResolvedPlan,
    Role,
    Router,
    env_value_str,
)
from launchcard.resolve._serve import Selection
from launchcard.sources import Recipe
from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

# the UI presets of the advanced args (resolution spec §9), by name
ADVANCED_PRESETS: dict[str, list[str]] = {
    "max_batched_8k": ["--max-num-batched-tokens", "8192"],
    "max_num_seqs_256": ["--max-num-seqs", "256"],
    "gpu_mem_095": ["--gpu-memory-utilization", "0.95"],
    "max_model_len_auto": ["--max-model-len", "auto"],
    "dcp_8": ["--decode-context-parallel-size", "8"],
    "no_flashinfer_autotune": ["--no-enable-flashinfer-autotune"],
    "ep_weight_filter": ["--enable-ep-weight-filter"],
}

if TYPE_CHECKING:
    from launchcard.card import Evidence


def _advanced_args(advanced: Any, explicit: Any) -> list[Any]:
    if isinstance(explicit, list | tuple):
        return list(explicit)
    if not advanced or not isinstance(advanced, list | tuple):
        return []
    out: list[Any] = []
    for key in advanced:
        out += ADVANCED_PRESETS.get(key, [])
    return out


def is_omni(recipe: Recipe) -> bool:
    return recipe.is_omni


def _kv_selection(ctx: Ctx, kv: str | None) -> tuple[str | None, str | None]:
    """(taxonomy option, mooncake id) actually in effect; unusable choices are off."""
    if not kv:
        return None, None
    brand = ctx.prof.brand
    opt = ctx.repo.hardware.kv_offload.get(kv)
    if opt is not None:
        if ctx.deploy_type in ("pd_cluster", "kv_store_lb"):
            return None, None
        if opt.strategies and ctx.strategy_name not in opt.strategies:
            return None, None
        gate = ctx.recipe.kv_offload_support.get(kv)
        if gate == "unsupported" or (opt.requires_opt_in and gate != "verified"):
            return None, None
        if opt.brands and brand not in opt.brands:
            return None, None
        return kv, None
    spec = ctx.repo.strategies.get(kv)
    if spec is not None and spec.deploy_type == "kv_store_lb":
        gate = ctx.recipe.kv_cache_strategy_hardware.get(kv, {}).get(ctx.hw)
        if ctx.prof.scalable and brand in ("NVIDIA", "AMD") and gate != "unsupported":
            return None, kv
    return None, None


def _context(repo: RecipeRepo, doc: RecipeDoc, variant: str | None, hw: str, strategy: str | None,
             node_count: int, nodes_given: Given | None = None) -> Ctx:
    vkey = variant if variant is not None and variant in doc.recipe.variants else "default"
    return context(repo, doc, vkey, hw, strategy, node_count, nodes_given)


def _doc_memo(repo: RecipeRepo, doc: RecipeDoc) -> dict[Any, Any]:
    """Per-recipe values that do not depend on the choice (cached on the repository)."""
    memo: dict[Any, Any] | None = repo.cache.get(("doc", doc.path))
    if memo is None:
        memo = repo.cache[("doc", doc.path)] = {"compatible": effective_compatible(repo, doc.recipe)}
    return memo


def resolve_case(repo: RecipeRepo, case: dict[str, Any]) -> dict[str, Any]:
    """Reference inputs (as in the golden file) → the reference result object."""
    inputs = case.get("inputs")
    if not isinstance(inputs, dict):
        inputs = {}
    doc = repo.recipe(case["model"])
    recipe = doc.recipe
    hw = inputs.get("hardware") or "h200"
    if case.get("kind") == "omni" or recipe.is_omni:
        ctx = _context(repo, doc, inputs.get("variant"), hw, None, 1)
        return build_omni(ctx, inputs.get("omni_task"))[0]
    ctx = _context(repo, doc, inputs.get("variant"), hw, inputs.get("strategy"),
                   int(inputs.get("node_count") or 1))
    ctx.credit = False  # the reference result object has no provenance: skip building it
    features = list(inputs.get("features") or [])
    advanced = _advanced_args(inputs.get("advanced"), inputs.get("advanced_args"))
    kv_option, mooncake = _kv_selection(ctx, inputs.get("kv_offload"))
    sel = Selection(features, dict(inputs.get("feature_modes") or {}), advanced, kv_option, mooncake)
    memo = _doc_memo(repo, doc)
    fkey = ("features", ctx.variant_key, hw)
    defaults = memo.get(fkey)
    if defaults is None:
        defaults = memo[fkey] = default_features(recipe, ctx.variant_key, hw)
    render = features == defaults and not inputs.get("kv_offload") and not advanced
    outcome = build(ctx, sel, pd_nodes=inputs.get("pd_nodes"), kv_instances=inputs.get("kv_instances"),
                    compatible=memo["compatible"], render=render)
    return outcome.result


# -- the user-facing resolution --------------------------------------------------------------

def resolve(repo: RecipeRepo, choice: Choice, *, provenance: bool = True) -> ResolvedPlan:
    """Resolve ``choice``; what it leaves open is what the recipes builder picks."""
    doc = repo.recipe(choice.model)
    # the recipe's own id from here on (a model id matches case-insensitively)
    choice = dataclasses.replace(choice, model=doc.path.removeprefix("models/").removesuffix(".yaml"))
    recipe = doc.recipe
    check_features(choice, list(recipe.features), doc.path)  # bad feature input first, omni recipes included
    variants = recipe.variants
    variant = choice.variant or ("default" if "default" in variants or not variants else next(iter(variants)))
    if variants and variant not in variants:
        raise ResolveError(f"recipe {choice.model} has no variant {variant!r}", where="--variant",
                           fix=suggest(variant, list(variants)))
    hw = choice.hardware or default_hardware(repo, recipe, variant)
    hw_note: str | None = None
    if hw not in repo.hardware.profiles:
        from launchcard.resolve._hardware import profile_for

        hw, hw_note = profile_for(repo, recipe, choice.model, variant, hw)
    warnings: list[str] = []
    reasons = hardware_reasons(repo, recipe, variant, hw)
    if reasons:
        from launchcard.resolve._hardware import not_usable_fix

        raise ResolveError(f"hardware {hw!r} is not usable for {choice.model} variant {variant!r}: "
                           + "; ".join(reasons), where="--hardware", fix=not_usable_fix(repo, recipe, variant, hw))
    warnings.extend(_unknown_hardware_keys(repo, recipe, variant))
    if recipe.is_omni:
        plan = _resolve_omni(repo, doc, choice, variant, hw, warnings)
    else:
        plan = _resolve_serve(repo, doc, choice, variant, hw, warnings, provenance)
    if hw_note:
        from dataclasses import replace

        line = repo.taxonomy.line("hardware_profiles", hw)
        plan = replace(plan, assumed=(Assumption(
            code="assumed", message=hw_note, fix=f"pass --hardware {hw} to name the profile itself",
            evidence=f"taxonomy.yaml#L{line} (hardware_profiles.{hw}); hardware catalog" if line else
            "hardware catalog"), *plan.assumed))
    return plan


def _replaced_modes(ctx: Ctx, choice: Choice, sel: Selection) -> tuple[Assumption, ...]:
    """A ``--mode F=M`` the recipe cannot honour on this hardware/variant, and what was used instead."""
    out = []
    for name, pick in choice.feature_modes.items():
        used = sel.mode_used.get(name)
        if used == pick:
            continue
        mode = (ctx.recipe.features[name].modes or {}).get(pick)
        marks = dict(mode.hardware) if mode is not None else {}
        why_key = next((k for k in (ctx.hw, ctx.gen) if k is not None and marks.get(k) == "unsupported"), None)
        if why_key is not None:
            why = f"the recipe marks {name}={pick} unsupported on {why_key}"
            line = ctx.doc.line("features", name, "modes", pick, "hardware", why_key)
        elif mode is not None and mode.variants and ctx.variant_key not in mode.variants:
            why = f"the recipe offers {name}={pick} only for variants {', '.join(mode.variants)}"
            line = ctx.doc.line("features", name, "modes", pick, "variants")
        else:
            why = f"{name}={pick} does not apply to this strategy or hardware"
            line = ctx.doc.line("features", name, "modes", pick)
        instead = f"{used} was used instead" if used else f"{name} was left out"
        out.append(Assumption(
            code="selection-replaced", message=f"--mode {name}={pick} was not honoured: {why}; {instead}",
            evidence=f"{ctx.doc.path}#L{line}" if line else ctx.doc.path,
            fix=f"pick a mode the recipe supports here ({used or 'none'}), or hardware that supports {pick}"))
    asked = list(choice.features or ()) + list(choice.extra_features) + list(choice.feature_modes)
    for name in dict.fromkeys(asked):
        feat = ctx.recipe.features.get(name)
        if feat is not None and feat.strategies and ctx.strategy_name not in feat.strategies:
            line = ctx.doc.line("features", name, "strategies")
            out.append(Assumption(
                code="selection-replaced",
                message=f"feature {name} was left out: the recipe offers it only with strategies "
                        f"{', '.join(feat.strategies)}, and this plan uses {ctx.strategy_name}",
                evidence=f"{ctx.doc.path}#L{line}" if line else ctx.doc.path,
                fix=f"use --strategy {feat.strategies[0]} to keep {name}, or drop --feature {name}"))
    return tuple(out)


def _unsupported_features(ctx: Ctx, sel: Selection) -> tuple[Assumption, ...]:
    """A selected feature whose own ``hardware:`` map marks this hardware (or its generation) unsupported.

    The resolution spec gives ``hardware`` marks to modes only, so the builder renders the feature's args
    anyway (the command stays the reference's); the recipe's mark is evidence a user acts on, so it is a
    warning quoting that line, never dropped silently (Muse-Glimmer-30B: DFlash on one RTX 5090 OOMs)."""
    out = []
    for name in sel.features:
        feat = ctx.recipe.features.get(name)
        marks = dict(feat.hardware) if feat is not None else {}
        key = next((k for k in (ctx.hw, ctx.gen) if k is not None and marks.get(k) == "unsupported"), None)
        if key is None:
            continue
        line = ctx.doc.line("features", name, "hardware", key)
        out.append(Assumption(
            code="selection-replaced",
            message=f"feature {name} is on, but the recipe marks it unsupported on {key}; its args are rendered "
                    "as the builder does",
            evidence=f"{ctx.doc.path}#L{line}" if line else ctx.doc.path,
            fix=f"drop --feature {name} (--no-feature {name} if it is a default), or use hardware the recipe "
                "does not mark"))
    return tuple(out)


def _unknown_hardware_keys(repo: RecipeRepo, recipe: Recipe, variant: str) -> list[str]:
    """Hardware ids the recipe names that the taxonomy does not define (inert keys)."""
    profiles = repo.hardware.profiles
    gens = {g for hw in profiles for g in generations(repo, hw)}
    known = set(profiles) | gens | {"nvidia", "default"}
    places: list[tuple[str, Iterable[str]]] = [("meta.hardware", recipe.meta.hardware)]
    places.append((f"variants.{variant}.hardware_overrides", recipe.variant(variant).hardware_overrides))
    for skey, so in recipe.strategy_overrides.items():
        places.append((f"strategy_overrides.{skey}.hardware_overrides", so.hardware_overrides))
    out = []
    for where, mapping in places:
        for key in mapping:
            if key not in known:
                out.append(f"{where} names {key!r}, which the taxonomy does not define: its settings never apply")
    return out


def _resolve_serve(repo: RecipeRepo, doc: RecipeDoc, choice: Choice, variant: str, hw: str,
                   warnings: list[str], provenance: bool) -> ResolvedPlan:
    probe = _context(repo, doc, variant, hw, None, choice.node_count or 1)
    offered = effective_compatible(repo, doc.recipe)
    if choice.strategy is not None:
        strategy = choice.strategy
        if strategy not in repo.strategies or strategy.startswith("kv_store"):
            raise ResolveError(f"unknown strategy {strategy!r}", where="--strategy",
                               fix=suggest(strategy, offered or sorted(repo.strategies)))
        probe = _context(repo, doc, variant, hw, strategy, choice.node_count or 1)
        why = strategy_reasons(probe, strategy)
        if why:
            raise ResolveError(f"strategy {strategy!r} is not usable for {choice.model} on {hw}: "
                               + "; ".join(why), where="--strategy",
                               fix="usable: " + ", ".join(s for s in offered if not strategy_reasons(
                                   _context(repo, doc, variant, hw, s, 1), s)))
    else:
        nodes_hint = choice.node_count or (2 if offers_multi_node(probe) else 1)
        strategy = recommend_strategy(probe, nodes_hint)
    ctx = _context(repo, doc, variant, hw, strategy, 1)
    node_count = choice.node_count or default_node_count(ctx)
    nodes_given = Given("--nodes", node_count) if choice.node_count else Given(
        f"node count (the builder's default for {strategy}: at least 2 nodes for a multi-node strategy, "
        "more where strategy_min_gpus needs them)", node_count)
    if ctx.deploy_type not in ("multi_node",) and choice.node_count and choice.node_count > 1:
        warnings.append(f"strategy {strategy} is single-node: --nodes {choice.node_count} is ignored")
    if node_count < 1:
        raise ResolveError(f"--nodes must be at least 1, got {node_count}", where="--nodes",
                           fix="pass --nodes 1 or more")
    ctx = _context(repo, doc, variant, hw, strategy, node_count, nodes_given)
    ctx.warnings.extend(warnings)
    features = _features(ctx, choice)
    sel = Selection(features, dict(choice.feature_modes), _advanced_args(choice.advanced, choice.advanced_args))
    sel.kv_option, sel.mooncake = _kv_selection(ctx, choice.kv_offload)
    if choice.kv_offload and not (sel.kv_option or sel.mooncake):
        kv_options = repo.hardware.kv_offload
        if choice.kv_offload not in kv_options and choice.kv_offload not in repo.strategies:
            raise ResolveError(
                f"unknown KV offload option {choice.kv_offload!r}",
                where="--kv-offload",
                fix=suggest(
                    choice.kv_offload, sorted(kv_options) + [s for s in repo.strategies if s.startswith("kv_store")]
                ),
            )
        ctx.warn(f"KV offload {choice.kv_offload} is not usable here and is off")
    pd_nodes = choice.pd_nodes
    if ctx.deploy_type == "pd_cluster" and pd_nodes is None:
        pd_nodes = _api_pd_nodes(ctx)
    outcome = build(ctx, sel, pd_nodes=pd_nodes, kv_instances=choice.kv_instances, compatible=offered)
    _tp_warning(ctx)
    plan = _plan(ctx, sel, outcome, provenance)
    replaced = _replaced_modes(ctx, choice, sel) + _unsupported_features(ctx, sel)
    if replaced:
        from dataclasses import replace

        plan = replace(plan, assumed=plan.assumed + replaced)
    return plan


def _api_pd_nodes(ctx: Ctx) -> Any:
    """The API's pools: co-located halves when PD fits one node, else n nodes per role."""
    import math

    from launchcard.resolve._topology import min_gpus_floor, nodes_needed, pd_fits_single_node

    if pd_fits_single_node(ctx):
        return None
    need = ctx.variant.vram_minimum_gb or 0
    vram = ctx.prof.vram_gb or 0
    n = max(1, math.ceil(need / vram)) if vram else 1
    n = max(n, nodes_needed(min_gpus_floor(ctx.recipe, "pd_cluster", ctx.hw), ctx.prof.gpu_count))
    return {"prefill": n, "decode": n}


def _features(ctx: Ctx, choice: Choice) -> list[str]:
    known = list(ctx.recipe.features)
    defaults = default_features(ctx.recipe, ctx.variant_key, ctx.hw) if choice.features is None else ()
    names = selected_features(choice, known, ctx.doc.path, defaults)
    for name, mode in choice.feature_modes.items():
        modes = ctx.recipe.features[name].modes or {}
        if mode not in modes:
            raise ResolveError(
                f"feature {name!r} has no mode {mode!r}",
                field="mode",
                fix=suggest(mode, list(modes)) if modes else f"{name} is not a modal feature",
            )
    return names


def _tp_warning(ctx: Ctx) -> None:
    if ctx.strategy_name not in (None, "single_node_tp") and ctx.variant.tp is not None:
        ctx.warn(
            f"variants.{ctx.variant_key}.tp is ignored by strategy {ctx.strategy_name}, "
            f"which uses all {ctx.prof.gpu_count} GPUs"
        )
    if not ctx.prof.known:
        ctx.warn(f"hardware {ctx.hw!r} is not in the taxonomy; it resolves as one GPU with no brand")


def _evidence(doc: RecipeDoc | None, path: tuple[Any, ...]) -> Evidence | None:
    if doc is None:
        return None
    return doc.evidence(*path) if path else doc.evidence()


def _origin(src: Src, value: Src | None = None) -> Origin:
    """The credit of a token (``src``) or of a flag (``src``) and its value (``value``): the value's line
    first, the flag's line where it differs; a computed value's rule and inputs."""
    held = value if value is not None else src
    flag_ev = _evidence(src.doc, src.path) if value is not None else None
    if held.derived is not None:
        inputs = tuple(Input(name=g.name, value=env_value_str(g.value), evidence=_evidence(g.doc, g.path))
                       for g in held.derived.inputs)
        return Origin(layer=held.layer, key=held.key, flag_evidence=flag_ev, derived=held.derived.rule,
                      inputs=inputs)
    evidence = _evidence(held.doc, held.path)
    if flag_ev is not None and evidence is not None and (flag_ev.path, flag_ev.line) == (evidence.path,
                                                                                        evidence.line):
        flag_ev = None  # one line names the flag and holds the value
    return Origin(layer=held.layer, key=held.key, evidence=evidence, flag_evidence=flag_ev)


def _command(built: Built, provenance: bool) -> Command:
    units = (
        tuple(
            ArgUnit(
                flag=None if u.flag is None else str(u.flag),
                value=None if u.value is None else str(u.value),
                origin=_origin(u.src, u.value_src),
                overrides=tuple(_origin(s) for s in u.overrides),
            )
            for u in built.units
        )
        if provenance
        else ()
    )
    entries = (
        tuple(
            EnvEntry(name=k, value=s.value, origin=_origin(s.src), overrides=tuple(_origin(o) for o in s.overrides))
            for k, s in built.env.slots.items()
        )
        if provenance
        else ()
    )
    return Command(
        role=cast(Role, built.role),
        node_rank=built.rank,
        argv=tuple(str(t) for t in built.argv),
        env=built.env.values(),
        units=units,
        env_entries=entries,
        port=built.port,
    )


def _plan(ctx: Ctx, sel: Selection, outcome: Outcome, provenance: bool) -> ResolvedPlan:
    router = None
    if outcome.router:
        router = Router(
            command=outcome.router["command"], install=outcome.router.get("install"), port=outcome.router.get("port")
        )
    return ResolvedPlan(
        model=ctx.doc.path.removeprefix("models/").removesuffix(".yaml"),
        model_id=outcome.model_id,
        variant=ctx.variant_key,
        hardware=ctx.hw,
        strategy=ctx.strategy_name,
        node_count=ctx.node_count,
        deploy_type=cast(DeployType, outcome.deploy_type),
        docker_image=outcome.image,
        brand=ctx.prof.brand,
        generation=ctx.prof.gen,
        gpus_per_node=ctx.prof.gpu_count,
        features=tuple(sel.features),
        feature_modes=dict(sel.mode_used),
        commands=tuple(_command(b, provenance) for b in outcome.built),
        router=router,
        warnings=tuple(ctx.warnings),
        source=ctx.doc.evidence() if provenance else None,
        reference=outcome.result,
    )


def _resolve_omni(
    repo: RecipeRepo, doc: RecipeDoc, choice: Choice, variant: str, hw: str, warnings: list[str]
) -> ResolvedPlan:
    ctx = _context(repo, doc, variant, hw, None, 1)
    ctx.warnings.extend(warnings)
    tasks = omni_tasks(ctx)
    names = [t.key or t.id for t in tasks]
    if choice.omni_task and choice.omni_task not in names and choice.omni_task not in [t.id for t in tasks]:
        raise ResolveError(
            f"recipe {choice.model} has no omni task {choice.omni_task!r}",
            where="--task",
            fix=suggest(choice.omni_task, [str(n) for n in names]),
        )
    result, args, env, model_id = build_omni(ctx, choice.omni_task)
    built = Built("omni", None, args, env, 8000, model_id)
    cmd = _command(built, True)
    return ResolvedPlan(
        model=choice.model,
        model_id=model_id,
        variant=ctx.variant_key,
        hardware=hw,
        strategy=None,
        node_count=1,
        deploy_type="omni",
        docker_image=result["docker_image"],
        brand=ctx.prof.brand,
        generation=ctx.prof.gen,
        gpus_per_node=ctx.prof.gpu_count,
        commands=(cmd,),
        warnings=tuple(ctx.warnings),
        source=doc.evidence(),
        reference=result,
    )
