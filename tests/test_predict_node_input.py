"""`launchcard predict`: a TP wider than the node is refused naming the option the TP came from (the one to fix):
`--tp` typed, the `--command`'s own flag, or `--gpus-per-node` against a recipe's plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
GPT_OSS = ROOT.parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
RECIPES = ROOT.parent / "shared" / "corpus" / "vllm-recipes"
LOAD = ["--isl", "128", "--osl", "16", "--concurrency", "1"]


@pytest.mark.parametrize("launch,where,flag", [
    (["--command", "vllm serve q -tp 8"], "--command", "--tensor-parallel-size 8"),
    (["--command", "python -m sglang.launch_server --model-path q --tp 8"], "--command", "--tp-size 8"),
    (["--command", "trtllm-serve q --tp_size 8"], "--command", "--tp_size 8"),
    (["--tp", "8"], "--tp", "tensor parallel size 8"),
])
def test_a_command_s_tp_wider_than_the_node_is_said_at_the_command(launch: list[str], where: str, flag: str) -> None:
    """`--command 'vllm serve q -tp 8' --gpus-per-node 4` said `--tp: ...; lower --tp`, an option not typed."""
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--gpus-per-node", "4", *launch, *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and not res.stdout, res.stdout + res.stderr
    assert line.startswith(f"launchcard: error: {where}: ") and flag in line and "4 GPUs of a node" in line, line


def test_a_recipe_s_tp_wider_than_the_node_given_names_the_node_size() -> None:
    """`predict openai/gpt-oss-120b --recipes R --hardware h100 --gpus-per-node 4`: the recipe's TP 8 was refused as
    `--tp: ...; lower --tp`; the option typed that contradicts it is --gpus-per-node."""
    res = run_cli("predict", "openai/gpt-oss-120b", "--recipes", str(RECIPES), "--config", str(GPT_OSS),
                  "--hardware", "h100", "--gpus-per-node", "4", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and not res.stdout, res.stdout + res.stderr
    assert line.startswith("launchcard: error: --gpus-per-node: ") and "tensor parallel size 8" in line, line
    assert "--tp N" in line, line  # the fix: a smaller TP on top, or the node size that holds it
