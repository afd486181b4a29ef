"""Prefill/decode disaggregation (spec §4.6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from launchcard.resolve._context import Ctx, Src
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
    if modes is not None and par not in modes:
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
    if par == "dep":
        dp_local = max(1, gpus // role_tp) if role_tp else 1
        return RoleLayout(role, nodes, index, par, pool_gpus, role_tp, dp_local, max(1, nodes) * dp_local,
                          index * dp_local, explicit_tp)
    # The reported tp is the pool size itself (0 when a one-GPU profile is split in halves);
    # the flag (role_parallel_tokens) still says at least 1.
    return RoleLayout(role, nodes, index, par, pool_gpus, pool_gpus, 0, 1, 0, explicit_tp)


def role_parallel_tokens(ctx: Ctx, lay: RoleLayout) -> list[tuple[list[Any], Src]]:
    var = ROLE_VAR[lay.role]
    src = Src("pd_layout", f"{lay.role}/{lay.parallelism}", None)
    if lay.parallelism == "dep":
        toks: list[Any] = []
        if lay.explicit_tp:
            toks += ["--tensor-parallel-size", str(lay.tp)]
        toks += ["--data-parallel-size", str(lay.dp_size), "--data-parallel-size-local", str(lay.dp_local),
                 "--data-parallel-start-rank", str(lay.start_rank), "--data-parallel-address", f"${var}_NODE_1",
                 "--data-parallel-rpc-port", f"${var}_DP_RPC_PORT"]
        if lay.nodes > 1:
            toks.append("--data-parallel-hybrid-lb")
        toks.append("--enable-expert-parallel")
        return [(toks, src)]
    flag = first_truthy(ctx.so.role(lay.role).parallel_flag, ctx.strategy.role(lay.role).parallel_flag,
                        ctx.strategy.parallel_flag, "--tensor-parallel-size")
    toks = [flag, str(max(1, lay.pool_gpus))]
    if lay.parallelism == "tep":
        toks.append("--enable-expert-parallel")
    if lay.nodes > 1:
        toks += ["--nnodes", str(lay.nodes), "--node-rank", str(lay.rank), "--master-addr", f"${var}_NODE_1"]
        if lay.rank > 0:
            toks.append("--headless")
    return [(toks, src)]


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
