"""The text of a prediction: a non-zero figure is never printed as a rounded zero (qa6: `--rate 1e-9` printed
"output 0.0 tok/s")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.predict import figure_text, figures_json

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


@pytest.mark.parametrize(("value", "decimals", "text"), [
    (1234.56, 1, "1234.6"), (0.0, 1, "0.0"), (0.04, 1, "0.04"), (2.56e-7, 1, "2.56e-07"), (-3e-6, 3, "-3e-06"),
    (0.049, 1, "0.049"), (0.05, 1, "0.1"),
])
def test_a_non_zero_figure_keeps_three_significant_digits_where_its_decimals_would_print_zero(
        value: float, decimals: int, text: str) -> None:
    assert figure_text(value, decimals) == text


def test_json_keeps_a_tiny_figure_its_significant_digits() -> None:
    assert figures_json(request_per_s=3.2e-9, output_tok_per_s=1234.56789) == {
        "request_per_s": 3.2e-9, "output_tok_per_s": 1234.568}


@pytest.mark.skipif(not GPT_OSS.is_file(), reason="needs the shared corpus")
def test_a_very_slow_rate_prints_its_throughput_not_zero() -> None:
    args = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "256", "--osl", "32",
            "--rate", "1e-8"]  # (1e-9 is refused since qa12: 32 arrivals span more than the clock times)
    res = run_cli(*args)
    assert res.returncode == 0, res.stderr
    out = next(line for line in res.stdout.splitlines() if line.startswith("output"))
    req = next(line for line in res.stdout.splitlines() if line.startswith("requests"))
    assert " 0.0 " not in out and "e-" in out and "0.000 /s" not in req, (out, req)
    doc = json.loads(run_cli(*args, "--json").stdout)
    assert 0 < doc["request_per_s"] < 2e-8 and 0 < doc["output_tok_per_s"] < 1e-6
