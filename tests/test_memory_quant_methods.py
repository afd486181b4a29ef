"""Quantization methods vLLM has: every one its captured parsers offer is known, and a checkpoint naming one is
planned, not refused as a method vLLM does not have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import run_cli
from launchcard.memory._settings import QUANTIZATION_METHODS

DATA = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "data" / "flags"
QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"


def _choices(spec: dict[str, Any]) -> set[str]:
    """The literal values of the captured ``--quantization`` field (json_classes ... quantization: union)."""
    out: set[str] = set()

    def walk(x: object) -> None:
        if isinstance(x, dict):
            q = x.get("quantization")
            if isinstance(q, dict) and q.get("t") == "union":
                out.update(v for alt in q["of"] if alt.get("t") == "literal" for v in alt["values"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(spec)
    return out


@pytest.mark.parametrize("path", sorted(DATA.glob("vllm-*.json")), ids=lambda p: p.stem)
def test_every_captured_quantization_choice_is_known(path: Path) -> None:
    """auto-round (0.10.2-0.14.1), cpu_awq, cpu_gptq, lut_b_moe, mxfp4_hadamard32 and w4afp8 were missing: a
    checkpoint naming one was refused (exit 2, 'not a quantization method vLLM has'), as was --quantization."""
    choices = _choices(json.loads(path.read_text(encoding="utf-8")))
    assert choices, path
    assert choices <= QUANTIZATION_METHODS, sorted(choices - QUANTIZATION_METHODS)


def test_an_auto_round_checkpoint_is_planned_not_refused(tmp_path: Path) -> None:
    """Intel's AutoRound checkpoints write quant_method 'auto-round' (vLLM's AutoRoundConfig.get_name)."""
    cfg = json.loads(QWEN.read_text(encoding="utf-8"))
    cfg["quantization_config"] = {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True,
                                  "packing_format": "auto_round:auto_gptq"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    res = run_cli("memory", "--config", str(path), "--gpu", "h100", "--vllm-version", "0.14.1")
    assert res.returncode == 0, res.stderr


def test_a_gguf_config_without_bits_is_an_assumption_not_a_silent_int4() -> None:
    """quant_method gguf gives no bits (each tensor's type lives in the .gguf file): it was planned INT4 with no
    word of it; the plan now says the width is unknown (a low-confidence assumption)."""
    from launchcard.memory import arch_from_config

    cfg = json.loads(QWEN.read_text(encoding="utf-8"))
    cfg["quantization_config"] = {"quant_method": "gguf"}
    arch = arch_from_config(cfg)
    assert any("bit width unknown" in a and "gguf" in a for a in arch.assumptions), arch.assumptions


@pytest.mark.parametrize(("qc", "name", "said"), [
    ({"quant_method": "auto-round", "bits": 8, "group_size": 128}, "int8", False),  # was int4: '8' not in name
    ({"quant_method": "auto-round", "bits": 4, "group_size": 128}, "int4", False),
    ({"quant_method": "w4afp8"}, "int4", True),  # was int8: an '8' in the name; no group_size: 128 said
    ({"quant_method": "w4afp8", "group_size": 64}, "int4", False),
    ({"quant_method": "experts_int8"}, "int8", False),
    ({"quant_method": "awq", "group_size": 128}, "awq", True),  # vLLM's AWQConfig needs bits
    ({"quant_method": "gptq", "bits": 4, "group_size": 64}, "gptq", False),
])
def test_bits_are_read_from_the_config_or_the_name_else_said(qc: dict[str, Any], name: str, said: bool) -> None:
    from launchcard.memory._quant import read_config

    q, note = read_config(qc)
    assert q.name == name, q
    assert (note is not None) is said, note


def test_an_mxfp4_config_quantizes_the_moe_experts_only() -> None:
    """vLLM's Mxfp4Config gives every linear layer UnquantizedLinearMethod (v0.32.0 quantization/mxfp4.py L94-105):
    a dense model's 'mxfp4' layers were planned 4-bit and timed through Marlin on an H100 (TTFT 3.7x bf16's)."""
    from launchcard.memory import Settings, arch_from_config
    from launchcard.memory._quant import read_config
    from launchcard.memory._weights import weight_bytes_per_gpu

    q, _ = read_config({"quant_method": "mxfp4"})
    assert q.covers == frozenset({"experts"})
    cfg = json.loads(QWEN.read_text(encoding="utf-8"))
    plain = weight_bytes_per_gpu(arch_from_config(cfg), Settings())[0]
    cfg["quantization_config"] = {"quant_method": "mxfp4"}
    assert weight_bytes_per_gpu(arch_from_config(cfg), Settings())[0] == pytest.approx(plain)


@pytest.mark.parametrize(("algo", "name", "said"), [
    ("NVFP4", "nvfp4", False), ("W4A16_NVFP4", "nvfp4", False), ("FP8", "fp8", False), ("fp8_pb_wo", "fp8", False),
    ("MXFP8", "fp8", False),
    ("MIXED_PRECISION", "fp8", True),  # its layers' algorithms are not read: said
    ("W4A8_AWQ", "fp8", True), (None, "fp8", True),  # vLLM refuses these: planned FP8 silently before
])
def test_a_modelopt_quant_algo_is_read_or_said(algo: str | None, name: str, said: bool) -> None:
    from launchcard.memory._quant import read_config

    q, note = read_config({"quant_method": "modelopt", **({"quant_algo": algo} if algo else {})})
    assert q.name == name and (note is not None) is said, (q, note)


@pytest.mark.parametrize(("qc", "block"), [
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, True),  # Qwen3-*-FP8, DeepSeek-V3/R1
    ({"quant_method": "fp8"}, False),  # per-tensor / per-channel scales
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}}}}, True),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}}}}, False),
])
def test_block_scaled_fp8_is_read_from_the_config_and_kept_with_an_expert_dtype(qc: dict[str, Any],
                                                                                block: bool) -> None:
    """The engines run other GEMM kernels for block-scaled FP8 weights (launchcard.predict._kernels): the scheme says
    which, through the coverage read and an expert_dtype override."""
    from launchcard.memory._quant import read_config, with_expert_dtype

    q, _ = read_config(qc)
    assert q.name == "fp8" and q.block is block
    assert with_expert_dtype(q, "fp8").block is block
