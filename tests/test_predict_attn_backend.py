"""vLLM's attention backend for gpt-oss (attention sinks): Triton unified attention off SM90/SM100 in 0.11, timed at
its measured share of FlashAttention-2's prefill FLOP/s; everywhere else FlashAttention's shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan
from launchcard.predict._attn_backend import TRITON, triton_attn_share, vllm_sink_attention
from launchcard.predict._kernels import facts_kernels
from launchcard.predict._types import Finding

SHARED = Path(__file__).resolve().parents[2] / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def gpt_oss(gpu: str, version: str | None, engine: str = "vllm") -> ServingFacts:
    arch = arch_from_config(json.loads(GPT_OSS.read_text()))
    s = Settings(tp=1, max_model_len=32768, vllm_version=version)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def test_the_recorded_share_is_a_slowdown_measured_on_two_gpus() -> None:
    got = triton_attn_share()
    assert got is not None
    share, where = got
    assert 0.2 < share < 1.0  # Triton's prefill is slower than FA2's on long prompts, not free
    assert "l40s" in where and "rtx_pro_6000_server" in where


@pytest.mark.parametrize(("cc", "release", "want"), [
    ((8, 0), (0, 11), TRITON), ((8, 9), (0, 11), TRITON), ((12, 0), (0, 11), TRITON),
    ((10, 3), (0, 11), TRITON),  # B300: vLLM's SM90 / SM100 tests are exact matches, 10.3 is neither
    ((9, 0), (0, 11), ""), ((10, 0), (0, 11), ""), ((8, 0), None, ""), ((8, 0), (0, 12), ""), ((7, 5), (0, 11), "")])
def test_the_backend_follows_the_release_and_compute_capability(cc: tuple[int, int], release: tuple[int, int] | None,
                                                                want: str) -> None:
    out: list[Finding] = []
    assert vllm_sink_attention("gpt_oss", "gpu", cc, release, out) == want
    if want:
        assert out[0].severity == "info" and "cuda.py L358-362" in out[0].message
    elif cc >= (8, 0) and cc not in ((9, 0), (10, 0)):  # a release whose rule is not read is said, not silently FA
        assert out[0].severity == "assumed" and "timed as FlashAttention" in out[0].message
    else:
        assert not out


def test_a_model_without_sinks_or_a_cpu_keeps_flashattention() -> None:
    out: list[Finding] = []
    assert vllm_sink_attention("llama", "gpu", (8, 0), (0, 11), out) == "" and not out
    assert vllm_sink_attention("gpt_oss", "cpu", None, (0, 11), out) == "" and not out


def test_a100_prefill_attention_is_slower_on_0_11_only() -> None:
    on, off = gpt_oss("a100_80gb", "0.11.0"), gpt_oss("a100_80gb", None)
    assert on.attn_backend == TRITON and off.attn_backend == ""
    share = triton_attn_share()
    assert share is not None
    k_on, k_off = facts_kernels(on), facts_kernels(off)
    assert k_on.ap_comp == pytest.approx(k_off.ap_comp * share[0])
    assert k_on.g_comp == k_off.g_comp and k_on.x_comp == k_off.x_comp  # GEMMs untouched
    assert any(f.code == "attention-backend" and f.severity == "info" for f in on.findings)


def test_h100_and_sglang_are_untouched() -> None:
    assert gpt_oss("h100", "0.11.0").attn_backend == ""
    assert gpt_oss("a100_80gb", "0.11.0", engine="sglang").attn_backend == ""
