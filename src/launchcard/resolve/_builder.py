"""Assembling commands per role and the reference result object (spec §4.6–§4.7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchcard.resolve import _pd
from launchcard.resolve._context import Ctx, Src, as_dict
from launchcard.resolve._layers import Env, Unit, flatten
from launchcard.resolve._render import brand_key, docker_argv, docker_image, shell_command
from launchcard.resolve._serve import Selection, build_args, build_env
from launchcard.resolve._topology import parallel_tokens


@dataclass
class Built:
    """One process: its role, rank, argv units and environment."""

    role: str
    rank: int | None
    units: list[Unit]
    env: Env
    port: int = 8000

    @property
    def argv(self) -> list[Any]:
        return ["vllm", "serve", self.model_id, *flatten(self.units)]

    model_id: str = ""


@dataclass
class Outcome:
    deploy_type: str
    model_id: str
    image: str | None
    built: list[Built]
    result: dict[str, Any]
    router: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)


def model_id_of(ctx: Ctx) -> str:
    return ctx.variant.get("model_id") or ctx.model.get("model_id") or "unknown"


def _serve(ctx: Ctx, sel: Selection, role: str | None, rank: int, host: str, model_id: str,
           parallel: list[tuple[list[Any], Src]] | None = None, pd_env: dict[str, str] | None = None,
           port: int = 8000, env: Env | None = None) -> Built:
    par = parallel if parallel is not None else parallel_tokens(ctx, rank, host)
    units = build_args(ctx, sel, role, par).normalised()
    if env is None:
        env = build_env(ctx, sel, role, pd_env)
    name = role or ("head" if rank == 0 else "worker")
    return Built(name, rank, units, env, port, model_id)


def _render_fields(ctx: Ctx, built: Built, image: str | None, model_id: str) -> dict[str, Any]:
    argv = built.argv
    return {"command": shell_command(argv),
            "docker_argv": docker_argv(ctx, image, argv, built.env.values(), built.port, model_id)}


def build(ctx: Ctx, sel: Selection, *, pd_nodes: Any = None, kv_instances: Any = None,
          compatible: list[str] | None = None, render: bool = True) -> Outcome:
    model_id = model_id_of(ctx)
    image = docker_image(ctx)
    base = {"deploy_type": ctx.deploy_type or "single_node", "docker_image": image, "model_id": model_id}
    if ctx.deploy_type == "pd_cluster":
        return _build_pd(ctx, sel, base, model_id, image, pd_nodes, compatible or [], render)
    if sel.mooncake:
        return _build_kv_store(ctx, sel, base, model_id, image, kv_instances)
    multi = ctx.deploy_type == "multi_node" and ctx.node_count > 1
    if not multi:
        built = _serve(ctx, sel, None, 0, "$HEAD_IP", model_id)
        built.role = "single"
        result = {**base, "argv": built.argv, "env": built.env.values()}
        companions = _companions(ctx, sel)
        if companions:
            result["companions"] = companions
        if render:
            result.update(_render_fields(ctx, built, image, model_id))
        return Outcome(result["deploy_type"], model_id, image, [built], result)
    env = build_env(ctx, sel, None)
    built = [_serve(ctx, sel, None, r, "$HEAD_IP", model_id, env=env) for r in range(ctx.node_count)]
    result = {**base, "node_count": ctx.node_count, "env": env.values(), "head_argv": built[0].argv,
              "worker_argvs": [b.argv for b in built[1:]]}
    if render:
        result["head_command"] = shell_command(built[0].argv)
    return Outcome("multi_node", model_id, image, built, result)


def _companions(ctx: Ctx, sel: Selection) -> list[dict[str, Any]]:
    out = []
    features = as_dict(ctx.data.get("features"))
    for name in sel.features:
        feat = as_dict(features.get(name))
        comp = as_dict(feat.get("companion"))
        allowed = feat.get("strategies")
        if not comp.get("command") or (isinstance(allowed, list) and allowed and ctx.strategy_name not in allowed):
            continue
        if sel.mooncake:
            continue
        out.append({"feature": name, "label": comp.get("label") or name, "description": comp.get("description"),
                    "command": str(comp["command"]).rstrip()})
    if sel.kv_option:
        opt = as_dict(ctx.repo.kv_options.get(sel.kv_option))
        comp = as_dict(opt.get("companion"))
        if comp.get("command"):
            desc = comp.get("description") or ""
            if opt.get("install"):
                desc = f"{desc} Requires: {opt['install']}"
            out.append({"feature": f"kv_offload:{sel.kv_option}", "label": comp.get("label") or sel.kv_option,
                        "description": desc, "command": str(comp["command"]).rstrip()})
    return out


def _instances(kv_instances: Any, kv_spec: dict[str, Any]) -> tuple[int, int]:
    count: Any = None
    current = 0
    if isinstance(kv_instances, dict):
        count = kv_instances.get("count")
        current = int(kv_instances.get("current") or 0)
    elif isinstance(kv_instances, (int, float)) and not isinstance(kv_instances, bool):
        count = kv_instances
    if not isinstance(count, (int, float)) or isinstance(count, bool) or count <= 0:
        count = kv_spec.get("default_instances") or 2
    return int(count), current


def _build_kv_store(ctx: Ctx, sel: Selection, base: dict[str, Any], model_id: str, image: str | None,
                    kv_instances: Any) -> Outcome:
    kdoc = ctx.repo.strategy_docs[sel.mooncake or ""]
    spec = kdoc.data
    instances, current = _instances(kv_instances, spec)
    host = f"$VLLM_INSTANCE_{current + 1}" if instances >= 2 else "$HEAD_IP"
    multi = ctx.deploy_type == "multi_node" and ctx.node_count > 1
    env = build_env(ctx, sel, None)
    ranks = range(ctx.node_count) if multi else range(1)
    built = [_serve(ctx, sel, None, r, host, model_id, env=env) for r in ranks]
    for b in built:
        b.role = "instance"
    vllm = as_dict(spec.get("vllm"))
    install = as_dict(vllm.get("install")).get(brand_key(ctx)) if brand_key(ctx) in ("nvidia", "amd") else None
    store = as_dict(spec.get("mooncake_store_config")).get("command")
    router = None
    if instances >= 2:
        router = _kv_router(spec, instances)
    result = {**base, "deploy_type": "kv_store_lb", "serving_strategy": ctx.strategy_name,
              "node_count": ctx.node_count, "instances": instances, "env": env.values(), "argv": built[0].argv,
              "worker_argvs": [b.argv for b in built[1:]] if multi else None, "vllm_install": install,
              "master_command": as_dict(spec.get("mooncake_master")).get("command"), "store_command": store,
              "router": router}
    return Outcome("kv_store_lb", model_id, image, built, result, router)


def _kv_router(spec: dict[str, Any], instances: int) -> dict[str, Any]:
    router = as_dict(spec.get("router"))
    port = as_dict(spec.get("vllm")).get("port") or 8000
    parts = [f"vllm-router --policy {router.get('policy') or 'cache_aware'}"]
    parts += [f"--backend-url http://$VLLM_INSTANCE_{i}:{port}" for i in range(1, instances + 1)]
    parts += ["--host $ROUTER_HOST", "--port $ROUTER_PORT", "--cache-threshold 0.5",
              "--balance-abs-threshold 4", "--balance-rel-threshold 1.1"]
    return {"command": " \\\n    ".join(parts), "install": router.get("install") or "uv pip install vllm-router",
            "port": router.get("port") or 30080}


def _build_pd(ctx: Ctx, sel: Selection, base: dict[str, Any], model_id: str, image: str | None,
              pd_nodes: Any, compatible: list[str], render: bool) -> Outcome:
    modes = _pd.pool_modes(ctx, compatible)
    built: list[Built] = []
    lays = {}
    result = dict(base)
    for role in ("prefill", "decode"):
        lay = _pd.layout(ctx, role, pd_nodes, modes)
        meta = _pd.layout(ctx, role, pd_nodes, None)
        lays[role] = lay
        env = build_env(ctx, sel, role, _pd.role_env(ctx, lay))
        b = _serve(ctx, sel, role, lay.rank, "", model_id, parallel=_pd.role_parallel_tokens(ctx, lay),
                   port=_pd.ROLE_PORT[role], env=env)
        values = env.values()
        _pd.rewrite_rank_placeholders(values, meta)
        for key, value in values.items():
            env.slots[key].value = value
        built.append(b)
        entry = {"argv": b.argv, "env": values, **_pd.role_meta(meta)}
        if render:
            entry.update(_render_fields(ctx, b, image, model_id))
        result[role] = entry
    command = _pd.router_command(ctx, lays["prefill"], lays["decode"])
    router = {"command": command, "install": "uv pip install vllm-router"}
    result["router"] = router
    result["router_config"] = ctx.strategy.get("router")
    if sel.mooncake:
        spec = ctx.repo.strategy_docs[sel.mooncake].data
        key = brand_key(ctx)
        result["mooncake"] = {
            "master_command": as_dict(spec.get("mooncake_master")).get("command"),
            "has_store": bool(as_dict(spec.get("mooncake_store_config")).get("command")),
            "install": as_dict(as_dict(spec.get("vllm")).get("install")).get(key) if key in ("nvidia", "amd") else None,
        }
    return Outcome("pd_cluster", model_id, image, built, result, router)
