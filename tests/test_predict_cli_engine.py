"""`launchcard predict` on the engine and launch input (--engine, --command, a derived plan's launch): the command
named is the one timed, and one an engine refuses or cannot run is refused in one line, never predicted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
QWEN2 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"
LOAD = ["--isl", "128", "--osl", "16", "--concurrency", "1"]


def test_a_command_vllm_refuses_is_not_predicted() -> None:
    """`predict --command` with an option vLLM's parser does not know: vLLM exits at start, so no prediction (it
    was predicted as if the option were not there)."""
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "64", "--osl", "8",
                  "--command", "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --no-such-flag 3")
    assert res.returncode == 2 and "TPOT" not in res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --command") and "--no-such-flag" in line
    ok = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "64", "--osl", "8",
                 "--command", "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --max-num-seqs 64")
    assert ok.returncode == 0, ok.stderr


def test_a_command_vllm_refuses_to_start_is_not_predicted() -> None:
    """`predict --command 'vllm serve ... --dtype float16'` on an MXFP4 checkpoint: `launchcard check` (and the plan
    search, as `check: quant-dtype`) says vLLM refuses to start it; predict gave a TTFT of 16 ms. It is the failed
    check now (exit 1), in one line naming the rule, and no figure."""
    cmd = "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --dtype float16"
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "64", "--osl", "8",
                  "--concurrency", "2", "--command", cmd)
    assert res.returncode == 1 and res.stdout == "", res.stdout[:300]
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --command") and "[quant-dtype]" in line, line
    assert "float16" in line and "drop --dtype" in line
    ok = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "64", "--osl", "8",
                 "--concurrency", "2", "--command", cmd.replace("float16", "bfloat16"))
    assert ok.returncode == 0, ok.stderr


def test_a_derived_sglang_plan_is_predicted_as_sglang_serves_it() -> None:
    """`predict MODEL --config C --hardware h100 --engine sglang` derived a vLLM plan (`vllm serve ...`, vLLM's
    memory share and batch defaults in its findings) and timed it with SGLang's terms: a burst's TPOT was 44.0 ms
    where the SGLang plan of the same checkpoint (`predict --config C --gpu h100 --engine sglang`) gives 41.2."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    load = ["--engine", "sglang", "--isl", "8000", "--osl", "1000", "--rate", "inf", "--num-requests", "300"]
    derived = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(qwen), "--hardware", "h100", *load, "--json")
    given = run_cli("predict", "--config", str(qwen), "--gpu", "h100", *load, "--json")
    assert derived.returncode == 0 and given.returncode == 0, derived.stderr + given.stderr
    d, g = json.loads(derived.stdout), json.loads(given.stdout)
    keys = ("ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s", "max_running", "preemptions")
    assert {k: d[k] for k in keys} == {k: g[k] for k in keys}
    assert not [f for f in d["findings"] if "vLLM's default" in f["message"] or "vllm serve's" in f["message"]]
    text = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(qwen), "--hardware", "h100", *load)
    assert "sglang.launch_server" in text.stdout.splitlines()[0]


def test_an_sglang_workload_longer_than_the_context_reads_the_same_everywhere() -> None:
    """A workload longer than an SGLang plan's context: `predict --engine sglang` said "more than the plan's
    40960 ... pass --context-length (at least 60256)" (SGLang refuses a context-length over the config's without
    its override), the web's panel "raise --max-model-len" (vLLM's flag), the plan search its own words. One rule,
    predict.check_context(engine="sglang"), one line."""
    from launchcard.check import derive_plan
    from launchcard.web._predicted import plan_prediction

    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    load = ["--engine", "sglang", "--isl", "60000", "--osl", "256", "--concurrency", "2"]
    lines = set()
    for plan in (["--config", str(qwen), "--gpu", "h100"], ["Qwen/Qwen3-8B", "--config", str(qwen), "--hardware",
                                                             "h100"]):
        res = run_cli("predict", *plan, *load)
        assert res.returncode == 2 and res.stdout == "", res.stdout[:200]
        lines.add(res.stderr.strip())
    web = plan_prediction(derive_plan("Qwen/Qwen3-8B", qwen, "h100", engine="sglang"), qwen,
                          {"isl": 60000, "osl": 256, "concurrency": 2})
    assert len(lines) == 1, lines
    line = lines.pop()
    assert web["error"] is not None and web["error"] in line, (web["error"], line)
    assert "SGLang" in line and "--max-model-len" not in line.split(";")[0] and "60256" in line


@pytest.mark.parametrize(("engine", "launcher"), [("trtllm", "trtllm-serve"), ("sglang", "sglang.launch_server"),
                                                  ("vllm", "vllm serve")])
def test_a_derived_plan_is_titled_with_its_engines_own_launch(engine: str, launcher: str) -> None:
    """`predict MODEL --config C --hardware h100 --engine trtllm` was titled `vllm serve ...` (the vLLM form its
    options are read from); text and JSON now give the command that engine is started with."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    args = ["predict", "Qwen/Qwen3-8B", "--config", str(qwen), "--hardware", "h100", "--engine", engine,
            "--isl", "256", "--osl", "32", "--concurrency", "2"]
    text, js = run_cli(*args), run_cli(*args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    assert launcher in text.stdout.splitlines()[0], text.stdout.splitlines()[0]
    command = json.loads(js.stdout)["command"]
    assert launcher in " ".join(command) and " ".join(command) in text.stdout.splitlines()[0]


@pytest.mark.parametrize(("engine", "flag"), [("trtllm", "--max_batch_size 7"), ("sglang", "--max-running-requests 7"),
                                              ("vllm", "--max-num-seqs 7")])
def test_the_launch_named_carries_the_options_given_on_top(engine: str, flag: str) -> None:
    """`predict MODEL --engine vllm|sglang --max-num-seqs 7` predicted 7 sequences but named the derived command
    without it (trtllm's named it): the command in text and JSON is the launch the figures time."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    args = ["predict", "Qwen/Qwen3-8B", "--config", str(qwen), "--hardware", "h100", "--engine", engine,
            "--isl", "256", "--osl", "32", "--concurrency", "2", "--max-num-seqs", "7"]
    text, js = run_cli(*args), run_cli(*args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    command = " ".join(json.loads(js.stdout)["command"])
    assert command.endswith(flag) and command in text.stdout.splitlines()[0], (command, text.stdout[:300])


@pytest.mark.parametrize(("command", "flag"), [
    ("vllm serve Qwen/Qwen3-8B", "--max-num-seqs 7"),
    ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B", "--max-running-requests 7"),
    ("trtllm-serve Qwen/Qwen3-8B", "--max_batch_size 7 --kv_cache_free_gpu_memory_fraction 0.5"),
    ("trtllm-serve Qwen/Qwen3-8B --tp_size 2", "--max_batch_size 7 --ep_size 2 --kv_cache_free_gpu_memory_fraction "
                                               "0.5")])
def test_a_command_given_is_named_with_the_options_given_on_top(command: str, flag: str) -> None:
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    extra = ["--kv-cache-free-gpu-memory-fraction", "0.5"] if command.startswith("trtllm") else []
    extra += ["--ep"] if "--tp_size 2" in command else []  # the expert-parallel group is the command's TP group
    args = ["predict", "--config", str(qwen), "--gpu", "h100", "--command", command, "--max-num-seqs", "7", *extra,
            "--isl", "256", "--osl", "32", "--concurrency", "2"]
    text, js = run_cli(*args), run_cli(*args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    assert " ".join(json.loads(js.stdout)["command"]) == f"{command} {flag}" == text.stdout.splitlines()[0]


@pytest.mark.parametrize(("command", "engine"), [
    ("vllm serve Qwen/Qwen3-8B", "trtllm"), ("vllm serve Qwen/Qwen3-8B", "sglang"),
    ("trtllm-serve Qwen/Qwen3-8B", "sglang"), ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B", "trtllm")])
def test_an_engine_other_than_the_commands_is_bad_input(command: str, engine: str) -> None:
    """`--command 'vllm serve ...' --engine trtllm` timed the vLLM command with TensorRT-LLM's rules and named it
    `vllm serve` (--engine sglang: SGLang's terms), where the launcher says which engine runs."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--command", command, "--engine", engine,
                  "--isl", "256", "--osl", "32", "--concurrency", "2")
    assert res.returncode == 2 and "TPOT" not in res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith(f"launchcard: error: --engine: --engine {engine} with a"), line


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_verdict_judges_the_plan_with_the_options_given_on_top(engine: str) -> None:
    """`predict MODEL --hardware h100 --tp 2` predicted 2 GPUs while its verdict judged the plan without --tp 2
    ("uses 1 of the 8 GPUs of a h100 node"): the verdict is of the launch predicted."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(qwen), "--hardware", "h100", "--engine", engine,
                  "--tp", "2", "--isl", "256", "--osl", "32", "--concurrency", "2", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    idle = [f["message"] for f in out["verdict"]["findings"] if f["code"] == "idle-gpus"]
    assert out["gpus"] == 2 and idle and "uses 2 of the 8 GPUs" in idle[0], idle


@pytest.mark.parametrize("gpu", ["mi300x", "gaudi3", "tpu_v5e"])
@pytest.mark.parametrize("launch", [["--engine", "trtllm"], ["--command", "trtllm-serve Qwen/Qwen2-7B --tp_size 1"]])
def test_tensorrt_llm_on_an_accelerator_it_does_not_run_on_is_bad_input(gpu: str, launch: list[str]) -> None:
    """`predict --engine trtllm --gpu mi300x` printed TTFT/TPOT (an `assumed` finding that the set was calibrated on
    NVIDIA only): trtllm-serve runs on NVIDIA GPUs alone (NVIDIA/TensorRT-LLM docs/source/supported-hardware.md),
    so no figure is timed; an NVIDIA GPU still is."""
    res = run_cli("predict", "--config", str(QWEN2), "--gpu", gpu, *launch, *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line, res.stdout + res.stderr
    assert line.startswith("launchcard: error: --gpu") and "NVIDIA GPUs only" in line and gpu in line, line
    assert "TPOT" not in res.stdout
    ok = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", *launch, *LOAD)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("form", [["Qwen/Qwen2-7B"], []])
def test_tensorrt_llm_on_another_vendors_accelerator_is_said_of_the_option_typed(form: list[str]) -> None:
    """`predict MODEL --hardware mi300x --engine trtllm` was told `--gpu: TensorRT-LLM runs on NVIDIA GPUs only ...
    pass an NVIDIA --gpu`, an option it did not type: the option that named the accelerator is named."""
    res = run_cli("predict", *form, "--config", str(QWEN2), "--hardware", "mi300x", "--engine", "trtllm", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and not res.stdout, res.stdout + res.stderr
    assert line.startswith("launchcard: error: --hardware: TensorRT-LLM runs on NVIDIA GPUs only"), line
    assert "--gpu" not in line and line.endswith("pass an NVIDIA GPU to --hardware"), line
