"""`predict --command 'python -m sglang.launch_server ...'` refuses what SGLang refuses, as a vLLM command is refused
by vLLM's parser and as the plan search judges its SGLang candidates: an unknown flag or a value outside a flag's
choices (SGLang's captured parser spec), and a --max-running-requests below 1 (SGLang's request pool is sized by it);
one line naming --command or the flag, exit 2, and never vLLM's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

GPT_OSS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" \
    / "config.json"
SERVE = "python -m sglang.launch_server --model openai/gpt-oss-120b --tp 8"


def _predict(extra: str, *args: str) -> object:
    return run_cli("predict", "--config", str(GPT_OSS), "--gpu", "b200", "--isl", "300", "--osl", "200",
                   "--concurrency", "10", "--command", f"{SERVE} {extra}".strip(), *args)


@pytest.mark.parametrize(("extra", "words"), [("--bogus", "has no such option"),
                                              ("--attention-backend nope", "not a valid choice")])
def test_a_flag_sglangs_parser_refuses_is_bad_input(extra: str, words: str) -> None:
    out = _predict(extra)
    assert out.returncode == 2, out.stdout[-300:]  # type: ignore[attr-defined]
    err = out.stderr  # type: ignore[attr-defined]
    assert err.startswith("launchcard: error: --command: SGLang's parser refuses") and words in err
    assert err.count("\n") == 1 and "vLLM" not in err


def test_a_release_without_a_captured_spec_is_not_judged() -> None:
    out = _predict("--bogus", "--engine-version", "0.5.6.post2")
    assert "SGLang's parser refuses" not in out.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_running_requests_below_one_is_refused_in_sglangs_terms(value: str) -> None:
    out = _predict(f"--max-running-requests {value}")
    assert out.returncode == 2  # type: ignore[attr-defined]
    err = out.stderr  # type: ignore[attr-defined]
    assert err.startswith("launchcard: error: --command: --max-running-requests must be >= 1") and "request pool" in err
    assert "vLLM" not in err and "--max-num-seqs" not in err


def test_a_command_sglang_accepts_is_still_predicted() -> None:
    assert _predict("").returncode == 0  # type: ignore[attr-defined]


QWEN3 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"


def _qwen(extra: str) -> object:
    return run_cli("predict", "--config", str(QWEN3), "--gpu", "h100", "--isl", "512", "--osl", "64",
                   "--concurrency", "4", "--json", "--command",
                   f"python -m sglang.launch_server --model-path Qwen/Qwen3-8B {extra}".strip())


def test_max_total_tokens_caps_the_kv_pool_as_sglang_does() -> None:
    """`--max-total-tokens 1000` was ignored (the whole 369,830-token pool planned, the same figures as without):
    SGLang's pool is min(profiled, --max-total-tokens); above the profiled pool it changes nothing; below 1 is bad
    input naming the flag."""
    import json

    def pool(out: object) -> str:
        doc = json.loads(out.stdout)  # type: ignore[attr-defined]
        return next(f["message"] for f in doc["findings"] if f["code"] == "sglang-limits")

    whole, capped = _qwen(""), _qwen("--max-total-tokens 1000")
    assert "KV pool 1000 tokens" in pool(capped) and "capped by --max-total-tokens" in pool(capped)
    assert json.loads(capped.stdout)["ttft_ms_mean"] > 5 * json.loads(whole.stdout)["ttft_ms_mean"]  # type: ignore[attr-defined]
    assert pool(_qwen("--max-total-tokens 99999999")) == pool(whole)
    bad = _qwen("--max-total-tokens 0")
    assert bad.returncode == 2 and bad.stderr.startswith(  # type: ignore[attr-defined]
        "launchcard: error: --command: --max-total-tokens must be >= 1")


def test_a_context_length_below_one_is_named_by_its_own_flag() -> None:
    """`--context-length 0` was said of `--max-model-len`, an option the command does not have."""
    bad = _qwen("--context-length 0")
    assert bad.returncode == 2 and bad.stderr.startswith(  # type: ignore[attr-defined]
        "launchcard: error: --command: --context-length must be >= 1")


def test_no_kv_cache_advises_only_a_fix_that_can_work() -> None:
    """SGLang's KV pool is what --mem-fraction-static of the GPU leaves after the weights: with gpt-oss-120b's
    65.8 GiB of weights on one H100 (79.19 GiB) a share of 0.5 leaves none and a share above 65.8 / 79.19 would;
    on one A10 (22.07 GiB) the weights alone exceed the GPU, so no share (SGLang takes it below 1) helps."""
    def err(gpu: str, extra: str) -> str:
        out = run_cli("predict", "--config", str(GPT_OSS), "--gpu", gpu, "--isl", "300", "--osl", "200",
                      "--concurrency", "10", "--command", f"python -m sglang.launch_server --tp 1 {extra}".strip())
        assert out.returncode == 1, out.stdout[-300:]
        return out.stderr

    h100 = err("h100", "--mem-fraction-static 0.5")
    assert "raise --mem-fraction-static to at least 0.832" in h100, h100
    a10 = err("a10", "")
    assert "--tp-size" in a10 and "--mem-fraction-static" not in a10.split("; ", 1)[1], a10
