"""vLLM's weight-only Marlin kernels in predict: which GEMMs of a plan run them (vLLM's rule per release), and the
measured shares they are timed with (``kernels`` -> ``marlin``, bench/predict_kernels.py marlin_record)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, Workload, facts_from_memory_plan, predict, step_work
from launchcard.predict._coef import coefficients
from launchcard.predict._cost import step_terms
from launchcard.predict._kernels import _table, facts_kernels, kernel_eff
from launchcard.predict._marlin import MarlinShares, marlin_parts, marlin_shares

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
GPT_OSS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def facts(config: Path, gpu: str, *, engine: str = "vllm", tp: int = 1, version: str = "0.11.0") -> ServingFacts:
    arch = arch_from_config(json.loads(config.read_text()))
    s = Settings(tp=tp, max_model_len=32768, vllm_version=version)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def dense_fp8(gpu: str = "a100_80gb", **kw: str) -> ServingFacts:
    return facts(CONFIGS / "Qwen--Qwen3-32B-FP8_config.json", gpu, **kw)  # type: ignore[arg-type]


def test_the_record_is_the_a100s_measured_marlin_moe_rows() -> None:
    """The A100's only Marlin rows are SGLang 0.5.10's port of vLLM's Marlin MoE (W4A16): they reach half of cuBLAS's
    tensor-core share there, and a few tokens read the weights near the BF16 GEMMs' share."""
    rec = _table()["kernels"]["marlin"]["gpus"]["a100_80gb"]
    assert rec["file"] == "systems/data/a100_sxm/moe/sglang/0.5.10/moe_perf.parquet"
    assert rec["kernel_sources"] == ["sglang_marlin_moe"] and rec["dtype"] == "int4_wo" and rec["rows"] >= 500
    dense_bf16 = _table()["kernels"]["gpus"]["a100_80gb"]["vllm"]["gemm"]["bf16"]
    assert 0.3 < rec["e_comp"] < 0.6 * dense_bf16["e_comp"]
    m = marlin_shares("a100_80gb")
    assert m is not None and m.read is not None and 0.6 < m.read < 0.8 and m.t0_s > 0
    assert marlin_shares("a100_80gb_pcie") is None  # no table: the catalog's other A100 boards are not the SXM4 80GB


def test_vllm_runs_fp8_weights_below_sm89_through_marlin_dense_and_experts() -> None:
    """fp8.py use_marlin = not has_device_capability(89) (0.10.1.1 L199/L497, 0.11.0 L234/L447, 0.13.0 L392/L162)."""
    for version in ("0.10.1.1", "0.11.0", "0.13.0"):
        assert dense_fp8(version=version).marlin == "dense", version
    moe = facts(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json", "a100_80gb", tp=4)
    assert moe.marlin == "all"
    assert dense_fp8("h100").marlin == "" and dense_fp8("l40s").marlin == ""  # FP8 tensor cores from SM 8.9
    assert dense_fp8(engine="sglang").marlin == ""  # vLLM's rule, not claimed for another engine
    assert facts(CONFIGS / "Qwen--Qwen3-32B_config.json", "a100_80gb").marlin == ""  # bf16 weights
    assert marlin_parts(False, False) == "" and marlin_parts(True, True) == "all"


def test_mxfp4_experts_below_sm90_run_marlin_and_the_bf16_attention_does_not() -> None:
    """mxfp4.py: Marlin below SM90 (0.10.1.1 _should_use_marlin L123-135, 0.11.0 get_mxfp4_backend L94-98)."""
    f = facts(GPT_OSS, "a100_80gb", tp=2)
    assert f.marlin == "experts"
    hw = f.hardware
    plain = kernel_eff(hw.id, hw.kind, "vllm", "bf16", "bf16")
    k = facts_kernels(f)
    m = marlin_shares("a100_80gb")
    assert m is not None
    assert (k.g_comp, k.w_read, k.lm_comp) == (plain.g_comp, plain.w_read, 0.0)  # attention, router: cuBLAS
    assert (k.x_comp, k.x_t0) == (m.at_n(f.moe_n)[0], m.t0_s) and k.x_read < plain.w_read and "moe" not in k.borrowed
    # SM90: OpenAI's Triton kernels from 0.12 (bundled), Marlin before (_mxfp4.sm90_vllm_backend)
    assert facts(GPT_OSS, "h100", tp=2, version="0.12.0").marlin == ""
    assert facts(GPT_OSS, "h100", tp=2).marlin == "experts"
    said = [x.message for x in f.findings if x.code == "weight-only"]
    assert len(said) == 1 and "routed experts" in said[0] and "48 us a MoE call" in said[0]
    assert "row block" in said[0] and "fused_marlin_moe.py" in said[0]
    assert "marlin_template.h" not in said[0]  # no dense GEMM runs Marlin here


def test_marlin_is_slow_where_the_batch_fills_the_tensor_cores_and_not_for_a_few_tokens() -> None:
    """Half of cuBLAS's tensor-core share: a 2,048-token prefill step of FP8 Qwen3-32B on an A100 takes ~1.6-2x the
    cuBLAS-timed one; a one-token decode step is bound by the weight reads, within ~10% of it."""
    f = dense_fp8()
    old = replace(f, marlin="")  # the prediction before: FP8 weights timed with the BF16 GEMM class
    c = coefficients("gpu", "vllm")

    def secs(x: ServingFacts, dec: int, pf: int) -> float:
        return sum(step_terms(step_work(x, dec, dec * 300.0, pf, pf * pf / 2.0), c, True)[:2])

    assert 1.6 < secs(f, 0, 2048) / secs(old, 0, 2048) < 2.1
    assert 1.0 <= secs(f, 1, 0) / secs(old, 1, 0) < 1.1
    k = facts_kernels(f)
    assert k.lm_comp == facts_kernels(old).g_comp and k.lm_read == facts_kernels(old).w_read  # lm_head: cuBLAS


def test_a_burst_of_fp8_requests_on_an_a100_is_predicted_slower_than_before() -> None:
    f = dense_fp8()
    w = Workload(isl=217, osl=201, rate=float("inf"), num_requests=256)
    new, old = predict(f, w), predict(replace(f, marlin=""), w)
    assert new.tpot_ms_mean > 1.3 * old.tpot_ms_mean
    said = [x for x in new.findings if x.code == "weight-only"]
    assert len(said) == 1 and "measured shares" in said[0].message and "0.461" in said[0].message
    assert "marlin_template.h" in said[0].message  # the dense GEMMs take the MoE kernel's shares: said why
    assert "MoE call" not in said[0].message and "marlin_utils_fp8.py" in said[0].message  # a dense model's log


def test_a_gpu_without_a_marlin_table_keeps_the_bf16_classes_and_says_so() -> None:
    f = dense_fp8("a100_80gb_pcie")
    assert f.marlin == "dense"
    hw = f.hardware
    assert facts_kernels(f) == kernel_eff(hw.id, hw.kind, "vllm", f.compute_dtype, f.compute_dtype)
    said = [x for x in f.findings if x.code == "weight-only"]
    assert len(said) == 1 and "not measured on a100_80gb_pcie" in said[0].message


def test_gpt_oss_experts_on_an_a100_take_its_own_marlin_share_not_the_median() -> None:
    """The A100's vLLM tables hold no balanced MoE rows (the BF16 grouped-GEMM share is SGLang's fused Triton MoE on
    the A100, _kernels.MOE_STAND_IN); gpt-oss's experts run Marlin there, whose share is measured on the A100 itself:
    neither the stand-in nor the median's."""
    f = facts(GPT_OSS, "a100_80gb", tp=2)
    hw = f.hardware
    assert kernel_eff(hw.id, hw.kind, "vllm", "bf16", "bf16").moe_from == "sglang"
    k = facts_kernels(f)
    assert "moe" not in k.borrowed and not k.moe_from and "marlin" in k.source


def quantized(method: str, tmp: Path) -> Path:
    """Qwen3-32B's config with a 4-bit ``method`` (gptq / awq) quantization_config, written under ``tmp``."""
    cfg = json.loads((CONFIGS / "Qwen--Qwen3-32B_config.json").read_text())
    cfg["quantization_config"] = {"quant_method": method, "bits": 4, "group_size": 128}
    out = tmp / f"qwen3-32b-{method}.json"
    out.write_text(json.dumps(cfg))
    return out


def test_integer_weight_only_checkpoints_run_marlin_from_sm80_machete_for_gptq_dense_on_sm90(tmp_path: Path) -> None:
    """compressed_tensors_moe.py prefers the Marlin MoE (0.11.0 L115-131, 0.13.0 L157-196); AWQ's dense layers run
    Marlin everywhere, GPTQ's through choose_mp_linear_kernel: Machete on SM 9.0 (not measured: BF16 class)."""
    kimi = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf" / "moonshotai" / "Kimi-K2.5" / "config.json"
    for gpu in ("h200", "b200"):
        f = facts(kimi, gpu, tp=8, version="0.16.0")
        m = marlin_shares(gpu)
        assert f.marlin == "experts" and m is not None and facts_kernels(f).x_comp == m.at_n(f.moe_n)[0], gpu
        said = [x.message for x in f.findings if x.code == "weight-only"]
        assert len(said) == 1 and "compressed_tensors_moe.py" in said[0] and "tensor cores" not in said[0], gpu
    awq, gptq = quantized("awq", tmp_path), quantized("gptq", tmp_path)
    assert facts(awq, "a100_80gb").marlin == "dense" and facts(awq, "h100").marlin == "dense"
    assert facts(gptq, "a100_80gb").marlin == "dense" and facts(gptq, "b200").marlin == "dense"
    h100 = facts(gptq, "h100")
    assert h100.marlin == "" and facts_kernels(h100) == facts_kernels(replace(h100, marlin=""))
    said = [x.message for x in h100.findings if x.code == "weight-only"]
    assert len(said) == 1 and "Machete" in said[0]
    assert facts(gptq, "a100_80gb", engine="sglang").marlin == ""  # vLLM's rules only


def test_awq_dense_gemms_follow_the_release_on_hopper(tmp_path: Path) -> None:
    """vLLM 0.32.0 runs AWQ through AutoAWQConfig and choose_mp_linear_kernel (Machete on SM 9.0, as GPTQ): AWQ on
    an H100 was timed through Marlin at every release (TTFT 3.7x the same checkpoint's W4A16 form). 0.13.0 keeps
    Marlin (awq_marlin.py); a release between, not read, says so."""
    cfg = json.loads((Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
                      / "Qwen--Qwen3-32B_config.json").read_text(encoding="utf-8"))
    cfg["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    arch = arch_from_config(cfg)
    acc = find("h100")
    hw = HardwareFigures.from_accelerator(acc)

    def codes(version: str | None) -> tuple[bool, set[str]]:
        s = Settings(tp=2, max_model_len=8192, vllm_version=version)
        f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), hw)
        return f.marlin in ("dense", "all"), {x.code for x in f.findings}

    marlin, found = codes(None)  # the release modelled when none is stated: 0.32
    assert not marlin and "weight-only" in found and "awq-kernel" not in found
    assert codes("0.13.0")[0] and "awq-kernel" not in codes("0.13.0")[1]
    marlin, found = codes("0.20.0")
    assert marlin and "awq-kernel" in found


def test_the_marlin_moe_row_block_follows_fused_marlin_moe() -> None:
    """fused_marlin_moe.py 0.11.0 L99-103: the first of 8/16/32/48/64 rows the mean expert fills to under 0.9."""
    from launchcard.predict._marlin import moe_block

    assert [moe_block(x) for x in (0.5, 7.1, 7.2, 14.3, 14.4, 16.0, 28.8, 43.1, 43.2, 128.0, 4096.0)] == \
        [8, 8, 16, 16, 32, 32, 48, 48, 64, 64, 64]


def test_balanced_rows_are_padded_expert_by_expert() -> None:
    from launchcard.predict._marlin import moe_block, padded_balanced

    assert padded_balanced(2048 * 8, 128, moe_block(128.0)) == 2048 * 8  # two full 64-row blocks each
    assert padded_balanced(256 * 8, 128, moe_block(16.0)) == 2 * 256 * 8  # 16 rows in a 32-row block
    assert padded_balanced(4, 128, 8) == 4 * 8  # four experts run, one row each in an 8-row block
    assert padded_balanced(130, 128, 8) == 128 * 8  # two experts get a second row: still one block each
    assert padded_balanced(9 * 128 + 1, 128, 8) == 127 * 16 + 16  # nine or ten rows: two 8-row blocks each


def test_random_routing_pads_by_the_binomial_spread_of_each_expert() -> None:
    """E[ceil(n / b) b] / E[n] with n ~ Binomial(tokens, share), against the sum over every n."""
    from fractions import Fraction
    from math import comb

    from launchcard.predict._marlin import padded_random

    def exact(tokens: int, share: float, b: int) -> float:
        q = Fraction(share)
        e = sum(float(comb(tokens, n) * q ** n * (1 - q) ** (tokens - n)) * -(-n // b) * b for n in range(tokens + 1))
        return e / (tokens * share)

    for tokens, share, b in ((16, 1 / 16, 8), (256, 1 / 16, 32), (300, 4 / 128, 16), (2048, 1 / 16, 64)):
        assert padded_random(tokens, share, b) == pytest.approx(exact(tokens, share, b), rel=1e-9)
    assert 1.2 < padded_random(2048, 1 / 16, 64) < 1.3  # half the experts spill into a third block
    assert padded_random(256, 1 / 16, 32) == pytest.approx(2.0, rel=1e-3)
    assert 1.0 < padded_random(100_000, 1 / 16, 64) < 1.02  # many blocks: the last one's padding is a small share
    assert padded_random(0, 1 / 16, 8) == 1.0 and padded_random(3, 1.0, 8) == pytest.approx(8 / 3)


def test_a_step_times_the_marlin_experts_padded_rows_and_the_bf16_ones_unpadded() -> None:
    """The routed experts' FLOPs of a vLLM Marlin plan are its rows padded per expert (fused_marlin_moe's blocks);
    the fused Triton MoE of a BF16 plan pads to its own default block (launchcard.predict._fused_moe)."""
    from launchcard.predict._fused_moe import stand_in_ratio
    from launchcard.predict._marlin import moe_block, padded_random

    f = facts(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json", "a100_80gb", tp=4)
    k = facts_kernels(f)
    p = f.experts_per_token / f.experts
    for tokens in (256, 2048):
        w = step_work(f, 0, 0.0, tokens, tokens * tokens / 2.0)
        rows = w.moe_flop * f.expert_flops_per_s * k.x_comp / (2.0 * f.expert_params * p)
        assert rows == pytest.approx(tokens * padded_random(tokens, p, moe_block(tokens * p)), rel=1e-9)
    ep = replace(f, ep=True)  # the rank holds a quarter of the experts, every token reaches it: bigger blocks
    w = step_work(ep, 0, 0.0, 256, 256 * 128.0)
    rows = w.moe_flop * ep.expert_flops_per_s * facts_kernels(ep).x_comp / (2.0 * ep.expert_params * p)
    assert moe_block(256 * p * 4) == 64 and rows == pytest.approx(256 * padded_random(256, p, 64), rel=1e-9)
    bf16 = facts(CONFIGS / "Qwen--Qwen3-235B-A22B_config.json", "a100_80gb", tp=8)
    kb = facts_kernels(bf16)
    w = step_work(bf16, 0, 0.0, 2048, 2048 * 1024.0)
    rows = w.moe_flop * bf16.expert_flops_per_s * kb.x_comp / (2.0 * bf16.expert_params * p)
    assert bf16.marlin == "" and kb.x_blocks == (16, 64)
    # at SGLang's stand-in time x vLLM's tuned-file ratio for the shape (launchcard.predict._fused_moe.stand_in_ratio)
    r = stand_in_ratio("vllm", bf16.release, "a100_80gb", 128, 192, "bfloat16", "sglang")
    assert r is not None and r.measured
    assert rows == pytest.approx(2048 * padded_random(2048, p, 64) * r.gt, rel=1e-9)


def test_under_expert_parallelism_the_row_block_follows_the_release() -> None:
    """vLLM PR #48144 scales fused_marlin_moe's M by E / global experts before the block test: in 0.26.0
    (experts/marlin_moe.py L316-320), not in 0.25.1 (L315-318); 0.34.0 the newest release read (L301-310)."""
    from launchcard.predict._marlin import ep_block_rows, moe_block, padded_random

    assert ep_block_rows(256, 8, 32.0, 128, False) == 256 * 8 / 32  # every token over the rank's experts
    assert ep_block_rows(256, 8, 32.0, 128, True) == 64 * 8 / 32  # M = ceil(256 x 32 / 128) first
    assert ep_block_rows(257, 8, 32.0, 128, True) == 65 * 8 / 32  # ceil, as marlin_moe.py rounds M up
    assert ep_block_rows(256, 8, 128.0, 128, True) == 256 * 8 / 128  # no EP: E is global, nothing to scale

    config = CONFIGS / "Qwen--Qwen3-235B-A22B-FP8_config.json"
    arch = arch_from_config(json.loads(config.read_text()))
    acc = find("a100_80gb")

    def ep_facts(version: str | None, ep: bool = True) -> ServingFacts:
        s = Settings(tp=4, max_model_len=32768, vllm_version=version, expert_parallel=ep)
        return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                      engine="vllm")

    def said(f: ServingFacts) -> list[tuple[str, str]]:
        return [(x.severity, x.message) for x in f.findings if x.code == "marlin-ep"]

    old, new, later = ep_facts("0.25.1"), ep_facts("0.26.0"), ep_facts("0.35.0")
    assert (old.marlin_ep_m, new.marlin_ep_m, later.marlin_ep_m) == (False, True, True)
    assert said(ep_facts("0.26.0", ep=False)) == [] and not ep_facts("0.26.0", ep=False).marlin_ep_m
    (sev, msg), = said(old)
    assert sev == "info" and "0.25.1 marlin_moe.py L315-318" in msg and "4-fold" in msg and "#48144" in msg
    (sev, msg), = said(new)
    assert sev == "info" and "#48144" in msg and "0.26.0" in msg and "0.34.0" in msg
    (sev, msg), = said(later)
    assert sev == "assumed" and "newest release read is 0.34" in msg and "taken for 0.35" in msg
    unstated = ep_facts(None)
    (sev, msg), = said(unstated)  # not the planner's default release named as read
    assert unstated.marlin_ep_m and sev == "assumed" and "release not stated" in msg and "vLLM 0.3" not in msg
    p = arch.experts_per_tok / arch.num_experts

    def rows(f: ServingFacts, tokens: int) -> float:
        w = step_work(f, 0, 0.0, tokens, tokens * 128.0)
        return float(w.moe_flop * f.expert_flops_per_s * facts_kernels(f).x_comp / (2.0 * f.expert_params * p))

    # 256 tokens of top-8 over 128 experts, a quarter on each rank: 64-row blocks before 0.26, 32-row ones after
    assert moe_block(ep_block_rows(256, 8, 32.0, 128, False)) == 64
    assert moe_block(ep_block_rows(256, 8, 32.0, 128, True)) == 32
    assert rows(old, 256) == pytest.approx(256 * padded_random(256, p, 64), rel=1e-9)
    assert rows(new, 256) == pytest.approx(256 * padded_random(256, p, 32), rel=1e-9)
    assert rows(new, 256) < rows(old, 256)


def test_the_experts_share_is_read_at_their_n_per_rank() -> None:
    """Marlin's FLOP/s share rises with the experts' N per rank (bench/predict_kernels.py marlin_by_n): read at the
    plan's N, interpolated in log N between the measured N around it, the nearest measured N outside their range;
    the fit over every shape where no N is recorded."""
    m = MarlinShares(e_comp=0.2, t0_s=48e-6, read=0.7, source="t", by_n=((64.0, 0.08), (2048.0, 0.28)))
    assert m.at_n(0) == (0.2, "the fit over every shape (0.200)")
    assert m.at_n(64)[0] == 0.08 and "N 64's own" in m.at_n(64)[1]
    share, how = m.at_n(362)  # ~ the geometric middle of 64 and 2048
    assert share == pytest.approx(0.18, abs=1e-3) and "interpolated between N 64 and 2048" in how
    assert m.at_n(2880) == (0.28, "measured at N 64-2048: N 2880 is outside, read at the nearest, N 2048")
    assert m.at_n(32)[0] == 0.08 and "outside" in m.at_n(32)[1]
    assert m._replace(by_n=()).at_n(2880)[0] == 0.2


def test_gpt_oss_experts_on_an_h100_take_marlins_share_at_their_own_n() -> None:
    """The H100's Marlin rows (vLLM 0.24.0 int4_wo, Kimi's 7168 x 2048 split over TP 1-32) reach 0.08 of the bf16
    FLOP/s at N 64 and 0.28 at 2048; gpt-oss's experts (N 2880 per rank at TP 1, 1440 at TP 2) are read there, not at
    the median over every N (0.199), and the finding says how."""
    m = marlin_shares("h100")
    assert m is not None and len(m.by_n) >= 5
    shares = [v for _, v in m.by_n]
    assert shares == sorted(shares) and shares[0] < m.e_comp < shares[-1]
    for tp, n in ((1, 2880), (2, 1440)):
        f = facts(GPT_OSS, "h100", tp=tp)
        assert f.marlin == "experts" and f.moe_n == n
        assert facts_kernels(f).x_comp == m.at_n(n)[0] > m.e_comp
    one = facts(GPT_OSS, "h100")
    said = [x.message for x in one.findings if x.code == "moe-kernel"]
    assert len(said) == 1 and "N 2880 is outside, read at the nearest, N 2048" in said[0]
