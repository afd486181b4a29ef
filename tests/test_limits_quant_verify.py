"""``--quantization`` against the checkpoint's own method (launchcard.limits._quant_verify): the engines refuse to
start where it differs and no override takes it; vLLM 0.32's own ``_verify_quantization`` (the CPU wheel in
``.cache/vllm-venv``, in-process) is asked the same questions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import run_cli
from launchcard.limits import checkpoint_quant_method, sglang_quant_override, vllm_quant_override

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
SHARED = ROOT.parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
R1 = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "deepseek-ai--DeepSeek-R1_config.json"
GPTQ: dict[str, Any] = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
AWQ: dict[str, Any] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


@pytest.mark.parametrize(("version", "refused"), [("0.10.2", True), ("0.11.0", True), ("0.19.1", True),
                                                  ("0.20.2", False), ("0.32.0", False), (None, False)])
def test_fp8_on_gpt_oss_mxfp4_is_refused_until_vllm_takes_any_method_for_it(version: str | None,
                                                                             refused: bool) -> None:
    """Before vLLM PR #39604 (0.20) no override takes another method on an MXFP4 checkpoint; from it gpt-oss's is
    served as gpt_oss_mxfp4 whatever the flag says (the flag dropped: a warning, not a refusal)."""
    got = vllm_quant_override("mxfp4", "fp8", "gpt_oss", version, "cuda")
    assert got is not None and got.refused is refused, got
    if refused:
        assert "(mxfp4) does not match" in got.evidence and "(fp8)" in got.evidence and got.takes == ()
        assert got.fix() == "drop --quantization (the engine reads mxfp4 from the checkpoint)"
    else:
        assert got.replaced_by == "gpt_oss_mxfp4"
    assert vllm_quant_override("mxfp4", "mxfp4", "gpt_oss", version, "cuda") is None


def test_a_gptq_checkpoint_takes_the_marlin_overrides_and_refuses_the_rest() -> None:
    for ok in ("gptq", "marlin", "gptq_marlin", "moe_wna16", "gptq_bitblas", "auto_gptq"):
        assert vllm_quant_override("gptq", ok, "qwen3", "0.32.0", "cuda") is None, ok
    old, new = (vllm_quant_override("gptq", "fp8", "qwen3", v, "cuda") for v in ("0.11.0", "0.32.0"))
    assert old is not None and new is not None and old.refused and new.refused
    assert old.takes == ("gptq_marlin", "marlin", "moe_wna16") and new.takes == (*old.takes, "auto_gptq")
    assert "or pass one vLLM takes on a gptq checkpoint (gptq_marlin, marlin, moe_wna16, auto_gptq)" in new.fix()
    # vLLM's ipex override takes any method on an AWQ / GPTQ checkpoint on CPU and XPU (0.11.0 ipex_quant.py)
    assert vllm_quant_override("awq", "fp8", "qwen3", "0.11.0", "cpu") is None
    assert vllm_quant_override("awq", "fp8", "qwen3", "0.11.0", None) is None


def test_checkpoints_whose_overrides_take_any_method_are_not_refused() -> None:
    for method in ("modelopt", "modelopt_fp4", "auto-round"):
        assert vllm_quant_override(method, "fp8", "llama", "0.11.0", "cuda") is None, method
    # DeepSeek-V4's FP8: 0.32.0 serves it as deepseek_v4_fp8 whatever is asked; before 0.32 not read
    v4 = vllm_quant_override("fp8", "awq", "deepseek_v4", "0.32.0", "cuda")
    assert v4 is not None and not v4.refused and v4.replaced_by == "deepseek_v4_fp8"
    assert vllm_quant_override("fp8", "awq", "deepseek_v4", "0.24.0", "cuda") is None
    # the same spelled the other way (vLLM writes compressed_tensors with a dash before comparing)
    assert vllm_quant_override("compressed_tensors", "compressed-tensors", "qwen3", None, "cuda") is None
    # no quantization_config: on-the-fly quantization, nothing to compare
    assert vllm_quant_override(None, "fp8", "qwen3", None, "cuda") is None


def test_sglang_refuses_another_method_unless_an_override_or_its_table_takes_it() -> None:
    refused = sglang_quant_override({"quant_method": "fp8"}, "awq", "cuda")
    assert refused is not None and refused.refused and refused.engine == "SGLang" and refused.takes == ()
    assert sglang_quant_override({"quant_method": "mxfp4"}, "fp8", "cuda") is not None
    for cfg, ok in ((GPTQ, "gptq_marlin"), (GPTQ, "marlin"), (AWQ, "awq_marlin"), (AWQ, "moe_wna16"),
                    ({"quant_method": "compressed-tensors"}, "w8a8_fp8"), ({"quant_method": "modelopt"}, "fp8"),
                    ({"quant_method": "fp8"}, "fp8")):
        assert sglang_quant_override(cfg, ok, "cuda") is None, (cfg, ok)
    gptq = sglang_quant_override(GPTQ, "fp8", "cuda")
    assert gptq is not None and gptq.takes == ("marlin", "gptq_marlin", "moe_wna16")


@pytest.mark.parametrize(("version", "code", "rc"), [("0.10.2", "error", 1), ("0.32.0", "warning", 0)])
def test_check_says_the_refusal_in_one_line_with_the_fix(version: str, code: str, rc: int) -> None:
    """`launchcard check --config gpt-oss --gpu h100 -- vllm serve ... --quantization fp8`: vLLM 0.10 refuses to
    start (exit 1, the checkpoint's method, the one asked and the fix); 0.32 drops the flag (a warning, exit 0)."""
    res = run_cli("check", "--config", str(GPT_OSS), "--gpu", "h100", "--version", version, "--", "vllm", "serve",
                  "openai/gpt-oss-120b", "-tp", "2", "--quantization", "fp8")
    lines = [x for x in res.stdout.splitlines() if "--quantization fp8 on a checkpoint quantized with mxfp4" in x]
    assert res.returncode == rc and len(lines) == 1 and lines[0].startswith(f"{code}: "), (res.returncode, res.stdout)
    assert "drop --quantization (the engine reads mxfp4 from the checkpoint)" in lines[0]
    assert ("quant-method-mismatch" if rc else "quant-flag-ignored") in lines[0]


@pytest.mark.parametrize(("config", "command", "engine"), [
    (GPT_OSS, "vllm serve openai/gpt-oss-120b -tp 2 --quantization fp8 ", "vLLM"),
    (R1, "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp-size 8 --quantization awq",
     "SGLang"),
])
def test_predict_refuses_what_check_refuses(config: Path, command: str, engine: str) -> None:
    """`predict --command` with a method the checkpoint's differs from was timed as if the engine started: now
    the same refusal as `check` (exit 1, one line)."""
    res = run_cli("predict", "--config", str(config), "--gpu", "h200", "--isl", "256", "--osl", "32",
                  "--concurrency", "2", "--engine-version", "0.11.0" if engine == "vLLM" else "0.5.6.post2",
                  "--command", command)
    line = res.stderr.strip()
    assert res.returncode == 1 and not res.stdout and "\n" not in line, (res.returncode, res.stdout, line)
    assert "[quant-method-mismatch]" in line and f"{engine} refuses to start" in line
    assert "; drop --quantization" in line


# --- vLLM itself -------------------------------------------------------------------------------------------------

_PROBE = ROOT / "tests" / "limits_quant_probe.py"
_CHECKPOINTS: list[tuple[dict[str, Any], str]] = [
    ({"quant_method": "mxfp4"}, "gpt_oss"), ({"quant_method": "mxfp4"}, "qwen3"),
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "deepseek_v3"),
    ({"quant_method": "fp8"}, "deepseek_v4"), (GPTQ, "qwen3"), ({"quant_method": "compressed-tensors"}, "kimi_k2"),
    ({"quant_method": "compressed_tensors"}, "qwen3"),
    ({"quant_method": "bitsandbytes"}, "llama"), ({"quant_method": "auto-round"}, "qwen3"),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}, "llama")]
_ASKED = ["fp8", "awq", "gptq", "gptq_marlin", "marlin", "moe_wna16", "mxfp4", "compressed-tensors", "bitsandbytes",
          "auto_gptq", "deepseek_v4_fp8", "fp8_per_block", "experts_int8", "modelopt", "gpt_oss_mxfp4", "online"]
# launchcard leaves these to the engine: moe_wna16 asks the GPU's capability (-1 on the CPU wheel)
_LENIENT = {("gptq", "moe_wna16")}


def test_vllm_032_refuses_exactly_what_launchcard_refuses() -> None:
    """Every checkpoint x asked method above, put to vLLM 0.32.0's own ``_verify_quantization`` (CUDA's answers but
    AWQ's: the CPU wheel's auto_awq declines on CPU, so AWQ is left out): launchcard refuses exactly where vLLM
    raises its mismatch, with vLLM's sentence, and says "serves it as X" exactly where vLLM settles on X."""
    if not VENV_PY.exists():
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail("vLLM CPU venv missing: run scripts/setup.d/50-vllm-env.sh")
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    questions = [[cfg, q, mt] for cfg, mt in _CHECKPOINTS for q in _ASKED]
    done = subprocess.run([str(VENV_PY), str(_PROBE), json.dumps(questions)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    refused = 0
    for (cfg, asked, model_type), (answer, detail) in zip(questions, answers, strict=True):
        method = checkpoint_quant_method(cfg)
        got = vllm_quant_override(method, asked, model_type, "0.32.0", "cuda")
        mismatch = answer == "refused" and "does not match the quantization method" in detail
        if got is not None and got.refused:
            refused += 1
            assert mismatch and detail.rstrip(".") in got.evidence, (cfg, asked, detail, got)
        elif got is not None:
            assert answer == "ok" and detail == got.replaced_by, (cfg, asked, detail, got)
        else:
            assert not mismatch or (method, asked) in _LENIENT, (cfg, asked, detail)
    assert refused >= 80, refused  # 85 of the 160 questions in 0.32.0; 29 more served as another method
