"""`predict MODEL --recipes DIR --gpu G` resolves the recipe on G, as `plan MODEL --gpu G` does: the recipe left at
its default hardware (gpt-oss-120b: TP 1 on an H200) and timed on G gave a verdict about one GPU (the H200's memory,
its idle GPUs) beside the figures of another, and the text title named the profile while --json named G.  --gpu
and --hardware naming two accelerators is bad input; an error about the hardware names the option typed."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli

RECIPES = str(Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "vllm-recipes")
MODEL = "openai/gpt-oss-120b"
LOAD = ("--isl", "1024", "--osl", "128", "--concurrency", "4")


def test_the_recipe_is_resolved_on_the_gpu_predicted() -> None:
    by_gpu = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "b200", *LOAD, "--json")
    by_hw = run_cli("predict", MODEL, "--recipes", RECIPES, "--hardware", "b200", *LOAD, "--json")
    assert by_gpu.returncode == 0 == by_hw.returncode, by_gpu.stderr
    a, b = json.loads(by_gpu.stdout), json.loads(by_hw.stdout)
    assert a["hardware"] == "b200" and a["command"] == b["command"] and a["tpot_ms_mean"] == b["tpot_ms_mean"]
    messages = " ".join(f["message"] for f in a["verdict"]["findings"])
    assert "h200" not in messages and "b200" in messages
    text = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "b200", *LOAD)
    assert text.stdout.startswith(f"{MODEL} on b200:")


def test_gpu_and_hardware_naming_two_accelerators_is_refused() -> None:
    out = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "b200", "--hardware", "h100", *LOAD)
    assert out.returncode == 2 and not out.stdout
    assert out.stderr.startswith("launchcard: error: --gpu:") and "different accelerators" in out.stderr
    same = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "NVIDIA H100 80GB HBM3", "--hardware", "h100",
                   *LOAD)
    assert same.returncode == 0, same.stderr


def test_a_gpu_the_recipe_has_no_settings_for_names_gpu() -> None:
    out = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "l4", *LOAD)
    assert out.returncode == 2 and out.stderr.startswith("launchcard: error: --gpu:"), out.stderr


def test_an_unknown_hardware_beside_gpu_names_hardware() -> None:
    """`--gpu h100 --hardware nope` said `--gpu: unknown GPU name ('nope')`: the bad value is --hardware's."""
    out = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "h100", "--hardware", "nope", *LOAD)
    assert out.returncode == 2 and out.stderr.startswith("launchcard: error: --hardware:"), out.stderr
    assert "'nope'" in out.stderr and out.stderr.count("\n") == 1


def test_a_bad_option_on_a_recipes_plan_is_bad_input_as_on_a_config() -> None:
    """`predict MODEL --gpu-memory-utilization 1.5` exited 1 (the plan's verdict read it as its command's flag)
    where `predict --config ... --gpu-memory-utilization 1.5` exits 2: the option typed is bad input on both."""
    out = run_cli("predict", MODEL, "--recipes", RECIPES, "--gpu", "h100", "--gpu-memory-utilization", "1.5", *LOAD)
    assert out.returncode == 2 and out.stderr.startswith("launchcard: error: --gpu-memory-utilization:"), out.stderr
    assert "(1.5)" in out.stderr and out.stderr.count("\n") == 1 and not out.stdout
