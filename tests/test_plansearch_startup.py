"""The plan search's start-up shape cache (plansearch/_startup.py ``refusal``) checks each command shape once, at
batch limit 1, and re-checks a bigger limit only against --max-num-batched-tokens: it rests on vLLM's start-up rules
reading the batch limit (--max-num-seqs) in that one rule alone.  Guarded here on the real entry point,
:func:`launchcard.check.limit_rules`: any other rule that starts reading the limit makes this fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.check import limit_rules, load_config
from launchcard.hardware import find

GPT_OSS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
READS_THE_LIMIT = {"max-num-batched-tokens-below-seqs"}

ARGVS = [
    (),
    ("--max-num-batched-tokens", "2048"),
    ("--max-model-len", "1000000"),  # past the model's length
    ("-tp", "3"),  # heads not divisible
    ("--quantization", "fp8", "--dtype", "float32"),
    ("--kv-cache-dtype", "fp8", "--max-num-batched-tokens", "512", "--enable-chunked-prefill"),
    ("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'),
]


def _codes(config: Path, extra: tuple[str, ...], seqs: int, gpu: str, version: str | None) -> set[str]:
    argv = ["vllm", "serve", "m", *extra, "--max-num-seqs", str(seqs)]
    return {f.code for f in limit_rules(load_config(config), argv, "single", None, find(gpu), version, heads=True)
            if f.severity == "error"}


@pytest.mark.parametrize("gpu", ["a100_80gb", "h100"])
@pytest.mark.parametrize("version", [None, "0.10.2", "0.14.1"])
@pytest.mark.parametrize("model", ["llama", "gpt-oss"])
def test_only_one_start_up_rule_reads_the_batch_limit(tmp_path: Path, gpu: str, version: str | None,
                                                      model: str) -> None:
    config = GPT_OSS
    if model == "llama":
        config = tmp_path / "config.json"
        config.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    for extra in ARGVS:
        small, big = (_codes(config, extra, n, gpu, version) for n in (1, 4096))
        assert small ^ big <= READS_THE_LIMIT, (extra, small, big)
    # the rule the cache does re-check: a budget below the batch limit is refused at 4096, not at 1
    small, big = (_codes(config, ("--max-num-batched-tokens", "2048"), n, gpu, version) for n in (1, 4096))
    assert big - small == READS_THE_LIMIT
