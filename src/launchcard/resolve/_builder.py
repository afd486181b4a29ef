"""Assembling commands per role and the reference result object (spec §4.6–§4.7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchcard.resolve import _pd
from launchcard.resolve._context import Ctx, Src
from launchcard.resolve._layers import Args, Env, Item, Unit
from launchcard.resolve._render import brand_key, docker_argv, docker_image, shell_command
from launchcard.resolve._serve import Selection, build_args, build_env, choice_args
from launchcard.resolve._topology import parallel_tokens
from launchcard.sources import Strategy, first_truthy


@dataclass
class Built:
    """One process: its role, rank, argument tokens and environment.

    ``argv`` normalises the tokens without sources; ``units`` (with sources, for
    provenance) is only computed when asked for.
    """

    role: str
    rank: int | None
    args: Args
    env: Env
    port: int = 8000
    model_id: str = ""
    _argv: list[Any] | None = None

    @property
    def argv(self) -> list[Any]:
        if self._argv is None:
            self._argv = ["vllm", "serve", self.model_id, *self.args.argv()]
        return self._argv

    @property
    def units(self) -> list[Unit]:
        return self.args.normalised()


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
    hit = ctx.scope.shared.get("model_id")
    if hit is None:
        hit = ctx.scope.shared["model_id"] = (first_truthy(ctx.variant.model_id, ctx.recipe.model.model_id,
                                                         "unknown"), ())
    model_id: str = hit[0]
    return model_id


def _serve(ctx: Ctx, sel: Selection, role: str | None, rank: int, host: str, model_id: str,
           parallel: list[tuple[list[Any], Src]] | None = None, pd_env: dict[str, str] | None = None,
           port: int = 8000, env: Env | None = None, tail: list[Item] | None = None) -> Built:
    par = parallel if parallel is not None else parallel_tokens(ctx, rank, host)
    args = build_args(ctx, sel, role, par, tail)
    if env is None:
        env = build_env(ctx, sel, role, pd_env)
    name = role or ("head" if rank == 0 else "worker")
    return Built(name, rank, args, env, port, model_id)


def _render_fields(ctx: Ctx, built: Built, image: str | None, model_id: str) -> dict[str, Any]:
    argv = built.argv
    return {"command": shell_command(argv),
            "docker_argv": docker_argv(ctx, image, argv, built.env.values(), built.port, model_id)}


def build(ctx: Ctx, sel: Selection, *, pd_nodes: Any = None, kv_instances: Any = None,
          compatible: list[str] | None = None, render: bool = True) -> Outcome:
    model_id = model_id_of(ctx)
    image = docker_image(ctx)
    base: dict[str, Any] = {"deploy_type": ctx.deploy_type or "single_node", "docker_image": image,
                            "model_id": model_id}
    if ctx.deploy_type == "pd_cluster":
        return _build_pd(ctx, sel, base, model_id, image, pd_nodes, compatible or [], render)
    if sel.mooncake:
        return _build_kv_store(ctx, sel, base, model_id, image, kv_instances)
    multi = ctx.deploy_type == "multi_node" and ctx.node_count > 1
    if not multi:
        built = _serve(ctx, sel, None, 0, "$HEAD_IP", model_id)
        built.role = "single"
        result: dict[str, Any] = {**base, "argv": built.argv, "env": built.env.values()}
        companions = _companions(ctx, sel)
        if companions:
            result["companions"] = companions
        if render:
            result.update(_render_fields(ctx, built, image, model_id))
        return Outcome(result["deploy_type"], model_id, image, [built], result)
    env = build_env(ctx, sel, None)
    tail = choice_args(ctx, sel, None)
    nodes = [_serve(ctx, sel, None, r, "$HEAD_IP", model_id, env=env, tail=tail) for r in range(ctx.node_count)]
    result = {**base, "node_count": ctx.node_count, "env": env.values(), "head_argv": nodes[0].argv,
              "worker_argvs": [b.argv for b in nodes[1:]]}
    if render:
        result["head_command"] = shell_command(nodes[0].argv)
    return Outcome("multi_node", model_id, image, nodes, result)


def _companions(ctx: Ctx, sel: Selection) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not sel.kv_option and not _has_companions(ctx):
        return out
    features = ctx.recipe.features
    for name in sel.features:
        feat = features.get(name)
        comp = feat.companion if feat is not None else None
        if feat is None or comp is None or not comp.command:
            continue
        if (feat.strategies and ctx.strategy_name not in feat.strategies) or sel.mooncake:
            continue
        out.append({"feature": name, "label": comp.label or name, "description": comp.description,
                    "command": comp.command.rstrip()})
    if sel.kv_option:
        opt = ctx.repo.hardware.kv_offload.get(sel.kv_option)
        comp = opt.companion if opt is not None else None
        if opt is not None and comp is not None and comp.command:
            desc = comp.description or ""
            if opt.install:
                desc = f"{desc} Requires: {opt.install}"
            out.append({"feature": f"kv_offload:{sel.kv_option}", "label": comp.label or sel.kv_option,
                        "description": desc, "command": comp.command.rstrip()})
    return out


def _has_companions(ctx: Ctx) -> bool:
    """Whether any feature of the recipe declares a companion command (per recipe, cached)."""
    key = ("companions", ctx.doc.path)
    found: bool | None = ctx.repo.cache.get(key)
    if found is None:
        found = ctx.repo.cache[key] = any(f.companion is not None and f.companion.command
                                          for f in ctx.recipe.features.values())
    return found


def _instances(kv_instances: Any, kv_spec: Strategy) -> tuple[int, int]:
    """(instances, current) from the case's ``kv_instances`` input (wire data, from JSON)."""
    count: Any = None
    current = 0
    if isinstance(kv_instances, dict):
        count = kv_instances.get("count")
        current = int(kv_instances.get("current") or 0)
    elif isinstance(kv_instances, (int, float)) and not isinstance(kv_instances, bool):
        count = kv_instances
    if not isinstance(count, (int, float)) or isinstance(count, bool) or count <= 0:
        count = kv_spec.default_instances or 2
    return int(count), current


def _build_kv_store(ctx: Ctx, sel: Selection, base: dict[str, Any], model_id: str, image: str | None,
                    kv_instances: Any) -> Outcome:
    spec = ctx.repo.strategies[sel.mooncake or ""]
    instances, current = _instances(kv_instances, spec)
    host = f"$VLLM_INSTANCE_{current + 1}" if instances >= 2 else "$HEAD_IP"
    multi = ctx.deploy_type == "multi_node" and ctx.node_count > 1
    env = build_env(ctx, sel, None)
    ranks = range(ctx.node_count) if multi else range(1)
    tail = choice_args(ctx, sel, None)
    built = [_serve(ctx, sel, None, r, host, model_id, env=env, tail=tail) for r in ranks]
    for b in built:
        b.role = "instance"
    install = spec.store_install.get(brand_key(ctx)) if brand_key(ctx) in ("nvidia", "amd") else None
    store = spec.store_command
    router = None
    if instances >= 2:
        router = _kv_router(spec, instances)
    result = {**base, "deploy_type": "kv_store_lb", "serving_strategy": ctx.strategy_name,
              "node_count": ctx.node_count, "instances": instances, "env": env.values(), "argv": built[0].argv,
              "worker_argvs": [b.argv for b in built[1:]] if multi else None, "vllm_install": install,
              "master_command": spec.master_command, "store_command": store,
              "router": router}
    return Outcome("kv_store_lb", model_id, image, built, result, router)


def _kv_router(spec: Strategy, instances: int) -> dict[str, Any]:
    router = spec.router
    port = first_truthy(spec.store_port, 8000)
    parts = [f"vllm-router --policy {first_truthy(router.policy if router else None, 'cache_aware')}"]
    parts += [f"--backend-url http://$VLLM_INSTANCE_{i}:{port}" for i in range(1, instances + 1)]
    parts += ["--host $ROUTER_HOST", "--port $ROUTER_PORT", "--cache-threshold 0.5",
              "--balance-abs-threshold 4", "--balance-rel-threshold 1.1"]
    return {"command": " \\\n    ".join(parts),
            "install": first_truthy(router.install if router else None, "uv pip install vllm-router"),
            "port": first_truthy(router.port if router else None, 30080)}


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
        values = dict(env.values())
        if _pd.rewrite_rank_placeholders(values, meta):
            # the scope's env is shared: change a copy
            b.env = env.with_values(values, f"the {role} pool's follower (node rank {lay.rank}) points at its own "
                                            "node")
        built.append(b)
        entry = {"argv": b.argv, "env": values, **_pd.role_meta(meta)}
        if render:
            entry.update(_render_fields(ctx, b, image, model_id))
        result[role] = entry
    command = _pd.router_command(ctx, lays["prefill"], lays["decode"])
    router = {"command": command, "install": "uv pip install vllm-router"}
    result["router"] = router
    result["router_config"] = ctx.strategy.router_raw  # echoed verbatim (wire value)
    if sel.mooncake:
        spec = ctx.repo.strategies[sel.mooncake]
        key = brand_key(ctx)
        result["mooncake"] = {
            "master_command": spec.master_command,
            "has_store": bool(spec.store_command),
            "install": spec.store_install.get(key) if key in ("nvidia", "amd") else None,
        }
    return Outcome("pd_cluster", model_id, image, built, result, router)
