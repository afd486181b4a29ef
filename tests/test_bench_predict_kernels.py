"""The kernel-table fit (bench/predict_kernels.py): launchcard's roofline of a measured shape, and a fit that
recovers the terms a table was made with.  Synthetic rows only: the wheel's parquet tables need pyarrow (the
``calibrate`` extra), which CI does not install."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from kernel_fit import (  # noqa: E402
    HALF_GRID,
    T0_GRID_MOE_US,
    attn_points,
    fill_share,
    fit,
    gemm_points,
    moe_points,
    ridge_p,
)
from predict_kernels import marlin_by_n, moe_by_n  # noqa: E402

BW, FL = 4.8e12, {"bf16": 989e12, "fp8": 1979e12}
DT = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0)}


def test_a_gemm_shape_is_timed_as_launchcard_times_it() -> None:
    row = {"gemm_dtype": "fp8", "m": 4096, "n": 8192, "k": 4096, "latency": 1.0}
    (mem, flop, fill, t), = gemm_points([row], BW, FL, DT)["fp8"]
    assert mem == pytest.approx(8192 * 4096 * 1.0 / BW)  # weight bytes over bandwidth
    assert flop == pytest.approx(2 * 4096 * 8192 * 4096 / 1979e12)  # FLOPs over the dtype's dense FLOP/s
    assert fill == 4096 and t == pytest.approx(1e-3)  # milliseconds in the tables
    tiny = dict(row, n=128, k=128)
    assert gemm_points([tiny], BW, FL, DT) == {}  # launch-bound shapes are not model GEMMs


def test_moe_rows_are_timed_with_the_tables_own_routing() -> None:
    """The tables' "balanced" rows route token i to experts i + j x ceil(E / k) (aiconfigurator's collector,
    balanced_logits): exactly min(E, tokens x k) experts run, each with tokens x k / E once all do.  Timing them
    with random routing (1 - (1 - k/E)^tokens experts) would credit the kernel with weight reads it does make."""
    row = {"moe_dtype": "bfloat16", "distribution": "balanced", "kernel_source": "triton", "num_tokens": 2,
           "hidden_size": 4096, "inter_size": 2048, "topk": 8, "num_experts": 256, "moe_tp_size": 1,
           "moe_ep_size": 1, "latency": 0.1}
    (mem, flop, fill, _), = moe_points([row], BW, FL, DT)["bfloat16"]
    assert mem == pytest.approx(16 * 3 * 4096 * 2048 * 2 / BW)  # 2 tokens x top-8: 16 experts' weights
    assert flop == pytest.approx(2 * 2 * 8 * 3 * 4096 * 2048 / 989e12)
    assert fill == pytest.approx(1.0)  # one token each
    (mem32, _, fill32, _), = moe_points([dict(row, num_tokens=32)], BW, FL, DT)["bfloat16"]
    assert mem32 == pytest.approx(256 * 3 * 4096 * 2048 * 2 / BW) and fill32 == pytest.approx(1.0)  # all 256 run
    (_, _, fill64, _), = moe_points([dict(row, num_tokens=64)], BW, FL, DT)["bfloat16"]
    assert fill64 == pytest.approx(2.0)
    assert moe_points([dict(row, moe_ep_size=8)], BW, FL, DT) == {}  # EP rows: routing cost, not modelled here
    assert moe_points([dict(row, distribution="power_law_1.01")], BW, FL, DT) == {}


def test_fit_recovers_a_grouped_calls_fixed_latency() -> None:
    """A MoE table made with a fixed latency per call (routing, sorting, permuting): the fit returns it, with the
    efficiencies, instead of folding it into a lower bandwidth share at few tokens."""
    pts = []
    for e in (8, 64, 128, 256):
        for tok in (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384):
            touched = min(1.0, tok * 8 / e)
            mem = e * touched * 3 * 4096 * 1536 * 2 / BW
            flop = 2 * tok * 8 * 3 * 4096 * 1536 / 989e12
            pts.append((mem, flop, tok * 8 / (e * touched), 32e-6 + max(mem / 0.8, flop / 0.3)))
    got = fit(pts, HALF_GRID["moe"], T0_GRID_MOE_US)
    assert got["t0_us"] == 32.0 and got["s_half"] == 0 and got["err_median"] < 0.01
    assert got["e_mem"] == pytest.approx(0.8, rel=0.02) and got["e_comp"] == pytest.approx(0.3, rel=0.02)


def test_prefill_attention_counts_causal_pairs() -> None:
    row = {"attn_dtype": "bfloat16", "window_size": 0, "batch_size": 2, "num_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "kv_cache_dtype": "bfloat16", "isl": 1000, "step": 0, "latency": 1.0}
    (_, flop, keys, _), = attn_points([row], BW, FL, decode=False)
    assert flop == pytest.approx(2 * 1000 * 1001 / 2 * (2 * 32 * 256) / 989e12)
    assert keys == pytest.approx(500.5)


def _table(e_mem: float, e_comp: float, half: float, t0: float, wbytes: float, flops: float) -> list[
        tuple[float, float, float, float]]:
    pts = []
    for m in (1, 4, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384):
        for n, k in ((4096, 4096), (8192, 4096), (14336, 4096), (4096, 14336)):
            mem, flop = n * k * wbytes / BW, 2 * m * n * k / flops
            pts.append((mem, flop, float(m), t0 + max(mem / e_mem, flop / (e_comp * fill_share(m, half)))))
    return pts


def test_fit_recovers_the_terms_a_table_was_made_with() -> None:
    got = fit(_table(0.8, 0.55, 0.0, 8e-6, 2.0, 989e12), (0, 16, 32, 64, 128, 256))
    assert got["e_mem"] == pytest.approx(0.8, rel=0.02) and got["e_comp"] == pytest.approx(0.55, rel=0.02)
    assert got["s_half"] == 0 and got["t0_us"] == 8.0 and got["err_median"] < 0.01


def test_below_a_tile_the_padding_and_the_bandwidth_share_are_one_explanation() -> None:
    """FP8 on an H200 with 256-row tiles: below 256 rows a tile's FLOPs take longer than reading the weights, and
    both grow with N x K alone, so padded FLOPs and a lower bandwidth share time those shapes alike.  The fit
    reproduces the times and the full-tile FLOP/s share, whichever of the two it picks (the step model takes the
    FLOP/s share and the tile only; its bandwidth share is fitted on served steps)."""
    got = fit(_table(0.8, 0.5, 256.0, 4e-6, 1.0, 1979e12), (0, 16, 32, 64, 128, 256))
    assert got["e_comp"] == pytest.approx(0.5, rel=0.05) and got["err_median"] < 0.01 and got["err_p90"] < 0.05


def test_moe_stand_in_check_compares_the_engines_on_common_shapes_without_expert_parallelism(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The check behind launchcard.predict._kernels.MOE_STAND_IN: one engine's latency over the other's on the BF16
    shapes both tables hold, per distribution; expert-parallel rows (which the MoE fit leaves out), other dtypes and
    other kernels are not compared."""
    import zipfile

    import kernel_checks as kc
    import predict_kernels as pk

    def row(src: str, tokens: int, lat: float, ep: int = 1, dtype: str = "bfloat16") -> dict[str, object]:
        return {"distribution": "power_law_1.01", "num_tokens": tokens, "hidden_size": 4096, "inter_size": 1536,
                "topk": 8, "num_experts": 128, "moe_tp_size": 8, "moe_ep_size": ep, "moe_dtype": dtype,
                "kernel_source": src, "latency": lat}

    gpu, engine, src, other, other_src = kc.MOE_STAND_IN_CHECKS[0]
    vers = pk.VERSIONS | pk.OWN_VERSIONS[gpu]
    mine = f"{pk.DATA}{gpu}/moe/{engine}/{vers[engine]}/moe_perf.parquet"
    theirs = f"{pk.DATA}{gpu}/moe/{other}/{vers[other]}/moe_perf.parquet"
    tables = {mine: [row(src, 1, 1.0), row(src, 64, 3.0), row(src, 64, 9.0, ep=8), row(src, 256, 1.0, dtype="fp8")],
              theirs: [row(other_src, 1, 2.0), row(other_src, 64, 3.0), row(other_src, 64, 1.0, ep=8),
                       row(other_src, 256, 1.0, dtype="fp8"), row("marlin", 1, 0.1)]}
    monkeypatch.setattr(kc, "read_all", lambda z, name: tables[name])
    lines = kc.moe_stand_in_checks(zipfile.ZipFile.__new__(zipfile.ZipFile), set(tables))
    assert len(lines) == 2 and "on 2 common BF16 shapes: median 0.75" in lines[0]
    assert "< 2 n=1 0.50" in lines[0] and "< 32 n=1 1.00" in lines[0]  # 1 x 8 / 128 and 64 x 8 / 128 tokens/expert
    # E=128, N=1536/8: vLLM ships a tuned A100 file SGLang 0.5.10 lacks (data/fused_moe_blocks.json)
    assert lines[1].endswith("configs differ M <= E n=2 0.75 (configs differ: E=128,N=192)")
    assert kc.moe_stand_in_checks(zipfile.ZipFile.__new__(zipfile.ZipFile), set()) == []  # tables absent: no line


def test_moe_stand_in_ratios_record_the_shapes_whose_configs_differ_by_regime(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record behind launchcard.predict._fused_moe.stand_in_ratio: per (E, N) whose two table releases run
    different configs, the engine's latency over the stand-in's at tokens <= E and above; shapes run with the same
    config (E=128, N=384 on the A100: neither ships a file) are not recorded."""
    import zipfile

    import kernel_checks as kc
    import predict_kernels as pk

    def row(src: str, tokens: int, lat: float, tp: int = 8, dist: str = "power_law_1.01") -> dict[str, object]:
        return {"distribution": dist, "num_tokens": tokens, "hidden_size": 4096, "inter_size": 1536, "topk": 8,
                "num_experts": 128, "moe_tp_size": tp, "moe_ep_size": 1, "moe_dtype": "bfloat16",
                "kernel_source": src, "latency": lat}

    gpu, engine, src, other, other_src = kc.MOE_STAND_IN_CHECKS[0]
    vers = pk.VERSIONS | pk.OWN_VERSIONS[gpu]
    mine = f"{pk.DATA}{gpu}/moe/{engine}/{vers[engine]}/moe_perf.parquet"
    theirs = f"{pk.DATA}{gpu}/moe/{other}/{vers[other]}/moe_perf.parquet"
    tables = {mine: [row(src, 64, 0.9), row(src, 64, 0.95, dist="power_law_1.2"), row(src, 2048, 0.8),
                     row(src, 2048, 0.5, tp=4)],
              theirs: [row(other_src, 64, 1.0), row(other_src, 64, 1.0, dist="power_law_1.2"),
                       row(other_src, 2048, 1.0), row(other_src, 2048, 1.0, tp=4)]}
    monkeypatch.setattr(kc, "read_all", lambda z, name: tables[name])
    got = kc.moe_stand_in_ratios(zipfile.ZipFile.__new__(zipfile.ZipFile), set(tables))
    rec = got["gpus"]["a100_80gb"]["vllm"]
    assert rec["stand_in"] == "sglang" and rec["releases"] == {"vllm": "0.14.0", "sglang": "0.5.10"}
    assert rec["shapes"] == {"128,192": {"le": 0.925, "gt": 0.8, "rows": 3}}  # N=384 (TP4): same config, left out


def test_block_stand_in_records_sglangs_deepgemm_fit_for_vllm_where_vllm_runs_deepgemm() -> None:
    """vLLM runs DeepGEMM for block-scaled FP8 on SM90/SM100/SM120 (VLLM_BLOCK_DEEPGEMM_CC): its record is SGLang's fit
    of the same kernel on that GPU, marked as such; elsewhere (SM89: Triton) none is made up."""
    import predict_kernels as pk

    rec = {"e_comp": 0.53, "s_half": 0.0, "file": "systems/data/h100_sxm/gemm/sglang/0.5.14/gemm_perf.parquet"}
    fitted: dict[str, Any] = {"h100": {"sglang": {"gemm": {pk.GEMM_BLOCK_KEY: rec}}}}
    report: list[str] = []
    pk.block_stand_in(fitted, "h100", "9", report)
    assert fitted["h100"]["vllm"]["gemm"][pk.GEMM_BLOCK_KEY] == {**rec, "stand_in": "sglang"}
    assert len(report) == 1 and "sglang's DeepGEMM record" in report[0]
    fitted = {"l40s": {"sglang": {"gemm": {pk.GEMM_BLOCK_KEY: rec}}}}
    pk.block_stand_in(fitted, "l40s", "8", [])
    assert "vllm" not in fitted["l40s"]
    pk.block_stand_in(fitted, "a100_80gb", "9", [])  # no SGLang record there: nothing to lend
    assert "a100_80gb" not in fitted


def test_block_floor_check_reports_vllms_extra_latency_by_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    import kernel_checks as kc
    import predict_kernels as pk

    def row(m: int, dtype: str, lat: float, src: str = "k") -> dict[str, object]:
        return {"m": m, "n": 4096, "k": 4096, "gemm_dtype": dtype, "latency": lat, "kernel_source": src}

    gpu = kc.BLOCK_FLOOR_GPUS[0]
    mine = f"{pk.DATA}{gpu}/gemm/vllm/{pk.VERSIONS['vllm']}/gemm_perf.parquet"
    theirs = f"{pk.DATA}{gpu}/gemm/sglang/{pk.VERSIONS['sglang']}/gemm_perf.parquet"
    tables = {mine: [row(1, "fp8_block", 0.100, "a"), row(1, "fp8_block", 0.090, "b"), row(8192, "fp8_block", 1.0),
                     row(64, "fp8", 0.001)],
              theirs: [row(1, "fp8_block", 0.010), row(8192, "fp8_block", 0.95), row(64, "fp8_block", 0.5)]}
    monkeypatch.setattr(kc, "read_all", lambda z, name: tables[name])
    lines = kc.block_floor_checks(zipfile.ZipFile.__new__(zipfile.ZipFile), set(tables))
    # the fastest of vLLM's kernels per shape (90 us) over SGLang's 10 us; M = 64 has no vLLM block row
    assert lines == [f"block floor check {gpu}: vLLM {pk.VERSIONS['vllm']} fp8_block (fastest kernel) minus SGLang "
                     "fp8_block latency, us: M < 32 n=1 80.0; M < inf n=1 50.0"]


def _smooth_table(e_mem: float, e_comp: float, t0: float, p: float) -> list[tuple[float, float, float, float]]:
    """BF16 GEMMs on an A100-like part (2.039 TB/s, 312 TFLOP/s: ridge near M ~ 160) timed by the smooth roofline."""
    bw, fl = 2.039e12, 312e12
    pts = []
    for m in (1, 16, 64, 96, 128, 160, 192, 256, 384, 512, 1024, 4096):
        for n, k in ((4096, 4096), (16384, 4096), (4096, 16384), (65536, 4096)):
            mem, flop = n * k * 2.0 / bw / e_mem, 2 * m * n * k / fl / e_comp
            pts.append((n * k * 2.0 / bw, 2 * m * n * k / fl, float(m), t0 + (mem ** p + flop ** p) ** (1 / p)))
    return pts


def test_ridge_exponent_recovers_the_overlap_a_table_was_made_with() -> None:
    """A table whose GEMMs overlap weight reads and FLOPs only in part near the ridge gives back its exponent (with
    the rows' latency taken off); one timed by max() gives 0 (max kept)."""
    assert ridge_p(_smooth_table(0.76, 0.83, 16e-6, 1.5), 0.76, 0.83, 0.0, 16e-6) == 1.5
    assert ridge_p(_smooth_table(0.76, 0.83, 4e-6, 2.5), 0.76, 0.83, 0.0, 4e-6) == 2.5
    plain = [(mem, flop, m, 4e-6 + max(mem / 0.8, flop / 0.7)) for mem, flop, m, _ in _smooth_table(1, 1, 0, 1)]
    assert ridge_p(plain, 0.8, 0.7, 0.0, 4e-6) == 0.0


def test_marlin_share_by_n_takes_each_n_s_compute_bound_rows_only() -> None:
    """The Marlin MoE kernel's FLOP/s share by the experts' N per rank: each N's median over the rows the fit times by
    their FLOPs, less the call latency; weight-read-bound rows (a few tokens per expert) and N with too few compute-
    bound rows are left out."""
    t0, par = 48e-6, {"t0_us": 48.0, "e_comp": 0.25, "e_mem": 0.7}

    def row(tokens: int, inter: int, tp: int, share: float) -> dict[str, Any]:
        r: dict[str, Any] = {"moe_dtype": "int4_wo", "distribution": "balanced", "kernel_source": "vllm_marlin",
                             "num_tokens": tokens, "hidden_size": 7168, "inter_size": inter, "topk": 8,
                             "num_experts": 384, "moe_tp_size": tp, "moe_ep_size": 1, "latency": 1.0}
        mem, flop, _, _ = moe_points([r], BW, FL, {"int4_wo": ("bf16", 0.5)}, marlin=True)["int4_wo"][0]
        r["latency"] = (t0 + max(flop / share, mem / 0.7)) * 1e3
        return r

    big = (4096, 8192, 16384, 12288, 6144)
    rows = ([row(t, 2048, 1, 0.3) for t in big] + [row(t, 2048, 4, 0.2) for t in big]
            + [row(1, 2048, 1, 0.01), row(8, 2048, 4, 0.01)]  # weight-read bound: their FLOP/s share is not read
            + [row(t, 2048, 8, 0.1) for t in big[:4]])  # N 256: four rows, fewer than MARLIN_N_MIN_ROWS
    got = marlin_by_n(rows, BW, FL, par)
    assert [n for n, _, _ in got] == [512.0, 2048.0]
    assert got[0][1] == pytest.approx(0.2, rel=1e-3) and got[1][1] == pytest.approx(0.3, rel=1e-3)
    assert [c for _, _, c in got] == [5.0, 5.0]


def test_a_moe_records_share_by_n_follows_the_split_not_the_expert_parallelism() -> None:
    """TensorRT-LLM's MoE share by the experts' N per rank (moe_by_n, unpadded rows): each N's median over its
    compute-bound rows less the call latency; its expert-parallel rows (which the fit leaves out) do not enter it."""
    t0, par = 48e-6, {"t0_us": 48.0, "e_comp": 0.17, "e_mem": 0.78}

    def row(tokens: int, tp: int, ep: int, share: float) -> dict[str, Any]:
        r: dict[str, Any] = {"moe_dtype": "fp8_block", "distribution": "balanced",
                             "kernel_source": "moe_torch_flow_cutlass", "num_tokens": tokens, "hidden_size": 7168,
                             "inter_size": 2048, "topk": 8, "num_experts": 256, "moe_tp_size": tp, "moe_ep_size": ep,
                             "latency": 1.0}
        mem, flop, _, _ = moe_points([dict(r, moe_ep_size=1)], BW, FL, {"fp8_block": ("fp8", 1.0)})["fp8_block"][0]
        r["latency"] = (t0 + max(flop / share, mem / 0.78)) * 1e3
        return r

    big = (4096, 6144, 8192, 12288, 16384)
    rows = ([row(t, 8, 1, 0.07) for t in big] + [row(t, 1, 1, 0.27) for t in big]
            + [row(t, 1, 8, 0.9) for t in big])  # expert-parallel rows: not read
    got = moe_by_n(rows, BW, FL, {"fp8_block": ("fp8", 1.0)}, "fp8_block", par)
    assert [n for n, _, _ in got] == [256.0, 2048.0]
    assert got[0][1] == pytest.approx(0.07, rel=1e-3) and got[1][1] == pytest.approx(0.27, rel=1e-3)
