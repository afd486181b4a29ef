"""Prefill/decode disaggregation (spec §4.6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from launchcard.resolve._context import Ctx, Derivation, Given, Src
from launchcard.resolve._topology import _num
from launchcard.sources import first_truthy

ROLE_PORT = {"prefill": 8001, "decode": 8002}
ROLE_VAR = {"prefill": "PREFILL", "decode": "DECODE"}


@dataclass
class RoleLayout:
    role: str
    nodes: int  # 0 = co-located on half of one node
    rank: int
    parallelism: str
    pool_gpus: int
    tp: int
    dp_local: int
    dp_size: int
    start_rank: int
    explicit_tp: bool
    tp_src: Src | None = None  # the line writing the role's tp, when one does
    par_given: Given | None = None  # where the pool's parallelism mode was read


def pool_modes(ctx: Ctx, compatible: list[str]) -> list[str]:
    found = set()
    for sid in compatible:
        if sid == "pd_cluster":
            continue
        if sid.endswith("dep"):
            found.add("dep")
        elif sid.endswith("tep"):
            found.add("tep")
        elif sid.endswith(("tp", "tp_pp", "tp_dp")):
            found.add("tp")
    modes: list[str] = [m for m in ("tp", "tep", "dep") if m in found] or ["tp"]
    narrow = ctx.so.pool_modes
    both = [m for m in modes if m in narrow]
    return both or modes


def _role_input(pd_nodes: Any, role: str) -> Any:
    """``pd_nodes[role]``: the case's own input (wire data, from JSON)."""
    return pd_nodes.get(role) if isinstance(pd_nodes, dict) else None


def layout(ctx: Ctx, role: str, pd_nodes: Any, modes: list[str] | None) -> RoleLayout:
    """The pool of ``role``.  ``modes=None`` computes the reported metadata, which
    the reference derives without snapping to pool modes and with ``||`` for tp."""
    raw = _role_input(pd_nodes, role)
    obj = raw if isinstance(raw, dict) else {}
    if _num(raw) is not None:
        nodes = int(raw)
    elif _num(obj.get("nodes")) is not None:
        nodes = int(obj["nodes"])
    else:
        nodes = 1 if ctx.node_count > 1 else 0
    srole = ctx.strategy.role(role)
    sorole = ctx.so.role(role)
    par = first_truthy(obj.get("parallelism"), sorole.parallelism, srole.parallelism, "tp")
    if obj.get("parallelism"):
        par_given = Given(f"{role} parallelism (your choice)", par)
    elif sorole.parallelism:
        par_given = Given(f"strategy_overrides.pd_cluster.{role}.parallelism", par, ctx.doc,
                          (*ctx.so_path, role, "parallelism"))
    elif srole.parallelism:
        par_given = Given(f"{role}.parallelism", par, ctx.strategy_doc, (role, "parallelism"))
    else:
        par_given = Given(f"{role} parallelism (builder default)", par)
    if modes is not None and par not in modes:
        par_given = Given(f"{role} parallelism (first pool mode the recipe's strategies offer)", modes[0])
        par = modes[0]
    gpus = ctx.prof.gpu_count
    pool_gpus = gpus // 2 if nodes == 0 else nodes * gpus
    rank_raw = _num(obj.get("rank"))
    rank = int(rank_raw) if rank_raw is not None else 0
    index = min(max(rank, 0), max(nodes, 1) - 1)
    tp_raw: Any
    if modes is None:  # the reported metadata uses ``||``, the layout ``??``
        tp_raw = first_truthy(sorole.tp, srole.tp, None)
    else:
        tp_raw = sorole.tp if sorole.tp is not None else srole.tp
    explicit_tp = tp_raw is not None
    role_tp = int(tp_raw) if _num(tp_raw) is not None else 1
    tp_src = None
    if explicit_tp:
        tp_src = (ctx.src("strategy_override", role, *ctx.so_path, role, "tp") if sorole.tp is not None
                  else ctx.src("strategy", f"pd_cluster/{role}", role, "tp", doc=ctx.strategy_doc))
    if par == "dep":
        dp_local = max(1, gpus // role_tp) if role_tp else 1
        return RoleLayout(role, nodes, index, par, pool_gpus, role_tp, dp_local, max(1, nodes) * dp_local,
                          index * dp_local, explicit_tp, tp_src, par_given)
    # The reported tp is the pool size itself (0 when a one-GPU profile is split in halves);
    # the flag (role_parallel_tokens) still says at least 1.
    return RoleLayout(role, nodes, index, par, pool_gpus, pool_gpus, 0, 1, 0, explicit_tp, tp_src, par_given)


class _Credits:
    """Credits of one pool's tokens: flags the builder's prefill/decode layout writes (named by the
    strategy's deploy type, or its parallel flag line), values derived from the pool's inputs."""

    def __init__(self, ctx: Ctx, lay: RoleLayout) -> None:
        self.ctx, self.lay = ctx, lay
        self.key = f"{lay.role}/{lay.parallelism}"
        sdoc = ctx.strategy_doc
        self.rule = Src("pd_layout", self.key, sdoc, ("deploy_type",) if sdoc else ())
        self.gpus = ctx.gpu_count_given()
        self.nodes = Given(f"{lay.role} pool nodes (0: half of one node)", lay.nodes)
        self.par = lay.par_given or Given(f"{lay.role} parallelism", lay.parallelism)

    def derived(self, rule: str, *inputs: Given) -> Src:
        return Src("pd_layout", self.key, None, (), Derivation(rule, inputs))

    def placeholder(self, what: str) -> Src:
        return self.derived(f"placeholder: {what}, set at deploy time", self.par)

    def tp(self) -> Given:
        src = self.lay.tp_src
        if src is None:
            return Given(f"{self.lay.role} tp (default)", self.lay.tp)
        return Given(".".join(str(p) for p in src.path), self.lay.tp, src.doc, src.path)


def role_parallel_tokens(ctx: Ctx, lay: RoleLayout) -> list[tuple[list[Any], Src]]:
    var = ROLE_VAR[lay.role]
    c = _Credits(ctx, lay)
    out: list[tuple[list[Any], Src]] = []
    plain: list[Any] = []
    if not ctx.credit:  # the tokens alone, as one block
        out.append((plain, c.rule))

    def add(flag: str, value: Any = None, credit: Src | None = None, flag_src: Src | None = None) -> None:
        if not ctx.credit:
            plain.extend([flag] if value is None else [flag, str(value)])
            return
        if value is None:
            out.append(([flag], credit or c.rule))
            return
        out.append(([flag], flag_src or c.rule))
        out.append(([str(value)], credit or c.rule))

    rank = c.derived(f"this command's node rank in the {lay.role} pool", c.nodes)
    if lay.parallelism == "dep":
        if lay.explicit_tp:
            add("--tensor-parallel-size", lay.tp, lay.tp_src)
        per_node = c.derived("GPUs per node / the role's tp", c.gpus, c.tp())
        add("--data-parallel-size", lay.dp_size, c.derived("pool nodes (at least 1) × ranks per node", c.nodes,
                                                           c.gpus, c.tp()))
        add("--data-parallel-size-local", lay.dp_local, per_node)
        add("--data-parallel-start-rank", lay.start_rank, c.derived("node rank × ranks per node", c.nodes, c.gpus,
                                                                    c.tp()))
        add("--data-parallel-address", f"${var}_NODE_1", c.placeholder(f"the first {lay.role} node's address"))
        add("--data-parallel-rpc-port", f"${var}_DP_RPC_PORT",
            c.placeholder(f"the {lay.role} pool's data-parallel RPC port"))
        if lay.nodes > 1:
            add("--data-parallel-hybrid-lb", credit=c.derived("a data-parallel pool over several nodes",
                                                              c.nodes, c.par))
        add("--enable-expert-parallel", credit=c.derived("expert parallelism of the pool's mode", c.par))
        return out
    flag = first_truthy(ctx.so.role(lay.role).parallel_flag, ctx.strategy.role(lay.role).parallel_flag,
                        ctx.strategy.parallel_flag, "--tensor-parallel-size")
    named = c.rule
    if ctx.so.role(lay.role).parallel_flag:
        named = ctx.src("strategy_override", lay.role, *ctx.so_path, lay.role, "parallel_flag")
    elif ctx.strategy.role(lay.role).parallel_flag:
        named = ctx.src("strategy", f"pd_cluster/{lay.role}", lay.role, "parallel_flag", doc=ctx.strategy_doc)
    elif ctx.strategy.parallel_flag:
        named = ctx.src("strategy", "pd_cluster", "parallel_flag", doc=ctx.strategy_doc)
    add(flag, max(1, lay.pool_gpus), c.derived("the pool's GPUs: half of one node, else nodes × GPUs per node",
                                               c.nodes, c.gpus), named)
    if lay.parallelism == "tep":
        add("--enable-expert-parallel", credit=c.derived("expert parallelism of the pool's mode", c.par))
    if lay.nodes > 1:
        add("--nnodes", lay.nodes, c.derived("the pool's nodes", c.nodes))
        add("--node-rank", lay.rank, rank)
        add("--master-addr", f"${var}_NODE_1", c.placeholder(f"the first {lay.role} node's address"))
        if lay.rank > 0:
            add("--headless", credit=c.derived("a follower (node rank > 0) runs without the API server",
                                               Given("node rank", lay.rank)))
    return out


def env_src(ctx: Ctx, role: str, name: str, value: str) -> Src:
    """The credit of a variable the prefill/decode layout sets (:func:`role_env`)."""
    gpus = ctx.gpu_count_given()
    if name == "CUDA_VISIBLE_DEVICES":
        whole = value == ",".join(str(i) for i in range(ctx.prof.gpu_count))
        rule = ("every GPU of the node: the pool spans whole nodes" if whole else
                f"the {role} half of the node's GPUs (prefill the first half, decode the second)")
        return Src("pd_layout", role, None, (), Derivation(rule, (gpus,)))
    return Src("pd_layout", role, None, (), Derivation(
        "placeholder: the network interface between the pool's nodes, set at deploy time",
        (Given(f"{role} pool nodes", "2 or more"),)))


def role_env(ctx: Ctx, lay: RoleLayout) -> dict[str, str]:
    gpus = ctx.prof.gpu_count
    out: dict[str, str] = {}
    if lay.nodes >= 1:
        out["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(gpus))
        if lay.nodes >= 2:
            out["GLOO_SOCKET_IFNAME"] = "$IFACE_NAME"
            out["NCCL_SOCKET_IFNAME"] = "$IFACE_NAME"
    else:
        half = gpus // 2
        if half:
            ids = range(half) if lay.role == "prefill" else range(half, gpus)
            out["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in ids)
    return out


def rewrite_rank_placeholders(env: dict[str, Any], lay: RoleLayout) -> bool:
    """Point a follower's ``$<ROLE>_NODE_1`` values at its own node; True when any changed."""
    changed = False
    if lay.rank > 0 and lay.parallelism == "dep":
        var = ROLE_VAR[lay.role]
        for key, value in env.items():
            if value == f"${var}_NODE_1":
                env[key] = f"${var}_NODE_{lay.rank + 1}"
                changed = True
    return changed


def router_command(ctx: Ctx, pre: RoleLayout, dec: RoleLayout) -> str:
    router = ctx.strategy.router
    policy = first_truthy(router.policy if router else None, "round_robin")

    def endpoints(lay: RoleLayout) -> int:
        return max(1, lay.nodes) if lay.parallelism == "dep" else 1

    parts = [f"vllm-router --policy {policy}", "--vllm-pd-disaggregation"]
    parts += [f"--prefill http://$PREFILL_NODE_{i}:8001" for i in range(1, endpoints(pre) + 1)]
    parts += [f"--decode http://$DECODE_NODE_{i}:8002" for i in range(1, endpoints(dec) + 1)]
    intra: Any = ctx.so.router_intra_dp
    if intra is None:
        intra = max(pre.dp_local if pre.parallelism == "dep" else 0,
                    dec.dp_local if dec.parallelism == "dep" else 0, 1)
    parts += ["--host $ROUTER_HOST", "--port $ROUTER_PORT", f"--intra-node-data-parallel-size {intra}"]
    return " \\\n    ".join(parts)


def role_meta(lay: RoleLayout) -> dict[str, Any]:
    return {"nodes": lay.nodes, "parallelism": lay.parallelism, "tp": lay.tp, "dp_local": lay.dp_local,
            "dp_size": lay.dp_size, "pool_gpus": lay.pool_gpus, "current_node": lay.rank,
            "start_rank": lay.start_rank}
