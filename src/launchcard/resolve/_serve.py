"""The layers of a ``vllm serve`` command (spec §4.2–§4.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchcard.resolve._context import Ctx, Src, as_dict, as_list, present
from launchcard.resolve._layers import Args, Env

NVL4_VARS = ("VLLM_USE_NCCL_SYMM_MEM", "NCCL_CUMEM_ENABLE", "NCCL_MNNVL_ENABLE",
             "NCCL_NVLS_ENABLE", "UCX_NET_DEVICES")


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

def _hw_override_blocks(ctx: Ctx, role: str | None, part: str) -> list[tuple[Any, Src]]:
    """The hardware-override blocks in order, as (values, src) pairs for ``part``."""
    out: list[tuple[Any, Src]] = []
    so, sop = ctx.so, ctx.so_path
    so_hw = as_dict(so.get("hardware_overrides"))
    s_key = ctx.gen_key(so_hw)
    if s_key is not None and isinstance(so_hw.get(s_key), dict):
        out.append((so_hw[s_key].get(part), ctx.src("strategy_hardware_override", s_key, *sop,
                                                     "hardware_overrides", s_key, part)))
        _warn_replaced(ctx, s_key)
    else:
        rec_hw = as_dict(ctx.data.get("hardware_overrides"))
        r_key = ctx.gen_key(rec_hw)
        if r_key is not None:
            out.append((as_dict(rec_hw[r_key]).get(part),
                        ctx.src("hardware_override", r_key, "hardware_overrides", r_key, part)))
        var_hw = as_dict(ctx.variant.get("hardware_overrides"))
        v_key = ctx.gen_key(var_hw)
        if v_key is not None:
            out.append((as_dict(var_hw[v_key]).get(part),
                        ctx.src("variant_hardware", v_key, *ctx.variant_path, "hardware_overrides", v_key, part)))
    if present(so_hw.get(ctx.hw)):
        out.append((as_dict(so_hw[ctx.hw]).get(part),
                    ctx.src("strategy_hardware_override", ctx.hw, *sop, "hardware_overrides", ctx.hw, part)))
    if role:
        role_hw = as_dict(as_dict(so.get(role)).get("hardware_overrides"))
        if present(role_hw.get(ctx.hw)):
            out.append((as_dict(role_hw[ctx.hw]).get(part),
                        ctx.src("strategy_override", f"{role}/{ctx.hw}", *sop, role, "hardware_overrides",
                                ctx.hw, part)))
    return out


def _warn_replaced(ctx: Ctx, s_key: str) -> None:
    rec_hw = as_dict(ctx.data.get("hardware_overrides"))
    r_key = ctx.gen_key(rec_hw)
    var_key = ctx.gen_key(as_dict(ctx.variant.get("hardware_overrides")))
    lost = [k for k in (r_key and f"hardware_overrides.{r_key}",
                        var_key and f"variants.{ctx.variant_key}.hardware_overrides.{var_key}") if k]
    if lost:
        ctx.warn(f"strategy_overrides.{ctx.strategy_name}.hardware_overrides.{s_key} replaces "
                 f"{' and '.join(lost)} entirely (args and env), even if it only adds a little: "
                 "the recipe probably does not mean to drop them")


# -- arguments ------------------------------------------------------------------------------

def build_args(ctx: Ctx, sel: Selection, role: str | None, parallel: list[tuple[Any, Src]],
               role_block_args: list[tuple[Any, Src]] | None = None) -> Args:
    args = Args()
    model, v, vp = ctx.model, ctx.variant, ctx.variant_path
    args.add(model.get("base_args"), ctx.src("base", None, "model", "base_args"))
    args.add(v.get("extra_args"), ctx.src("variant", ctx.variant_key, *vp, "extra_args"))
    if "--tensor-parallel-size" in as_list(v.get("extra_args")):
        ctx.warn(f"variants.{ctx.variant_key}.extra_args sets --tensor-parallel-size, but the strategy's "
                 "parallelism flag comes later and overrides it")
    vhw = as_dict(as_dict(v.get("hardware_overrides")).get(ctx.hw))
    args.add(vhw.get("extra_args"), ctx.src("variant_hardware", ctx.hw, *vp, "hardware_overrides", ctx.hw,
                                            "extra_args"))
    # step 3: strategy block, then the parallelism flags
    sdoc = ctx.strategy_doc
    if role:
        args.add(as_dict(ctx.strategy.get(role)).get("vllm_args"),
                 ctx.src("strategy", f"{ctx.strategy_name}/{role}", role, "vllm_args", doc=sdoc))
    else:
        args.add(ctx.strategy.get("vllm_args"), ctx.src("strategy", ctx.strategy_name, "vllm_args", doc=sdoc))
    for tokens, src in parallel:
        args.add_raw(tokens if isinstance(tokens, list) else [tokens], src)
    # step 4: strategy overrides
    so, sop = ctx.so, ctx.so_path
    if role:
        rb = as_dict(so.get(role))
        args.add(rb.get("extra_args"), ctx.src("strategy_override", role, *sop, role, "extra_args"))
        args.add(rb.get("vllm_args"), ctx.src("strategy_override", role, *sop, role, "vllm_args"))
    else:
        args.add(so.get("extra_args"), ctx.src("strategy_override", ctx.strategy_name, *sop, "extra_args"))
        args.add(so.get("vllm_args"), ctx.src("strategy_override", ctx.strategy_name, *sop, "vllm_args"))
    # step 5: hardware overrides
    for values, src in _hw_override_blocks(ctx, role, "extra_args"):
        args.add(values, src)
    # step 6: advanced
    args.add(sel.advanced_args, Src("advanced", None, None))
    # step 7: features
    _feature_args(ctx, sel, args)
    # step 8: kv layer
    _kv_args(ctx, sel, role, args)
    return args


def _feature_args(ctx: Ctx, sel: Selection, args: Args) -> None:
    features = as_dict(ctx.data.get("features"))
    serving = ctx.strategy_name
    for name in sel.features:
        feat = features.get(name)
        if not isinstance(feat, dict):
            continue
        allowed = feat.get("strategies")
        if isinstance(allowed, list) and allowed and serving not in allowed:
            continue
        if as_dict(feat.get("companion")).get("command") and sel.mooncake and ctx.deploy_type != "pd_cluster":
            continue
        if "modes" in feat:
            mode = effective_mode(ctx, name, feat, sel.feature_modes.get(name))
            if mode is None:
                continue
            sel.mode_used[name] = mode
            mdata = as_dict(as_dict(feat.get("modes")).get(mode))
            mhw = as_dict(mdata.get("hardware_overrides"))
            key = ctx.hw_key(mhw)
            if key is not None and present(as_dict(mhw[key]).get("args")):
                args.add(mhw[key]["args"], ctx.src("mode", f"{name}={mode}/{key}", "features", name, "modes",
                                                    mode, "hardware_overrides", key, "args"))
            else:
                args.add(mdata.get("args"), ctx.src("mode", f"{name}={mode}", "features", name, "modes", mode,
                                                    "args"))
            continue
        fhw = as_dict(feat.get("hardware_overrides"))
        key = ctx.gen_key(fhw)
        if key is not None and present(as_dict(fhw[key]).get("args")):
            args.add(fhw[key]["args"], ctx.src("feature", f"{name}/{key}", "features", name,
                                                "hardware_overrides", key, "args"))
        else:
            args.add(feat.get("args"), ctx.src("feature", name, "features", name, "args"))


def mode_allowed(ctx: Ctx, mode: Any) -> bool:
    mode = as_dict(mode)
    variants = mode.get("variants")
    if isinstance(variants, list) and variants and ctx.variant_key not in variants:
        return False
    hw = as_dict(mode.get("hardware"))
    return not (hw.get(ctx.gen) == "unsupported" or hw.get(ctx.hw) == "unsupported")


def effective_mode(ctx: Ctx, name: str, feat: dict[str, Any], pick: str | None) -> str | None:
    modes = as_dict(feat.get("modes"))
    allowed = [m for m, data in modes.items() if mode_allowed(ctx, data)]
    if not allowed:
        return None
    for cand in (pick, as_dict(ctx.variant.get("default_modes")).get(name), feat.get("default_mode")):
        if cand is not None and cand in allowed:
            return cand
    if pick is not None and pick not in allowed:
        ctx.warn(f"mode {name}={pick} is not available for this variant/hardware; {allowed[0]} used instead")
    return allowed[0]


def _kv_args(ctx: Ctx, sel: Selection, role: str | None, args: Args) -> None:
    if sel.kv_option:
        args.add(as_dict(ctx.repo.kv_options.get(sel.kv_option)).get("args"),
                 Src("kv_offload", sel.kv_option, ctx.repo.taxonomy, ("kv_offload", sel.kv_option, "args")))
    elif sel.mooncake:
        kdoc = ctx.repo.strategy_docs[sel.mooncake]
        if role:
            args.add(as_dict(as_dict(kdoc.data.get("pd")).get(role)).get("args"),
                     Src("kv_store", sel.mooncake, kdoc, ("pd", role, "args")))
        else:
            args.add(as_dict(kdoc.data.get("vllm")).get("vllm_args"),
                     Src("kv_store", sel.mooncake, kdoc, ("vllm", "vllm_args")))


# -- environment ---------------------------------------------------------------------------

def build_env(ctx: Ctx, sel: Selection, role: str | None, pd_env: dict[str, str] | None = None) -> Env:
    env = Env()
    v, vp, so, sop = ctx.variant, ctx.variant_path, ctx.so, ctx.so_path

    def at(layer: str, key: str | None, *path: Any, doc: Any = None):
        return lambda k: ctx.src(layer, key, *path, k, doc=doc)

    env.update(ctx.model.get("base_env"), at("base", None, "model", "base_env"))
    env.update(v.get("extra_env"), at("variant", ctx.variant_key, *vp, "extra_env"))
    env.update(as_dict(as_dict(v.get("hardware_overrides")).get(ctx.hw)).get("extra_env"),
               at("variant_hardware", ctx.hw, *vp, "hardware_overrides", ctx.hw, "extra_env"))
    sdoc = ctx.strategy_doc
    if role:
        env.update(as_dict(ctx.strategy.get(role)).get("env"),
                   at("strategy", f"{ctx.strategy_name}/{role}", role, "env", doc=sdoc))
    else:
        env.update(ctx.strategy.get("env"), at("strategy", ctx.strategy_name, "env", doc=sdoc))
    if sel.kv_option:
        tdoc = ctx.repo.taxonomy
        env.update(as_dict(ctx.repo.kv_options.get(sel.kv_option)).get("env"),
                   at("kv_offload", sel.kv_option, "kv_offload", sel.kv_option, "env", doc=tdoc))
    if sel.mooncake:
        kdoc = ctx.repo.strategy_docs[sel.mooncake]
        env.update(as_dict(kdoc.data.get("vllm")).get("env"), at("kv_store", sel.mooncake, "vllm", "env", doc=kdoc))
    if pd_env:
        env.update(pd_env, lambda k: Src("pd_layout", role, None))
    env.update(so.get("env"), at("strategy_override", ctx.strategy_name, *sop, "env"))
    if role:
        env.update(as_dict(so.get(role)).get("env"), at("strategy_override", role, *sop, role, "env"))
    else:
        env.update(so.get("extra_env"), at("strategy_override", ctx.strategy_name, *sop, "extra_env"))
    for values, src in _hw_override_blocks(ctx, role, "extra_env"):
        env.update(values, lambda k, src=src: Src(src.layer, src.key, src.doc, src.path + (k,)))
    if role and ctx.hw not in ("gb200", "gb300"):
        dropped = [k for k in NVL4_VARS if env.delete(k) is not None]
        if dropped:
            ctx.warn(f"prefill/decode layout removes {', '.join(dropped)} from the {role} environment on {ctx.hw} (kept only on GB200/GB300), "
                     "including values the recipe set on purpose")
    return env
