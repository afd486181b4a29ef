"""launchcard's roofline of a measured kernel-table row and the few-parameter fit of its achieved share
(bench/predict_kernels.py reads the tables and records the fits):

    t = t0 + max(bytes / (BW * e_mem), flops / (FLOPS * e_comp * s / max(s, s_half)))

A row becomes a :data:`Point` (memory and compute seconds at the datasheet figures, fill size, measured seconds);
:func:`fit` takes the efficiencies, fill size and latency a class of points reaches, :func:`ridge_p` the dense GEMMs'
smooth-roofline exponent, :func:`weight_read` the few-row weight-read share.  Pure Python over rows: no table I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from typing import Any

from launchcard.predict._fused_moe import block_rule, is_triton_source, row_block
from launchcard.predict._marlin import moe_block, padded_balanced

# shapes whose roofline time at 100% is under this are launch/tail-latency bound: the step model's per-layer term
# (layer_us, fitted end to end) covers those, so they do not set the efficiencies
MIN_ROOF_S = 10e-6
MAX_ROWS = 1500  # per fitted group (a deterministic stride over the table): the fit is pure Python
HALF_GRID = {"gemm": (0, 16, 32, 64, 128, 256),
             "moe": (0,),
             "attn_prefill": (0, 64, 128, 256, 512, 1024),
             "attn_decode": (0,), "dsa_attn": (0,), "dsa_logits": (0,), "dsa_topk": (0,)}
T0_GRID_US = (0.0, 4.0, 8.0, 16.0, 32.0)
# exponents of the dense GEMMs' smooth roofline (ridge_p; 0 = max, tried too): recorded as the gemm class's "ridge_p"
RIDGE_GRID = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0)
RIDGE_BAND = 1 / 3  # the shapes the exponent is fitted on: the smaller part at least this share of the larger
# a grouped MoE call also routes, sorts and permutes its tokens (tens of microseconds more than a GEMM): the step
# model adds this latency to each MoE layer (KernelEff.x_t0)
T0_GRID_MOE_US = (0.0, 8.0, 16.0, 32.0, 48.0, 64.0)
Point = tuple[float, float, float, float]  # (memory s at 100%, compute s at 100%, fill size, measured s)
# weight reads: a decode step's GEMMs (a few rows) read each weight once; the share of the datasheet bandwidth the
# BF16 GEMMs reach there: rows with M <= 8 whose weight read takes >= 100 us at the datasheet figure (a kernel's
# launch and tail latency, the fits' t0 of 4-16 us, stays a small part of those)
W_READ_MAX_M, W_READ_MIN_S = 8, 100e-6


def gemm_points(rows: Iterable[dict[str, Any]], bw: float, fl: dict[str, float],
                dtypes: dict[str, tuple[str, float]]) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {}
    for r in rows:
        d = dtypes.get(r["gemm_dtype"])
        m, n, k = r["m"], r["n"], r["k"]
        # model-sized weights only: tiny N x K are launch-latency bound whatever the M
        if d is None or d[0] not in fl or min(n, k) < 256 or n * k < 2 ** 21:
            continue
        out.setdefault(r["gemm_dtype"], []).append(
            (n * k * d[1] / bw, 2.0 * m * n * k / fl[d[0]], float(m), r["latency"] * 1e-3))
    return out


def moe_points(rows: Iterable[dict[str, Any]], bw: float, fl: dict[str, float],
               dtypes: dict[str, tuple[str, float]], *, marlin: bool = False,
               triton: frozenset[str] = frozenset(), release: tuple[str, str, str] = ("", "", "")
               ) -> dict[str, list[Point]]:
    """A grouped gated-MLP MoE layer on one rank (balanced routing, no expert parallelism: the tables' EP rows
    route every rank's tokens through each rank's permute, a cost the step model times as all-to-all): weights of
    the experts the tokens touch (the step model's ``1 - (1 - k/E)^tokens``), FLOPs of the rank's share of
    tokens x top-k; ``marlin``: of those rows padded to the Marlin MoE kernel's row block, expert by expert
    (launchcard.predict._marlin.moe_block: the FLOPs the kernel does, so the share fitted is its full blocks').
    ``triton``: dtypes whose rows of the Triton fused MoE kernel (launchcard.predict._fused_moe) are padded to
    the BLOCK_SIZE_M the table's ``release`` (engine, release, catalog GPU) picks for each row's E, N and M (its
    tuned config file's entry nearest M, else get_default_config): those whose record the step model pads, most
    of their fitted rows being that kernel's."""
    out: dict[str, list[Point]] = {}
    for r in rows:
        d = dtypes.get(r["moe_dtype"])
        if d is None or d[0] not in fl or r["distribution"] != "balanced" or "nongated" in r["kernel_source"] \
                or r["num_tokens"] < 1 or r["moe_ep_size"] > 1:
            continue
        tok, h, inter, k, e = r["num_tokens"], r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"]
        tp, ep = max(1, r["moe_tp_size"]), max(1, r["moe_ep_size"])
        per_expert = 3.0 * h * inter / tp  # gate, up, down
        # the tables' "balanced" routing is deterministic, not random: token i takes experts i + j * ceil(E / k)
        # (aiconfigurator collector/helper.py balanced_logits), so min(E, tokens x k) distinct experts run (the
        # step model's random routing, 1 - (1 - k/E)^tokens, would leave a third of them idle at tokens = E / k
        # and credit the kernel with weight reads it does make)
        touched = min(1.0, tok * k / e)
        mem = (e / ep) * touched * per_expert * d[1] / bw
        rule = (block_rule(*release, e, inter // tp, r["moe_dtype"]) if r["moe_dtype"] in triton
                and is_triton_source(r["kernel_source"]) else None)
        rows_done = (padded_balanced(tok * k, e, moe_block(tok * k / e)) if marlin else
                     padded_balanced(tok * k, e, row_block(tok, e, rule)) if rule else tok * k)
        flop = 2.0 * rows_done * per_expert / ep / fl[d[0]]
        # the fill size: tokens per expert that runs (with few tokens only the touched experts do, each with 1)
        out.setdefault(r["moe_dtype"], []).append((mem, flop, tok * k / (e * touched), r["latency"] * 1e-3))
    return out


def attn_points(rows: Iterable[dict[str, Any]], bw: float, fl: dict[str, float], *, decode: bool) -> list[Point]:
    """Prefill: ``isl`` new tokens per sequence, causal ((isl+1)/2 keys per query); decode: one query per sequence
    over ``step`` cached tokens.  FLOPs per (query, key) pair 2 x heads x (qk + v dims); KV bytes per token
    2 x kv_heads x head_dim x dtype size; matmuls at the bf16 rate (attention runs in the activations' dtype)."""
    out: list[Point] = []
    for r in rows:
        if r["attn_dtype"] != "bfloat16" or r.get("window_size") or r.get("beam_width", 1) != 1:
            continue
        b, h, kvh, dim = r["batch_size"], r["num_heads"], r["num_key_value_heads"], r["head_dim"]
        kvb = 1.0 if r["kv_cache_dtype"] == "fp8" else 2.0
        pair = 2.0 * h * 2 * dim
        if decode:
            ctx = r["isl"] + r["step"] - 1
            # memory-bound at every GQA ratio the tables hold: the bandwidth term alone is fitted
            mem, flop, fill = b * ctx * 2 * kvh * dim * kvb / bw, 0.0, 0.0
        else:
            n = r["isl"]
            mem = b * n * 2 * kvh * dim * kvb / bw
            flop, fill = b * n * (n + 1) / 2 * pair / fl["bf16"], (n + 1) / 2
        out.append((mem, flop, fill, r["latency"] * 1e-3))
    return out


# DeepSeek Sparse Attention kernel tables (SGLang 0.5.14's sparse_attention/glm5_*: one GLM-5 layer's kernels at
# kernel level): the indexer's FP8 logits (deep_gemm.fp8_mqa_logits, GLM-5's 32 index heads of 128), its top-k
# (fast_topk_transform_fused, reading the float32 logits) and the sparse MLA (flash_mla_sparse_fwd, 64 heads,
# latent 512 + rope 64); ``isl`` new tokens per sequence after ``step`` cached ones.  vLLM runs the same kernel
# libraries (FlashMLA sparse, DeepGEMM's MQA logits): launchcard.predict._dsa reads these for either engine
DSA_TABLES = {"dsa_attn": "glm5_dsa_attn_module_perf", "dsa_logits": "glm5_mqa_logits_module_perf",
              "dsa_topk": "glm5_topk_module_perf"}
GLM5_INDEX_HEADS, GLM5_HEADS, INDEX_DIM, LATENT_QK, LATENT_V, TOPK = 32, 64, 128, 576, 512, 2048


def dsa_points(rows: Iterable[dict[str, Any]], bw: float, fl: dict[str, float], cls: str,
               head_block: int = 64) -> list[Point]:
    """Logits: 2 x index heads x index dim FLOPs per causal (query, key) pair at the FP8 rate; top-k: the 4-byte
    logits of every pair read once; sparse MLA: 2 x heads x (576 + 512) FLOPs per query for every one of the 2,048
    index slots (FlashMLA walks them all, valid or not: the table's short contexts cost the same per query), the
    heads padded to the kernel's block (``head_block``: its BF16 prefill kernel takes 64 on Hopper, 128 on
    Blackwell; vLLM 0.15.1 v1/attention/backends/mla/flashmla_sparse.py L729-732)."""
    out: list[Point] = []
    for r in rows:
        b, n, p = r["batch_size"], r["isl"], r["step"]
        pairs = b * (n * p + n * (n + 1) / 2)
        if cls == "dsa_logits":
            pt = (0.0, 2.0 * GLM5_INDEX_HEADS * INDEX_DIM * pairs / fl["fp8"], 0.0)
        elif cls == "dsa_topk":
            pt = (4.0 * pairs / bw, 0.0, 0.0)
        else:
            heads = -(-GLM5_HEADS // head_block) * head_block
            pt = (0.0, 2.0 * heads * (LATENT_QK + LATENT_V) * b * n * TOPK / fl["bf16"], 0.0)
        if r["latency"] > 0:
            out.append((*pt, r["latency"] * 1e-3))
    return out


def allreduce_points(rows: Iterable[dict[str, Any]], link: float) -> dict[int, list[Point]]:
    """Graph-captured all-reduce of ``message_size`` bf16 elements over ``num_gpus``: the ring's
    2(g-1)/g x bytes over the per-GPU one-way link (the step model's ``_all_reduce``)."""
    out: dict[int, list[Point]] = {}
    for r in rows:
        if "eager" in r["kernel_source"].lower() or r.get("allreduce_dtype", "bfloat16") != "bfloat16":
            continue
        g = r["num_gpus"]
        nbytes = r["message_size"] * 2.0
        out.setdefault(g, []).append((2 * (g - 1) / g * nbytes / link, 0.0, 0.0, r["latency"] * 1e-3))
    return out


def weight_read(points: list[Point]) -> tuple[float, int] | None:
    """Median share of the datasheet bandwidth a few-row GEMM's weight read reaches (None: under 20 such rows)."""
    sel = [p[0] / p[3] for p in points if p[2] <= W_READ_MAX_M and p[0] >= W_READ_MIN_S]
    return (statistics.median(sel), len(sel)) if len(sel) >= 20 else None


def fill_share(size: float, half: float) -> float:
    """Share of the machine a kernel of fill size ``size`` keeps busy: tiles are ``half`` rows (tokens, tokens per
    expert, keys per query) tall, so fewer rows cost a whole tile; the step model uses the same form."""
    return size / max(size, half) if half else 1.0


def predict(p: Point, e_mem: float, e_comp: float, half: float, t0: float) -> float:
    fill = fill_share(p[2], half)
    return t0 + max(p[0] / e_mem, p[1] / (e_comp * fill) if p[1] else 0.0)


def ridge_p(points: list[Point], e_mem: float, e_comp: float, half: float, t0: float) -> float:
    """The exponent ``p`` of the smooth roofline ``(mem^p + comp^p)^(1/p)`` that fits a GEMM table best (0: the plain
    ``max``), with memory at ``e_mem`` (the step model's weight-read share), compute at ``e_comp`` over the tile fill
    and the fit's latency ``t0`` taken off each row (the step model's per-layer term covers it).  A GEMM whose weight
    read and FLOPs take about as long (near its ridge point: M ~ FLOP/s share / bandwidth share rows) overlaps them
    only in part (vLLM 0.14.0's A100 table: 16384 x 4096 takes 106 us at 128 rows and 204 us at 160 to 384 rows,
    1.6-2.4x the larger part at 160-192 rows; the H100's 1.1-1.4x at its ridge, 160-256 rows); max() keeps that share
    out of every step whose decode batch sits near the ridge.  Median |log(predicted / measured)| over the shapes of
    at least ``MIN_ROOF_S`` whose two parts are within ``RIDGE_BAND`` of each other (further out the exponent matters
    less, at a third p = 3 adds 1.2% and p = 2 5.4%, and a median over all shapes would not see it), on
    ``RIDGE_GRID``."""
    sel = []
    for p in points:
        m, c = p[0] / e_mem, p[1] / (e_comp * fill_share(p[2], half)) if p[1] else 0.0
        if max(p[0], p[1]) >= MIN_ROOF_S and p[3] > t0 and m and c and min(m, c) >= RIDGE_BAND * max(m, c):
            sel.append((m, c, p[3] - t0))
    pts = sel[::max(1, math.ceil(len(sel) / MAX_ROWS))]
    if len(pts) < 20:
        return 0.0

    def err(q: float) -> float:
        return statistics.median(abs(math.log(((m ** q + c ** q) ** (1.0 / q) if q else max(m, c)) / t))
                                 for m, c, t in pts)

    return min((0.0, *RIDGE_GRID), key=err)


def thin(points: list[Point], cap: int = MAX_ROWS) -> list[Point]:
    step = max(1, math.ceil(len(points) / cap))
    return points[::step]


def fit(points: list[Point], halves: tuple[int, ...], t0_grid: tuple[float, ...] = T0_GRID_US) -> dict[str, float]:
    """Efficiencies (at most 1: the datasheet is the peak), fill size and latency minimising the median
    |log(predicted / measured)| over the shapes of at least ``MIN_ROOF_S`` (grid over the fill size and latency;
    for each, alternate: assign each shape to its roofline branch, set each efficiency to the median the branch's
    shapes reach).  The error reported is over those shapes."""
    pts = thin([p for p in points if max(p[0], p[1]) >= MIN_ROOF_S])
    if len(pts) < 20:
        pts = thin(points)
    best: tuple[float, dict[str, float]] | None = None
    for half in halves:
        for t0_us in t0_grid:
            t0 = t0_us * 1e-6
            e_m, e_c = 0.8, 0.7
            for _ in range(4):
                mem_r, comp_r = [], []
                for p in pts:
                    left = p[3] - t0
                    if left <= 0:
                        continue
                    fill = fill_share(p[2], half)
                    if p[0] / e_m >= (p[1] / (e_c * fill) if p[1] else 0.0):
                        mem_r.append(p[0] / left)
                    else:
                        comp_r.append(p[1] / fill / left)
                e_m = min(1.0, statistics.median(mem_r)) if mem_r else e_m
                e_c = min(1.0, statistics.median(comp_r)) if comp_r else e_c
            err = statistics.median(abs(math.log(predict(p, e_m, e_c, half, t0) / p[3])) for p in pts)
            if best is None or err < best[0]:
                best = (err, {"e_mem": e_m, "e_comp": e_c, "s_half": float(half), "t0_us": t0_us})
    assert best is not None
    par = best[1]
    errs = sorted(abs(predict(p, par["e_mem"], par["e_comp"], par["s_half"], par["t0_us"] * 1e-6) - p[3]) / p[3]
                  for p in points if max(p[0], p[1]) >= MIN_ROOF_S) or [math.nan]
    par.update({"rows": float(len(points)), "fit_rows": float(len(pts)), "err_median": errs[len(errs) // 2],
                "err_p90": errs[min(len(errs) - 1, math.ceil(0.9 * len(errs)) - 1)]})
    return par


def bins(points: list[Point], edges: tuple[float, ...], key: Callable[[Point], float]) -> list[tuple[str, int, float]]:
    """Median achieved fraction of the roofline (max of the two bounds at 100%) per bin of ``key``."""
    out = []
    lo = 0.0
    for hi in (*edges, math.inf):
        sel = [max(p[0], p[1]) / p[3] for p in points if lo <= key(p) < hi]
        if sel:
            out.append((f"[{lo:g}, {hi:g})", len(sel), statistics.median(sel)))
        lo = hi
    return out
