"""Every value the memory planner supplies is an ``assumed`` entry naming it, why, and how to give the real one
(issue 20, item 5).

Before: ``memory --config kimi-k2.json --gpu h200 --tp 8 --quantization compressed-tensors`` (no
quantization_config) planned 16-bit weights, 240 GiB per GPU, "does not fit", and listed no assumption.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launchcard.memory import Settings, arch_from_config, plan_memory

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
KIMI = SHARED / "corpus" / "hf" / "moonshotai" / "Kimi-K2.5" / "config.json"
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


def _what(plan) -> list[str]:
    return [a.what for a in plan.assumed]


@pytest.mark.skipif(not KIMI.exists(), reason="shared corpus not present")
def test_kimi_compressed_tensors_without_its_config_is_a_low_confidence_assumption() -> None:
    text = dict(json.loads(KIMI.read_text("utf-8"))["text_config"])
    text.pop("quantization_config", None)  # the kimi-k2.json: the text model without its INT4 scheme
    plan = plan_memory(arch_from_config(text), Settings(tp=8, quantization="compressed-tensors"), gpu="h200")
    low = [a for a in plan.assumed if a.confidence == "low"]
    assert low and "--quantization compressed-tensors" in low[0].what and "16-bit" in low[0].what
    assert "quantization_config" in low[0].what  # how to give the real one
    assert any("low-confidence" in w for w in plan.warnings)  # the verdict says what it rests on


def test_checkpoint_methods_without_config_say_the_packing_is_not_read() -> None:
    plan = plan_memory(arch_from_config(LLAMA), Settings(quantization="awq", max_model_len=8192), gpu="h100")
    assert any("AWQ int4 g128, the usual packing, not read" in w for w in _what(plan))


def test_online_quantization_is_no_assumption() -> None:
    plan = plan_memory(arch_from_config(LLAMA), Settings(quantization="fp8", max_model_len=8192), gpu="h100")
    assert not any("--quantization" in w for w in _what(plan))


def test_missing_torch_dtype_is_an_assumed_precision() -> None:
    cfg = {k: v for k, v in LLAMA.items() if k != "torch_dtype"}
    assert any(w.startswith("precision:") for w in _what(plan_memory(arch_from_config(cfg), Settings(), gpu="h100")))
    assert not any(w.startswith("precision:") for w in _what(plan_memory(arch_from_config(LLAMA), Settings(),
                                                                          gpu="h100")))


def test_a_dtype_given_drops_the_precision_note_by_the_field_that_holds_it() -> None:
    """The note is the arch's ``precision_note`` (the one a --dtype given replaces), not whichever note begins
    with its words; every other assumption stays."""
    arch = arch_from_config({k: v for k, v in LLAMA.items() if k != "torch_dtype"})
    assert arch.precision_note is not None and arch.precision_note in arch.assumptions
    assert arch_from_config(LLAMA).precision_note is None
    auto, given = (_what(plan_memory(arch, Settings(dtype=d), gpu="h100")) for d in ("auto", "bfloat16"))
    assert arch.precision_note in auto and arch.precision_note not in given
    assert [w for w in auto if w != arch.precision_note] == given


@pytest.mark.parametrize(("value", "read"), [("bfloat16", "bfloat16"), ("torch.float16", "float16"),
                                             ("float32", "float32"), ("bf16", "bfloat16")])
def test_a_known_torch_dtype_is_read_as_it_is_without_an_assumption(value: str, read: str) -> None:
    """bfloat16 is not float16 (a substring match once read it so), and a known name is no assumption."""
    arch = arch_from_config({**LLAMA, "torch_dtype": value})
    assert arch.torch_dtype == read and not any(a.startswith("precision:") for a in arch.assumptions)


def test_an_unknown_torch_dtype_is_the_same_named_assumption_in_memory_predict_and_plan(tmp_path: Path) -> None:
    """An unrecognised torch_dtype is never read as bf16 silently: memory, predict and plan name it, with its
    value, as they name an absent one."""
    from helpers import run_cli

    arch = arch_from_config({**LLAMA, "torch_dtype": "float8_e4m3fn"})
    said = [a for a in arch.assumptions if a.startswith("precision:")]
    assert arch.torch_dtype == "bfloat16" and len(said) == 1 and "'float8_e4m3fn'" in said[0]
    assert said[0] in _what(plan_memory(arch, Settings(), gpu="h100"))
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**LLAMA, "torch_dtype": "float8_e4m3fn"}), encoding="utf-8")
    pred = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--json")
    assert pred.returncode == 0 and said[0] in [f["message"] for f in json.loads(pred.stdout)["findings"]]
    plan = run_cli("plan", "llama", "--config", str(cfg), "--gpu", "h100", "--gpus", "1", "--gpus-per-node", "8",
                   "--slo", "tpot=500", "--concurrency", "4", "--max-num-seqs", "8", "--json")
    assert plan.returncode == 0 and f"checkpoint: {said[0]}" in json.loads(plan.stdout)["findings"]


def test_utilization_default_follows_the_release() -> None:
    arch = arch_from_config(LLAMA)
    new = plan_memory(arch, Settings(max_model_len=8192), gpu="h100")
    old = plan_memory(arch, Settings(max_model_len=8192, vllm_version="0.19.1"), gpu="h100")
    assert new.breakdown.budget_gib == pytest.approx(0.92 * 79.19, abs=0.01)
    assert old.breakdown.budget_gib == pytest.approx(0.90 * 79.19, abs=0.01)
    assert any("--gpu-memory-utilization not given: 0.92" in w for w in _what(new))
    given = plan_memory(arch, Settings(max_model_len=8192, gpu_memory_utilization=0.8), gpu="h100")
    assert not any("--gpu-memory-utilization" in w for w in _what(given))


def test_kv_dtype_auto_is_named() -> None:
    arch = arch_from_config(LLAMA)
    assert any(w.startswith("--kv-cache-dtype auto") for w in _what(plan_memory(arch, Settings(), gpu="h100")))
    assert not any(w.startswith("--kv-cache-dtype") for w in _what(plan_memory(arch, Settings(kv_cache_dtype="fp8"),
                                                                              gpu="h100")))


def test_vision_tower_sizes_not_in_the_config_are_named() -> None:
    cfg = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
           "text_config": {**LLAMA}, "vision_config": {"model_type": "siglip_vision_model", "patch_size": 14}}
    what = _what(plan_memory(arch_from_config(cfg), Settings(max_model_len=8192), gpu="h100"))
    for part in ("depth", "width", "MLP size"):
        assert any(w.startswith(f"vision tower {part}:") for w in what), (part, what)
    full = {**cfg, "vision_config": {**cfg["vision_config"], "num_hidden_layers": 27, "hidden_size": 1152,
                                     "intermediate_size": 4304}}
    assert not any(w.startswith("vision tower") for w in _what(plan_memory(arch_from_config(full),
                                                                           Settings(max_model_len=8192), gpu="h100")))


def test_a_batch_limit_given_is_not_said_to_be_an_engine_default() -> None:
    """--max-num-seqs 2 alone was said as 'engine defaults for this device: max_num_seqs 2, max_num_batched_tokens
    8192 (vllm serve's default ...)': only the limit not given is a default."""
    from config_support import LLAMA8B
    from launchcard.hardware import find
    from launchcard.memory import Settings, arch_from_config, plan_memory

    arch = arch_from_config(dict(LLAMA8B))
    said = [a.what for a in plan_memory(arch, Settings(max_num_seqs=2), gpu=find("h100")).assumed
            if a.what.startswith("engine defaults")]
    assert len(said) == 1 and "max_num_seqs" not in said[0] and "max_num_batched_tokens 8192" in said[0], said
    assert "--max-num-batched-tokens to give the real one" in said[0] and "--max-num-seqs" not in said[0]
    both = Settings(max_num_seqs=2, max_num_batched_tokens=4096)
    assert not [a for a in plan_memory(arch, both, gpu=find("h100")).assumed if a.what.startswith("engine defaults")]


@pytest.mark.parametrize("position", [131072, None])
def test_the_context_default_is_restated_in_another_engines_flag_from_its_own_words(position: int | None) -> None:
    """SGLang's and TensorRT-LLM's facts restate the note with their flag (``context_default_as``): both once
    replaced copies of its words, which would silently stop matching if the note were reworded."""
    from launchcard.memory import ASSUMED_MAX_MODEL_LEN, context_default_as

    cfg = {k: v for k, v in LLAMA.items() if position is not None or k != "max_position_embeddings"}
    [note] = [a.what for a in plan_memory(arch_from_config(cfg), Settings(), gpu="h100").assumed
              if a.code == ASSUMED_MAX_MODEL_LEN]
    said = context_default_as(note, "--context-length")
    assert said.startswith("--context-length not given: ") and "--max-model-len" not in said
    assert "vLLM's default" not in said
    assert ("(the length vLLM derives from the config" in said) == (position is not None), said


def test_the_kv_dtype_default_is_restated_for_another_engine_from_its_own_words() -> None:
    from launchcard.memory import ASSUMED_KV_CACHE_DTYPE, kv_default_as

    [note] = [a.what for a in plan_memory(arch_from_config(LLAMA), Settings(), gpu="h100").assumed
              if a.code == ASSUMED_KV_CACHE_DTYPE]
    said = kv_default_as(note, given="no KV dtype given:", default="", advice="; set it in the options file")
    assert said == "no KV dtype given: KV cache in the model dtype (2 bytes per element); set it in the options file"
    own = "--kv-cache-dtype auto: vLLM 0.11.0 serves a DeepSeek Sparse Attention checkpoint with its FP8 record"
    assert kv_default_as(own, given="x", default="y", advice="z") == own  # vLLM's own rule, named as vLLM's


def test_every_assumption_is_restated_for_another_engine_by_one_table_driven_rule() -> None:
    """SGLang's and TensorRT-LLM's facts state the planner's assumptions through ``assumption_as`` with their own
    words (two parallel functions once did it, each with its own copy of the codes' handling)."""
    import launchcard.memory as mem
    from launchcard.memory import assumption_as

    words = mem.EngineWords(context_flag="--ctx", context_rule="; its own rule", kv_given="kv not given:",
                            kv_default=", its default", kv_advice="; pass --kv")
    plan = plan_memory(arch_from_config(LLAMA), Settings(), gpu="h100")
    by = {a.code: a.what for a in plan.assumed}
    assert assumption_as(mem.ASSUMED_UTILIZATION, by[mem.ASSUMED_UTILIZATION], words) is None
    assert assumption_as(mem.ASSUMED_ENGINE_LIMITS, "engine defaults ...", words) is None
    ctx = assumption_as(mem.ASSUMED_MAX_MODEL_LEN, by[mem.ASSUMED_MAX_MODEL_LEN], words)
    assert ctx is not None and ctx.startswith("--ctx not given: ") and ctx.endswith("; its own rule")
    kv = assumption_as(mem.ASSUMED_KV_CACHE_DTYPE, by[mem.ASSUMED_KV_CACHE_DTYPE], words)
    assert kv == "kv not given: KV cache in the model dtype (2 bytes per element, its default); pass --kv"
    assert assumption_as("other-code", "as it is", words) == "as it is"


def test_a_config_without_a_length_key_is_planned_at_the_length_vllm_assumes() -> None:
    """vLLM serves a config with no length key at 2048 tokens (0.32.0 vllm/config/model.py L2571); the planner
    said '8192 guessed' and planned 8192."""
    cfg = {k: v for k, v in LLAMA.items() if k != "max_position_embeddings"}
    plan = plan_memory(arch_from_config(cfg), Settings(), gpu="h100")
    assert plan.max_model_len == 2048
    [note] = [a.what for a in plan.assumed if a.what.startswith("--max-model-len not given")]
    assert "vLLM assumes 2048" in note and "guess" not in note


def test_a_release_newer_than_the_planner_reads_is_said_to_be_planned_with_the_newest_accounting() -> None:
    """--vllm-version 9.9 (or predict --engine-version 0.34.0) was labelled with that release as if its accounting
    had been read; it is the newest read release's (0.32) and says so."""
    arch = arch_from_config(LLAMA)
    newer = plan_memory(arch, Settings(vllm_version="9.9"), gpu="h100")
    assert any("9.9: newer than the newest release the memory planner reads (0.32)" in n.what for n in newer.assumed)
    read = plan_memory(arch, Settings(vllm_version="0.32.0"), gpu="h100")
    assert not any("newer than the newest release" in n.what for n in read.assumed)
