"""`launchcard predict` on speculative-decoding input a demanding user gets wrong (--speculative-config, on the option
and inside --command, and --acceptance): one line naming the option, exit 2, no prediction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config_support import LLAMA8B
from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
BASE = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "256", "--osl", "32",
        "--concurrency", "2"]
QWEN2 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"


@pytest.mark.parametrize("tokens", ["0", "-3", "2.5", "true"])
def test_speculative_tokens_vllm_refuses_are_bad_input(tokens: str) -> None:
    """vLLM's SpeculativeConfig takes num_speculative_tokens > 0 only (0 used to become 1, -3 was predicted)."""
    res = run_cli(*BASE, "--speculative-config", '{"method": "ngram", "num_speculative_tokens": ' + tokens + "}")
    assert res.returncode == 2, res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and "--speculative-config" in line, line
    # a bound or a value of the wrong type in check's words (the captured spec's: gt=0, int); `true`, which
    # pydantic takes as an int, in the memory planner's
    assert "must be > 0" in line or "must be an integer, got 2.5" in line or "greater than 0" in line, line
    assert "TPOT" not in res.stdout


def test_an_acceptance_rate_without_speculative_decoding_is_bad_input() -> None:
    res = run_cli(*BASE, "--acceptance", "0.6")
    assert res.returncode == 2, res.stdout
    assert res.stderr.strip().startswith("launchcard: error: --acceptance") and "speculative" in res.stderr
    spec = '{"method": "ngram", "num_speculative_tokens": 2}'
    ok = run_cli(*BASE, "--acceptance", "0.6", "--speculative-config", spec)
    assert ok.returncode == 0, ok.stderr


def test_a_speculative_config_without_method_or_model_is_refused_in_one_line(tmp_path: Path) -> None:
    """vLLM infers the method of such a config from the target's own config (its MTP layers) or refuses it:
    predict names it as bad input, never predicting an assumed draft."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    res = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--speculative-config",
                  '{"num_speculative_tokens": 2}')
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "--speculative-config" in lines[0]
    assert "neither a method nor a draft model" in lines[0] and '"method"' in lines[0] and not res.stdout


def test_an_acceptance_of_1_is_a_rate_every_draft_token_accepted() -> None:
    """`--acceptance 1` (every draft accepted: an n-gram drafter on repeated text) was refused as outside [0, 1)
    though the simulation takes it (k + 1 tokens a step); above 1 stays bad input."""
    spec = '{"method": "ngram", "num_speculative_tokens": 3}'
    args = ["predict", "--config", str(QWEN2), "--gpu", "h100", "--isl", "512", "--osl", "64", "--concurrency", "4",
            "--speculative-config", spec, "--json"]
    full = run_cli(*args, "--acceptance", "1")
    assert full.returncode == 0, full.stderr
    none = json.loads(run_cli(*args, "--acceptance", "0").stdout)
    assert json.loads(full.stdout)["tpot_ms_mean"] < none["tpot_ms_mean"] / 2
    over = run_cli(*args, "--acceptance", "1.01")
    assert over.returncode == 2 and "[0, 1]" in over.stderr, over.stderr


def test_a_speculative_config_key_vllm_forbids_is_bad_input_on_both_forms() -> None:
    """SpeculativeConfig forbids extra keys (captured spec: extra="forbid"); `launchcard check` refused
    '{"bogus": 1}' while predict timed it, from --command and from --speculative-config alike."""
    spec = '{"method": "ngram", "num_speculative_tokens": 2, "bogus": 1}'
    for where, res in (("--speculative-config", run_cli(*BASE, "--speculative-config", spec)),
                       ("--command", run_cli(*BASE, "--command", f"vllm serve m --speculative-config '{spec}'"))):
        lines = [x for x in res.stderr.splitlines() if x.strip()]
        assert res.returncode == 2 and len(lines) == 1 and not res.stdout, res.stderr
        assert lines[0].startswith(f"launchcard: error: {where}") and "'bogus'" in lines[0]
    known = '{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 4}'
    assert run_cli(*BASE, "--speculative-config", known).returncode == 0


def test_a_speculative_config_value_vllm_refuses_is_bad_input_as_check_says() -> None:
    """`{"method": "eagle", "model": ["a"]}`: check says error (SpeculativeConfig.model is a str: a ValidationError at
    start-up) while predict timed it (exit 0); now bad input (exit 2) on the option and on --command alike."""
    import shlex

    spec = '{"method": "eagle", "model": ["a"], "num_speculative_tokens": 2}'
    for where, res in (("--speculative-config", run_cli(*BASE, "--speculative-config", spec)),
                       ("--command", run_cli(*BASE, "--command", shlex.join(["vllm", "serve", "m",
                                                                              "--speculative-config", spec])))):
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1, res.stdout + res.stderr
        assert where in lines[0] and "--speculative-config.model" in lines[0] and "must be a string" in lines[0]


def test_a_speculative_config_key_out_of_its_bounds_is_bad_input_as_check_says() -> None:
    """`{"method": "ngram", "prompt_lookup_max": 0}`: SpeculativeConfig declares prompt_lookup_max >= 1 (captured
    spec, `Field(ge=1)`: a ValidationError at start-up) and `launchcard check` says error [out-of-range], while
    predict timed it (TPOT 6.1 ms against 5.4 ms with vLLM's default lookup), on the option and on --command."""
    import shlex

    spec = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 0}'
    for where, res in (("--speculative-config", run_cli(*BASE, "--speculative-config", spec)),
                       ("--command", run_cli(*BASE, "--command", shlex.join(["vllm", "serve", "m",
                                                                              "--speculative-config", spec])))):
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and not res.stdout, res.stdout + res.stderr
        assert lines[0].startswith(f"launchcard: error: {where}"), lines[0]
        assert "--speculative-config.prompt_lookup_max" in lines[0] and "must be >= 1" in lines[0], lines[0]
