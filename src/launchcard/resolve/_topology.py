"""Parallelism flags for single- and multi-node strategies (spec §4.3)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from launchcard.resolve._context import Ctx, Src
from launchcard.sources import MinGpus, Recipe, TpSpec


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, (int, float)) else None


def _tp_from(ctx: Ctx, spec: TpSpec | None) -> int | None:
    """A ``tp`` field: a number, or a hardware-keyed map resolving to one."""
    value: Any = spec
    if isinstance(spec, Mapping):
        key = ctx.hw_key(spec)
        value = spec.get(key) if key is not None else None
    n = _num(value)
    if n is None or n <= 0:
        return None
    if ctx.prof.gen != "cpu":
        n = min(n, ctx.prof.gpu_count)
    return int(n)


def single_node_tp(ctx: Ctx) -> int:
    """The TP size of ``single_node_tp``; gpu_count for every other strategy."""
    gpus = ctx.prof.gpu_count
    if ctx.strategy_name != "single_node_tp":
        return gpus
    for value in (ctx.variant.tp, ctx.recipe.override("single_node_tp").tp):
        tp = _tp_from(ctx, value)
        if tp is not None:
            return tp
    return auto_fit_tp(ctx)


def auto_fit_tp(ctx: Ctx) -> int:
    gpus = ctx.prof.gpu_count
    need = ctx.variant.vram_minimum_gb
    per_gpu = (ctx.prof.vram_gb or 0) / gpus if gpus else 0
    if not need or not per_gpu:
        return gpus
    return 1 if need <= per_gpu else gpus


def fits_single_node(ctx: Ctx) -> bool:
    need = ctx.variant.vram_minimum_gb
    vram = ctx.prof.vram_gb
    return not need or not vram or need <= vram


def pd_fits_single_node(ctx: Ctx) -> bool:
    need = ctx.variant.vram_minimum_gb or 0
    return ctx.prof.gpu_count >= 2 and (ctx.prof.vram_gb or 0) >= 2 * need


def parallel_tokens(ctx: Ctx, rank: int, host: str) -> list[tuple[list[Any], Src]]:
    """Tokens appended after the strategy block for node ``rank`` (memoised per scope)."""
    key = ("parallel", rank, host, ctx.node_count)
    hit = ctx.scope.memo.get(key)
    if hit is None:
        hit = ctx.scope.memo[key] = (_parallel_tokens(ctx, rank, host), ())
    tokens: list[tuple[list[Any], Src]] = hit[0]
    return tokens


def _parallel_tokens(ctx: Ctx, rank: int, host: str) -> list[tuple[list[Any], Src]]:
    strat = ctx.strategy
    sdoc = ctx.strategy_doc
    flag = strat.parallel_flag or "--tensor-parallel-size"
    n, gpus = ctx.node_count, ctx.prof.gpu_count
    src = Src("parallelism", ctx.strategy_name, sdoc, ("parallel_flag",) if sdoc else ())
    multi = ctx.deploy_type == "multi_node" and n > 1
    if not multi:
        return [([flag, str(single_node_tp(ctx))], src)]
    total = str(ctx.total_gpus)
    follower = rank > 0
    parallelism = strat.parallelism
    if flag == "--data-parallel-size":
        toks = ["--data-parallel-size", total, "--data-parallel-size-local", str(gpus),
                "--data-parallel-address", host]
        if follower:
            toks += ["--data-parallel-start-rank", str(rank * dep_local(ctx))]
    elif parallelism == "tp_pp":
        toks = ["--tensor-parallel-size", str(gpus), "--pipeline-parallel-size", str(n), "--nnodes", str(n),
                "--node-rank", str(rank), "--master-addr", host]
        if follower:
            toks.append("--headless")
    elif parallelism == "tp_dp":
        toks = ["--tensor-parallel-size", str(gpus), "--data-parallel-size", str(n),
                "--data-parallel-size-local", "1", "--data-parallel-address", host]
        if follower:
            toks += ["--data-parallel-start-rank", str(rank)]
    else:
        toks = ["--tensor-parallel-size", total, "--nnodes", str(n), "--node-rank", str(rank),
                "--master-addr", host]
        if follower:
            toks.append("--headless")
    return [(toks, src)]


def dep_local(ctx: Ctx) -> int:
    """dp_local for DEP follower start ranks: the recipe's last override, else gpu_count."""
    so = ctx.so
    so_hw = so.hardware_overrides
    gkey = ctx.gen_key(so_hw)
    exact = so_hw.get(ctx.hw)
    lists = [so.vllm_args or (), so.extra_args or (), (so_hw[gkey].extra_args or ()) if gkey else (),
             (exact.extra_args or ()) if exact else ()]
    found: Any = None
    for tokens in lists:
        for i, tok in enumerate(tokens):
            if tok == "--data-parallel-size-local" and i + 1 < len(tokens):
                found = tokens[i + 1]
    if found is not None:
        try:
            return int(found)
        except (TypeError, ValueError):
            pass
    return ctx.prof.gpu_count


def min_gpus_floor(recipe: Recipe, strategy: str, hw: str) -> int:
    """The GPU floor of ``strategy_min_gpus`` (spec §3.2 rule 2)."""
    raw: MinGpus | None = recipe.strategy_min_gpus

    def read(value: Any) -> float:
        if _num(value) is not None:
            return float(value)
        if isinstance(value, Mapping):
            for key in (strategy, "multi_node_" + strategy, "single_node_" + strategy):
                if _num(value.get(key)) is not None:
                    return float(value[key])
        return 0

    floor = read(raw)
    if isinstance(raw, Mapping) and hw in raw:
        floor = max(floor, read(raw[hw]))
    return int(floor)


def nodes_needed(floor: int, gpus_per_node: int | None) -> int:
    per = gpus_per_node or 8
    return max(1, math.ceil(floor / per))
