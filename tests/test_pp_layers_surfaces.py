"""More pipeline stages than the model has layers: one rule (``launchcard.limits.pp_layers_refusal``), one wording
and one exit code (1, a split that fails its check) on every surface: check (a command, with the config; a plan),
memory, predict (options, a vLLM command, an SGLang command), and the plan search's rejection."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

QWEN2 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"
SAID = "pipeline parallel size 64 exceeds the 28 layers: 36 stage(s) would hold no layer"
LOAD = ("--isl", "128", "--osl", "16", "--concurrency", "1")


@pytest.mark.parametrize("args", [
    ("check", "--config", str(QWEN2), "--", "vllm", "serve", "q", "--pipeline-parallel-size", "64"),
    ("check", "--engine", "sglang", "--config", str(QWEN2), "--", "python3", "-m", "sglang.launch_server",
     "--model-path", "q", "--pp-size", "64"),
    ("memory", "--config", str(QWEN2), "--gpu", "h100", "--pp", "64"),
    ("predict", "--config", str(QWEN2), "--gpu", "h100", "--pp", "64", *LOAD),
    ("predict", "--config", str(QWEN2), "--gpu", "h100", "--command", "vllm serve q -pp 64", *LOAD),
    ("predict", "--config", str(QWEN2), "--gpu", "h100", "--command",
     "python3 -m sglang.launch_server --model-path q --pp-size 64", *LOAD),
])
def test_more_stages_than_layers_is_a_failed_check_on_every_surface(args: tuple[str, ...]) -> None:
    """check said `ok` of `vllm serve q -pp 64` with the config (only plans were judged), memory and predict
    refused it as bad input (exit 2): now exit 1 everywhere, with the one wording."""
    res = run_cli(*args)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    said = res.stdout if args[0] == "check" else res.stderr
    assert SAID in said and "get_pp_indices" in said, said
    if args[0] != "check":
        assert not res.stdout and len(res.stderr.strip().splitlines()) == 1, res.stderr
    fine = run_cli(*[("28" if a == "64" else a.replace("64", "28")) for a in args])
    assert fine.returncode == 0, (fine.stdout, fine.stderr)


def test_the_plan_search_rejects_the_split_with_the_same_words() -> None:
    from launchcard.memory import load_arch
    from launchcard.plansearch._candidates import layout
    from launchcard.plansearch._types import Candidate

    arch = load_arch(QWEN2)
    c = Candidate(option="default", tp=1, pp=64, dp=1, ep=False, kv_cache_dtype="auto", max_num_seqs=8)
    assert layout(c, arch) == SAID
    assert layout(Candidate(option="default", tp=1, pp=28, dp=1, ep=False, kv_cache_dtype="auto",
                             max_num_seqs=8), arch) is None
