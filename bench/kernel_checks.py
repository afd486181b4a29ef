"""Report-only cross-checks of ``bench/predict_kernels.py`` (printed with its report, never recorded): the checks
behind its stand-ins (taking the W4A16 Marlin rows for vLLM's FP8/MXFP4 Marlin, another engine's balanced MoE rows
for a GPU whose own table holds skewed routing only, SGLang's DeepGEMM rows for vLLM's block-FP8 GEMMs).  Reads the
wheel's tables with predict_kernels' readers and fits.  One record is derived here as well (predict_kernels --write
records it): the MoE stand-in's per-shape ratio where the two engines' releases run different configs
(:func:`moe_stand_in_ratios`).
"""

from __future__ import annotations

import math
import statistics
import zipfile
from typing import Any

from kernel_fit import HALF_GRID, T0_GRID_MOE_US, fit, moe_points, weight_read
from predict_kernels import (
    DATA,
    KERNEL_SYSTEMS,
    MARLIN_BYTES,
    MARLIN_DTYPE,
    MXFP4_BYTES,
    OWN_VERSIONS,
    VERSIONS,
    block_rule,
    hw_figures,
    read_all,
)

# report only: the checks behind taking the W4A16 Marlin rows for vLLM's FP8/MXFP4 Marlin (launchcard.predict._marlin):
# vLLM's own Marlin MoE against SGLang's port on shapes both tables hold, and vLLM's MXFP4 Marlin rows against its
# W4A16 ones on one GPU (wheel system, vLLM table, SGLang table)
MARLIN_CHECKS = (("h100_sxm", "0.24.0", "0.5.10"), ("h200_sxm", "0.24.0", "0.5.10"), ("h100_sxm", "0.24.0", "0.5.14"),
                 ("l40s", "0.24.0", "0.5.14"))


def marlin_checks(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    """Report lines: vLLM / SGLang Marlin MoE latency on common balanced shapes by tokens per expert, and the fitted
    shares of vLLM's MXFP4 and W4A16 Marlin rows per GPU."""
    out: list[str] = []

    def rows(gpu: str, engine: str, ver: str, dtype: str) -> list[dict[str, Any]]:
        name = f"{DATA}{gpu}/moe/{engine}/{ver}/moe_perf.parquet"
        return [r for r in read_all(z, name) if r["moe_dtype"] == dtype and "marlin" in r["kernel_source"]
                and r["distribution"] == "balanced"] if name in names else []

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(r[k] for k in ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size",
                                    "moe_ep_size"))

    for gpu, v_ver, s_ver in MARLIN_CHECKS:
        v = {key(r): r["latency"] for r in rows(gpu, "vllm", v_ver, MARLIN_DTYPE)}
        s = {key(r): r["latency"] for r in rows(gpu, "sglang", s_ver, MARLIN_DTYPE)}
        common = [k for k in v if k in s]
        if len(common) < 20:
            continue
        by: dict[str, list[float]] = {}
        for k in common:
            tpe = k[0] * k[3] / k[4]
            edge = next(e for e in (4, 16, 64, 256, math.inf) if tpe < e)
            by.setdefault(f"< {edge:g}", []).append(v[k] / s[k])
        out.append(f"marlin check {gpu}: vLLM {v_ver} / SGLang {s_ver} Marlin MoE latency on {len(common)} common "
                   "shapes, by tokens per expert: " + "; ".join(f"{b} n={len(x)} {statistics.median(x):.2f}"
                                                                for b, x in by.items()))
    for gpu in ("h100_sxm", "h200_sxm", "l40s"):
        bw, fl, _ = hw_figures(gpu)
        got = []
        for dt, b in ((MARLIN_DTYPE, MARLIN_BYTES), ("w4a16_mxfp4", MXFP4_BYTES)):
            pts = moe_points(rows(gpu, "vllm", VERSIONS["vllm"], dt), bw, fl, {dt: ("bf16", b)},
                             marlin=True).get(dt, [])
            if len(pts) >= 20:
                par = fit(pts, HALF_GRID["moe"], T0_GRID_MOE_US)
                wr = weight_read(pts)
                got.append(f"{dt} ({len(pts)} rows) e_comp {par['e_comp']:.3f} weight read "
                           + (f"{wr[0]:.3f}" if wr else "-"))
        if len(got) == 2:
            out.append(f"marlin check {gpu} vLLM {VERSIONS['vllm']}: " + " vs ".join(got))
    return out


# the check behind launchcard.predict._kernels.MOE_STAND_IN (a GPU whose engine's MoE table holds skewed routing only
# takes another engine's balanced rows of the same kernel on that GPU), and the record behind its per-shape ratio
# (launchcard.predict._fused_moe.stand_in_ratio): the two engines' latency on the shapes both measured at each skewed
# distribution. (wheel system, engine, its kernel source substring, stand-in engine, its kernel source substring):
# vLLM 0.14.0's fused Triton MoE against SGLang 0.5.10's on the A100
MOE_STAND_IN_CHECKS = (("a100_sxm", "vllm", "vllm_fused_moe", "sglang", "sglang_fused_moe_triton"),)
# a row's regime: tokens M <= the rank's experts E, or above: get_default_config's two branches for 16-bit experts
# (BLOCK_SIZE_M 16 while M <= E, else 64: vLLM 0.11.0 fused_moe.py L877-918 to 0.16.0; SGLang 0.5.10
# fused_moe_triton_config.py), where the two engines' configs part when one ships a tuned file and the other not
REGIMES = ("le", "gt")


def _stand_in_tables(z: zipfile.ZipFile, names: set[str], gpu: str, engine: str, src: str, other: str,
                     other_src: str) -> tuple[dict[tuple[Any, ...], float], dict[tuple[Any, ...], float]]:
    tables = []
    for eng, s in ((engine, src), (other, other_src)):
        name = f"{DATA}{gpu}/moe/{eng}/{(VERSIONS | OWN_VERSIONS.get(gpu, {}))[eng]}/moe_perf.parquet"
        tables.append({(r["distribution"], r["num_tokens"], r["hidden_size"], r["inter_size"], r["topk"],
                        r["num_experts"], r["moe_tp_size"], r["moe_ep_size"]): r["latency"]
                       for r in (read_all(z, name) if name in names else [])
                       # no expert parallelism: the rows the MoE fit takes (moe_points)
                       if r["moe_dtype"] == "bfloat16" and s in r["kernel_source"] and r["moe_ep_size"] <= 1})
    return tables[0], tables[1]


def _config_differs(gpu: str, engine: str, other: str, experts: int, n: int) -> bool:
    """Whether the two engines' table releases run the 16-bit fused MoE of (E, N) on ``gpu`` with different configs:
    one ships a tuned file the other lacks, different files, or different default rules (data/fused_moe_blocks.json)."""
    hw = KERNEL_SYSTEMS[gpu]
    vers = VERSIONS | OWN_VERSIONS.get(gpu, {})
    a, b = (block_rule(e, vers[e], hw, experts, n, "bfloat16") for e in (engine, other))
    return a.tuned != b.tuned or (not a.tuned and a.default != b.default)


def moe_stand_in_ratios(z: zipfile.ZipFile, names: set[str]) -> dict[str, Any]:
    """The record of launchcard.predict._fused_moe.stand_in_ratio: per catalog GPU and engine of MOE_STAND_IN_CHECKS,
    for each (E, N) (N = inter_size / moe_tp_size) whose two table releases run different configs, the median of the
    engine's latency over its stand-in's on the rows both measured (both skewed distributions, every hidden size and
    top-k), by regime (tokens <= E, above)."""
    gpus: dict[str, Any] = {}
    for gpu, engine, src, other, other_src in MOE_STAND_IN_CHECKS:
        mine, theirs = _stand_in_tables(z, names, gpu, engine, src, other, other_src)
        by: dict[tuple[int, int], dict[str, list[float]]] = {}
        for k, v in mine.items():
            experts, n = int(k[5]), int(k[3]) // int(k[6])
            if k in theirs and theirs[k] > 0 and _config_differs(gpu, engine, other, experts, n):
                by.setdefault((experts, n), {}).setdefault(REGIMES[k[1] > experts], []).append(v / theirs[k])
        vers = VERSIONS | OWN_VERSIONS.get(gpu, {})
        gpus.setdefault(KERNEL_SYSTEMS[gpu], {})[engine] = {
            "stand_in": other, "releases": {engine: vers[engine], other: vers[other]},
            "shapes": {f"{e},{n}": {**{g: round(statistics.median(x[g]), 3) for g in REGIMES if g in x},
                                    "rows": sum(len(v) for v in x.values())}
                       for (e, n), x in sorted(by.items())}}
    return {"about": "The routed experts' time where another engine's fused Triton MoE rows stand in for the engine's "
                     "own (launchcard.predict._kernels.MOE_STAND_IN), per (E, N) whose two table releases run the "
                     "kernel with different configs (a tuned file one ships and the other lacks, "
                     "data/fused_moe_blocks.json): the median of the engine's latency over the stand-in's on the rows "
                     "both tables measured at the same skewed distribution, at tokens <= E (le) and above (gt), "
                     "get_default_config's two branches. Written by bench/predict_kernels.py --write "
                     "(bench/kernel_checks.py moe_stand_in_ratios).",
            "gpus": gpus}


def moe_stand_in_checks(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    """Report lines: an engine's MoE latency over its stand-in's on the common BF16 shapes without expert
    parallelism of each distribution both tables hold (median, and by tokens per expert), and by whether the two
    releases run the shape's kernel with the same config (tuned file or default rule) or not, by regime."""
    out: list[str] = []
    for gpu, engine, src, other, other_src in MOE_STAND_IN_CHECKS:
        mine, theirs = _stand_in_tables(z, names, gpu, engine, src, other, other_src)
        for dist in sorted({k[0] for k in mine if k in theirs}):
            common = [k for k in mine if k[0] == dist and k in theirs and theirs[k] > 0]
            by: dict[str, list[float]] = {}
            for k in common:
                edge = next(e for e in (2, 32, 512, math.inf) if k[1] * k[4] / k[5] < e)
                by.setdefault(f"< {edge:g}", []).append(mine[k] / theirs[k])
            out.append(f"moe stand-in check {gpu} {dist}: {engine} / {other} latency on {len(common)} common BF16 "
                       f"shapes: median {statistics.median(mine[k] / theirs[k] for k in common):.2f}; by tokens per "
                       "expert: " + "; ".join(f"{b} n={len(x)} {statistics.median(x):.2f}" for b, x in by.items()))
        alike: dict[tuple[bool, str], list[float]] = {}
        differ: set[str] = set()
        for k, v in mine.items():
            if k in theirs and theirs[k] > 0:
                experts, n = int(k[5]), int(k[3]) // int(k[6])
                d = _config_differs(gpu, engine, other, experts, n)
                if d:
                    differ.add(f"E={experts},N={n}")
                alike.setdefault((d, REGIMES[k[1] > experts]), []).append(v / theirs[k])
        if not alike:
            continue
        out.append(f"moe stand-in check {gpu}: {engine} / {other} latency by config (tuned file or default rule) "
                   "and tokens M vs E: " + "; ".join(
                       f"{'configs differ' if d else 'same config'} M {'<=' if g == 'le' else '>'} E "
                       f"n={len(x)} {statistics.median(x):.2f}" for (d, g), x in sorted(alike.items()))
                   + f" (configs differ: {', '.join(sorted(differ)) or 'none'})")
    return out


# report only: the check behind BLOCK_STAND_IN: vLLM's block-FP8 rows against SGLang's DeepGEMM rows (and vLLM's
# per-tensor CUTLASS rows) of the same shapes, the latency difference by rows M (a per-call floor shows as a constant)
BLOCK_FLOOR_GPUS = ("h100_sxm", "h200_sxm", "b200_sxm", "l40s")


def block_floor_checks(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    """Report lines: median latency difference of vLLM's fp8_block rows over SGLang's DeepGEMM rows (else vLLM's own
    per-tensor fp8 rows) on the shapes both measured, by rows M."""
    out: list[str] = []
    for gpu in BLOCK_FLOOR_GPUS:
        def rows(engine: str, dtype: str, g: str = gpu) -> dict[tuple[int, int, int], float]:
            name = f"{DATA}{g}/gemm/{engine}/{VERSIONS[engine]}/gemm_perf.parquet"
            got: dict[tuple[int, int, int], float] = {}
            for r in (read_all(z, name) if name in names else []):
                if r["gemm_dtype"] == dtype:
                    k = (r["m"], r["n"], r["k"])
                    got[k] = min(got.get(k, math.inf), float(r["latency"]))
            return got

        mine, theirs, whose = rows("vllm", "fp8_block"), rows("sglang", "fp8_block"), "SGLang fp8_block"
        if not theirs:
            theirs, whose = rows("vllm", "fp8"), "vLLM per-tensor fp8"
        edges = (32, 512, 4096, math.inf)
        by: dict[float, list[float]] = {}
        for k, v in mine.items():
            if k in theirs:
                by.setdefault(next(e for e in edges if k[0] < e), []).append((v - theirs[k]) * 1e3)
        if by:
            out.append(f"block floor check {gpu}: vLLM {VERSIONS['vllm']} fp8_block (fastest kernel) minus {whose} "
                       "latency, us: " + "; ".join(f"M < {e:g} n={len(by[e])} {statistics.median(by[e]):.1f}"
                                                   for e in edges if e in by))
    return out
