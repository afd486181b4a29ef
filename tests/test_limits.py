"""Start-up refusals vLLM makes from the config and the flags (issue 20, item 4).

Rules follow vLLM's ``_get_and_verify_max_len``, heads/TP check and quantization checks; the
last tests ask the real vLLM 0.32 CPU engine in ``.cache/vllm-venv`` (skipped without it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchcard.check import check_command
from launchcard.cli import app
from launchcard.limits import heads_refusal, length_refusal, max_len, quant_capability_refusal, quant_dtype_refusal
from launchcard.memory import Settings, arch_from_config, plan_memory

ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
TINY = ROOT / ".cache" / "tiny-model" / "model"
CORPUS = ROOT.parent / "shared" / "corpus"
# Qwen/Qwen3-4B's config.json (the fields the planner and the length rule read)
QWEN3_4B = {"architectures": ["Qwen3ForCausalLM"], "head_dim": 128, "hidden_size": 2560, "intermediate_size": 9728,
            "max_position_embeddings": 40960, "model_type": "qwen3", "num_attention_heads": 32,
            "num_hidden_layers": 36, "num_key_value_heads": 8, "rope_scaling": None, "rope_theta": 1000000,
            "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 151936}


def test_derived_length_follows_vllm() -> None:
    assert max_len(QWEN3_4B).limit == 40960  # type: ignore[union-attr]
    linear = {**QWEN3_4B, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    assert max_len(linear).limit == 163840  # type: ignore[union-attr]
    yarn = {**QWEN3_4B, "max_position_embeddings": 131072,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert max_len(yarn, "0.32.0").limit == 131072  # type: ignore[union-attr]  # already scaled (vLLM >= 0.30)
    assert max_len(yarn, "0.29.0").limit == 131072  # type: ignore[union-attr]  # original x factor before
    per_layer = {**QWEN3_4B, "rope_parameters": {"full_attention": {"rope_type": "dynamic", "factor": 2.0},
                                                 "sliding_attention": {"rope_type": "default"}}}
    assert max_len(per_layer).limit == 81920  # type: ignore[union-attr]
    gemma3 = {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "max_position_embeddings": 131072,
                                                      "rope_scaling": {"rope_type": "linear", "factor": 8.0}}}
    assert max_len(gemma3).limit == 131072  # type: ignore[union-attr]  # vLLM skips Gemma 3's factor
    smallest = {**QWEN3_4B, "seq_length": 8192}
    assert max_len(smallest).key == "seq_length"  # type: ignore[union-attr]
    assert max_len({"num_attention_heads": 8}) is None  # no length key: vLLM accepts any length
    # qa12: JSON's 1e400 (inf) was an internal error of `check --config` (int(inf)); no length is read from it
    assert max_len({**QWEN3_4B, "max_position_embeddings": float("inf")}) is None
    assert max_len({**QWEN3_4B, "seq_length": float("inf")}).key == "max_position_embeddings"  # type: ignore[union-attr]


def test_refusal_quotes_vllm_and_env_overrides() -> None:
    limit = max_len(QWEN3_4B)
    quote = length_refusal(100000, limit)
    assert quote and "User-specified max_model_len (100000)" in quote and "vllm/config/model.py" in quote
    assert length_refusal(40960, limit) is None
    assert length_refusal(100000, limit, {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) is None
    assert heads_refusal(32, 3) and heads_refusal(32, 4) is None
    assert quant_dtype_refusal("awq", "float32") and quant_dtype_refusal("awq", "auto") is None
    assert quant_capability_refusal("mxfp4", "7.5") and quant_capability_refusal("mxfp4", "9.0") is None


@pytest.mark.parametrize("requested", [40961, 100000, 1000000, 4000000])
def test_memory_refuses_and_never_advises_a_refused_length(requested: int) -> None:
    plan = plan_memory(arch_from_config(dict(QWEN3_4B)), Settings(max_model_len=requested), gpu="h100")
    assert not plan.fits and "vLLM refuses to start" in plan.problems[0]
    assert plan.estimated_max_model_len <= 40960
    for advice in plan.advice:
        for n in re.findall(r"(?:--max-model-len|at) (\d+)", advice):
            assert int(n) <= 40960, advice
    allowed = plan_memory(arch_from_config(dict(QWEN3_4B)),
                          Settings(max_model_len=100000, allow_long_max_model_len=True), gpu="h100")
    assert not any("refuses" in p for p in allowed.problems)


def test_default_length_is_vllms_derived_one() -> None:
    linear = {**QWEN3_4B, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    plan = plan_memory(arch_from_config(linear), Settings(), gpu="h200")
    assert plan.max_model_len == 81920


def test_check_cli_refuses_with_config(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN3_4B))
    runner = CliRunner()
    bad = runner.invoke(app, ["check", "--config", str(cfg), "--", "vllm", "serve", "Qwen/Qwen3-4B",
                              "--max-model-len", "100000"])
    assert bad.exit_code == 1 and "[max-model-len-over-model, startup]" in bad.output
    assert "use --max-model-len 40960 or less" in bad.output
    ok = runner.invoke(app, ["check", "--config", str(cfg), "--env", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "--",
                             "vllm", "serve", "Qwen/Qwen3-4B", "--max-model-len", "100000"])
    assert ok.exit_code == 0, ok.output


def test_published_command_over_the_models_length_is_an_error() -> None:
    cfg = CORPUS / "hf" / "openai" / "gpt-oss-120b" / "config.json"
    if not cfg.exists():
        pytest.skip("corpus missing")
    v = check_command(["vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "262144"], config=cfg)
    assert any(f.code == "max-model-len-over-model" and f.severity == "error" for f in v.findings)
    ok = check_command(["vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "131072"], config=cfg)
    assert not any(f.code == "max-model-len-over-model" for f in ok.findings)


def _vllm_source(rel: str) -> list[str]:
    found = sorted((ROOT / ".cache" / "vllm-venv" / "lib").glob(f"python3*/site-packages/{rel}"))
    if not found:
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail("vLLM CPU venv missing: run scripts/setup.d/50-vllm-env.sh")
        pytest.skip("vLLM CPU venv missing (scripts/setup.d/50-vllm-env.sh builds it)")
    return found[0].read_text().splitlines()


def test_quoted_wording_is_the_engines_own() -> None:
    model = _vllm_source("vllm/config/model.py")
    assert "User-specified max_model_len" in model[2645]
    assert "Total number of attention heads" in model[1547]
    vllm_cfg = _vllm_source("vllm/config/vllm.py")
    assert "is not supported for quantization" in vllm_cfg[909]
    assert "is not supported for the current GPU" in vllm_cfg[902]
    linear = _vllm_source("vllm/model_executor/layers/linear.py")
    assert "num_kv_head_replicas = divide(tp_size, self.total_num_kv_heads)" in linear[1054]
    assert "self.num_kv_heads = divide(self.total_num_kv_heads, tp_size)" in linear[1056]
    assert "is not divisible by" in _vllm_source("vllm/distributed/utils.py")[53]


@pytest.mark.live
def test_real_engine_refuses_what_launchcard_refuses() -> None:
    """vLLM 0.32 (CPU) builds its ModelConfig for the tiny model: the length it refuses is the one we refuse."""
    if not VENV_PY.exists() or not (TINY / "config.json").exists():
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail("vLLM CPU venv or tiny model missing")
        pytest.skip("vLLM CPU venv or tiny model missing")
    cfg = json.loads((TINY / "config.json").read_text())
    limit = max_len(cfg)
    assert limit is not None
    probe = ("import sys\nfrom vllm.config import ModelConfig\n"
             "for n in (int(sys.argv[2]), int(sys.argv[2]) + 1):\n"
             "    try:\n        ModelConfig(model=sys.argv[1], max_model_len=n)\n        print(n, 'ok')\n"
             "    except Exception as e:\n        print(n, 'refused', str(e)[:200].replace(chr(10), ' '))\n")
    out = subprocess.run([str(VENV_PY), "-c", probe, str(TINY), str(limit.limit)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"})
    lines = [ln for ln in out.stdout.splitlines() if ln.split(" ")[0].isdigit()]
    assert len(lines) == 2 and lines[0] == f"{limit.limit} ok", out.stdout[-2000:] + out.stderr[-2000:]
    assert "refused" in lines[1] and "User-specified max_model_len" in lines[1]
    ours = length_refusal(limit.limit + 1, limit)
    assert length_refusal(limit.limit, limit) is None and ours
    # the engine's own sentence, number for number (its derived length printed as it prints it)
    head = lines[1].split("Value error, ", 1)[-1][:120]
    assert head in ours, (head, ours)


def test_check_finds_the_corpus_config_by_model_id(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (CORPUS / "hf" / "openai" / "gpt-oss-120b" / "config.json").exists():
        pytest.skip("corpus missing")
    monkeypatch.setenv("LAUNCHCARD_CORPUS", str(CORPUS))
    out = CliRunner().invoke(app, ["check", "--", "vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "262144"])
    assert out.exit_code == 1 and "[max-model-len-over-model, startup]" in out.output
    assert "corpus copy of the model's config.json" in out.output
