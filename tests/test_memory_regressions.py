"""Regression tests for the memory items of issue 11 (each failed before its fix)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from launchcard.cli import main
from launchcard.memory import Settings, arch_from_config, plan_memory, plan_to_json, plan_to_text, settings_from_argv
from launchcard.memory._settings import GiB

ROOT = Path(__file__).resolve().parents[1]
DSV4 = ROOT.parent / "shared" / "corpus" / "hf" / "deepseek-ai" / "DeepSeek-V4-Flash" / "config.json"
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336,
         "max_position_embeddings": 131072}
MOE_FP8 = {"model_type": "deepseek_v3", "num_hidden_layers": 8, "hidden_size": 2048, "num_attention_heads": 16,
           "num_key_value_heads": 16, "vocab_size": 102400, "intermediate_size": 8192, "moe_intermediate_size": 1024,
           "n_routed_experts": 64, "num_experts_per_tok": 6, "max_position_embeddings": 32768,
           "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}


def _cfg(tmp_path: Path, cfg: dict, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(cfg), "utf-8")
    return path


# --- expert_dtype: fp4 ----------------------------------------------------------

def test_expert_dtype_fp4_is_not_planned_as_fp8() -> None:
    fp8 = arch_from_config(MOE_FP8)
    fp4 = arch_from_config({**MOE_FP8, "expert_dtype": "fp4"})
    assert fp4.quant.expert_bytes_per_param == pytest.approx(0.53125)
    s = Settings(max_model_len=8192)
    w8 = plan_memory(fp8, s, gpu="h200").weights_gib_per_gpu
    w4 = plan_memory(fp4, s, gpu="h200").weights_gib_per_gpu
    assert w4 < 0.7 * w8
    assert any("routed experts fp4" in n for n in plan_memory(fp4, s, gpu="h200").assumptions)


@pytest.mark.skipif(not DSV4.exists(), reason="shared corpus not present")
def test_deepseek_v4_flash_fp4_experts() -> None:
    cfg = json.loads(DSV4.read_text("utf-8"))
    assert cfg["expert_dtype"] == "fp4"
    s = Settings(tp=4, max_model_len=65536)
    with_fp4 = plan_memory(arch_from_config(cfg), s, gpu="h200").weights_gib_per_gpu
    as_fp8 = plan_memory(arch_from_config({k: v for k, v in cfg.items() if k != "expert_dtype"}), s,
                         gpu="h200").weights_gib_per_gpu
    assert with_fp4 < 0.6 * as_fp8  # experts are ~90% of the 284B parameters


def test_unknown_expert_dtype_is_bad_input(tmp_path: Path) -> None:
    path = _cfg(tmp_path, {**MOE_FP8, "expert_dtype": "fp3"})
    assert main(["memory", "--config", str(path), "--gpu", "h200"]) == 2


# --- EAGLE / EAGLE3 drafts ------------------------------------------------------

@pytest.mark.parametrize("method", ["eagle3", "eagle"])
def test_eagle_draft_weights_and_kv_counted(method: str) -> None:
    a = arch_from_config(LLAMA)
    base = plan_memory(a, Settings(max_model_len=8192), gpu="h100")
    spec = json.dumps({"method": method, "model": "org/draft", "num_speculative_tokens": 3})
    s = settings_from_argv(["--speculative-config", spec, "--max-model-len", "8192"])
    p = plan_memory(a, s, gpu="h100")
    assert 0.3 < p.weights_gib_per_gpu - base.weights_gib_per_gpu < 2.0
    assert p.kv_cache_tokens < base.kv_cache_tokens  # one more attention layer in the pool
    assert any(method.upper() in n for n in p.assumptions)


def test_separate_draft_model_is_mentioned() -> None:
    s = settings_from_argv(["--speculative-config",
                            '{"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}'])
    p = plan_memory(arch_from_config(LLAMA), s, gpu="h100")
    assert any("draft model" in n and "not counted" in n for n in p.assumptions)


# --- one computation feeds text and JSON ----------------------------------------

def _text(plan: object) -> str:
    from rich.console import Console

    con = Console(file=io.StringIO(), width=200, record=True)
    con.print(plan_to_text(plan))  # type: ignore[arg-type]
    return con.export_text()


@pytest.mark.parametrize("ver", [None, "0.19.0"])
def test_text_and_json_show_the_same_figures(ver: str | None) -> None:
    hybrid = {**LLAMA, "model_type": "qwen3_next", "full_attention_interval": 4, "linear_num_key_heads": 16,
              "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128}
    for cfg in (LLAMA, hybrid):
        plan = plan_memory(arch_from_config(cfg), Settings(max_model_len=32768, vllm_version=ver), gpu="h100")
        data = json.loads(plan_to_json(plan))
        text = _text(plan)
        b = data["breakdown"]
        assert f"free {b['free_after_graphs_gib']:.2f} GiB" in text and f"({b['free_gib']:.2f} before)" in text
        assert f"{data['kv_cache_tokens']:,} as vLLM prints it" in text
        assert f"{data['num_blocks']:,} blocks of {data['block_size']} tokens" in text
        assert f"{data['kv_bytes_per_token_per_gpu']:,.0f} B/token" in text
        allocated = data["num_blocks"] * data["block_size"] * data["kv_bytes_per_token_per_gpu"]
        pool = data["kv_cache_gib_per_gpu"] * GiB
        assert allocated <= pool * 1.0001 and pool - allocated < pool * 0.01 + 64 * 2**20


# --- bad input is exit 2, one line ----------------------------------------------

@pytest.mark.parametrize("flags", [["--dtype", "fp9"], ["--quantization", "foo"], ["--kv-cache-dtype", "fp9"]])
def test_unknown_engine_values_are_bad_input(tmp_path: Path, flags: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _cfg(tmp_path, LLAMA)
    assert main(["memory", "--config", str(path), "--gpu", "h100", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and flags[1] in err and "Traceback" not in err


@pytest.mark.parametrize("bad", ["4k", "32768.5", True, [4096]])
def test_non_integer_config_field_is_bad_input(tmp_path: Path, bad: object,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _cfg(tmp_path, {**LLAMA, "max_position_embeddings": bad})
    assert main(["memory", "--config", str(path), "--gpu", "h100"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "max_position_embeddings" in err


def test_non_utf8_config_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'\xff\xfe{"model_type": "llama"}')
    assert main(["memory", "--config", str(path), "--gpu", "h100"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "UTF-8" in err


# --- advice is pasteable and checked ------------------------------------------------

def test_advice_flag_values_are_pasteable() -> None:
    p = plan_memory(arch_from_config(LLAMA), Settings(max_model_len=131072), gpu="l4")
    assert not p.fits and p.advice
    for line in p.advice:
        assert not re.search(r"\d,\d{3}", line), line
    flag = next(a for a in p.advice if a.startswith("--max-model-len"))
    int(flag.split()[1])


def test_tp_fix_suggests_only_sizes_that_divide_heads_and_fit(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = {**LLAMA, "num_hidden_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
           "intermediate_size": 28672}
    a = arch_from_config(cfg)
    from launchcard.errors import MemoryPlanError

    with pytest.raises(MemoryPlanError) as info:
        plan_memory(a, Settings(tp=3, max_model_len=8192), gpu="h100")
    fix = info.value.one_line()
    sizes = [int(x) for x in fix.split(":")[-1].split(",")]
    assert sizes
    for t in sizes:
        assert 64 % t == 0
        assert plan_memory(a, Settings(tp=t, max_model_len=8192), gpu="h100").fits


# --- CPU profiles use CPU accounting ------------------------------------------------

def test_cpu_profile_is_planned_as_cpu() -> None:
    p = plan_memory(arch_from_config(LLAMA), Settings(max_model_len=8192), gpu="xeon6")
    assert p.gpu == "xeon6" and p.device == "cpu"  # the catalog entry, planned with the CPU backend's accounting
    assert p.breakdown.cuda_graph_gib == 0
    # VLLM_CPU_KVCACHE_SPACE unset (vLLM >= 0.12): utilization x the NUMA node's memory, less weights + activations
    b = p.breakdown
    assert b.budget_gib == pytest.approx(0.92 * 256.0, abs=0.01)
    assert p.kv_cache_gib_per_gpu == pytest.approx(b.budget_gib - b.weights_gib - b.activation_peak_gib, abs=0.01)
    assert any(a.confidence == "high" and "CPU" in a.what for a in p.assumed)


# --- exit codes: 0 fits, 1 does not fit, 2 bad input --------------------------------

def test_memory_exit_codes(tmp_path: Path) -> None:
    path = _cfg(tmp_path, LLAMA)
    assert main(["memory", "--config", str(path), "--gpu", "h100", "--max-model-len", "8192"]) == 0
    assert main(["memory", "--config", str(path), "--gpu", "l4", "--max-model-len", "131072"]) == 1
    assert main(["memory", "--config", str(path), "--gpu", "l4", "--max-model-len", "131072", "--json"]) == 1
    assert main(["memory", "--config", str(path), "--gpu", "h100", "--dtype", "fp9"]) == 2


def test_memory_says_a_refused_start_in_checks_one_wording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A start-up refusal (--max-model-len above the config's, vLLM's _get_and_verify_max_len) and too little
    memory are one fact: memory's verdict line is check's ``will not start or does not fit``, never a bare 'does not
    fit' that reads as memory alone."""
    from launchcard.check import verdict_label
    from launchcard.memory import STARTUP_REFUSAL

    path = _cfg(tmp_path, LLAMA)
    assert main(["memory", "--config", str(path), "--gpu", "h100", "--max-model-len", "1000000"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert verdict_label("error") in lines and "does not fit" not in lines
    assert any(x.strip().startswith(f"problem: {STARTUP_REFUSAL}") for x in lines)


# --- incomplete text_config: the model type's defaults, listed as assumptions ------

def test_llava_text_config_gets_llama_defaults() -> None:
    cfg = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
           "text_config": {"model_type": "llama", "max_position_embeddings": 4096, "vocab_size": 32064},
           "vision_config": {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24}}
    a = arch_from_config(cfg)
    assert (a.num_layers, a.hidden_size, a.num_heads, a.intermediate_size) == (32, 4096, 32, 11008)
    assert a.vocab_size == 32064 and a.max_position_embeddings == 4096
    p = plan_memory(a, Settings(), gpu="a100_80gb")
    assert any("hidden_size" in x.what and x.confidence == "high" for x in p.assumed)


# --- issue 15 item 6: vision towers and drafts measured on vLLM's CPU backend -------------------------------------

SIGLIP = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
          "num_hidden_layers": 27, "image_size": 224, "patch_size": 14, "projection_dim": 2048}
GEMMA_TEXT = {"model_type": "gemma", "num_hidden_layers": 18, "hidden_size": 2048, "num_attention_heads": 8,
              "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 16384, "vocab_size": 257216}


def test_paligemma_tower_is_siglip_blocks_embeddings_and_one_linear_projector() -> None:
    """vLLM's PaliGemma: SigLIP blocks with biases and two LayerNorms, a patch conv and one position
    embedding per patch, then Linear(1152 -> 2048) (was counted as a 2x2 patch merger, +8% here)."""
    from launchcard.memory._arch import _vision_params

    h, inter = 1152, 4304
    block = 4 * h * h + 2 * h * inter + 9 * h + inter
    embed = 3 * 14 * 14 * h + (224 // 14) ** 2 * h
    want = 27 * block + embed + h * 2048 + 2048
    top = {"model_type": "paligemma", "vision_config": SIGLIP, "text_config": GEMMA_TEXT}
    assert _vision_params(SIGLIP, top) == want
    assert arch_from_config(top).vision_params == want


def test_llava_tower_stops_at_the_feature_layer_and_projects_through_two_linears() -> None:
    """llava.py builds the CLIP tower only up to vision_feature_layer (-2 of 24: 23 layers) and
    projects with Linear(h -> text) + Linear(text -> text)."""
    from launchcard.memory._arch import _vision_params

    clip = {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096,
            "num_hidden_layers": 24, "image_size": 336, "patch_size": 14}
    text = {**LLAMA, "hidden_size": 4096}
    block = 4 * 1024 * 1024 + 2 * 1024 * 4096 + 9 * 1024 + 4096
    embed = 3 * 14 * 14 * 1024 + 24 * 24 * 1024
    proj = 1024 * 4096 + 4096 * 4096 + 2 * 4096
    for layer, depth in ((-2, 23), (-1, 24), ([-2, -5, 3], 23), (10, 10)):
        top = {"model_type": "llava", "vision_feature_layer": layer, "vision_config": clip, "text_config": text}
        assert _vision_params(clip, top) == depth * block + embed + proj, layer


def test_multimodal_tie_word_embeddings_is_the_top_level_flag() -> None:
    """VllmConfig.with_hf_config copies the top-level flag onto the language model: a PaliGemma whose
    text_config says False is still tied (measured on vLLM 0.32 CPU: no lm_head tensor)."""
    top = {"model_type": "paligemma", "tie_word_embeddings": True, "vision_config": SIGLIP,
           "text_config": {**GEMMA_TEXT, "tie_word_embeddings": False}}
    assert arch_from_config(top).tie_word_embeddings
    top["tie_word_embeddings"] = False
    assert not arch_from_config({**top, "text_config": {**GEMMA_TEXT, "tie_word_embeddings": True}}).tie_word_embeddings
    assert arch_from_config({**LLAMA, "tie_word_embeddings": True}).tie_word_embeddings  # text-only: unchanged


def test_eagle_head_adds_one_target_shaped_layer_to_the_cpu_kv_pool() -> None:
    """vLLM 0.32 CPU, a 3-layer GQA Llama (2 KV heads of 64, fp32) with an EAGLE-1 head: 262,144 tokens
    in 1 GiB (4 layers x 1 KiB per token) against 349,440 without the head."""
    cfg = {**LLAMA, "num_hidden_layers": 3, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
           "head_dim": 64, "intermediate_size": 512, "vocab_size": 512}
    s = Settings(device="cpu", cpu_kvcache_space_gib=1, max_model_len=2048, dtype="float32", max_num_seqs=16,
                 max_num_batched_tokens=2048, enforce_eager=True)
    a = arch_from_config(cfg)
    assert plan_memory(a, s).kv_cache_tokens == 349440
    drafted = plan_memory(a, Settings(**{**s.__dict__, "speculative_method": "eagle", "num_speculative_tokens": 2}))
    assert drafted.kv_cache_tokens == 262144


QWEN25_VL_VISION = {"model_type": "qwen2_5_vl", "depth": 32, "hidden_size": 1280, "intermediate_size": 3420,
                    "out_hidden_size": 3584, "patch_size": 14, "temporal_patch_size": 2, "in_chans": 3,
                    "fullatt_block_indexes": [7, 15, 23, 31]}  # Qwen2.5-VL-7B-Instruct config.json
QWEN2_VL_VISION = {"model_type": "qwen2_vl", "depth": 32, "embed_dim": 1280, "hidden_size": 3584, "mlp_ratio": 4,
                   "patch_size": 14, "temporal_patch_size": 2, "in_chans": 3}  # Qwen2-VL-7B-Instruct config.json


def test_qwen_vl_towers_gated_mlp_and_embed_dim() -> None:
    """Qwen2.5-VL's vision MLP is gated (gate, up, down: 3 h x inter); Qwen2-VL's tower is embed_dim
    wide with mlp_ratio x embed_dim fc1 / fc2, and its vision hidden_size is the merger's output
    (counting 3584 as the width made the tower ~8x too heavy).  Both land on the published ~675M."""
    from launchcard.memory._arch import _vision_params

    h, patch = 1280, 3 * 2 * 14 * 14 * 1280
    merger = 4 * h * (4 * h + 3584)
    q25 = 32 * (4 * h * h + 3 * h * 3420) + patch + merger
    q2 = 32 * (4 * h * h + 2 * h * 5120) + patch + merger
    assert _vision_params(QWEN25_VL_VISION, {"model_type": "qwen2_5_vl"}) == q25
    assert _vision_params(QWEN2_VL_VISION, {"model_type": "qwen2_vl"}) == q2
    assert 670e6 < q25 < 680e6 and 670e6 < q2 < 680e6
    # Qwen3-VL: one extra merger per DeepStack layer
    q3 = {"model_type": "qwen3_vl", "depth": 27, "hidden_size": 1152, "intermediate_size": 4304,
          "out_hidden_size": 4096, "patch_size": 16, "temporal_patch_size": 2, "in_channels": 3,
          "deepstack_visual_indexes": [8, 16, 24]}
    base = {k: v for k, v in q3.items() if k != "deepstack_visual_indexes"}
    one = 4 * 1152 * (4 * 1152 + 4096)
    assert _vision_params(q3, {"model_type": "qwen3_vl"}) - _vision_params(base, {"model_type": "qwen3_vl"}) == 3 * one
