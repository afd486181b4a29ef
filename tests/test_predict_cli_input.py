"""`launchcard predict` on input a demanding user gets wrong: one line naming the option, exit 2, no prediction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from config_support import LLAMA8B
from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
BASE = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "256", "--osl", "32",
        "--concurrency", "2"]


def test_an_unreadable_engine_version_names_the_option_typed() -> None:
    res = run_cli(*BASE, "--engine-version", "banana")
    assert res.returncode == 2
    assert res.stderr.startswith("launchcard: error: --engine-version") and "--vllm-version" not in res.stderr


def test_one_gpu_is_not_plural() -> None:
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h200", "--isl", "256", "--osl", "32",
                  "--concurrency", "2")
    assert res.returncode == 0, res.stderr
    assert "(1 GPU)" in res.stdout and "(1 GPUs)" not in res.stdout


def test_replicas_no_client_reaches_add_no_throughput() -> None:
    """16 clients keep at most 16 data-parallel replicas busy: 64 replicas serve what 16 do (it was 4x, as if
    every replica had clients of its own), per GPU a quarter, and the idle ones are named."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"

    def run(dp: int) -> dict[str, Any]:
        res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--dp", str(dp), "--concurrency", "16",
                      "--json")
        assert res.returncode == 0, res.stderr
        out: dict[str, Any] = json.loads(res.stdout)
        return out

    sixteen, sixty_four = run(16), run(64)
    assert sixty_four["output_tok_per_s"] == pytest.approx(sixteen["output_tok_per_s"])
    # --json rounds to 3 places
    assert sixty_four["output_tok_per_s_per_gpu"] == pytest.approx(sixteen["output_tok_per_s_per_gpu"] / 4, abs=1e-3)
    assert sixty_four["request_per_s"] == pytest.approx(sixteen["request_per_s"])
    assert any(f["code"] == "idle-replicas" and "48" in f["message"] for f in sixty_four["findings"])
    assert not any(f["code"] == "idle-replicas" for f in sixteen["findings"])


def test_a_closed_loop_of_fewer_requests_than_clients_keeps_only_that_many_busy() -> None:
    """`--concurrency 16 --num-requests 2`: vllm bench serve sends the 2 prompts and no more (its semaphore of 16
    never waits), so 2 of 4 data-parallel replicas serve them; predict timed 4 replicas with a request each (600
    tok/s, twice what 2 requests can make) and named no idle replica, and said "16 clients start together"."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"

    def run(dp: int, *load: str) -> dict[str, Any]:
        res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--dp", str(dp), "--isl", "1024", "--osl",
                      "256", *load, "--json")
        assert res.returncode == 0, res.stderr
        out: dict[str, Any] = json.loads(res.stdout)
        return out

    four = run(4, "--concurrency", "16", "--num-requests", "2")
    two = run(2, "--concurrency", "2", "--num-requests", "2")
    assert four["output_tok_per_s"] == pytest.approx(two["output_tok_per_s"])
    assert four["output_tok_per_s_per_gpu"] == pytest.approx(two["output_tok_per_s_per_gpu"] / 2, abs=1e-3)
    assert any(f["code"] == "idle-replicas" and "only 2 of the 4" in f["message"] for f in four["findings"])
    one = run(1, "--concurrency", "16", "--num-requests", "4")
    assert not any("16 clients" in f["message"] for f in one["findings"]), one["findings"]
    assert any(f["code"] == "opening-burst" and f["message"].startswith("4 clients") for f in one["findings"])


def test_one_output_token_has_no_tpot_rather_than_zero(tmp_path: Path) -> None:
    """--osl 1: no request has a second token, so TPOT, ITL and tokens/s per user do not exist: text says so, JSON
    holds null (they were 0.0, read as an infinitely fast decode), and a plan search or sweep row says so too."""
    args = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "64", "--osl", "1",
            "--concurrency", "2"]
    text, js = run_cli(*args), run_cli(*args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    out = json.loads(js.stdout)
    assert out["tpot_ms_mean"] is None and out["itl_ms_mean"] is None and out["output_tok_per_s_per_user"] is None
    assert out["ttft_ms_mean"] > 0 and out["output_tok_per_s"] > 0
    assert "no request has a second output token" in text.stdout and "0.000 ms" not in text.stdout
    assert "tok/s per user" not in text.stdout
    plan = run_cli("plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
                   "--slo", "ttft=5000", "--isl", "64", "--osl", "1", "--concurrency", "2", "--max-num-seqs", "8")
    assert plan.returncode == 0, plan.stderr
    assert "no TPOT" in plan.stdout and "TPOT 0.00" not in plan.stdout and "0.0 tok/s/user" not in plan.stdout
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"models:\n  - {{id: openai/gpt-oss-120b, config: {GPT_OSS}}}\n"
                     "gpus:\n  - {gpu: h100, count: 2}\n"
                     "workloads:\n  - {name: one, isl: 64, osl: 1, concurrency: 2, slo: \"ttft=5000\"}\n"
                     "max_num_seqs: [8]\n")
    sweep = run_cli("sweep", str(fleet), "--workers", "1")
    assert sweep.returncode == 0, sweep.stderr
    assert "no TPOT" in sweep.stdout and "TPOT 0.00" not in sweep.stdout


def test_a_sweep_row_where_no_plan_fits_says_so_not_an_slo_miss(tmp_path: Path) -> None:
    """Kimi-K2.5 (~550 GiB of weights) on 2 H100s: no plan is ever predicted, so the row is "no plan can run" with
    the reasons counted (it said "no plan meets the SLO", as if some plan had been too slow)."""
    kimi = SHARED / "corpus" / "hf" / "moonshotai" / "Kimi-K2.5" / "config.json"
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"models:\n  - {{id: moonshotai/Kimi-K2.5, config: {kimi}}}\n"
                     "gpus:\n  - {gpu: h100, count: 2}\n"
                     "workloads:\n  - {name: chat, isl: 1024, osl: 256, concurrency: 16, slo: \"ttft=2000\"}\n"
                     "max_num_seqs: [16]\n")
    text, js = run_cli("sweep", str(fleet), "--workers", "1"), run_cli("sweep", str(fleet), "--workers", "1", "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr
    row = json.loads(js.stdout)["rows"][0]
    assert row["status"] == "no plan can run" and row["winner"] is None and row["closest"] is None
    assert "no plan can run" in text.stdout and "rejected by memory" in text.stdout
    assert "meets the SLO" not in text.stdout.splitlines()[-1]


def test_a_loose_config_file_is_not_named_after_its_folder() -> None:
    """--config fixtures/predict_heldout_configs/Qwen--Qwen3-8B_config.json was called "predict_heldout_configs" in
    --json; a checkpoint's own config.json keeps its folder's name."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--isl", "64", "--osl", "8", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["model"] == str(qwen)
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "64", "--osl", "8",
                  "--json")
    assert json.loads(res.stdout)["model"] == "gpt-oss-120b"


def test_an_uncaptured_release_is_not_said_to_have_a_captured_spec() -> None:
    """vLLM 9.9.9 (no captured parser spec): the memory-share default is the captured releases' rule, said so (it
    claimed "the default of vLLM 9.9 (captured parser spec)")."""
    res = run_cli(*BASE, "--engine-version", "9.9.9")
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if "--gpu-memory-utilization not given" in x)
    assert "no captured parser spec of 9.9" in line and "(captured parser spec)" not in line
    ok = run_cli(*BASE, "--engine-version", "0.32.0")
    assert "0.32 (captured parser spec)" in ok.stdout


def test_sparse_arrivals_are_not_called_streaming_bound() -> None:
    """Poisson arrivals far apart: the engine idles between requests, and that idle time is no streaming-stage
    latency (the prefill phase was "streaming 100%" at --rate 0.1 while its ~30 ms TTFT is prefill compute)."""
    res = run_cli(*BASE[:-2], "--rate", "0.1", "--num-requests", "8", "--json")
    assert res.returncode == 0, res.stderr
    prefill = json.loads(res.stdout)["bound"]["prefill"]
    assert prefill["bound"] != "streaming" and prefill["shares"]["streaming"] < 0.1, prefill


def test_a_quantization_method_vllm_does_not_have_is_bad_input(tmp_path: Path) -> None:
    """quantization_config.quant_method 'weird': vLLM refuses the checkpoint; its weights were sized as a guessed
    4-bit scheme and predicted (an '8' in the name made it 8-bit)."""
    cfg = json.loads((Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
                      / "Qwen--Qwen3-8B_config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "weird", "bits": 4}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    for cmd in ("predict", "memory"):
        res = run_cli(cmd, "--config", str(path), "--gpu", "h100")
        assert res.returncode == 2, res.stdout
        line = res.stderr.strip()
        assert "\n" not in line and str(path) in line and "'weird'" in line and "vLLM" in line


def test_a_load_not_given_is_said_as_an_assumption() -> None:
    """No --concurrency and no --rate: predict ran one client in a closed loop and said nothing of it (plan and
    sweep refuse such a workload); the figure rests on that load, so it is an `assumed` finding, text and JSON."""
    args = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "256", "--osl", "32"]
    res = run_cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    said = [f for f in out["findings"] if f["code"] == "arrivals"]
    assert out["workload"]["concurrency"] == 1 and len(said) == 1, out["findings"]
    assert said[0]["severity"] == "assumed" and "--concurrency" in said[0]["message"]
    assert said[0]["message"] in run_cli(*args).stdout
    given = json.loads(run_cli(*args, "--concurrency", "1", "--json").stdout)
    assert not [f for f in given["findings"] if f["code"] == "arrivals"]


def test_a_prefill_decode_plan_is_not_predicted_as_one_server() -> None:
    """A pd_cluster plan was predicted as its first command (the prefill pool's kv_producer server) on its own:
    a TPOT and a throughput of 4 GPUs for a plan of two pools; the web's prediction panel refuses it. Both say
    the same one line now (launchcard.predict.served_command)."""
    from launchcard.errors import InputError
    from launchcard.predict import served_command
    from launchcard.resolve import resolve
    from launchcard.sources.vllm_recipes import load_recipes
    from launchcard.web._predicted import plan_prediction

    recipes = SHARED / "corpus" / "vllm-recipes"
    cfg = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
    cfg = cfg / "MiniMaxAI--MiniMax-M2.5_config.json"
    res = run_cli("predict", "MiniMaxAI/MiniMax-M2.5", "--recipes", str(recipes), "--config", str(cfg),
                  "--hardware", "h200", "--strategy", "pd_cluster", "--isl", "256", "--osl", "32", "--concurrency", "2")
    assert res.returncode == 2 and res.stdout == "", res.stdout[:300]
    line = res.stderr.strip()
    assert "\n" not in line and "prefill/decode" in line and "launchcard plan" in line, line
    from launchcard.resolve import Choice

    plan = resolve(load_recipes(recipes), Choice(model="MiniMaxAI/MiniMax-M2.5", hardware="h200",
                                                 strategy="pd_cluster"), provenance=False)
    with pytest.raises(InputError) as err:
        served_command(plan)
    assert err.value.one_line() in line
    web = plan_prediction(plan, cfg, {"isl": 256, "osl": 32, "concurrency": 2})
    # the web's line names the query parameter where the CLI names its flag, and is bad input (422) as exit 2 is
    assert line == "launchcard: error: " + err.value.one_line() and line.startswith("launchcard: error: --strategy: ")
    assert web["error"] == "strategy: " + line.removeprefix("launchcard: error: --strategy: ")
    assert web["status"] == 422 and "tpot_ms_mean" not in web


@pytest.mark.parametrize(("command", "option", "value"), [
    ("predict", "--rate", "1e400"), ("predict", "--request-rate", "nan"), ("predict", "--prefix-hit", "1e400"),
    ("predict", "--random-range-ratio", "inf"), ("predict", "--acceptance", "nan"),
    ("predict", "--gpu-memory-utilization", "1e400"), ("predict", "--cpu-kvcache-space-gib", "inf"),
    ("predict", "--kv-cache-free-gpu-memory-fraction", "nan"),
    ("plan", "--rate", "1e400"), ("plan", "--prefix-hit", "nan"),
])
def test_a_number_option_that_is_not_finite_is_refused_in_one_line(command: str, option: str, value: str) -> None:
    """--rate 1e400 was read as infinity and ran as a burst (float('1e400') is inf); --cpu-kvcache-space-gib inf
    was taken. Only --rate takes infinity, and only as the word inf."""
    args = [*BASE, "--rate", "4"] if command == "predict" else [
        "plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
        "--slo", "ttft=2000", "--isl", "256", "--osl", "32", "--rate", "4"]
    res = run_cli(*args, option, value)
    assert res.returncode == 2, res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --") and repr(value) in line, line
    assert "TPOT" not in res.stdout


def test_rate_inf_said_as_a_word_is_still_a_burst() -> None:
    args = BASE[:-2]  # no --concurrency
    res = run_cli(*args, "--rate", "inf", "--num-requests", "8", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["workload"]["arrivals"] == "all at once"


@pytest.mark.parametrize("nested", [False, True])
def test_an_unknown_modelopt_quant_algo_is_refused_not_predicted(tmp_path: Path, nested: bool) -> None:
    """A ModelOpt checkpoint whose quant_algo vLLM does not read (it refuses the checkpoint at start) was predicted
    as FP8 weights with a note: it is bad input now, one line naming the file, the key, the value and the values
    vLLM reads."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    cfg = json.loads(qwen.read_text(encoding="utf-8"))
    algo = {"quant_algo": "W4A8_AWQ"}
    cfg["quantization_config"] = {"quant_method": "modelopt", **({"quantization": algo} if nested else algo)}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    res = run_cli("predict", "--config", str(path), "--gpu", "h100", "--isl", "256", "--osl", "32",
                  "--concurrency", "2")
    assert res.returncode == 2 and "TPOT" not in res.stdout, res.stdout[:200]
    line = res.stderr.strip()
    assert "\n" not in line and str(path) in line and "quant_algo" in line and "'W4A8_AWQ'" in line, line
    assert "NVFP4" in line and "FP8_PB_WO" in line and "MIXED_PRECISION" in line, line
    # TensorRT-LLM reads W4A8_AWQ: for its plans the line says what launchcard cannot size, not that the engine
    # refuses the checkpoint
    trt = run_cli("predict", "--config", str(path), "--gpu", "h100", "--isl", "256", "--osl", "32",
                  "--concurrency", "2", "--engine", "trtllm")
    assert trt.returncode == 2 and "cannot size" in trt.stderr and "refuses the checkpoint" not in trt.stderr
    cfg["quantization_config"] = {"quant_method": "modelopt", "quant_algo": "FP8"}
    path.write_text(json.dumps(cfg), encoding="utf-8")
    ok = run_cli("predict", "--config", str(path), "--gpu", "h100", "--isl", "256", "--osl", "32", "--concurrency", "2")
    assert ok.returncode == 0, ok.stderr


def test_the_precision_assumption_names_a_way_predict_takes() -> None:
    """The finding said "pass --dtype", an option predict and plan do not have (click: No such option); the way
    is the served command's --dtype, which drops the assumption."""
    said = run_cli(*BASE, "--json")
    assert said.returncode == 0, said.stderr
    msg = next(f["message"] for f in json.loads(said.stdout)["findings"] if f["message"].startswith("precision:"))
    assert "pass --dtype" not in msg and "predict --command" in msg
    assert run_cli(*BASE, "--dtype", "bfloat16").returncode == 2
    cmd = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--command",
                  "vllm serve openai/gpt-oss-120b --tensor-parallel-size 2 --dtype bfloat16", "--isl", "256",
                  "--osl", "32", "--concurrency", "2", "--json")
    assert cmd.returncode == 0, cmd.stderr
    assert not any(f["message"].startswith("precision:") for f in json.loads(cmd.stdout)["findings"])


QWEN2 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"
LOAD = ["--isl", "128", "--osl", "16", "--concurrency", "1"]


@pytest.mark.parametrize("args", [
    ["predict", "--config", str(QWEN2), "--gpu", "h100", *LOAD],
    ["predict", "--config", str(QWEN2), "--gpu", "h100", "--command", "vllm serve q --max-num-seqs 8", *LOAD],
    ["plan", "Qwen/Qwen2-7B-Instruct", "--config", str(QWEN2), "--gpu", "h100", "--gpus", "1", "--slo", "tpot=50",
     *LOAD],
])
@pytest.mark.parametrize("release", ["0.1", "v0.7.3"])
def test_a_vllm_release_before_v1_is_refused_naming_the_oldest_timed(args: list[str], release: str) -> None:
    """`--engine-version 0.1` was timed with V1's scheduler (exit 0, only a calibration-domain note): a release
    before 0.8.0 (V0 the default) is bad input naming the oldest release predict times."""
    res = run_cli(*args, "--engine-version", release)
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and "\n" not in line, (res.returncode, res.stdout, line)
    assert line.startswith("launchcard: error: --engine-version: ") and "0.8.0" in line and "V0" in line, line
    ok = run_cli(*args, "--engine-version", "0.8.0")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(("engine", "command", "old", "floor", "ok"), [
    ("sglang", "python3 -m sglang.launch_server --model-path openai/gpt-oss-120b --tp-size 2", "0.4.6.post1", "0.5.3",
     "0.5.3rc0"),
    ("trtllm", "trtllm-serve openai/gpt-oss-120b --tp_size 2", "0.21.0", "1.0.0", "1.0.0"),
])
def test_an_sglang_or_trtllm_release_before_the_oldest_read_is_refused(engine: str, command: str, old: str,
                                                                       floor: str, ok: str) -> None:
    """SGLang 0.4.6 and TensorRT-LLM 0.21 were timed silently with the oldest read release's rules: a release
    before the floor (``predict._engine_rules.RELEASE_FLOORS``) is bad input naming the floor and the fix; a
    pre-release of the floor's line (0.5.3rc0, a held-out run's) carries its code and is timed."""
    args = ["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--isl", "256", "--osl", "32", "--concurrency",
            "2", "--command", command]
    res = run_cli(*args, "--engine-version", old)
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and "\n" not in line, (res.returncode, res.stdout, line)
    assert line.startswith("launchcard: error: --engine-version: ") and f"older than {floor}" in line, line
    assert f"pass --engine-version {floor} or later" in line, line
    good = run_cli(*args, "--engine-version", ok)
    assert good.returncode == 0, good.stderr


def test_an_sglang_plan_search_below_the_floor_is_refused() -> None:
    """`plan --engine sglang --engine-version 0.5.2` is refused as predict refuses it (one rule, one line)."""
    res = run_cli("plan", "Qwen/Qwen2-7B-Instruct", "--config", str(QWEN2), "--gpu", "h100", "--gpus", "1",
                  "--engine", "sglang", "--slo", "tpot=50", *LOAD, "--engine-version", "0.5.2")
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and "older than 0.5.3" in line, (res.returncode, line)


def test_a_token_budget_below_the_default_batch_limit_is_refused_as_vllm_does() -> None:
    """`--max-num-batched-tokens 1` without --max-num-seqs was predicted: vLLM fills max_num_seqs (1024 on an H100
    in 0.32) and then refuses a budget below it (config/scheduler.py); memory and predict now say so (exit 1)."""
    res = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", "--max-num-batched-tokens", "1", *LOAD)
    assert res.returncode == 1 and "below --max-num-seqs 1024" in res.stderr and not res.stdout, res.stderr
    mem = run_cli("memory", "--config", str(QWEN2), "--gpu", "h100", "--max-num-batched-tokens", "1")
    assert mem.returncode == 1 and "below --max-num-seqs 1024" in mem.stdout, mem.stdout
    ok = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", "--max-num-batched-tokens", "1024", *LOAD)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("command", ["predict", "memory"])
def test_a_cpu_kv_space_on_a_gpu_is_bad_input(command: str) -> None:
    """`--cpu-kvcache-space-gib 4 --gpu h100` was silently ignored (VLLM_CPU_KVCACHE_SPACE sizes the CPU backend's
    KV cache only): one line naming the option, exit 2, on predict and memory alike."""
    load = LOAD if command == "predict" else []
    res = run_cli(command, "--config", str(QWEN2), "--gpu", "h100", "--cpu-kvcache-space-gib", "4", *load)
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and line.startswith("launchcard: error: --cpu-kvcache-space-gib: ")
    assert "h100 is a GPU" in line, line


@pytest.mark.parametrize("option", [["--feature", "foo"], ["--nodes", "2"], ["--variant", "x"], ["--revision", "abc"],
                                    ["--kv-offload", "z"]])
def test_a_recipe_selector_without_a_recipe_is_bad_input(option: list[str]) -> None:
    """`predict --config C --gpu G --feature foo` (no MODEL) dropped the option and predicted the plan without it."""
    res = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", *option, *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and not res.stdout and line.startswith(f"launchcard: error: {option[0]}: "), line


def test_hardware_alone_names_the_accelerator_of_a_config_prediction() -> None:
    """`predict --config C --hardware h100` said "no hardware given; pass --gpu" to a user who gave it: without
    MODEL there is no recipe to resolve, so --hardware is the accelerator timed (as --gpu); an unknown name is
    said of --hardware, and two different accelerators are refused."""
    args = ["predict", "--config", str(GPT_OSS), "--tp", "2", "--isl", "256", "--osl", "32", "--concurrency", "2"]
    by_gpu = json.loads(run_cli(*args, "--gpu", "h100", "--json").stdout)
    res = run_cli(*args, "--hardware", "h100", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tpot_ms_mean"] == by_gpu["tpot_ms_mean"]
    bad = run_cli(*args, "--hardware", "h300")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("launchcard: error: --hardware") and not bad.stdout
    two = run_cli(*args, "--hardware", "h100", "--gpu", "b200")
    assert two.returncode == 2 and "different accelerators" in two.stderr


def test_the_prefix_hit_finding_states_the_share_given() -> None:
    """`--prefix-hit 0.999` was stated as "100% of every prompt found in the prefix cache": a share --prefix-hit
    refuses (it must be below 1), not the one simulated."""
    res = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", "--isl", "1024", "--osl", "16",
                  "--concurrency", "1", "--prefix-hit", "0.999", "--json")
    assert res.returncode == 0, res.stderr
    said = [f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "prefix-hit"]
    assert len(said) == 1 and said[0].startswith("99.9% of every prompt") and "1,022 of 1,024" in said[0], said


# bert-base-uncased's config.json (huggingface.co/google-bert/bert-base-uncased, the fields the planner reads)
BERT = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
        "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512,
        "vocab_size": 30522, "torch_dtype": "float32"}


@pytest.mark.parametrize("arch", ["BertModel", "XLMRobertaModel", "Qwen2ForRewardModel"])
def test_a_model_vllm_serves_with_its_pooling_runner_has_nothing_to_predict(tmp_path: Path, arch: str) -> None:
    """vLLM runs a class that sets is_pooling_model with its pooling runner (embeddings, scores): no generated
    token, so predict and plan refuse it in one line, exit 2 (both gave a TTFT of a few ms and a TPOT), and a
    generative class of the same shape is still predicted."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**BERT, "architectures": [arch]}), encoding="utf-8")
    work = ("--isl", "128", "--osl", "16", "--concurrency", "2")
    for res in (run_cli("predict", "--config", str(cfg), "--gpu", "h100", *work),
                run_cli("plan", "m/emb", "--config", str(cfg), "--gpu", "h100", "--gpus", "1", "--slo", "tpot=100",
                        "--no-progress", *work)):
        assert res.returncode == 2 and res.stdout == "", res.stdout
        line = res.stderr.strip()
        assert "\n" not in line and line.startswith("launchcard: error: --config: architecture " + arch), line
        assert "pooling" in line and "vllm/model_executor/models/" in line, line
    llama = tmp_path / "llama.json"
    llama.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    assert run_cli("predict", "--config", str(llama), "--gpu", "h100", *work).returncode == 0
    # memory still plans it (vLLM starts it), warning that its figures are the generate runner's: BERT's
    # encoder-only attention keeps no KV cache, where memory printed 2.1M KV tokens "as vLLM prints it"
    mem = run_cli("memory", "--config", str(cfg), "--gpu", "h100", "--json")
    assert mem.returncode == 0, mem.stderr
    warned = [w for w in json.loads(mem.stdout)["warnings"] if f"architecture {arch} is a pooling model" in w]
    assert len(warned) == 1 and "not the pooling runner's, which launchcard does not plan" in warned[0]


def test_a_gpu_without_catalog_figures_is_bad_input_before_the_engine_s_refusal() -> None:
    """gpt-oss (MXFP4) on a T4, whose catalog entry has no memory bandwidth: predict said vLLM's MXFP4 refusal
    (exit 1) first, against its rule that bad input is said first; plan refuses the GPU before its search."""
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "t4", "--tp", "1", "--gpus-per-node", "8",
                  "--isl", "128", "--osl", "16", "--concurrency", "1")
    assert res.returncode == 2 and res.stdout == "", res.stdout
    assert res.stderr.strip() == ("launchcard: error: --gpu: the hardware catalog has no memory bandwidth for t4; add "
                                  "bandwidth_tbps with its source to data/hardware.yaml, or pass --hardware-figures "
                                  "FILE (measured)")


@pytest.mark.parametrize(("lengths", "ratio", "keep"), [
    (("--dataset", "sharegpt", "--isl", "300", "--osl", "200"), "3.76x", 272),
    (("--isl", "800", "--osl", "200", "--random-range-ratio", "0.5"), "1.50x", 682),
])
def test_a_varying_workload_too_long_for_the_context_is_told_how_far_to_shorten(
        tmp_path: Path, lengths: tuple[str, ...], ratio: str, keep: int) -> None:
    """With --dataset or a range ratio the longest request is a multiple of --isl + --osl: the fix said 'shorten
    --isl/--osl to at most 1024 tokens together' to a workload of 500 (it was already); it now says the multiple
    and the sum to stay under, and a workload of that sum is predicted (plan says the same, one function)."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    base = ("--config", str(cfg), "--gpu", "h100", "--max-model-len", "1024", "--concurrency", "4")
    for res in (run_cli("predict", *base, *lengths),
                run_cli("plan", "llama", *base, *lengths, "--gpus", "1", "--slo", "tpot=500", "--no-progress")):
        assert res.returncode == 2, res.stdout
        assert (f"the longest request is {ratio} --isl + --osl" in res.stderr
                and f"keep them at most about {keep} together" in res.stderr), res.stderr
    scaled = [str(int(v) * keep // (500 if "sharegpt" in lengths else 1000)) if v.isdigit() and v not in ("0",)
              else v for v in lengths]
    assert run_cli("predict", *base, *scaled).returncode == 0


@pytest.mark.parametrize(("model", "strategy", "said"), [
    ("Qwen/Qwen-Image", None, "omni pipeline"),
    ("MiniMaxAI/MiniMax-M2.5", "pd_cluster", "prefill/decode"),
])
def test_a_plan_predict_never_times_is_refused_before_a_config_is_asked_for(model: str, strategy: str | None,
                                                                           said: str) -> None:
    """`predict Qwen/Qwen-Image --recipes R` (no config.json in the corpus) said "pass --config FILE"; given one, it
    then refused the plan as an omni pipeline: a fix that led to another refusal. A plan with no one server to
    time (predict.served_command) is refused first, by the CLI and the web's prediction panel alike (qa10's sweep
    of every recipe: 25 omni recipes asked for a config first)."""
    from launchcard.resolve import Choice, resolve
    from launchcard.sources.vllm_recipes import load_recipes
    from launchcard.web._predicted import plan_prediction

    recipes = SHARED / "corpus" / "vllm-recipes"
    pick = ["--strategy", strategy] if strategy else []
    res = run_cli("predict", model, "--recipes", str(recipes), "--hardware", "h200", *pick,
                  "--isl", "256", "--osl", "32", "--concurrency", "2")
    line = res.stderr.strip()
    assert res.returncode == 2 and res.stdout == "" and "\n" not in line, line
    assert line.startswith("launchcard: error: --strategy: ") and said in line and "--config" not in line, line
    plan = resolve(load_recipes(recipes), Choice(model=model, hardware="h200", strategy=strategy), provenance=False)
    web = plan_prediction(plan, None, {"isl": 256, "osl": 32, "concurrency": 2})
    assert web["status"] == 422 and said in web["error"] and "config.json" not in web["error"], web


def test_the_recipes_own_hardware_without_figures_is_said_of_hardware_not_gpu() -> None:
    """`predict Qwen/QwQ-32B --recipes R --config C` (a recipe that runs on xeon6 only; neither --gpu nor --hardware
    typed) said "--gpu: the hardware catalog has no memory bandwidth for xeon6": an option not typed, and not the
    one that picks a recipe's hardware. It is said of --hardware, as when --hardware xeon6 is typed, and says the
    hardware was the recipe's default (qa10's sweep of every recipe)."""
    recipes = SHARED / "corpus" / "vllm-recipes"
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-32B_config.json"
    args = ("predict", "Qwen/QwQ-32B", "--recipes", str(recipes), "--config", str(qwen),
            "--isl", "256", "--osl", "32", "--concurrency", "2")
    default, typed = run_cli(*args), run_cli(*args, "--hardware", "xeon6")
    assert default.returncode == typed.returncode == 2 and default.stdout == "", default.stdout[:300]
    line = default.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --hardware: "), line
    assert "memory bandwidth for xeon6" in line and "the recipe's default hardware" in line, line
    assert typed.stderr.strip().startswith("launchcard: error: --hardware: "), typed.stderr
