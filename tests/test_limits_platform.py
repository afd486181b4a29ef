"""Quantization per vLLM platform and one finding per start-up refusal (issue 20, item 4).

vLLM's ``ModelConfig._verify_quantization`` ends in ``current_platform.verify_quantization(method)``, which refuses
a method missing from the platform's non-empty ``supported_quantization`` list (ROCm, XPU; CUDA and CPU list none
and so refuse none).  ``scripts/capture_engine_limits.py`` reads the lists from ``vllm/platforms/*.py`` of the
captured wheel; the last test compares them with the wheel's source again.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from launchcard.check import check_plan, derive_plan
from launchcard.limits import checkpoint_quant_method, platform_quant_verdict, quant_platform_of, table
from launchcard.memory import STARTUP_REFUSAL, Settings, arch_from_config, plan_memory
from tests.helpers import run_cli
from tests.test_derive import _config
from tests.test_limits_engine import QWEN3_8B

ROOT = Path(__file__).resolve().parents[1]
# nvidia/Gemma-4-31B-IT-NVFP4's quantization_config (bench/data/configs.json), trimmed to what vLLM reads
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "producer": {"name": "modelopt"}}


def test_catalog_hardware_picks_vllms_platform() -> None:
    assert [quant_platform_of(v, k) for v, k in (("NVIDIA", "gpu"), ("AMD", "gpu"), ("Intel", "gpu"),
                                                 ("Google", "tpu"), ("Intel", "cpu"), ("Intel", "hpu"))] \
        == ["cuda", "rocm", "xpu", "tpu", "cpu", None]


def test_platform_list_refuses_a_flag_and_leaves_a_checkpoint_or_unknown_platform_undecided() -> None:
    bad = platform_quant_verdict("moe_wna16", "rocm", device="mi300x")
    assert bad.refused is not None and bad.refused.code == "quant-platform"
    assert '"moe_wna16 quantization is currently not supported in rocm."' in bad.refused.evidence
    assert "vllm/platforms/interface.py:" in bad.refused.evidence and "vllm/platforms/rocm.py:" in bad.refused.evidence
    assert platform_quant_verdict("moe_wna16", "cuda") == platform_quant_verdict("awq", "rocm")  # neither refuses
    assert platform_quant_verdict("moe_wna16", "cpu").refused is None  # an empty list refuses nothing
    assert platform_quant_verdict("moe_wna16", "cuda").refused is None
    assert platform_quant_verdict("modelopt_fp4", "xpu").refused is not None
    assert platform_quant_verdict("modelopt_fp4", "xpu", checkpoint=True).undecided  # vLLM may rename first
    assert "tpu_inference" in str(platform_quant_verdict("awq", "tpu").undecided)
    assert platform_quant_verdict("awq", None).undecided
    assert platform_quant_verdict(None, "rocm") == platform_quant_verdict("none", "rocm")


def test_checkpoint_method_follows_modelopts_renaming() -> None:
    assert checkpoint_quant_method(NVFP4) == "modelopt_fp4"
    assert checkpoint_quant_method({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}) == "modelopt"
    assert checkpoint_quant_method({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"}) == "modelopt_mixed"
    assert checkpoint_quant_method({"quant_method": "AWQ"}) == "awq" and checkpoint_quant_method(None) is None


def test_check_cli_refuses_a_method_the_gpus_platform_does_not_list(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3")
    argv = ("--config", str(cfg), "--", "vllm", "serve", "m", "--quantization", "moe_wna16")
    bad = run_cli("check", "--gpu", "mi300x", *argv)
    assert bad.returncode == 1 and "[quant-platform" in bad.stdout, bad.stdout
    assert "moe_wna16 quantization is currently not supported in rocm." in bad.stdout
    assert "quant-platform" not in run_cli("check", "--gpu", "h100", *argv).stdout  # CUDA lists none


def test_checkpoint_quantization_on_a_platform_that_may_not_take_it(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "nvidia/Gemma-4-31B-IT-NVFP4")
    argv = ("--config", str(cfg), "--", "vllm", "serve", "m")
    xpu = run_cli("check", "--gpu", "arc_pro_b60", *argv).stdout
    assert "quant-platform-undecided" in xpu and "modelopt_fp4" in xpu, xpu
    tpu = run_cli("check", "--gpu", "tpu_v5e", *argv).stdout
    assert "quant-platform-undecided" in tpu and "tpu_inference" in tpu
    # vLLM 0.32.0's ROCm platform lists modelopt_fp4: no platform refusal for NVFP4 on MI300X
    assert "quant-platform" not in run_cli("check", "--gpu", "mi300x", *argv).stdout


def test_memory_refuses_the_flag_and_advice_proposes_no_variant_the_platform_refuses() -> None:
    plan = plan_memory(arch_from_config(dict(QWEN3_8B)), Settings(quantization="moe_wna16"), gpu="mi300x")
    assert not plan.fits and any(p.startswith(STARTUP_REFUSAL) and "moe_wna16" in p for p in plan.problems)
    assert plan_memory(arch_from_config(dict(QWEN3_8B)), Settings(quantization="moe_wna16"), gpu="h100").fits
    from launchcard.hardware import catalog
    from launchcard.memory._limits import accepts

    arc = catalog().lookup("arc_pro_b60")
    assert arc is not None
    assert not accepts(arch_from_config(dict(QWEN3_8B)), Settings(), arc, variant="nvfp4")  # modelopt_fp4 not on XPU


def test_a_refusal_is_one_finding_in_the_plan_verdict(tmp_path: Path) -> None:
    """``--max-model-len`` above the model's limit was reported by the length rule and again inside
    ``memory-does-not-fit`` (the same vLLM sentence twice)."""
    cfg = _config(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3")
    out = run_cli("resolve", "mistralai/Mistral-7B-Instruct-v0.3", "--hardware", "h100", "--config", str(cfg),
                  "--max-model-len", "200000")
    verdict = [line for line in out.stdout.splitlines() if line.startswith("#   ")]
    assert sum("is greater than the derived max_model_len" in line for line in verdict) == 1, verdict
    assert any("[max-model-len-over-model]" in line for line in verdict)
    assert not any("[memory-does-not-fit]" in line for line in verdict)
    # a real memory problem next to a refusal is still reported, without the refusal
    qwen = tmp_path / "qwen3-8b.json"
    qwen.write_text(json.dumps(QWEN3_8B))
    plan = derive_plan("Qwen/Qwen3-8B", qwen, "h100")
    mine = plan.commands[0]
    import dataclasses

    big = dataclasses.replace(plan, commands=(dataclasses.replace(mine, argv=(
        *mine.argv, "--max-model-len", "4000000", "--gpu-memory-utilization", "0.1")),))
    findings = check_plan(big, config=QWEN3_8B).findings
    mem = [f for f in findings if f.code == "memory-does-not-fit"]
    assert mem and "derived max_model_len" not in mem[0].message, [f.message for f in findings]


def test_captured_lists_are_the_wheels_own() -> None:
    """The captured lists against ``RocmPlatform`` / ``XPUPlatform.supported_quantization`` in the wheel's source."""
    found = sorted((ROOT / ".cache" / "vllm-venv" / "lib").glob("python3*/site-packages/vllm/platforms"))
    if not found:
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    captured = table()["platform_quantization"]
    for plat, cls in (("rocm", "RocmPlatform"), ("xpu", "XPUPlatform")):
        tree = ast.parse((found[0] / f"{plat}.py").read_text())
        node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
        stmt = next(s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                    and s.target.id == "supported_quantization")
        assert stmt.value is not None
        entry = captured["platforms"][plat]
        assert entry["methods"] == ast.literal_eval(stmt.value)
        assert entry["where"] == f"vllm/platforms/{plat}.py:{stmt.lineno}"
    at = int(captured["rule"]["where"].rsplit(":", 1)[1])
    raised = " ".join((found[0] / "interface.py").read_text().splitlines()[at - 1:at + 2])
    assert "raise ValueError(" in raised and "quantization is currently not supported in" in raised
    assert json.dumps(captured["platforms"]["cuda"]["methods"]) == "[]"


def test_plan_verdict_refuses_a_method_the_platform_does_not_list(tmp_path: Path) -> None:
    """The plan verdict (resolve, emit) applies the same rule to a plan's command."""
    import dataclasses

    qwen = tmp_path / "qwen3-8b.json"
    qwen.write_text(json.dumps(QWEN3_8B))
    plan = derive_plan("Qwen/Qwen3-8B", qwen, "mi300x")
    cmd = plan.commands[0]
    bad = dataclasses.replace(plan, commands=(dataclasses.replace(cmd, argv=(*cmd.argv, "--quantization",
                                                                             "moe_wna16")),))
    found = [f for f in check_plan(bad, config=QWEN3_8B).findings if f.code == "quant-platform"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "currently not supported in rocm" in found[0].evidence
    assert not any(f.code == "quant-platform" for f in check_plan(plan, config=QWEN3_8B).findings)


def test_a_modelopt_checkpoint_is_judged_by_the_method_vllm_verifies(tmp_path: Path) -> None:
    """A ModelOpt FP8 checkpoint is vLLM's ``modelopt`` method (minimum capability 80), not ``fp8`` (75): on a T4
    (7.5) vLLM refuses it; launchcard judged the label ``fp8`` and said nothing."""
    raw = dict(QWEN3_8B, quantization_config={"quant_method": "modelopt", "quant_algo": "FP8"})
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(raw))
    out = run_cli("check", "--gpu", "t4", "--config", str(cfg), "--", "vllm", "serve", "m").stdout
    assert "quant-gpu" in out and "Minimum capability: 80. Current capability: 75." in out, out
    fp4 = dict(QWEN3_8B, quantization_config=NVFP4)  # modelopt_fp4: minimum 75
    cfg.write_text(json.dumps(fp4))
    assert "quant-gpu" not in run_cli("check", "--gpu", "t4", "--config", str(cfg), "--", "vllm", "serve", "m").stdout


def test_memory_judges_the_checkpoints_method_too() -> None:
    """``memory --config`` of a quantized checkpoint: the method vLLM reads from it is judged like the flag."""
    fp8 = dict(QWEN3_8B, quantization_config={"quant_method": "modelopt", "quant_algo": "FP8"})
    t4 = plan_memory(arch_from_config(fp8), Settings(max_model_len=4096), gpu="t4")
    assert any(p.startswith(STARTUP_REFUSAL) and "Minimum capability: 80" in p for p in t4.problems), t4.problems
    nvfp4 = arch_from_config(dict(QWEN3_8B, quantization_config=NVFP4))
    assert nvfp4.quant_method == "modelopt_fp4"
    arc = plan_memory(nvfp4, Settings(max_model_len=4096), gpu="arc_pro_b60")
    assert not any("modelopt_fp4" in p for p in arc.problems)  # the checkpoint's method: cannot decide
    assert any("modelopt_fp4" in w and "cannot decide" in w for w in arc.warnings), arc.warnings
