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
    assert err.startswith("launchcard: error: --max-running-requests:") and "request pool" in err
    assert "vLLM" not in err and "--max-num-seqs" not in err


def test_a_command_sglang_accepts_is_still_predicted() -> None:
    assert _predict("").returncode == 0  # type: ignore[attr-defined]
