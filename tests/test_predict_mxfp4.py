"""gpt-oss in predict: which MXFP4 MoE kernel each engine runs on each GPU (and the measured shares it is timed
with), and the KV its sliding-window layers hold under vLLM's hybrid KV cache manager."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, Workload, facts_from_memory_plan, predict, step_work
from launchcard.predict._facts import kv_tokens_at
from launchcard.predict._kernels import _table, facts_kernels, kernel_eff
from launchcard.predict._types import Finding

SHARED = Path(__file__).resolve().parents[2] / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def gpt_oss(gpu: str, engine: str = "vllm", version: str | None = None, tp: int = 1,
            backend: str | None = None) -> ServingFacts:
    arch = arch_from_config(json.loads(GPT_OSS.read_text()))
    s = Settings(tp=tp, max_model_len=32768, vllm_version=version, mxfp4_backend=backend)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def recorded(gpu: str, engine: str, key: str) -> dict[str, float]:
    got = _table()["kernels"]["gpus"][gpu][engine]["moe"][key]
    assert isinstance(got, dict)
    return got


def test_vllm_keeps_the_bf16_class_and_names_its_mxfp4_kernel_per_gpu() -> None:
    """get_mxfp4_backend: FlashInfer on SM100, Triton on SM90 from 0.12 (triton_kernels bundled; unstated release:
    assumed), Marlin below SM90."""
    for gpu, code, word, version in (("b200", "compute-dtype", "FlashInfer", "0.11.0"),
                                     ("h100", "compute-dtype", "Triton", "0.13.0"),
                                     ("a100_80gb", "weight-only", "Marlin", "0.11.0")):
        f = gpt_oss(gpu, version=version)
        assert f.moe_kernel is None and f.expert_dtype == "bf16", gpu
        assert any(x.code == code and word in x.message for x in f.findings), gpu
        hw = f.hardware
        # below SM90 the experts run Marlin, timed with its measured shares (test_predict_marlin)
        # the BF16 class at its fit over the rows as routed: MXFP4 experts do not run the Triton fused MoE's blocks
        assert not f.fused_moe
        assert facts_kernels(f) == kernel_eff(hw.id, hw.kind, "vllm", "bf16", "bf16", None, f.marlin,
                                              f.attn_backend, fused_moe=False, moe_n=f.moe_n), gpu
        assert f.marlin == ("experts" if gpu == "a100_80gb" else ""), gpu
    h100 = gpt_oss("h100")
    assert any(x.code == "compute-dtype" and x.severity == "assumed" and "#27370" in x.message for x in h100.findings)


def test_a_gpu_without_the_kernel_record_keeps_its_dtype_class() -> None:
    assert "mxfp4" not in _table()["kernels"]["gpus"]["a100_80gb"]["trtllm"].get("moe", {})  # no MXFP4 rows
    assert kernel_eff("a100_80gb", "gpu", "trtllm", "bf16", "bf16", "mxfp4") == kernel_eff("a100_80gb", "gpu", "trtllm",
                                                                                           "bf16", "bf16")
    assert "mxfp4" not in _table()["kernels"]["gpus"]["h100"]["vllm"]["moe"]  # vLLM's kernels are reported only


def test_tensorrt_llm_takes_mxfp8_activations_on_blackwell_and_bf16_on_hopper() -> None:
    b200, h200 = gpt_oss("b200", engine="trtllm"), gpt_oss("h200", engine="trtllm")
    assert (b200.moe_kernel, b200.expert_dtype) == ("mxfp4", "fp8")
    assert (h200.moe_kernel, h200.expert_dtype) == ("mxfp4", "bf16")
    assert b200.compute_dtype == "bf16"  # attention and router stay 16-bit
    own = recorded("b200", "trtllm", "mxfp4")
    assert own["rate"] == "fp8"
    k = facts_kernels(b200)
    assert k.x_comp == pytest.approx(own["e_comp"]) and k.x_t0 == pytest.approx(own["t0_us"] * 1e-6)
    assert facts_kernels(h200).x_comp == pytest.approx(recorded("h200", "trtllm", "mxfp4")["e_comp"])
    # FP8 math at the MXFP4 x MXFP8 kernel's share: a compute-bound expert pass is faster than BF16's
    bf16 = kernel_eff("b200", "gpu", "trtllm", "bf16", "bf16")
    assert b200.expert_flops_per_s * k.x_comp > 2 * b200.hardware.flops["bf16"] * bf16.x_comp
    plain = replace(b200, moe_kernel=None, expert_dtype="bf16")
    w, w0 = step_work(b200, 256, 256 * 1200.0, 0, 0.0), step_work(plain, 256, 256 * 1200.0, 0, 0.0)
    # the BF16 plan's experts at the BF16 record's share at gpt-oss's N 2880 per rank (its by_n), above its fit over
    # every N: the MXFP8 pass still faster
    assert w.moe_flop < w0.moe_flop and w.moe_mem == w0.moe_mem  # the same MXFP4 bytes either way


def test_sglang_keeps_the_bf16_grouped_gemm_class() -> None:
    f = gpt_oss("h100", engine="sglang")
    assert f.moe_kernel is None and f.expert_dtype == "bf16"


# -- sliding-window layers' KV: vLLM's hybrid KV cache manager -------------------------------------------------------


def test_vllm_frees_sliding_window_blocks_so_long_requests_take_half_the_pool() -> None:
    """gpt-oss: 18 sliding (128-token window) + 18 full-attention layers; vLLM >= 0.10 frees the sliding layers'
    blocks out of the window (SlidingWindowManager.remove_skipped_blocks), so a request holds about half the KV of
    every-layer accounting once it is long, and nearly all of it when short."""
    f = gpt_oss("h100", version="0.10.2")
    assert f.window == 128 and f.sliding_kv_bytes == pytest.approx(f.kv_bytes_per_token / 2)
    # before 0.21 vLLM prints the pool in every-layer tokens (a whole number of blocks per group)
    assert f.kv_pool_tokens == pytest.approx(f.kv_capacity_tokens, abs=2 * 16)
    long_, short = kv_tokens_at(f, 32000), kv_tokens_at(f, 100)
    assert long_ == int(2 * f.kv_pool_tokens * 32000 / (32000 + 128 + 16))
    assert short == f.kv_pool_tokens  # a context inside the window holds every layer's KV
    assert kv_tokens_at(gpt_oss("h100", version="0.9.2"), 32000) == gpt_oss("h100", version="0.9.2").kv_capacity_tokens
    assert kv_tokens_at(gpt_oss("h100", engine="sglang"), 32000) == gpt_oss("h100", engine="sglang").kv_capacity_tokens


def test_long_prompt_bursts_prefill_beside_a_decoding_request_where_the_pool_holds_them() -> None:
    f = gpt_oss("h100", version="0.10.2")
    w = Workload(isl=30000, osl=64, rate=math.inf, num_requests=6)
    p = predict(f, w)
    assert any(x.code == "kv-sliding-window" for x in p.findings)
    # every-layer accounting holds one 30k request in this pool (a second one's first chunk is admitted, then
    # preempted): the decoding request ran alone; freed sliding blocks let the next ones prefill beside it
    old = predict(replace(f, kv_pool_tokens=0), w)
    assert old.preemptions > p.preemptions and p.max_running > old.max_running
    assert p.tpot_ms_mean > 3 * old.tpot_ms_mean


def test_sglang_divides_its_pool_by_every_layers_kv_for_gpt_oss_through_0_5_6() -> None:
    """SGLang turns hybrid SWA memory off for gpt-oss (0.5.4.post3 server_args.py L982, 0.5.6.post2 L1176): every
    layer's KV per token, not the memory planner's one-group figure; 0.5.14 and 0.5.21 keep it on: full tokens =
    every-layer x 36 / (0.8 x 18 + 18)."""
    from launchcard.predict import sglang_plan, sglang_serving_facts

    serve = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b", "--tp", "2"]
    gib = find("h100").memory_gib

    def kv(version: str, *extra: str) -> tuple[int, ServingFacts]:
        f = sglang_serving_facts(GPT_OSS, sglang_plan([*serve, *extra], gpu_memory_gib=gib, version=version),
                                 gpu="h100")
        return f.kv_capacity_tokens, f

    old, f_old = kv("0.5.4.post2")
    new, f_new = kv("0.5.21")
    off, _ = kv("0.5.21", "--disable-hybrid-swa-memory")
    assert off == pytest.approx(old, rel=1e-3)
    assert new == pytest.approx(old * 36 / (0.8 * 18 + 18), rel=1e-3)
    assert kv("0.5.6.post2")[0] == pytest.approx(old, rel=1e-3)  # still off in the rules release
    assert kv("0.5.14")[0] == pytest.approx(new, rel=1e-3)
    assert any(x.code == "sglang-swa-memory" for x in f_old.findings)
    assert not any(x.code == "sglang-swa-memory" and x.severity == "assumed" for x in f_new.findings)


def test_only_sm100_is_told_it_runs_the_sm100_kernels() -> None:
    """vLLM's FlashInfer MXFP4 path and TensorRT-LLM's MXFP8 activations are SM100's; an SM12x GPU (RTX Pro 6000)
    is told what is assumed instead, timed with the BF16 grouped-GEMM class."""
    from launchcard.predict._mxfp4 import mxfp4_kernel

    sm12 = replace(HardwareFigures.from_accelerator(find("b200")), id="sm12x_card", compute_capability="12.0")
    for engine, word in (("vllm", "Marlin"), ("trtllm", "support matrix")):
        out: list[Finding] = []
        assert mxfp4_kernel(engine, sm12, "bf16", out) == (None, "bf16"), engine
        assert len(out) == 1 and out[0].severity == "assumed" and word in out[0].message, engine
        assert "SM100 runs" not in out[0].message and "Blackwell runs" not in out[0].message, engine


def test_tensorrt_llm_says_measured_only_where_its_mxfp4_kernel_is() -> None:
    """Measured MXFP4 records exist for Hopper and Blackwell; the A100 and L40S (outside its gpt_oss support matrix)
    fall back to the BF16 class, said as assumed (the A100's share is the median's, the L40S's its own)."""
    for gpu in ("h100", "b200"):
        said = [x for x in gpt_oss(gpu, engine="trtllm").findings if x.code == "moe-kernel"]
        assert len(said) == 1 and "measured" in said[0].message, gpu
        # Hopper's record is the Triton kernels' while the release's default backend decides what runs (below)
        assert said[0].severity == ("assumed" if gpu == "h100" else "info"), gpu
    for gpu, whose in (("a100_80gb", "median"), ("l40s", "on this GPU")):
        f = gpt_oss(gpu, engine="trtllm", tp=4 if gpu == "l40s" else 2)
        said = [x for x in f.findings if x.code == "moe-kernel"]
        assert f.moe_kernel is None
        assert len(said) == 1 and said[0].severity == "assumed" and "measured MXFP4" not in said[0].message, gpu
        assert "support matrix" in said[0].message and whose in said[0].message, gpu


def test_fp4_weights_below_sm100_say_weight_only_except_hoppers_mxfp4_experts() -> None:
    """FP4 tensor cores start at SM100: gpt-oss on an L40S (SM 8.9) is served through Marlin, said; on an H100 the
    Triton/Marlin finding says it; on a B200 neither."""
    for gpu, want in (("l40s", True), ("a100_80gb", True), ("h100", False), ("b200", False)):
        f = gpt_oss(gpu, tp=4 if gpu == "l40s" else 2)
        got = [x for x in f.findings if x.code == "weight-only"]
        assert bool(got) is want, gpu
        assert not got or "no FP4 tensor cores" in got[0].message


def test_a_gpus_own_mxfp4_record_is_not_called_the_median() -> None:
    """kernel_eff's override takes the GPU's own MXFP4 record: "moe" is then not borrowed, whatever the BF16 rows."""
    table = _table()["kernels"]["gpus"]
    assert isinstance(table["h100"]["trtllm"]["moe"].get("mxfp4"), dict)
    eff = kernel_eff("h100", "gpu", "trtllm", "bf16", "bf16", "mxfp4")
    assert "moe" not in eff.borrowed
    # a GPU without MoE rows of its own but an mxfp4 record: simulated on a copy of the table
    import launchcard.predict._kernels as cost

    h100 = json.loads(json.dumps(table["h100"]))
    del h100["trtllm"]["moe"]["bf16"], h100["trtllm"]["moe"]["fp8"]
    doc = json.loads(json.dumps(_table()))
    doc["kernels"]["gpus"]["fake_gpu"] = h100
    orig = cost._table
    try:
        cost._table = lambda: doc  # type: ignore[assignment]
        kernel_eff.cache_clear()
        assert "moe" in kernel_eff("fake_gpu", "gpu", "trtllm", "bf16", "bf16").borrowed
        assert "moe" not in kernel_eff("fake_gpu", "gpu", "trtllm", "bf16", "bf16", "mxfp4").borrowed
    finally:
        cost._table = orig  # type: ignore[assignment]
        kernel_eff.cache_clear()


# -- vLLM on Hopper: Marlin or Triton by release (triton_kernels shipped from 0.12) -----------------------------------


def test_vllm_before_0_12_runs_marlin_on_hopper_timed_with_its_measured_record() -> None:
    """0.10.x/0.11.x ship no triton_kernels (bundled from 0.12, vllm PR #28788), so get_mxfp4_backend takes Marlin on
    SM90: the experts run vLLM's Marlin kernels (ServingFacts.marlin), timed with Marlin's measured shares (the FLOP/s
    share at gpt-oss's N per rank, about 0.74 of the BF16 grouped GEMM's over the (padded) rows it multiplies)."""
    from launchcard.predict._marlin import marlin_shares

    for gpu, version in (("h100", "0.10.2"), ("h100", "0.11.0"), ("h200", "0.11.2")):
        f = gpt_oss(gpu, version=version)
        assert (f.moe_kernel, f.marlin, f.expert_dtype) == (None, "experts", "bf16"), (gpu, version)
        said = [x for x in f.findings if x.code == "moe-kernel"]
        assert len(said) == 1 and "Marlin" in said[0].message, (gpu, version)
        # the measured rows are W4A16 Marlin MoE calls: MXFP4's taking their shares is an assumption, said so
        assert said[0].severity == "assumed" and "W4A16 weights: MXFP4's assumed" in said[0].message
        assert "#28788" in said[0].message and "L95-99" in said[0].message
        own = marlin_shares(gpu)
        assert own is not None
        k = facts_kernels(f)
        assert k.x_comp == pytest.approx(own.at_n(f.moe_n)[0]) and k.x_t0 == pytest.approx(own.t0_s)
        assert k.x_comp < 0.8 * kernel_eff(gpu, "gpu", "vllm", "bf16", "bf16").x_comp
        assert "moe" not in k.borrowed
    # the same plan served by 0.12+ (Triton, the BF16 class) decodes faster than by 0.11 (Marlin)
    w = Workload(isl=1000, osl=200, concurrency=256)
    old, new = gpt_oss("h100", version="0.11.0", tp=2), gpt_oss("h100", version="0.12.0", tp=2)
    assert new.moe_kernel is None and new.marlin == ""
    assert predict(old, w).tpot_ms_mean > 1.05 * predict(new, w).tpot_ms_mean


def test_vllm_from_0_12_runs_triton_and_an_unstated_release_is_assumed() -> None:
    for version in ("0.12.0", "0.18.1"):
        f = gpt_oss("h100", version=version)
        said = [x for x in f.findings if x.code == "compute-dtype" and "Triton" in x.message]
        assert f.moe_kernel is None and len(said) == 1 and said[0].severity == "info", version
        assert "#28788" in said[0].message
    said = [x for x in gpt_oss("h100").findings if x.code == "compute-dtype" and "Triton" in x.message]
    assert len(said) == 1 and said[0].severity == "assumed" and "not stated" in said[0].message


def test_the_backend_the_launch_or_user_states_wins_over_the_releases() -> None:
    """VLLM_MXFP4_USE_MARLIN=1 / --moe-backend marlin pick Marlin on 0.12+; triton_kernels installed by hand before
    0.12 is said with --mxfp4-backend triton (Settings.mxfp4_backend)."""
    from launchcard.predict._mxfp4 import sm90_vllm_backend

    assert sm90_vllm_backend((0, 11))[0] == "marlin" and sm90_vllm_backend((0, 12))[0] == "triton"
    assert sm90_vllm_backend(None)[0] == "triton" and sm90_vllm_backend((0, 11), "triton")[0] == "triton"
    assert gpt_oss("h100", version="0.13.0", backend="marlin").marlin == "experts"
    hand = gpt_oss("h100", version="0.10.2", backend="triton")
    assert hand.moe_kernel is None and hand.marlin == ""
    assert any("stated" in x.message and "Triton" in x.message for x in hand.findings)
    # stated with no release: a fact, not the unstated release's assumption (nor its "before 0.12 run Marlin")
    told = [x for x in gpt_oss("h100", backend="triton").findings
            if x.code == "compute-dtype" and "Triton" in x.message]
    assert len(told) == 1 and told[0].severity == "info" and "not stated" not in told[0].message
    assert "stated" in told[0].message
    # an SM90 GPU without a measured Marlin record keeps the BF16 class, said as assumed
    from launchcard.predict._mxfp4 import mxfp4_kernel

    sm90 = replace(HardwareFigures.from_accelerator(find("h100")), id="sm90_card")
    out: list[Finding] = []
    assert mxfp4_kernel("vllm", sm90, "bf16", out, release=(0, 11)) == (None, "bf16")
    assert len(out) == 1 and out[0].severity == "assumed" and "not measured on sm90_card" in out[0].message


def test_the_launch_says_marlin_through_its_environment_or_moe_backend() -> None:
    from launchcard.errors import InputError
    from launchcard.memory import settings_from_argv

    serve = ["vllm", "serve", "openai/gpt-oss-120b"]
    assert settings_from_argv(["VLLM_MXFP4_USE_MARLIN=1", *serve]).mxfp4_backend == "marlin"
    assert settings_from_argv(["VLLM_MXFP4_USE_MARLIN=0", *serve]).mxfp4_backend is None
    assert settings_from_argv(serve).mxfp4_backend is None
    assert settings_from_argv([*serve, "--moe-backend", "triton"]).mxfp4_backend == "triton"
    with pytest.raises(InputError, match="VLLM_MXFP4_USE_MARLIN"):
        settings_from_argv(["VLLM_MXFP4_USE_MARLIN=yes", *serve])
    with pytest.raises(InputError, match="--mxfp4-backend"):
        Settings(mxfp4_backend="cutlass").validate()


def test_cli_mxfp4_backend_option_says_what_ran() -> None:
    from helpers import run_cli

    args = ("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "1000", "--osl", "200", "--concurrency",
            "64", "--engine-version", "0.10.2", "--json", "--command",
            "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2")
    marlin, triton = run_cli(*args), run_cli(*args, "--mxfp4-backend", "triton")
    assert marlin.returncode == 0 and triton.returncode == 0, marlin.stderr + triton.stderr
    a, b = json.loads(marlin.stdout), json.loads(triton.stdout)
    assert a["tpot_ms_mean"] > 1.05 * b["tpot_ms_mean"]
    assert any(f["code"] == "moe-kernel" and "Marlin" in f["message"] for f in a["findings"])
    bad = run_cli(*args, "--mxfp4-backend", "cutlass")
    assert bad.returncode == 2 and "--mxfp4-backend" in bad.stderr and "Traceback" not in bad.stderr


def test_a_backend_said_for_a_checkpoint_without_mxfp4_experts_is_named_as_without_effect() -> None:
    """--mxfp4-backend (or VLLM_MXFP4_USE_MARLIN) on a model with no MXFP4 experts changes nothing; the prediction
    says so instead of dropping it silently (it did: Qwen3-8B's figures were the same with and without it)."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    arch = arch_from_config(json.loads(qwen.read_text()))
    for backend in (None, "marlin"):
        s = Settings(max_model_len=8192, mxfp4_backend=backend)
        acc = find("h100")
        f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))
        said = [x for x in f.findings if x.code == "moe-kernel" and "no effect" in x.message]
        assert bool(said) == (backend is not None)
    assert not any("no effect" in x.message for x in gpt_oss("h100", version="0.11.0", backend="marlin").findings)


def test_the_sliding_window_pool_is_written_as_the_verdict_writes_kv_tokens() -> None:
    """The verdict says "KV cache 13,037,354 tokens"; the prediction's sliding-window finding wrote its pool as
    6933256: one way of writing a token count beside the other."""
    import re

    from helpers import run_cli

    res = run_cli("predict", "--config", str(Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf"
                                             / "openai" / "gpt-oss-120b" / "config.json"),
                  "--gpu", "h100", "--tp", "2", "--isl", "1024", "--osl", "256", "--concurrency", "4")
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if "every layer holds" in x)
    assert not re.search(r"\d{4}", line.split("remove_skipped_blocks")[1]), line


def sglang_gpt_oss(gpu: str, *extra: str, version: str = "0.5.4.post2") -> ServingFacts:
    from launchcard.predict import sglang_plan, sglang_serving_facts

    serve = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b", *extra]
    return sglang_serving_facts(GPT_OSS, sglang_plan(serve, gpu_memory_gib=find(gpu).memory_gib, version=version),
                                gpu=gpu)


def test_sglang_names_its_gpt_oss_moe_runner_and_times_sm100_at_the_fp8_rate() -> None:
    """server_args.py (0.5.6.post2 L1158-1167): FlashInfer's MXFP4 MoE on SM100 with MXFP8 activations at the
    default --flashinfer-mxfp4-moe-precision (mxfp4.py L636-637), OpenAI's triton_kernels on SM90 and below (below
    SM90 unmeasured: assumed), BF16-upcast experts at --ep-size > 1."""
    b200 = sglang_gpt_oss("b200", "--tp", "2")
    assert (b200.moe_kernel, b200.expert_dtype) == (None, "fp8")
    said = [x for x in b200.findings if x.code == "moe-kernel"]
    assert len(said) == 1 and said[0].severity == "info" and "MXFP8" in said[0].message
    assert b200.expert_flops_per_s == b200.hardware.flops["fp8"]
    for gpu, severity, word in (("h100", "info", "SM90"), ("a100_80gb", "assumed", "strided layout")):
        f = sglang_gpt_oss(gpu, "--tp", "2")
        assert (f.moe_kernel, f.expert_dtype) == (None, "bf16"), gpu
        said = [x for x in f.findings if x.code == "moe-kernel"]
        assert len(said) == 1 and said[0].severity == severity and "triton_kernels" in said[0].message, gpu
        assert word in said[0].message, gpu
    # (--tp 4: the BF16 experts of --tp 2 --ep-size 2, ~107 GiB a GPU, leave an H100 no KV cache)
    ep = sglang_gpt_oss("h100", "--tp", "4", "--ep-size", "4")
    said = [x for x in ep.findings if x.code == "moe-kernel"]
    assert len(said) == 1 and said[0].severity == "info" and "upcast to BF16" in said[0].message
    assert "--ep-size 4" in said[0].message and ep.fused_moe and ep.expert_dtype == "bf16"


def test_sglang_names_the_attention_backend_it_picks_for_gpt_oss() -> None:
    """trtllm_mha on SM100, fa3 on SM90, Triton elsewhere (0.5.6.post2 server_args.py L1115-1126); a stated
    --attention-backend keeps the command's own finding only."""
    for gpu, backend, severity in (("b200", "trtllm_mha", "info"), ("h100", "fa3", "info"),
                                   ("a100_80gb", "triton", "assumed")):
        said = [x for x in sglang_gpt_oss(gpu, "--tp", "2").findings if x.code == "attention-backend"]
        assert len(said) == 1 and said[0].severity == severity and f": {backend} " in said[0].message, gpu
    stated = sglang_gpt_oss("a100_80gb", "--tp", "2", "--attention-backend", "triton")
    assert not any(x.code == "attention-backend" for x in stated.findings)
    assert any(x.code == "sglang-attention" for x in stated.findings)


def test_tensorrt_llm_on_hopper_says_which_moe_backend_its_release_defaults_to() -> None:
    """MoeConfig.backend was CUTLASS by default until NVIDIA/TensorRT-LLM PR #11074 made it AUTO (TRITON for gpt-oss on
    Hopper, 1.3): the measured MXFP4 x BF16 record is the Triton kernels', so a 1.0 or 1.2 launch is told its CUTLASS
    MoE is timed with them (likely slower than timed), a 1.3 one that it runs them; the timing is the same kernel."""
    old, mid, new, unstated = (gpt_oss("h100", engine="trtllm", version=v) for v in ("1.0.0", "1.2.0rc1", "1.3.0",
                                                                                      None))
    for f in (old, mid, new, unstated):
        assert f.moe_kernel == "mxfp4"
    said = {k: next(x for x in f.findings if x.code == "moe-kernel")
            for k, f in (("old", old), ("mid", mid), ("new", new), ("unstated", unstated))}
    for k in ("old", "mid", "unstated"):
        assert said[k].severity == "assumed" and "CUTLASS" in said[k].message and "likely slower" in said[k].message
    assert "TensorRT-LLM 1.0:" in said["old"].message and "not read" not in said["old"].message
    assert "1.2.0rc2.post2" in said["mid"].message and "no release stated" in said["unstated"].message
    assert said["new"].severity == "info" and "AUTO resolves to TRITON" in said["new"].message
    assert "CUTLASS" not in said["new"].message
    # Blackwell keeps its MXFP8 record, said as before
    assert "Blackwell" in next(x.message for x in gpt_oss("b200", engine="trtllm", version="1.0.0").findings
                               if x.code == "moe-kernel")


def test_a_stated_tensorrt_llm_release_reaches_the_moe_backend_rule() -> None:
    """The release `predict --engine-version` and the held-out rows state for a trtllm-serve launch travels as
    TrtllmLaunch.release (never as a vLLM release): the facts carry it and the Hopper MoE-backend finding names it
    (it used to say "no release stated" for a stated 1.0.0 or 1.2.0rc1, the release set only after the findings)."""
    from launchcard.predict import serving_facts
    from launchcard.predict._trtllm import TrtllmLaunch

    def said(release: str | None) -> tuple[ServingFacts, Finding]:
        f = serving_facts(GPT_OSS, Settings(max_model_len=32768), gpu="h100", engine="trtllm",
                          trtllm=TrtllmLaunch(release=release))
        return f, next(x for x in f.findings if x.code == "moe-kernel")

    (old, m_old), (mid, m_mid), (new, m_new), (none, m_none) = (said(v) for v in ("1.0.0", "1.2.0rc1", "1.3.0", None))
    assert (old.release, mid.release, new.release, none.release) == ("1.0.0", "1.2.0rc1", "1.3.0", None)
    assert "TensorRT-LLM 1.0:" in m_old.message and "no release stated" not in m_old.message
    assert "TensorRT-LLM 1.2:" in m_mid.message and "WFP4A16FusedMoEMethod" in m_mid.message
    assert m_new.severity == "info" and "AUTO resolves to TRITON" in m_new.message
    assert "no release stated" in m_none.message
    # the rule only words the finding: every release times the experts with the same measured kernel
    assert old.moe_kernel == mid.moe_kernel == new.moe_kernel == none.moe_kernel == "mxfp4"
    assert old.expert_flops_per_s == new.expert_flops_per_s


def test_predict_launch_hands_the_engine_version_to_a_trtllm_launch() -> None:
    """`launchcard predict --engine-version 1.2.0rc1 --command 'trtllm-serve ...'` on an H100: the release the
    findings compare and the MoE-backend finding are the stated one's."""
    from launchcard.predict._launch import predict_launch

    facts, _ = predict_launch(GPT_OSS, Workload(isl=128, osl=16, concurrency=1, num_requests=2),
                              Settings(max_model_len=32768), engine="trtllm", gpu="h100", version="1.2.0rc1")
    assert facts.release == "1.2.0rc1"
    assert "TensorRT-LLM 1.2:" in next(x.message for x in facts.findings if x.code == "moe-kernel")
