"""The layers of a ``vllm serve`` command (spec §4.2–§4.4).

Layers 1–5 (base, variant, strategy, parallelism, strategy and hardware
overrides) are the same for every case of a scope and are memoised there;
advanced args, features and the KV layer are added per resolution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from launchcard.resolve._context import Ctx, Src
from launchcard.resolve._layers import Args, Env, Item
from launchcard.resolve._pd import env_src
from launchcard.sources import ArgList, EnvMap, Feature, HwBlock, Mode

NVL4_VARS = ("VLLM_USE_NCCL_SYMM_MEM", "NCCL_CUMEM_ENABLE", "NCCL_MNNVL_ENABLE",
             "NCCL_NVLS_ENABLE", "UCX_NET_DEVICES")
_ADVANCED = Src("advanced", None, None)


@dataclass
class Selection:
    """Resolved user choices that shape the layers."""

    features: list[str]
    feature_modes: dict[str, str]
    advanced_args: list[Any]
    kv_option: str | None = None  # usable taxonomy kv_offload key
    mooncake: str | None = None  # usable kv_store id
    mode_used: dict[str, str] = field(default_factory=dict)


# -- hardware overrides (step 5 / env step 8) ---------------------------------------------

def hw_override_blocks(ctx: Ctx, role: str | None) -> list[tuple[HwBlock, Src]]:
    """The hardware-override blocks that apply, in order, each with the source of its block."""
    return ctx.memo(("hw_blocks", role), lambda: _hw_override_blocks(ctx, role))


def _hw_override_blocks(ctx: Ctx, role: str | None) -> list[tuple[HwBlock, Src]]:
    out: list[tuple[HwBlock, Src]] = []
    so, sop, hw = ctx.so, ctx.so_path, ctx.hw
    so_hw = so.hardware_overrides
    s_key = ctx.gen_key(so_hw)
    if s_key is not None:
        out.append((so_hw[s_key], ctx.src("strategy_hardware_override", s_key, *sop, "hardware_overrides", s_key)))
        _warn_replaced(ctx, s_key)
    else:
        rec_hw = ctx.recipe.hardware_overrides
        r_key = ctx.gen_key(rec_hw)
        if r_key is not None:
            out.append((rec_hw[r_key], ctx.src("hardware_override", r_key, "hardware_overrides", r_key)))
        var_hw = ctx.variant.hardware_overrides
        v_key = ctx.gen_key(var_hw)
        if v_key is not None:
            out.append((var_hw[v_key], ctx.src("variant_hardware", v_key, *ctx.variant_path, "hardware_overrides",
                                               v_key)))
    if hw in so_hw:
        out.append((so_hw[hw], ctx.src("strategy_hardware_override", hw, *sop, "hardware_overrides", hw)))
    if role:
        role_hw = so.role(role).hardware_overrides
        if hw in role_hw:
            out.append((role_hw[hw], ctx.src("strategy_override", f"{role}/{hw}", *sop, role, "hardware_overrides",
                                             hw)))
    return out


def _warn_replaced(ctx: Ctx, s_key: str) -> None:
    r_key = ctx.gen_key(ctx.recipe.hardware_overrides)
    var_key = ctx.gen_key(ctx.variant.hardware_overrides)
    lost = [k for k in (r_key and f"hardware_overrides.{r_key}",
                        var_key and f"variants.{ctx.variant_key}.hardware_overrides.{var_key}") if k]
    if lost:
        ctx.warn(f"strategy_overrides.{ctx.strategy_name}.hardware_overrides.{s_key} replaces "
                 f"{' and '.join(lost)} entirely (args and env), even if it only adds a little: "
                 "the recipe probably does not mean to drop them")


def _part(src: Src, name: str) -> Src:
    return Src(src.layer, src.key, src.doc, src.path + (name,))


# -- arguments ------------------------------------------------------------------------------

def build_args(ctx: Ctx, sel: Selection, role: str | None, parallel: list[tuple[list[Any], Src]],
               tail: list[Item] | None = None) -> Args:
    memo = ctx.scope.memo
    hit = memo.get(("pre", role))  # fast path: no closure when cached without warnings
    pre = hit[0] if hit is not None and not hit[1] else ctx.memo(("pre", role), lambda: _strategy_args(ctx, role))
    hit = memo.get(("post", role))
    post = hit[0] if hit is not None and not hit[1] else ctx.memo(("post", role), lambda: _override_args(ctx, role))
    par = Args()
    for tokens, src in parallel:  # each group keeps its own credit (flag line, value line or derivation)
        par.add_raw(tokens, src)
    args = Args()
    args.items = [*pre, *par.items, *post, *(tail if tail is not None else choice_args(ctx, sel, role))]
    return args


def choice_args(ctx: Ctx, sel: Selection, role: str | None) -> list[Item]:
    """Steps 6–8, the user's choices: advanced args, features, the KV layer (the same for every
    node of a multi-node plan, so computed once per plan)."""
    args = Args()
    args.add(sel.advanced_args, _ADVANCED)
    _feature_args(ctx, sel, args)
    _kv_args(ctx, sel, role, args)
    return args.items


def _strategy_args(ctx: Ctx, role: str | None) -> tuple[Item, ...]:
    """Steps 1–3 up to the parallelism flags: base, variant, variant-hardware, strategy block."""
    return ctx.memo("variant_args", lambda: _variant_args(ctx), shared=True) + _block_args(ctx, role)


def _variant_args(ctx: Ctx) -> tuple[Item, ...]:
    args = Args()
    v, vp, hw = ctx.variant, ctx.variant_path, ctx.hw
    args.add(ctx.recipe.model.base_args, ctx.src("base", None, "model", "base_args"))
    args.add(v.extra_args, ctx.src("variant", ctx.variant_key, *vp, "extra_args"))
    if v.extra_args and "--tensor-parallel-size" in v.extra_args:
        ctx.warn(f"variants.{ctx.variant_key}.extra_args sets --tensor-parallel-size, but the strategy's "
                 "parallelism flag comes later and overrides it")
    vhw = v.hardware_overrides.get(hw)
    if vhw is not None:
        args.add(vhw.extra_args, ctx.src("variant_hardware", hw, *vp, "hardware_overrides", hw, "extra_args"))
    return tuple(args.items)


def _block_args(ctx: Ctx, role: str | None) -> tuple[Item, ...]:
    """The strategy file's own args (for a role): the same for every recipe, cached on the repository."""
    key = ("strategy_args", ctx.strategy_name, role)
    items: tuple[Item, ...] | None = ctx.repo.cache.get(key)
    if items is None:
        args = Args()
        sdoc = ctx.strategy_doc
        if role:
            args.add(ctx.strategy.role(role).vllm_args,
                     ctx.src("strategy", f"{ctx.strategy_name}/{role}", role, "vllm_args", doc=sdoc))
        else:
            args.add(ctx.strategy.vllm_args, ctx.src("strategy", ctx.strategy_name, "vllm_args", doc=sdoc))
        items = ctx.repo.cache[key] = tuple(args.items)
    return items


def _override_args(ctx: Ctx, role: str | None) -> tuple[Item, ...]:
    """Steps 4–5 after the parallelism flags: strategy overrides, then hardware overrides."""
    args = Args()
    so, sop = ctx.so, ctx.so_path
    if role:
        rb = so.role(role)
        args.add(rb.extra_args, ctx.src("strategy_override", role, *sop, role, "extra_args"))
        args.add(rb.vllm_args, ctx.src("strategy_override", role, *sop, role, "vllm_args"))
    else:
        args.add(so.extra_args, ctx.src("strategy_override", ctx.strategy_name, *sop, "extra_args"))
        args.add(so.vllm_args, ctx.src("strategy_override", ctx.strategy_name, *sop, "vllm_args"))
    for block, src in hw_override_blocks(ctx, role):
        args.add(block.extra_args, _part(src, "extra_args"))
    return tuple(args.items)


def _feature_args(ctx: Ctx, sel: Selection, args: Args) -> None:
    features = ctx.recipe.features
    shared = ctx.scope.shared
    for name in sel.features:
        feat = features.get(name)
        if feat is None:
            continue
        # the strategy-dependent gates first, then the (strategy-independent) args, shared
        if feat.strategies and ctx.strategy_name not in feat.strategies:
            continue
        if feat.companion is not None and feat.companion.command and sel.mooncake and ctx.deploy_type != "pd_cluster":
            continue
        pick = sel.feature_modes.get(name) if feat.modes is not None else None
        key = ("feature", name, pick)
        hit = shared.get(key)
        if hit is not None and not hit[1]:
            items, mode = hit[0]
        else:
            items, mode = ctx.memo(key, partial(_one_feature, ctx, name, feat, pick), shared=True)
        if mode is not None:
            sel.mode_used[name] = mode
        args.items.extend(items)


def _one_feature(ctx: Ctx, name: str, feat: Feature, pick: str | None) -> tuple[tuple[Item, ...], str | None]:
    out = Args()
    if feat.modes is not None:
        mode = effective_mode(ctx, name, feat, pick)
        if mode is None:
            return (), None
        mdata = feat.modes[mode]
        mhw = mdata.hardware_overrides
        key = ctx.hw_key(mhw)
        margs = mhw[key].args if key is not None else None
        if margs is not None:
            out.add(margs, ctx.src("mode", f"{name}={mode}/{key}", "features", name, "modes", mode,
                                   "hardware_overrides", key, "args"))
        else:
            out.add(mdata.args, ctx.src("mode", f"{name}={mode}", "features", name, "modes", mode, "args"))
        return tuple(out.items), mode
    fhw = feat.hardware_overrides
    key = ctx.gen_key(fhw)
    fargs = fhw[key].args if key is not None else None
    if fargs is not None:
        out.add(fargs, ctx.src("feature", f"{name}/{key}", "features", name, "hardware_overrides", key, "args"))
    else:
        out.add(feat.args, ctx.src("feature", name, "features", name, "args"))
    return tuple(out.items), None


def mode_allowed(ctx: Ctx, mode: Mode) -> bool:
    if mode.variants and ctx.variant_key not in mode.variants:
        return False
    hw = mode.hardware
    return not ((ctx.gen is not None and hw.get(ctx.gen) == "unsupported") or hw.get(ctx.hw) == "unsupported")


def effective_mode(ctx: Ctx, name: str, feat: Feature, pick: str | None) -> str | None:
    allowed = [m for m, data in (feat.modes or {}).items() if mode_allowed(ctx, data)]
    if not allowed:
        return None
    for cand in (pick, ctx.variant.default_modes.get(name), feat.default_mode):
        if cand is not None and cand in allowed:
            return cand
    if pick is not None and pick not in allowed:
        ctx.warn(f"mode {name}={pick} is not available for this variant/hardware; {allowed[0]} used instead")
    return allowed[0]


def _kv_args(ctx: Ctx, sel: Selection, role: str | None, args: Args) -> None:
    if sel.kv_option:
        opt = ctx.repo.hardware.kv_offload.get(sel.kv_option)
        args.add(opt.args if opt else None,
                 Src("kv_offload", sel.kv_option, ctx.repo.taxonomy, ("kv_offload", sel.kv_option, "args")))
    elif sel.mooncake:
        kdoc = ctx.repo.strategy_docs[sel.mooncake]
        spec = ctx.repo.strategies[sel.mooncake]
        if role:
            args.add(spec.pd_args.get(role), Src("kv_store", sel.mooncake, kdoc, ("pd", role, "args")))
        else:
            args.add(spec.store_vllm_args, Src("kv_store", sel.mooncake, kdoc, ("vllm", "vllm_args")))


# -- environment ---------------------------------------------------------------------------

def build_env(ctx: Ctx, sel: Selection, role: str | None, pd_env: dict[str, str] | None = None) -> Env:
    """The environment of one process (shared between cases of a scope: copy before changing it)."""
    key = ("env", role, sel.kv_option, sel.mooncake, tuple(pd_env.items()) if pd_env else None, ctx.credit)
    hit = ctx.scope.memo.get(key)
    if hit is not None and not hit[1]:
        env: Env = hit[0]
        return env
    return ctx.memo(key, lambda: _build_env(ctx, sel, role, pd_env))


def _variant_env(ctx: Ctx) -> Env:
    env = Env()
    v, vp, hw = ctx.variant, ctx.variant_path, ctx.hw
    env.update(ctx.recipe.model.base_env, ctx.src("base", None, "model", "base_env"))
    env.update(v.extra_env, ctx.src("variant", ctx.variant_key, *vp, "extra_env"))
    vhw = v.hardware_overrides.get(hw)
    if vhw is not None:
        env.update(vhw.extra_env, ctx.src("variant_hardware", hw, *vp, "hardware_overrides", hw, "extra_env"))
    return env


def _build_env(ctx: Ctx, sel: Selection, role: str | None, pd_env: dict[str, str] | None) -> Env:
    env = Env()
    env.blocks = list(ctx.memo("variant_env", lambda: _variant_env(ctx), shared=True).blocks)
    so, sop, hw = ctx.so, ctx.so_path, ctx.hw
    sdoc = ctx.strategy_doc
    if role:
        env.update(ctx.strategy.role(role).env, ctx.src("strategy", f"{ctx.strategy_name}/{role}", role, "env",
                                                        doc=sdoc))
    else:
        env.update(ctx.strategy.env, ctx.src("strategy", ctx.strategy_name, "env", doc=sdoc))
    if sel.kv_option:
        opt = ctx.repo.hardware.kv_offload.get(sel.kv_option)
        env.update(opt.env if opt else None, ctx.src("kv_offload", sel.kv_option, "kv_offload", sel.kv_option, "env",
                                                     doc=ctx.repo.taxonomy))
    if sel.mooncake:
        kdoc = ctx.repo.strategy_docs[sel.mooncake]
        env.update(ctx.repo.strategies[sel.mooncake].store_env, ctx.src("kv_store", sel.mooncake, "vllm", "env",
                                                                        doc=kdoc))
    if pd_env and not ctx.credit:
        env.update(pd_env, Src("pd_layout", role, None))
    elif pd_env:
        for name, value in pd_env.items():  # each computed by the layout: its own rule and inputs
            env.set(name, value, env_src(ctx, role or "", name, value))
    env.update(so.env, ctx.src("strategy_override", ctx.strategy_name, *sop, "env"))
    if role:
        env.update(so.role(role).env, ctx.src("strategy_override", role, *sop, role, "env"))
    else:
        env.update(so.extra_env, ctx.src("strategy_override", ctx.strategy_name, *sop, "extra_env"))
    for block, src in hw_override_blocks(ctx, role):
        env.update(block.extra_env, _part(src, "extra_env"))
    if role and hw not in ("gb200", "gb300"):
        dropped = [k for k in NVL4_VARS if env.delete(k)]
        if dropped:
            ctx.warn(f"prefill/decode layout removes {', '.join(dropped)} from the {role} environment on {hw} "
                     "(kept only on GB200/GB300), including values the recipe set on purpose")
    env.values()
    return env


__all__ = [
    "NVL4_VARS",
    "ArgList",
    "EnvMap",
    "Selection",
    "build_args",
    "build_env",
    "effective_mode",
    "hw_override_blocks",
    "mode_allowed",
]
