"""The workload options predict and plan share (--isl, --osl, --dataset): a value the user typed is judged as typed,
never replaced by a default."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


@pytest.mark.parametrize("surface", ["predict", "plan"])
@pytest.mark.parametrize(("option", "others"), [("--isl", ()), ("--osl", ()), ("--isl", ("--dataset", "sharegpt"))])
def test_a_zero_length_is_bad_input_not_the_default(surface: str, option: str, others: tuple[str, ...]) -> None:
    """--isl 0 / --osl 0 was read as 'not given' (``isl or 1024``) and predicted at 1024 / 256 tokens, exit 0."""
    args = (["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2"] if surface == "predict" else
            ["plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
             "--slo", "ttft=5000", "--max-num-seqs", "8"])
    res = run_cli(*args, "--concurrency", "2", option, "0", *others)
    assert res.returncode == 2, res.stdout[:300]
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith(f"launchcard: error: {option}") and "(0)" in line, line
