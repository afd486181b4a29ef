"""KV-cache dtype, scheduler, parallel and bfloat16 start-up refusals (issue 20, item 4), asked of vLLM itself.

The rules in ``launchcard.limits`` come from the engine's attention backends and config validators
(captured by ``scripts/capture_engine_limits.py``); the last tests put the same questions to the
vLLM 0.32 CPU wheel in ``.cache/vllm-venv`` in-process (its CUDA platform with the compute
capability set, ``SchedulerConfig``, ``ParallelConfig``) and compare answers and wording.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from launchcard.check import check_command, check_plan, derive_plan
from launchcard.cli import app
from launchcard.limits import (
    Parallel,
    Scheduling,
    attention_kind,
    bfloat16_refusal,
    dcp_model_refusal,
    kv_dtype_verdict,
    kv_dtypes_accepted,
    own_backends,
    parallel_refusals,
    pp_refusal,
    scheduler_refusals,
    table,
    tp_refusal,
)
from launchcard.memory import Settings, arch_from_config, plan_memory

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
TINY = ROOT / ".cache" / "tiny-model" / "model"
# deepseek-ai/DeepSeek-V3's config.json (the fields the planner and the attention rules read)
DSV3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
    "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61, "hidden_size": 7168,
    "intermediate_size": 18432, "max_position_embeddings": 163840, "vocab_size": 129280, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "n_shared_experts": 1,
    "torch_dtype": "bfloat16"}
QWEN3_8B: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128, "hidden_size": 4096,
    "intermediate_size": 12288, "max_position_embeddings": 40960, "num_attention_heads": 32, "num_hidden_layers": 36,
    "num_key_value_heads": 8, "torch_dtype": "bfloat16", "vocab_size": 151936, "tie_word_embeddings": False}


def test_mla_models_take_no_fp8_e5m2_kv_cache_on_any_captured_cuda_gpu() -> None:
    mla, sparse = attention_kind(DSV3)
    assert (mla, sparse) == (True, False)
    assert attention_kind({**DSV3, "index_topk": 2048}) == (True, True)
    assert attention_kind(QWEN3_8B) == (False, False)
    assert attention_kind(DSV3, {"VLLM_MLA_DISABLE": "1"}) == (False, False)
    for cap in (table()["kv_cache"]["cuda"]["candidates"]):
        refused = kv_dtype_verdict("fp8_e5m2", platform="cuda", capability=cap, mla=True).refused
        assert refused and "No valid attention backend found for cuda" in refused
        assert "vllm/platforms/cuda.py" in refused
        assert kv_dtype_verdict("fp8", platform="cuda", capability=cap, mla=True).accepted_by  # TRITON_MLA
        assert kv_dtype_verdict("fp8_e5m2", platform="cuda", capability=cap, mla=False).accepted_by  # TRITON_ATTN
    # what a fix may propose is what some backend certainly takes
    assert "fp8_e5m2" not in kv_dtypes_accepted(platform="cuda", capability="9.0", mla=True)
    assert "fp8" in kv_dtypes_accepted(platform="cuda", capability="9.0", mla=True)


def test_models_that_pick_their_own_backends_are_not_judged(tmp_path: Path) -> None:
    """DeepSeek-V4 maps any fp8* KV dtype to its own fp8_ds_mla layout (vllm/models/deepseek_v4/attention.py)."""
    v4 = {**DSV3, "model_type": "deepseek_v4", "compress_ratios": [1, 4], "head_dim": 512, "index_topk": 512}
    v4.pop("kv_lora_rank")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(v4))
    out = CliRunner().invoke(app, ["check", "--config", str(cfg), "--gpu", "b200", "--", "vllm", "serve", "m",
                                   "--kv-cache-dtype", "fp8_e5m2"])
    assert out.exit_code == 0 and "[kv-cache-dtype-not-judged, startup]" in out.output, out.output
    plan = plan_memory(arch_from_config(v4), Settings(tp=8, kv_cache_dtype="fp8_e5m2"), gpu="b200")
    assert not any("No valid attention backend" in p for p in plan.problems)
    assert any("picks its own backends" in w for w in plan.warnings), plan.warnings
    assert own_backends({"architectures": ["DeepseekV4ForCausalLM"]})  # captured from vllm/models/deepseek_v4
    assert own_backends(DSV3) is None


def test_kv_dtype_rules_per_generation_platform_and_validator() -> None:
    # NVFP4 KV needs FlashInfer, which vLLM 0.32 does not try below compute capability 8.0
    assert kv_dtype_verdict("nvfp4", platform="cuda", capability="7.5").refused
    assert kv_dtype_verdict("nvfp4", platform="cuda", capability="9.0").undecided  # FlashInfer decides at run time
    nvfp4_mla = kv_dtype_verdict("nvfp4", platform="cuda", capability="10.0", mla=True).refused
    assert nvfp4_mla and "nvfp4 KV cache is not supported with MLA" in nvfp4_mla  # VllmConfig's own validator
    assert kv_dtype_verdict("fp8_inc", platform="cuda", capability="9.0").refused  # Gaudi's format
    rocm = kv_dtype_verdict("fp8_inc", platform="rocm", mla=True).refused
    assert rocm and "Supported kv_cache_dtype values:" in rocm
    assert kv_dtype_verdict("fp8_e5m2", platform="rocm", mla=True).accepted_by  # AITER MLA takes it
    # cannot decide: no capability, a platform not captured, the CPU backend (it does not check)
    assert "no compute capability" in (kv_dtype_verdict("fp8", platform="cuda", capability=None).undecided or "")
    assert kv_dtype_verdict("fp8", platform=None, device="gaudi3").undecided
    assert kv_dtype_verdict("fp8", platform="cpu").undecided
    assert kv_dtype_verdict("auto", platform="cuda", capability="7.5", mla=True) == kv_dtype_verdict(None,
                                                                                                   platform=None)


def test_scheduler_parallel_and_bfloat16_rules() -> None:
    got = {r.rule for r in scheduler_refusals(Scheduling(max_model_len=40960, max_num_batched_tokens=8192,
                                                         max_num_seqs=10000, chunked_prefill=False,
                                                         long_prefill_token_threshold=50000))}
    assert got == {"max_num_batched_tokens_below_len", "max_num_batched_tokens_below_seqs", "long_prefill_over_len"}
    # chunked prefill not switched off, or a value not given: vLLM's defaults decide, nothing is judged
    assert not scheduler_refusals(Scheduling(max_model_len=40960, max_num_batched_tokens=8192))
    assert not scheduler_refusals(Scheduling(max_num_seqs=10000))
    assert [r.rule for r in parallel_refusals(Parallel(eplb=True), "cuda")] == ["eplb_needs_ep"]
    assert [r.rule for r in parallel_refusals(Parallel(eplb=True, expert_parallel=True), "cuda")] == [
        "eplb_needs_parallel"]
    assert [r.rule for r in parallel_refusals(Parallel(eplb=True, expert_parallel=True, tp=8), "cpu")] == [
        "eplb_platform"]
    assert not parallel_refusals(Parallel(eplb=True, expert_parallel=True, tp=8), "cuda")
    assert [r.rule for r in parallel_refusals(Parallel(tp=4, dcp=3, dp_local=2), "cuda")] == [
        "dp_local_over_dp", "dcp_divides_tp"]
    assert [r.rule for r in parallel_refusals(Parallel(redundant_experts=32), "cuda")] == [
        "redundant_experts_without_eplb"]
    assert bfloat16_refusal("bfloat16", "7.5") and bfloat16_refusal("bf16", "8.0") is None
    assert bfloat16_refusal("auto", "7.5") is None  # auto picks float16 there
    assert tp_refusal(48, 6, 4) and tp_refusal(48, 6, 2) is None and tp_refusal(128, 1, 8, mla=True) is None


def test_check_cli_refuses_kv_dtype_scheduler_and_eplb(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(DSV3))
    runner = CliRunner()
    bad = runner.invoke(app, ["check", "--config", str(cfg), "--gpu", "h200", "--", "vllm", "serve",
                              "deepseek-ai/DeepSeek-V3", "-tp", "8", "--kv-cache-dtype", "fp8_e5m2"])
    assert bad.exit_code == 1 and "[kv-cache-dtype-refused, startup]" in bad.output, bad.output
    assert "No valid attention backend found for cuda" in bad.output
    assert "use one of float16, bfloat16, fp8, fp8_e4m3" in bad.output  # never a refused value
    ok = runner.invoke(app, ["check", "--config", str(cfg), "--gpu", "h200", "--", "vllm", "serve",
                             "deepseek-ai/DeepSeek-V3", "-tp", "8", "--kv-cache-dtype", "fp8"])
    assert ok.exit_code == 0, ok.output
    # no config needed for the flag-only rules
    flags = runner.invoke(app, ["check", "--gpu", "t4", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--dtype", "bfloat16",
                                "--max-num-batched-tokens", "64", "--max-num-seqs", "128", "--enable-eplb"])
    assert flags.exit_code == 1
    for code in ("max-num-batched-tokens-below-seqs", "eplb-needs-ep", "bfloat16-gpu"):
        assert f"[{code}, startup]" in flags.output, flags.output
    assert "vllm/config/scheduler.py:329" in flags.output and "Bfloat16 is only supported on GPUs" in flags.output
    long = runner.invoke(app, ["check", "--", "vllm", "serve", "m", "--max-model-len", "32768",
                               "--max-num-batched-tokens", "8192", "--no-enable-chunked-prefill"])
    assert long.exit_code == 1 and "[max-num-batched-tokens-below-len, startup]" in long.output
    undecided = runner.invoke(app, ["check", "--config", str(cfg), "--gpu", "gaudi3", "--", "vllm", "serve",
                                    "deepseek-ai/DeepSeek-V3", "--kv-cache-dtype", "fp8"])
    assert undecided.exit_code == 0 and "cannot decide" in undecided.output


def test_check_refuses_pipeline_parallel_and_dcp_the_model_cannot_take(tmp_path: Path) -> None:
    gemma = tmp_path / "gemma3n.json"
    gemma.write_text(json.dumps({**QWEN3_8B, "architectures": ["Gemma3nForCausalLM"], "model_type": "gemma3n_text"}))
    qwen = tmp_path / "qwen3.json"
    qwen.write_text(json.dumps(QWEN3_8B))
    runner = CliRunner()
    pp = runner.invoke(app, ["check", "--config", str(gemma), "--", "vllm", "serve", "google/gemma-3n-E4B-it",
                             "--pipeline-parallel-size", "2"])
    assert pp.exit_code == 1 and "[pp-unsupported, startup]" in pp.output, pp.output
    assert "Pipeline parallelism is not supported for this model" in pp.output
    ok = runner.invoke(app, ["check", "--config", str(qwen), "--", "vllm", "serve", "Qwen/Qwen3-8B", "-pp", "2"])
    assert ok.exit_code == 0, ok.output
    dcp = runner.invoke(app, ["check", "--config", str(qwen), "--", "vllm", "serve", "Qwen/Qwen3-8B", "-tp", "8",
                              "--decode-context-parallel-size", "2"])
    assert dcp.exit_code == 1 and "[dcp-needs-tp-over-kv-heads, startup]" in dcp.output, dcp.output
    assert "use --decode-context-parallel-size 1" in dcp.output
    plan = plan_memory(arch_from_config({**QWEN3_8B, "architectures": ["Gemma3nForCausalLM"]}), Settings(pp=2),
                       gpu="h100")
    assert any("Pipeline parallelism is not supported" in p for p in plan.problems), plan.problems


def test_plan_verdict_refuses_kv_dtype_the_gpu_cannot_run(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(DSV3))
    plan = derive_plan("deepseek-ai/DeepSeek-V3", cfg, "h200")
    cmd = plan.commands[0]
    bad = dataclasses.replace(plan, commands=(dataclasses.replace(cmd, argv=(*cmd.argv, "--kv-cache-dtype",
                                                                             "fp8_e5m2")),))
    verdict = check_plan(bad, config=DSV3)
    assert any(f.code == "kv-cache-dtype-refused" and f.severity == "error" for f in verdict.findings)
    # the memory verdict agrees (a plan that does not start is not judged as fitting) without repeating the refusal
    assert any(f.code == "memory-not-judged" for f in verdict.findings)
    assert sum("No valid attention backend" in f.message + f.evidence for f in verdict.findings) == 1
    assert not any(f.code == "kv-cache-dtype-refused" for f in check_plan(plan, config=DSV3).findings)
    # a bare published command (no GPU named): the flag rules still hold
    v = check_command(["vllm", "serve", "m", "--enable-eplb", "--enable-expert-parallel"], config=QWEN3_8B)
    assert any(f.code == "eplb-needs-parallel" for f in v.findings)
    assert not any(f.code.startswith("eplb") for f in check_command(
        ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--enable-eplb"], engine="sglang",
        config=QWEN3_8B).findings)  # vLLM's rules are not SGLang's


def test_memory_refuses_and_advice_stays_within_what_vllm_starts() -> None:
    refused = plan_memory(arch_from_config(dict(DSV3)), Settings(tp=8, kv_cache_dtype="fp8_e5m2"), gpu="h200")
    assert not refused.fits and "No valid attention backend found" in refused.problems[0]
    assert not any("fp8_e5m2" in a for a in refused.advice)
    gaudi = plan_memory(arch_from_config(dict(QWEN3_8B)), Settings(max_model_len=40960, max_num_seqs=256,
                                                                   gpu_memory_utilization=0.3), gpu="gaudi2")
    # Gaudi's KV dtypes are not captured: the advice never proposes one vLLM may refuse
    assert not any("--kv-cache-dtype" in a for a in gaudi.advice), gaudi.advice
    # on an A100 vLLM's Triton backend takes an FP8 KV cache (old advice withheld it as "no FP8 on Ampere")
    a100 = plan_memory(arch_from_config(dict(QWEN3_8B)), Settings(max_model_len=40960, gpu_memory_utilization=0.5),
                       gpu="a100_40gb")
    assert any(a.startswith("--kv-cache-dtype fp8") for a in a100.advice), a100.advice


def test_tp_advice_and_plans_respect_the_kv_heads_split() -> None:
    # 48 heads, 6 KV heads: TP 4, 8 and 16 divide the heads but cannot split 6 KV heads
    big = {**QWEN3_8B, "num_attention_heads": 48, "num_key_value_heads": 6, "hidden_size": 12288,
           "num_hidden_layers": 80, "intermediate_size": 49152}
    plan = plan_memory(arch_from_config(big), Settings(max_model_len=8192), gpu="h100")
    assert not plan.fits
    for advice in plan.advice:
        m = re.match(r"--tensor-parallel-size (\d+)", advice)
        assert m is None or tp_refusal(48, 6, int(m.group(1))) is None, advice
    split = plan_memory(arch_from_config(big), Settings(tp=4, max_model_len=8192), gpu="h200")
    assert any("cannot split the 6 KV heads" in p for p in split.problems), split.problems


# --- the engine itself --------------------------------------------------------------------------------

_PROBE = ROOT / "tests" / "limits_engine_probe.py"


@pytest.fixture(scope="module")
def engine() -> dict[str, Any]:
    if not VENV_PY.exists():
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail("vLLM CPU venv missing: run scripts/setup.d/50-vllm-env.sh")
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    data = table()["kv_cache"]
    grid = [[cap, kv, mla, False] for cap in data["cuda"]["candidates"] for kv in data["dtypes"] if kv != "auto"
            for mla in (False, True)]
    questions = {
        "kv": grid,
        "scheduler": {
            "max_num_batched_tokens_below_seqs": {"max_num_batched_tokens": 64, "max_num_seqs": 128,
                                                  "max_model_len": 64},
            "max_num_batched_tokens_below_len": {"max_num_batched_tokens": 2048, "max_num_seqs": 8,
                                                 "max_model_len": 4096, "enable_chunked_prefill": False},
            "long_prefill_over_len": {"max_num_batched_tokens": 8192, "max_num_seqs": 8, "max_model_len": 4096,
                                      "long_prefill_token_threshold": 5000, "enable_chunked_prefill": True},
            "ok": {"max_num_batched_tokens": 2048, "max_num_seqs": 8, "max_model_len": 4096,
                   "enable_chunked_prefill": True}},
        "parallel": {
            "eplb_needs_ep": {"enable_eplb": True},
            "eplb_needs_parallel": {"enable_eplb": True, "enable_expert_parallel": True},
            "dcp_divides_tp": {"tensor_parallel_size": 4, "decode_context_parallel_size": 3},
            "dp_local_over_dp": {"data_parallel_size_local": 2},
            "ok": {"enable_eplb": True, "enable_expert_parallel": True, "tensor_parallel_size": 2}},
    }
    if (TINY / "config.json").exists():
        questions["model"] = {"path": str(TINY), "pp_archs": ["Gemma3nForCausalLM", "LlamaForCausalLM"], "configs": [
            {"overrides": {"num_attention_heads": 16, "num_key_value_heads": 4, "hidden_size": 1024},
             "cases": {"dcp_needs_tp_over_kv_heads": {"tensor_parallel_size": 4, "decode_context_parallel_size": 2},
                       "dcp_over_max": {"tensor_parallel_size": 8, "decode_context_parallel_size": 4},
                       "dcp_ok": {"tensor_parallel_size": 8, "decode_context_parallel_size": 2}}},
            {"overrides": {"num_attention_heads": 24, "num_key_value_heads": 8, "hidden_size": 1536},
             "cases": {"dcp_q_per_kv": {"tensor_parallel_size": 24, "decode_context_parallel_size": 2}}}]}
    done = subprocess.run([str(VENV_PY), str(_PROBE), json.dumps(questions)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def _said(quote: str) -> str:
    """The engine's sentence inside a launchcard evidence quote."""
    return quote.split(': "', 1)[1].rstrip('"')


def test_engine_refuses_exactly_the_kv_dtypes_launchcard_refuses(engine: dict[str, Any]) -> None:
    """Every (compute capability, KV dtype, MLA) the capture covers, put to vLLM's CUDA backend selection."""
    decided = 0
    for cap, kv, mla, sparse, answer, detail in engine["kv"]:
        verdict = kv_dtype_verdict(kv, platform="cuda", capability=cap, mla=mla, sparse=sparse)
        if verdict.refused:
            decided += 1
            assert answer == "refused", (cap, kv, mla, detail)  # the CPU wheel lacks kernels, never adds them
            head = "No valid attention backend found for cuda with AttentionSelectorConfig("
            assert (detail.startswith(head) and _said(verdict.refused).startswith(head)) or "nvfp4" in kv
        elif verdict.accepted_by:
            decided += 1
            assert answer == "ok", (cap, kv, mla, detail)
    assert decided >= 0.8 * len(engine["kv"]), decided


def test_engine_words_the_bfloat16_scheduler_and_parallel_refusals_as_quoted(engine: dict[str, Any]) -> None:
    ours = bfloat16_refusal("bfloat16", "7.5", "NVIDIA T4 16GB")
    assert ours and _said(ours) == engine["bf16"]
    sched = {r.rule: r for r in scheduler_refusals(Scheduling(max_model_len=64, max_num_batched_tokens=64,
                                                              max_num_seqs=128))}
    sched.update({r.rule: r for r in scheduler_refusals(Scheduling(max_model_len=4096, max_num_batched_tokens=2048,
                                                                   max_num_seqs=8, chunked_prefill=False))})
    sched.update({r.rule: r for r in scheduler_refusals(Scheduling(max_model_len=4096, max_num_batched_tokens=8192,
                                                                   long_prefill_token_threshold=5000))})
    assert engine["scheduler"]["ok"] is None
    for rule in ("max_num_batched_tokens_below_seqs", "max_num_batched_tokens_below_len", "long_prefill_over_len"):
        assert engine["scheduler"][rule] and _said(sched[rule].evidence) in engine["scheduler"][rule], rule
    par = {r.rule: r for r in parallel_refusals(Parallel(eplb=True), "cuda")
           + parallel_refusals(Parallel(eplb=True, expert_parallel=True), "cuda")
           + parallel_refusals(Parallel(tp=4, dcp=3), "cuda") + parallel_refusals(Parallel(dp_local=2), "cuda")}
    assert engine["parallel"]["ok"] is None
    for rule in ("eplb_needs_ep", "eplb_needs_parallel", "dcp_divides_tp", "dp_local_over_dp"):
        assert engine["parallel"][rule] and _said(par[rule].evidence) in engine["parallel"][rule], rule


def test_engine_refuses_the_model_split_launchcard_refuses(engine: dict[str, Any]) -> None:
    """Decode context parallel against the KV heads, pipeline parallel against the model class."""
    if "model" not in engine:
        pytest.skip("tiny model missing (scripts/setup.d builds it)")
    said = engine["model"]
    ours = {"dcp_needs_tp_over_kv_heads": dcp_model_refusal(16, 4, False, 4, 2),
            "dcp_over_max": dcp_model_refusal(16, 4, False, 8, 4),
            "dcp_q_per_kv": dcp_model_refusal(24, 8, False, 24, 2)}
    for rule, refusal in ours.items():
        assert refusal is not None and refusal.rule == rule
        assert said[rule] and _said(refusal.evidence) in said[rule], (rule, said[rule])
    assert said["dcp_ok"] is None and dcp_model_refusal(16, 4, False, 8, 2) is None
    assert engine["pp"] == {"Gemma3nForCausalLM": False, "LlamaForCausalLM": True}
    assert pp_refusal(["Gemma3nForCausalLM"], 2) and pp_refusal(["LlamaForCausalLM"], 2) is None
    assert pp_refusal(["Gemma3nForCausalLM"], 1) is None and pp_refusal(["NoSuchModel"], 2) is None


def test_every_quoted_rule_is_at_its_line_in_the_wheel() -> None:
    found = sorted((ROOT / ".cache" / "vllm-venv" / "lib").glob("python3*/site-packages"))
    if not found:
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    for name, rule in table()["rules"].items():
        path, line = rule["where"].rsplit(":", 1)
        text = (found[0] / path).read_text().splitlines()
        window = " ".join(t.strip() for t in text[int(line) - 1:int(line) + 12])
        first = re.split(r"\{", rule["wording"])[0].strip()[:30]
        assert first.split()[0] in window, (name, first, window[:200])


def test_one_parse_of_a_compute_capability_for_every_catalog_gpu() -> None:
    """``limits.compute_capability`` is the one parse of the catalog's "major.minor" (bfloat16 and quantization
    refusals, predict's kernel and backend picks, the memory planner's MLA block read it): every NVIDIA GPU of the
    catalog parses to the numbers it states, and vLLM's integer form is major x 10 + minor ("8.9" -> 89, as
    DeviceCapability.to_int); what is no CUDA capability (an AMD arch, nothing stated) is None."""
    from launchcard.hardware import catalog
    from launchcard.limits import compute_capability, quant_capability_refusal

    nvidia = [a for a in catalog().accelerators if a.vendor == "NVIDIA" and a.kind == "gpu"]
    assert nvidia
    for acc in nvidia:
        major, minor = acc.compute_capability.split(".")
        assert compute_capability(acc.compute_capability) == (int(major), int(minor)), acc.id
    assert compute_capability("12.1") == (12, 1) and compute_capability("12.1") > (10, 3) > (9, 0)
    for text in ("", None, "gfx942", "9", "9.0.1", "sm90", "9.x"):
        assert compute_capability(text) is None, text
    # fp_quant's captured minimum is 100 (10.0), experts_int8's 80
    assert quant_capability_refusal("fp_quant", "9.0") and quant_capability_refusal("fp_quant", "10.0") is None
    assert quant_capability_refusal("experts_int8", "7.5") and quant_capability_refusal("experts_int8", "8.0") is None
    assert quant_capability_refusal("fp_quant", "gfx942") is None and quant_capability_refusal("fp_quant", None) is None
    assert bfloat16_refusal("bfloat16", "7.5") and "compute capability 7.5" in str(bfloat16_refusal("bfloat16", "7.5"))
    assert bfloat16_refusal("bfloat16", "8.0") is None and bfloat16_refusal("bfloat16", "") is None
