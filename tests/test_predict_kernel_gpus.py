"""GPUs with measured kernel tables but no calibration runs (bench/predict_kernels.py TABLE_ONLY): the A100 80GB SXM
and the L40S take their own FLOP/s shares, recorded from the wheel's tables of the part the catalog describes; a class
their tables lack takes the median of the GPUs that have it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import pytest  # noqa: E402
from predict_kernels import OWN_VERSIONS, TABLE_ONLY  # noqa: E402

from launchcard.hardware import find  # noqa: E402
from launchcard.predict._kernels import _table, kernel_eff, share_at_n  # noqa: E402


def _gpus() -> dict:  # type: ignore[type-arg]
    return dict(_table()["kernels"]["gpus"])


def test_table_only_gpus_map_to_the_catalog_part_the_wheel_measured() -> None:
    """The wheel's a100_sxm rows name "NVIDIA A100-SXM4-80GB" and its system file 80 GiB at 2.039 TB/s: the catalog's
    SXM4 80GB board (the 40GB board reads 1.555 TB/s, the PCIe 80GB 1.935); l40s: 864 GB/s, 362 / 733 TFLOP/s."""
    a100 = find(TABLE_ONLY["a100_sxm"])
    assert (a100.id, a100.form_factor, a100.memory_gb, a100.bandwidth_tbps) == ("a100_80gb", "SXM4", 80, 2.039)
    assert a100.tflops == {"bf16": 312}  # no FP8 tensor cores: the tables hold no FP8 rows either
    l40s = find(TABLE_ONLY["l40s"])
    assert (l40s.bandwidth_tbps, l40s.tflops) == (0.864, {"bf16": 362, "fp8": 733})
    assert "rtx_pro_6000_server" not in TABLE_ONLY  # catalog entry without a FLOP/s figure, three boards in one


def test_a100_and_l40s_record_their_own_tables_with_the_release_measured() -> None:
    gpus = _gpus()
    a100 = gpus["a100_80gb"]["vllm"]
    assert a100["gemm"]["bf16"]["file"] == "systems/data/a100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet"
    assert OWN_VERSIONS["a100_sxm"]["vllm"] == "0.14.0"
    assert set(a100["gemm"]) == {"bf16"}  # no FP8 GEMM rows on an A100
    assert "moe" not in a100  # vLLM 0.14.0's A100 MoE rows are skewed routing only (no balanced rows)
    assert "moe" in gpus["a100_80gb"]["sglang"] and "fp8" in gpus["l40s"]["vllm"]["gemm"]
    doc = _table()["kernels"]["source"]
    assert doc["own_versions"]["a100_80gb"]["trtllm"] == "1.0.0" and doc["systems"]["a100_sxm"] == "a100_80gb"
    for gpu in ("a100_80gb", "l40s"):
        for engine, by_cls in gpus[gpu].items():
            for dt, e in by_cls["gemm"].items():  # a datasheet share: measured below the peak, above half of it
                assert 0.5 < e["e_comp"] < 0.9 or dt in ("fp8", "fp8_block"), (gpu, engine, dt, e)


def test_a100_takes_its_own_shares_and_the_median_for_a_class_it_lacks() -> None:
    gpus = _gpus()
    k = kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16")
    assert k.source == "a100_80gb/vllm (moe: sglang's)"
    assert k.g_comp == gpus["a100_80gb"]["vllm"]["gemm"]["bf16"]["e_comp"]
    # TensorRT-LLM's A100 MoE rows (its own kernel, skewed routing only) have no stand-in: the median's
    t = kernel_eff("a100_80gb", "gpu", "trtllm", "bf16", "bf16")
    median = gpus["default"]["trtllm"]["moe"]["bf16"]
    assert t.borrowed == ("moe",) and t.source == "a100_80gb/trtllm"
    assert t.x_comp == median["e_comp"] and t.x_t0 == median["t0_us"] * 1e-6  # not the dense GEMM's share
    # FP8 weights on an A100 run at bf16 (weight-only): the bf16 class of its own table
    assert kernel_eff("a100_80gb", "gpu", "vllm", "fp8", "fp8").g_comp == k.g_comp
    assert kernel_eff("l40s", "gpu", "sglang", "fp8", "fp8").source == "l40s/sglang"
    assert kernel_eff("l4", "gpu", "vllm", "bf16", "bf16").source == "default/vllm"



def test_a100_vllm_experts_take_sglangs_fused_triton_moe_on_the_a100_not_the_median() -> None:
    """vLLM 0.14.0's A100 MoE table holds power-law routing only; SGLang 0.5.10's fused Triton MoE takes the same time
    on the shapes both measured (bench/predict_kernels.py moe_stand_in_checks: median 0.99), and its balanced rows
    give the A100's sglang record: vLLM's routed experts on an A100 are timed with it (call latency 64 us, not the
    Hopper/Blackwell median's 16 us); only the A100's vLLM class is stood in for, and a GPU with its own rows keeps
    them."""
    from launchcard.predict._kernels import MOE_STAND_IN

    gpus = _gpus()
    own = gpus["a100_80gb"]["sglang"]["moe"]["bf16"]
    assert own["file"] == "systems/data/a100_sxm/moe/sglang/0.5.10/moe_perf.parquet"
    k = kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16")
    assert (k.x_comp, k.x_half, k.x_t0) == (own["e_comp"], own["s_half"], own["t0_us"] * 1e-6)
    assert k.borrowed == ()
    median = gpus["default"]["vllm"]["moe"]["bf16"]
    assert k.x_t0 > median["t0_us"] * 1e-6 and k.x_comp < median["e_comp"]  # the A100's kernel is the slower one
    assert MOE_STAND_IN == {("a100_80gb", "vllm"): "sglang"}
    h = kernel_eff("h100", "gpu", "vllm", "bf16", "bf16")
    assert h.x_comp == gpus["h100"]["vllm"]["moe"]["bf16"]["e_comp"] and h.source == "h100/vllm"
    # the Marlin path's own record still replaces the stood-in class (FP8 experts on an A100 run Marlin)
    m = kernel_eff("a100_80gb", "gpu", "vllm", "fp8", "fp8", marlin="experts")
    assert m.x_t0 == _table()["kernels"]["marlin"]["gpus"]["a100_80gb"]["t0_us"] * 1e-6


def test_weight_reads_are_timed_at_the_gpus_measured_share_over_the_calibrated_gpus() -> None:
    """Few-row BF16 GEMMs (decode) read their weights at 0.76 of the A100's 2.039 TB/s in vLLM 0.14.0's table, at
    0.82-0.88 on the GPUs the sets are calibrated on: an A100 decode step's weight reads take ~10% longer than the
    set's bw_eff alone gives; its KV reads take the decode-attention ratio (test below); a GPU without tables keeps
    bw_eff."""
    from config_support import LLAMA8B
    from launchcard.memory import Settings, arch_from_config, plan_memory
    from launchcard.predict._cost import step_work
    from launchcard.predict._facts import facts_from_memory_plan
    from launchcard.predict._figures import HardwareFigures
    from launchcard.predict._kernels import weight_read_ratio

    wr = _table()["kernels"]["weight_read"]
    assert wr["basis"]["vllm"]["from"] == ["b200", "b300", "gb200", "gb300", "h100", "h200"]
    assert wr["gpus"]["vllm"]["a100_80gb"]["rows"] >= 100
    ratio = weight_read_ratio("a100_80gb", "vllm")
    assert 0.85 < ratio < 0.95 and kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16").w_read == ratio
    assert weight_read_ratio("a100_80gb_pcie", "vllm") == 1.0 == kernel_eff("l4", "gpu", "vllm", "bf16", "bf16").w_read
    arch, s = arch_from_config(dict(LLAMA8B)), Settings(max_model_len=16384, vllm_version="0.12.0")
    acc = find("a100_80gb")
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))
    dec = step_work(f, 1, 1000.0, 0, 0.0)
    bw = 2.039e12
    assert dec.gemm_mem == pytest.approx(f.dense_bytes / (bw * ratio), rel=1e-9)
    a_read = kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16").a_read
    assert dec.attn_mem == pytest.approx(1000 * f.kv_bytes_per_token / (bw * a_read), rel=1e-9)


def test_decode_kv_reads_are_timed_at_the_gpus_attention_share_over_the_calibrated_gpus() -> None:
    """vLLM's decode attention reads KV at 0.80 of the datasheet on the A100 (0.14.0's table: FlashAttention 2, SM80
    has no FA3) and the H100, 0.93-0.96 on the Blackwell GPUs: over the calibrated GPUs' median (b200, b300, gb200,
    gb300, h100, h200) the A100's KV reads are timed ~14% slower than the set's attn_eff alone gives, a B200's at
    it; a GPU without a decode-attention table (the A100 PCIe entry, the L4) keeps attn_eff; CPUs none."""
    from launchcard.predict._kernels import attn_read_ratio

    g = _table()["kernels"]["gpus"]
    basis = sorted(g[x]["vllm"]["attn_decode"]["bf16"]["e_mem"] for x in ("b200", "b300", "gb200", "gb300", "h100",
                                                                          "h200"))
    own = g["a100_80gb"]["vllm"]["attn_decode"]["bf16"]["e_mem"]
    assert attn_read_ratio("a100_80gb", "vllm") == pytest.approx(own / ((basis[2] + basis[3]) / 2), rel=1e-12)
    assert 0.8 < attn_read_ratio("a100_80gb", "vllm") < 0.9
    assert attn_read_ratio("b200", "vllm") == pytest.approx(1.0, abs=0.01)
    assert attn_read_ratio("a100_80gb", "sglang") < attn_read_ratio("a100_80gb", "vllm")  # SGLang 0.5.10's: 0.52
    assert attn_read_ratio("a100_80gb_pcie", "vllm") == 1.0 == kernel_eff("l4", "gpu", "vllm", "bf16", "bf16").a_read
    assert kernel_eff("a100_80gb", "cpu", "vllm", "bf16", "bf16").a_read == 1.0


def test_no_gpu_reads_weights_faster_than_its_datasheet_under_the_shipped_sets() -> None:
    # a set's bw_eff times a GPU's measured weight-read ratio is the share of datasheet bandwidth its weight reads
    # are timed at; the fit bounds bw_eff by the largest ratio (bench/predict_accuracy.py fit_sets)
    from launchcard.predict import coefficients
    from launchcard.predict._kernels import max_weight_read_ratio

    ratios = {e: max_weight_read_ratio(e) for e in ("vllm", "sglang", "trtllm")}
    assert max(ratios.values()) > 1.0  # some GPU measures above the calibrated GPUs' median share
    for engine, ratio in ratios.items():
        assert coefficients("gpu", engine).bw_eff * ratio <= 1.0 + 1e-5, engine  # the table keeps 6 digits


def test_no_gpu_reads_kv_faster_than_its_datasheet_under_the_shipped_sets() -> None:
    from launchcard.predict import coefficients
    from launchcard.predict._kernels import max_attn_read_ratio

    ratios = {e: max_attn_read_ratio(e) for e in ("vllm", "sglang", "trtllm")}
    assert max(ratios.values()) > 1.0  # Blackwell's decode attention measures above the median
    for engine, ratio in ratios.items():
        assert coefficients("gpu", engine).attn_eff * ratio <= 1.0, engine


def test_the_fit_bounds_reads_by_each_gpus_own_kernels_not_only_its_datasheet() -> None:
    """bench/predict_accuracy.py read_bounds: the largest bw_eff / attn_eff a set may be fitted to times no GPU's weight
    or KV reads faster than its own measured few-row GEMM / decode-attention share (the kernels that make a served
    step's reads), hence below every datasheet too; the bound is the calibrated GPUs' median share."""
    from predict_accuracy import read_bounds

    from launchcard.predict._kernels import attn_read_basis, attn_read_ratio, weight_read_basis, weight_read_ratio

    gpus, wr = _gpus(), _table()["kernels"]["weight_read"]
    for engine in ("vllm", "sglang", "trtllm"):
        low_bw, _, low_attn = read_bounds(engine)
        assert 1.0 / low_bw == pytest.approx(weight_read_basis(engine)) and weight_read_basis(engine) < 0.9
        for g, own in wr["gpus"][engine].items():
            assert weight_read_ratio(g, engine) / low_bw <= own["share"] + 1e-9 <= 1.0, (engine, g)
        assert 1.0 / low_attn == pytest.approx(attn_read_basis(engine))
        for g, by_engine in gpus.items():
            e = (by_engine.get(engine) or {}).get("attn_decode", {}).get("bf16")
            if g != "default" and e:
                assert attn_read_ratio(g, engine) / low_attn <= e["e_mem"] + 1e-9 <= 1.0, (engine, g)
    assert weight_read_basis("cpu-engine") == 1.0 == attn_read_basis("cpu-engine")  # not measured: no bound


def test_dense_gemms_near_their_ridge_take_the_gpus_measured_smooth_roofline() -> None:
    """Each GPU's dense GEMMs take (mem^p + comp^p)^(1/p) with the exponent fitted on its own GEMM table
    (bench/kernel_fit.py ridge_p): a decode batch near the A100's ridge (~160 tokens: 0.83 x 312 TFLOP/s over
    0.76 x 2.039 TB/s) costs more than max() of the two, a one-token step (weight reads alone) and a long prefill
    chunk (FLOPs alone) stay at their roofline; the calibration's linear view of a step stays its time."""
    from launchcard.memory import Settings
    from launchcard.predict._coef import coefficients, theta
    from launchcard.predict._cost import features, step_terms, step_work
    from launchcard.predict._predict import serving_facts

    gpus = _gpus()
    p = kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16").g_ridge
    assert p == gpus["a100_80gb"]["vllm"]["gemm"]["bf16"]["ridge_p"] > 0
    assert kernel_eff("a100_80gb", "gpu", "vllm", "bf16", "bf16", marlin="dense").g_ridge == 0.0  # no Marlin table
    cfg = ROOT / "tests/fixtures/predict_heldout_configs/Qwen--Qwen2-7B-Instruct_config.json"
    f = serving_facts(cfg, Settings(max_model_len=4096, vllm_version="0.11.0").validate(), gpu="a100_80gb")
    c = coefficients("gpu", "vllm")
    for n, lo, hi in ((1, 1.0, 1.001), (160, 1.15, 2 ** (1 / p)), (8192, 1.0, 1.001)):
        w = step_work(f, n, n * 1000.0, 0, 0.0) if n < 1000 else step_work(f, 0, 0.0, n, n * (n + 1) / 2)
        assert w.ridge == p
        g_m, g_c = w.gemm_mem / c.bw_eff, w.gemm_flop / c.flops_eff
        mem, comp = step_terms(w, c, True)[:2]
        gemm = mem + comp - w.attn_mem / c.attn_eff - w.attn_flop / c.flops_eff - w.moe_fixed
        assert gemm == pytest.approx((g_m ** p + g_c ** p) ** (1 / p))
        assert lo <= gemm / max(g_m, g_c) <= hi, (n, gemm / max(g_m, g_c))
        assert sum(a * b for a, b in zip(features(w, c, True), theta(c), strict=True)) == pytest.approx(
            sum(step_terms(w, c, True)))


def test_a_share_by_n_is_read_at_the_plans_n_interpolated_in_log_n() -> None:
    """share_at_n: a measured N's own share, log-N interpolation between the measured N around it, the nearest
    measured N outside their range, the record's fit where no N is recorded or N is unknown (0)."""
    by_n = ((256.0, 0.07), (1024.0, 0.19), (2048.0, 0.26))
    assert share_at_n(by_n, 256, 0.17) == (0.07, "measured at N 256-2048: N 256's own")
    assert share_at_n(by_n, 1024, 0.17)[0] == 0.19  # an interior N is its own, not an interpolation
    share, how = share_at_n(by_n, 512, 0.17)  # the geometric middle of 256 and 1024
    assert share == pytest.approx(0.13) and "interpolated between N 256 and 1024" in how
    assert share_at_n(by_n, 128, 0.17) == (0.07, "measured at N 256-2048: N 128 is outside, read at the nearest, N 256")
    assert share_at_n(by_n, 4096, 0.17)[0] == 0.26
    assert share_at_n((), 512, 0.17) == (0.17, "the fit over every shape (0.170)")
    assert share_at_n(by_n, 0, 0.17)[0] == 0.17


def test_trtllm_experts_are_timed_at_the_share_of_their_own_n_per_rank() -> None:
    """TensorRT-LLM's MoE records carry the share its CUTLASS fused MoE reaches by the experts' N per rank: DeepSeek's
    experts (intermediate 2048) split 8-way (N 256) run at a few tenths of the share they reach whole under 8-way
    expert parallelism (N 2048) on the H200 (the wheel's 1.3.0rc20 fp8_block rows: TP8 1.09 ms against EP8 0.45 ms
    at 1,024 tokens); a plan whose N is unknown, and the engines without shares by N, keep the record's fit."""
    rec = _table()["kernels"]["gpus"]["h200"]["trtllm"]["moe"]["fp8"]
    by_n = {float(n): float(v) for n, v, *_ in rec["by_n"]}
    tp8 = kernel_eff("h200", "gpu", "trtllm", "fp8", "fp8", moe_n=256)
    ep8 = kernel_eff("h200", "gpu", "trtllm", "fp8", "fp8", moe_n=2048)
    assert tp8.x_comp == by_n[256.0] and ep8.x_comp == by_n[2048.0]
    assert tp8.x_comp < 0.5 * ep8.x_comp
    assert "N 256's own" in tp8.x_by_n and "h200_sxm/moe/trtllm" in tp8.x_by_n
    unknown = kernel_eff("h200", "gpu", "trtllm", "fp8", "fp8")
    assert unknown.x_comp == rec["e_comp"] and unknown.x_by_n == ""
    vllm = [kernel_eff("h200", "gpu", "vllm", "fp8", "fp8", moe_n=n) for n in (0, 256, 2048)]
    assert len({k.x_comp for k in vllm}) == 1 and not vllm[1].x_by_n
