"""`memory` (and every command planning a vLLM command's memory) refuses batch limits, block sizes and memory sizes
vLLM would refuse, in one line naming the option (exit 2): a 0 was planned as vLLM's default, a negative token budget
as a smaller one, and a device memory of nan or inf was an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

GPT_OSS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" \
    / "config.json"


@pytest.mark.parametrize(("args", "flag"), [
    (("--max-num-seqs", "0"), "--max-num-seqs"),
    (("--max-num-batched-tokens", "-4"), "--max-num-batched-tokens"),
    (("--block-size", "0"), "--block-size"),
    (("--gpu-memory-gib", "nan"), "--gpu-memory-gib"),
    (("--gpu-memory-gib", "inf"), "--gpu-memory-gib"),
    (("--device", "cpu", "--cpu-kvcache-space-gib", "-1"), "--cpu-kvcache-space-gib"),
    # qa12: finite GiB whose bytes are not (an internal error: OverflowError converting the pool to int)
    (("--gpu-memory-gib", "1e308"), "--gpu-memory-gib"),
    (("--device", "cpu", "--cpu-kvcache-space-gib", "1e308"), "--cpu-kvcache-space-gib"),
])
def test_memory_refuses_a_value_vllm_refuses_in_one_line(args: tuple[str, ...], flag: str) -> None:
    out = run_cli("memory", "--config", str(GPT_OSS), "--gpu", "h100", *args)
    assert out.returncode == 2, out.stdout[-400:]
    assert out.stderr.startswith(f"launchcard: error: {flag}:") and out.stderr.count("\n") == 1
    assert "internal error" not in out.stderr and not out.stdout


def test_predict_refuses_a_command_whose_batch_limit_vllm_refuses() -> None:
    out = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--concurrency", "1",
                  "--command", "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --max-num-seqs 0")
    assert out.returncode == 2 and "--max-num-seqs" in out.stderr and not out.stdout


# google-t5/t5-base and openai/whisper-large-v3 config.json (huggingface.co), the fields the planner would read;
# bart: facebook/bart-large, whose num_hidden_layers, d_model and heads are all there (it was planned as a decoder)
T5 = {"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": 768, "d_ff": 3072, "d_kv": 64,
      "num_heads": 12, "num_layers": 12, "num_decoder_layers": 12, "vocab_size": 32128, "is_encoder_decoder": True}
WHISPER = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "d_model": 1280,
           "encoder_layers": 32, "decoder_layers": 32, "num_hidden_layers": 32, "encoder_attention_heads": 20,
           "decoder_attention_heads": 20, "max_target_positions": 448, "vocab_size": 51866,
           "is_encoder_decoder": True, "torch_dtype": "float16"}
BART = {"architectures": ["BartForConditionalGeneration"], "model_type": "bart", "d_model": 1024,
        "num_hidden_layers": 12, "num_attention_heads": 16, "encoder_layers": 12, "decoder_layers": 12,
        "max_position_embeddings": 1024, "vocab_size": 50265, "is_encoder_decoder": True}


@pytest.mark.parametrize("config", [T5, WHISPER, BART], ids=["t5", "whisper", "bart"])
def test_an_encoder_decoder_model_is_named_as_such(tmp_path: Path, config: dict[str, object]) -> None:
    """T5 and Whisper were refused as a config that 'lacks required field(s) num_attention_heads' with the fix 'pass
    the model's full config.json' (it is full); one whose fields are all there was planned as a decoder-only model."""
    import json

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config), encoding="utf-8")
    arch = str(config["architectures"][0])  # type: ignore[index]
    for out in (run_cli("memory", "--config", str(cfg), "--gpu", "h100"),
                run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "64", "--osl", "8",
                        "--concurrency", "1")):
        assert out.returncode == 2 and not out.stdout, out.stdout[-400:]
        line = out.stderr.strip()
        assert "\n" not in line and f"{arch} is an encoder-decoder model (is_encoder_decoder: true)" in line, line
        assert "lacks required" not in line


@pytest.mark.parametrize(("doc", "said"), [
    ('{"metadata": {"total_size": 1e400}, "weight_map": {"a": "b"}}', "metadata.total_size must be a positive "
                                                                       "number of bytes (got inf)"),
    ('{"metadata": {"total_size": -5}, "weight_map": {}}', "metadata.total_size must be a positive number of bytes"),
    ('{"metadata": 5}', "index has no metadata.total_size"),
    ('{"metadata": {"total_size": 100}, "weight_map": [1]}', "weight_map is not an object"),
])
def test_a_safetensors_index_that_is_no_index_is_named_by_its_option(tmp_path: Path, doc: str, said: str) -> None:
    """qa12: total_size 1e400 (JSON's inf) was an internal error (OverflowError: int(inf)), a weight_map list or a
    metadata number AttributeErrors, and every refusal of the index's content named the file without the option."""
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(doc)
    out = run_cli("memory", "--config", str(GPT_OSS), "--gpu", "h100", "--safetensors-index", str(index))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and not out.stdout, out.stderr
    assert out.stderr.startswith(f"launchcard: error: --safetensors-index {index}: {said}"), out.stderr


@pytest.mark.parametrize(("field", "value"), [("vocab_size", -1), ("head_dim", 0), ("intermediate_size", -5)])
def test_a_config_size_present_but_not_positive_is_refused(tmp_path: Path, field: str, value: int) -> None:
    """qa12: vocab_size -1 took bytes off the weights (8.32 GiB where the checkpoint's is 8.59 at TP 8) and head_dim 0
    fell back to hidden / heads, both planned and predicted unsaid; refused as num_hidden_layers 0 is."""
    import json

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**json.loads(GPT_OSS.read_text()), field: value}))
    for command in (("memory",), ("predict", "--concurrency", "1")):
        out = run_cli(command[0], "--config", str(cfg), "--gpu", "h100", "--tp", "8", *command[1:])
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and not out.stdout, out.stderr
        assert f"config field(s) {field} = {value} must be positive" in out.stderr, out.stderr
