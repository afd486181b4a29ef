"""Parallelism flags for single- and multi-node strategies (spec §4.3)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from launchcard.resolve._context import Ctx, Derivation, Given, Src
from launchcard.sources import MinGpus, Recipe, TpSpec


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, (int, float)) else None


def _tp_from(ctx: Ctx, spec: TpSpec | None, where: Src) -> tuple[int, Src] | None:
    """A ``tp`` field (a number, or a hardware-keyed map resolving to one) and the credit of its value:
    the line writing it, or, when the node has fewer GPUs than it asks, derived from it and the GPU count."""
    value: Any = spec
    if isinstance(spec, Mapping):
        key = ctx.hw_key(spec)
        value = spec.get(key) if key is not None else None
        where = Src(where.layer, where.key, where.doc, where.path + (key,))
    n = _num(value)
    if n is None or n <= 0:
        return None
    if ctx.prof.gen != "cpu" and n > ctx.prof.gpu_count:
        name = ".".join(str(p) for p in where.path)
        return ctx.prof.gpu_count, _derived(
            where, f"{name} ({value}) capped at the node's GPU count",
            Given(name, value, where.doc, where.path), ctx.gpu_count_given())
    return int(n), where


def _derived(like: Src, rule: str, *inputs: Given) -> Src:
    return Src(like.layer, like.key, None, (), Derivation(rule, inputs))


def single_node_tp(ctx: Ctx) -> int:
    """The TP size of ``single_node_tp``; gpu_count for every other strategy."""
    if ctx.strategy_name != "single_node_tp":
        return ctx.prof.gpu_count
    for value in (ctx.variant.tp, ctx.recipe.override("single_node_tp").tp):
        found = _tp_from(ctx, value, _NOWHERE)
        if found is not None:
            return found[0]
    return auto_fit_tp(ctx)


_NOWHERE = Src("", None, None)


def single_node_tp_credit(ctx: Ctx) -> tuple[int, Src]:
    """The TP size of a single-node strategy and where it comes from."""
    gpus = ctx.prof.gpu_count
    src = Src("parallelism", ctx.strategy_name, None)
    if ctx.strategy_name != "single_node_tp":
        return gpus, _derived(src, f"strategy {ctx.strategy_name} uses every GPU of the node",
                              ctx.gpu_count_given())
    override = ctx.recipe.override("single_node_tp")
    for value, where in (
            (ctx.variant.tp, ctx.src("variant", ctx.variant_key, *ctx.variant_path, "tp")),
            (override.tp, ctx.src("strategy_override", "single_node_tp", "strategy_overrides", "single_node_tp",
                                  "tp"))):
        found = _tp_from(ctx, value, where)
        if found is not None:
            return found
    return auto_fit_tp(ctx), _auto_fit_credit(ctx, src)


def auto_fit_tp(ctx: Ctx) -> int:
    gpus = ctx.prof.gpu_count
    need = ctx.variant.vram_minimum_gb
    per_gpu = (ctx.prof.vram_gb or 0) / gpus if gpus else 0
    if not need or not per_gpu:
        return gpus
    return 1 if need <= per_gpu else gpus


def _auto_fit_credit(ctx: Ctx, src: Src) -> Src:
    need = ctx.variant.vram_minimum_gb
    gpus = ctx.gpu_count_given()
    if not need or not ctx.prof.vram_gb:
        return _derived(src, "no tp and no planning minimum in the recipe: every GPU of the node", gpus)
    name = f"variants.{ctx.variant_key}.vram_minimum_gb"
    given = (Given(name, need, ctx.doc, (*ctx.variant_path, "vram_minimum_gb")),
             Given(f"hardware_profiles.{ctx.hw}.vram_gb", ctx.prof.vram_gb, ctx.repo.taxonomy,
                   ("hardware_profiles", ctx.hw, "vram_gb")), gpus)
    if auto_fit_tp(ctx) == 1:
        return _derived(src, f"{name} fits one GPU (vram_gb / gpu_count): TP 1", *given)
    return _derived(src, f"{name} exceeds one GPU (vram_gb / gpu_count): every GPU of the node", *given)


def fits_single_node(ctx: Ctx) -> bool:
    need = ctx.variant.vram_minimum_gb
    vram = ctx.prof.vram_gb
    return not need or not vram or need <= vram


def pd_fits_single_node(ctx: Ctx) -> bool:
    need = ctx.variant.vram_minimum_gb or 0
    return ctx.prof.gpu_count >= 2 and (ctx.prof.vram_gb or 0) >= 2 * need


def parallel_tokens(ctx: Ctx, rank: int, host: str) -> list[tuple[list[Any], Src]]:
    """Tokens appended after the strategy block for node ``rank`` (memoised per scope), each group with its
    credit: a flag with the strategy line naming it, a value with the line writing it or how it was derived."""
    key = ("parallel", rank, host, ctx.node_count, ctx.nodes_given[:2], ctx.credit)
    hit = ctx.scope.memo.get(key)
    if hit is None:
        hit = ctx.scope.memo[key] = (_parallel_tokens(ctx, rank, host), ())
    tokens: list[tuple[list[Any], Src]] = hit[0]
    return tokens


class _Toks:
    """Parallelism tokens, each flag credited to the strategy line that names it and each value to its own."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.out: list[tuple[list[Any], Src]] = []
        strat, sdoc = ctx.strategy, ctx.strategy_doc
        self.on = ctx.credit  # off: the tokens alone, as one block (a batch of reference cases needs no credit)
        self.plain: list[Any] = []
        if not self.on:
            self.out.append((self.plain, Src("parallelism", ctx.strategy_name, sdoc, ("parallel_flag",) if sdoc
                                             else ())))
            return
        self.flag_src = Src("parallelism", ctx.strategy_name, sdoc, ("parallel_flag",) if sdoc else ())
        # flags the builder writes for a multi-node deployment: named by the strategy's parallelism (or its
        # deploy type where it has none)
        rule = ("parallelism",) if strat.parallelism else ("deploy_type",)
        self.rule_src = Src("parallelism", ctx.strategy_name, sdoc, rule if sdoc else ())

    def add(self, flag: str, value: Src | None = None, token: Any = None, *, named: bool = False) -> None:
        if not self.on:
            self.plain.append(flag)
            if token is not None:
                self.plain.append(str(token))
            return
        self.out.append(([flag], self.flag_src if named else self.rule_src))
        if value is not None:
            self.out.append(([str(token)], value))

    def switch(self, flag: str, rule: str, *inputs: Given) -> None:
        """A flag without a value that the builder adds by a rule."""
        if not self.on:
            self.plain.append(flag)
            return
        self.out.append(([flag], _derived(Src("parallelism", self.ctx.strategy_name, None), rule, *inputs)))

    def derived(self, rule: str, *inputs: Given) -> Src | None:
        if not self.on:
            return None
        return _derived(Src("parallelism", self.ctx.strategy_name, None), rule, *inputs)


def _parallel_tokens(ctx: Ctx, rank: int, host: str) -> list[tuple[list[Any], Src]]:
    strat = ctx.strategy
    flag = strat.parallel_flag or "--tensor-parallel-size"
    n, gpus = ctx.node_count, ctx.prof.gpu_count
    t = _Toks(ctx)
    multi = ctx.deploy_type == "multi_node" and n > 1
    if not multi:
        if not t.on:
            t.add(flag, None, single_node_tp(ctx))
            return t.out
        tp, credit = single_node_tp_credit(ctx)
        t.add(flag, credit, tp, named=True)
        return t.out
    total = per_node = rank_src = head = node_count = None
    if t.on:
        g, nodes = ctx.gpu_count_given(), ctx.nodes_given
        total = t.derived("GPUs per node × nodes", g, nodes)
        per_node = t.derived("GPUs per node", g)
        rank_src = t.derived(f"this command's node rank (0 = head) of {n} nodes", nodes)
        head = t.derived("placeholder: the head node's address (node rank 0), set at deploy time",
                         Given("deploy_type", ctx.deploy_type, ctx.strategy_doc, ("deploy_type",)))
        node_count = t.derived("nodes", nodes)
    follower = rank > 0
    parallelism = strat.parallelism
    if flag == "--data-parallel-size":
        t.add("--data-parallel-size", total, ctx.total_gpus, named=True)
        t.add("--data-parallel-size-local", per_node, gpus)
        t.add("--data-parallel-address", head, host)
        if follower:
            local, local_given = dep_local_credit(ctx)
            t.add("--data-parallel-start-rank", t.derived(
                "node rank × data-parallel ranks per node", Given("node rank", rank), local_given), rank * local)
    elif parallelism == "tp_pp":
        t.add("--tensor-parallel-size", per_node, gpus, named=flag == "--tensor-parallel-size")
        t.add("--pipeline-parallel-size", node_count, n)
        t.add("--nnodes", node_count, n)
        t.add("--node-rank", rank_src, rank)
        t.add("--master-addr", head, host)
        if follower:
            t.switch("--headless", "a follower (node rank > 0) runs without the API server", Given("node rank", rank))
    elif parallelism == "tp_dp":
        t.add("--tensor-parallel-size", per_node, gpus, named=flag == "--tensor-parallel-size")
        t.add("--data-parallel-size", node_count, n)
        t.add("--data-parallel-size-local", t.derived(
            "one data-parallel rank per node (parallelism tp_dp)",
            Given("parallelism", parallelism, ctx.strategy_doc, ("parallelism",))), 1)
        t.add("--data-parallel-address", head, host)
        if follower:
            t.add("--data-parallel-start-rank", rank_src, rank)
    else:
        t.add("--tensor-parallel-size", total, ctx.total_gpus, named=flag == "--tensor-parallel-size")
        t.add("--nnodes", node_count, n)
        t.add("--node-rank", rank_src, rank)
        t.add("--master-addr", head, host)
        if follower:
            t.switch("--headless", "a follower (node rank > 0) runs without the API server", Given("node rank", rank))
    return t.out


def dep_local_credit(ctx: Ctx) -> tuple[int, Given]:
    """dp_local for DEP follower start ranks and where it is written: the recipe's last
    ``--data-parallel-size-local`` override, else the GPU count."""
    so = ctx.so
    so_hw = so.hardware_overrides
    gkey = ctx.gen_key(so_hw)
    exact = so_hw.get(ctx.hw)
    sop = ctx.so_path
    lists = [(so.vllm_args or (), (*sop, "vllm_args")), (so.extra_args or (), (*sop, "extra_args")),
             ((so_hw[gkey].extra_args or ()) if gkey else (), (*sop, "hardware_overrides", gkey, "extra_args")),
             ((exact.extra_args or ()) if exact else (), (*sop, "hardware_overrides", ctx.hw, "extra_args"))]
    found: Any = None
    at: tuple[Any, ...] = ()
    for tokens, path in lists:
        for i, tok in enumerate(tokens):
            if tok == "--data-parallel-size-local" and i + 1 < len(tokens):
                found, at = tokens[i + 1], (*path, i + 1)
    if found is not None:
        try:
            return int(found), Given("--data-parallel-size-local", found, ctx.doc, at)
        except (TypeError, ValueError):
            pass
    return ctx.prof.gpu_count, ctx.gpu_count_given()


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
