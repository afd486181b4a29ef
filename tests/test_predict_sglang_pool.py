"""SGLang's KV pool per scheduler (predict/_sglang_pool.py sglang_kv_tokens and the weights it subtracts) against pools
SGLang logged (tests/fixtures/sglang_logged_pools.json), the absorbed-MLA copies of its DeepSeek model file
(_sglang_mla.absorb_copies_gib) and its own MXFP4 expert padding (memory.sglang_mxfp4_pad)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from launchcard.memory import (
    SGLANG_FLASHINFER_MXFP4_PAD,
    load_arch,
    sglang_mxfp4_pad,
    sglang_mxfp4_runner,
    sglang_mxfp4_upcast,
)
from launchcard.predict import sglang_serving_facts
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sglang import sglang_command_plan
from launchcard.predict._sglang_mla import absorb_copies_gib

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = json.loads((FIXTURES / "sglang_logged_pools.json").read_text())["rows"]
V32 = FIXTURES / "predict_heldout_configs" / "deepseek-ai--DeepSeek-V3.2_config.json"
GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
           "intermediate_size": 2880, "num_hidden_layers": 4, "num_attention_heads": 64, "num_key_value_heads": 8,
           "head_dim": 64, "num_local_experts": 128, "num_experts_per_tok": 4, "vocab_size": 201088,
           "max_position_embeddings": 131072, "sliding_window": 128,
           "layer_types": ["sliding_attention", "full_attention"] * 2,
           "quantization_config": {"quant_method": "mxfp4"}}


def _pool(row: dict[str, object], config: Path) -> tuple[int, str]:
    plan = sglang_command_plan(shlex.split(str(row["command"])), config, str(row["gpu"]),
                               version=row["sglang_version"] and str(row["sglang_version"]))
    facts = sglang_serving_facts(config, plan, gpu=str(row["gpu"]))
    said = next(f.message for f in facts.findings if f.code == "sglang-limits")
    return facts.kv_capacity_tokens, said


@pytest.mark.parametrize("row", LOGS, ids=[str(r["id"]) for r in LOGS])
def test_the_pool_is_within_the_start_up_memory_of_the_logged_one(row: dict[str, object]) -> None:
    # launchcard's pool is frac x total - weights; SGLang's is frac x (free after the CUDA context and NCCL) - weights
    # loaded: so launchcard's may be above the logged pool by the start-up memory (at most ~2.5 GiB of KV here), never
    # below it (which would say the weights or the cell are over-counted)
    got, _ = _pool(row, FIXTURES / str(row["config"]))
    logged = row["logged"]
    assert isinstance(logged, dict)
    cell = (logged["k_gib"] + logged["v_gib"]) * 2**30 / logged["tokens"]
    assert logged["tokens"] <= got <= logged["tokens"] + 2.5 * 2**30 / cell


def test_deepseek_keeps_w_kc_and_w_vc_beside_kv_b_proj() -> None:
    arch = load_arch(V32)
    # 128 heads x (128 + 128) x 512 bf16 x 61 layers: the FP8 128x128 checkpoint is dequantized on CUDA
    assert absorb_copies_gib(arch, 128, 61) == pytest.approx(128 * 256 * 512 * 2 * 61 / 2**30)
    assert absorb_copies_gib(arch, 16, 61) == pytest.approx(absorb_copies_gib(arch, 128, 61) / 8)
    # off CUDA the block FP8 weight is requantized per tensor: FP8 copies
    assert absorb_copies_gib(arch, 128, 61, cuda=False) == pytest.approx(absorb_copies_gib(arch, 128, 61) / 2)


def test_the_deepseek_pool_subtracts_the_copies() -> None:
    argv = ("python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2 --tp-size 8 --dp-size 8 "
            "--enable-dp-attention --context-length=32768")
    row = {"command": argv, "gpu": "h200", "sglang_version": "0.5.6.post2"}
    tokens, said = _pool(row, V32)
    assert "1.9 GiB of w_kc / w_vc" in said
    # the DSA cell in bf16: (512 + 64) x 2 + 132 indexer bytes a layer, 61 layers; 1.9 GiB fewer than without them
    cell = (576 * 2 + 132) * 61
    assert tokens == pytest.approx(209955, abs=2)
    assert tokens < int((0.768 * 139.8 - 90.1) * 2**30 / cell)


def test_sglang_pads_mxfp4_experts_its_own_way_only_where_read(tmp_path: Path) -> None:
    # FlashInfer MXFP4 on SM100 (SGLang's pick there): 256 / 256, whatever the release
    assert sglang_mxfp4_pad((0, 5, 6, 2), "10.0", None)[0] == SGLANG_FLASHINFER_MXFP4_PAD
    assert sglang_mxfp4_pad(None, "10.0", "auto")[0] == (256, 256)
    # elsewhere triton_kernels' own layout pads again, in a build not pinned: vLLM's padding, said as assumed
    pad, said = sglang_mxfp4_pad((0, 5, 3, 0), "8.0", None)
    assert pad is None and said.severity == "assumed" and "not pin" in said.message
    assert sglang_mxfp4_pad((0, 5, 6, 2), "10.0", "triton_kernel")[0] is None
    # Marlin from 0.5.14 (SM120's default): vLLM's padding, read
    pad, said = sglang_mxfp4_pad((0, 5, 14, 0), "12.0", None)
    assert pad is None and said.severity == "info"
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(GPT_OSS))
    argv = "python3 -m sglang.launch_server --model-path openai/gpt-oss-120b"

    def weights(gpu: str) -> float:
        _, said = _pool({"command": argv, "gpu": gpu, "sglang_version": "0.5.6.post2"}, cfg)
        return float(said.split("static, ")[1].split(" GiB weights")[0])

    # 2880 -> 3072 intermediate on B200 against vLLM's 2944: more weight bytes than the same plan on H100 (vLLM's)
    assert weights("b200") > weights("h100")


def test_sglang_holds_gpt_oss_experts_as_bf16_where_no_mxfp4_runner_runs() -> None:
    # gpt-oss-120b on 8 x H100, SGLang 0.5.4.post2: triton_kernel (MXFP4) at --ep-size 1, the runner left "auto" at
    # --ep-size 8, whose experts Mxfp4MoEMethod upcasts to BF16 at load (mxfp4.py L569-583)
    config = Path("/work/shared/corpus/hf/openai/gpt-oss-120b/config.json")
    if not config.is_file():
        pytest.skip("gpt-oss-120b's config.json is not in the shared corpus here")
    base = "python3 -m sglang.launch_server --model-path openai/gpt-oss-120b --tp-size 8"

    def facts(extra: str, version: str = "0.5.4.post2") -> ServingFacts:
        plan = sglang_command_plan(shlex.split(f"{base} {extra}"), config, "h100", version=version)
        return sglang_serving_facts(config, plan, gpu="h100")

    ep1, ep8 = facts(""), facts("--ep-size 8")
    # 2 bytes a parameter against MXFP4's ~0.53, whose experts are planned with vLLM's padding (3.3x here)
    assert 3.2 < ep8.expert_bytes / ep1.expert_bytes < 4.0
    assert ep8.kv_capacity_tokens < ep1.kv_capacity_tokens
    assert ep8.fused_moe and not ep1.fused_moe
    said = {f.code: f.message for f in ep8.findings}
    assert "upcast_from_mxfp" in said["sglang-mxfp4"] and "--ep-size 8" in said["moe-kernel"]
    assert not any("BF16 weights at load" in f.message for f in ep1.findings)
    # a runner named outside the MXFP4 ones upcasts too; piecewise CUDA graphs only in 0.5.6-0.5.8
    # (TP 8 without EP: every expert at 360 rows a rank, allocated at 384 against --ep-size 8's whole 2880)
    assert facts("--moe-runner-backend triton").expert_bytes == pytest.approx(ep8.expert_bytes * 384 / 360)
    assert facts("--enable-piecewise-cuda-graph", "0.5.6.post2").fused_moe
    assert not facts("--enable-piecewise-cuda-graph", "0.5.9").fused_moe


def test_sglang_mxfp4_runner_follows_each_release() -> None:
    rule = sglang_mxfp4_runner
    assert rule((0, 5, 4, 2), "9.0", None, ep=1, piecewise=False, quantization=None)[0] == "triton_kernel"
    assert rule((0, 5, 4, 2), "9.0", None, ep=2, piecewise=False, quantization=None)[0] == "auto"
    # FlashInfer on SM100 overrides a named runner through 0.5.4.post2, not from 0.5.5
    assert rule((0, 5, 3, 0), "10.0", "triton", ep=8, piecewise=False, quantization=None)[0] == "flashinfer_mxfp4"
    assert rule((0, 5, 5, 1), "10.0", "triton", ep=1, piecewise=False, quantization=None)[0] == "triton"
    assert rule((0, 5, 6, 2), "10.0", None, ep=8, piecewise=False, quantization=None)[0] == "flashinfer_mxfp4"
    assert rule((0, 5, 7, 0), "10.0", None, ep=1, piecewise=True, quantization=None)[0] == "auto"
    assert rule((0, 5, 9, 0), "9.0", None, ep=1, piecewise=False, quantization="mxfp4")[0] == "auto"
    assert rule((0, 5, 8, 0), "9.0", None, ep=1, piecewise=False, quantization="mxfp4")[0] == "triton_kernel"
    pad, said = sglang_mxfp4_upcast((0, 5, 4, 2), "9.0", "auto", "--ep-size 8")
    assert pad == (32, 1) and said.severity == "info" and "--ep-size 8" in said.message
