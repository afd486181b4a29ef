"""TensorRT-LLM's launch (predict._trtllm): a trtllm-serve command read as its options set it (commands/serve.py at
NVIDIA/TensorRT-LLM 00209af1), the KV pool as a share of the memory left free (pyexecutor/_util.py KvCacheCreator),
chunked prefill only where the launch turns it on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, TrtllmLaunch, facts_from_memory_plan, read_serve_command
from launchcard.predict._engine_rules import CUDA_CONTEXT_GIB

ARCH = arch_from_config(dict(LLAMA8B))
QWEN32 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-32B_config.json"


def test_a_served_command_sets_the_plan_and_the_launch() -> None:
    over, launch = read_serve_command(["trtllm-serve", "Qwen/Qwen3-32B-FP8", "--max_seq_len=40960",
                                       "--enable_chunked_prefill"])
    assert over == {"max_model_len": 40960}
    assert launch.chunked_prefill and launch.kv_fraction == 0.9 and launch.options_file is None
    over, launch = read_serve_command(["export", "X=0", "trtllm-serve", "/w/DeepSeek", "--tp_size", "8", "--ep_size",
                                       "8", "--pp_size", "1", "--max_batch_size", "64", "--max_num_tokens", "4096",
                                       "--kv_cache_free_gpu_memory_fraction", "0.5", "--host", "0.0.0.0",
                                       "--trust_remote_code"])
    assert over == {"tp": 8, "pp": 1, "expert_parallel": True, "max_num_seqs": 64, "max_num_batched_tokens": 4096}
    assert launch.kv_fraction == 0.5 and not launch.chunked_prefill


def test_a_bare_command_takes_trtllm_serves_defaults() -> None:
    """serve.py at 00209af1: --kv_cache_free_gpu_memory_fraction 0.9 (L497-503), --enable_chunked_prefill off
    (L575-579), --backend pytorch (L412-419), BuildConfig's batch and token limits (L440-452): none is a plan
    setting the command states."""
    from launchcard.predict._engine_rules import TRTLLM_KV_FRACTION, TRTLLM_MAX_BATCH, TRTLLM_MAX_NUM_TOKENS

    over, launch = read_serve_command(["trtllm-serve", "m"])
    assert over == {} and launch.kv_fraction == TRTLLM_KV_FRACTION == 0.9
    assert not launch.chunked_prefill and launch.backend == "pytorch" and launch.no_evict
    assert (TRTLLM_MAX_BATCH, TRTLLM_MAX_NUM_TOKENS) == (2048, 8192)


def test_an_options_file_is_named_not_read() -> None:
    _, launch = read_serve_command(["trtllm-serve", "m", "--extra_llm_api_options", "cfg.yml"])
    assert launch.options_file == "cfg.yml"
    assert [f.code for f in launch.findings] == ["trtllm-options-file"] and launch.findings[0].severity == "assumed"


@pytest.mark.parametrize(("words", "said"), [
    (["--max_batch_sizes", "8"], "no option --max_batch_sizes"),
    (["--tp_size", "8", "--ep_size", "4"], "--ep_size 4 with --tp_size 8"),
    (["--kv_cache_free_gpu_memory_fraction", "1.5"], "(0, 1] (1.5)"),
    (["--kv_cache_free_gpu_memory_fraction", "most"], "takes a fraction"),
    (["--backend", "tensorrt"], "--backend tensorrt"),
    (["--tp_size"], "--tp_size needs a value"),
    (["--tp_size", "two"], "positive integer ('two')"),
    (["--max_beam_width", "4"], "--max_beam_width above 1"),
])
def test_what_the_reader_cannot_model_is_refused_in_one_line(words: list[str], said: str) -> None:
    with pytest.raises(InputError) as exc:
        read_serve_command(["trtllm-serve", "m", *words])
    line = exc.value.one_line()
    assert said in line and "\n" not in line


def _facts(launch: TrtllmLaunch | None, engine: str = "trtllm", util: float | None = None) -> ServingFacts:
    s = Settings(max_model_len=16384, max_num_batched_tokens=8192, gpu_memory_utilization=util)
    acc = find("l4")  # 24 GB: Llama-3-8B's 16 GB of weights leave a pool the share decides
    return facts_from_memory_plan(ARCH, s, plan_memory(ARCH, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine, trtllm=launch)


def test_the_kv_pool_is_a_share_of_the_memory_left_free() -> None:
    s = Settings(max_model_len=16384, max_num_batched_tokens=8192)
    plan = plan_memory(ARCH, s, gpu=find("l4"))
    b = plan.breakdown
    # TensorRT-LLM reads the device's used memory (mem_get_info), so the CUDA context vLLM's baseline holds, and
    # the planner's non-torch figure leaves out, is taken from the pool too
    free = b.gpu_memory_gib - b.weights_gib - b.activation_peak_gib - b.non_torch_gib - CUDA_CONTEXT_GIB
    trt = _facts(None)
    assert trt.kv_capacity_tokens == int(0.9 * free * 2**30 / plan.kv_bytes_per_token_per_gpu)
    without = int(0.9 * (free + CUDA_CONTEXT_GIB) * 2**30 / plan.kv_bytes_per_token_per_gpu)
    assert without - trt.kv_capacity_tokens == pytest.approx(0.9 * CUDA_CONTEXT_GIB * 2**30
                                                             / plan.kv_bytes_per_token_per_gpu, abs=2)
    # vLLM's share is of the whole device: 0.9 of 24 GB less 16 GB of weights is far less than 0.9 of what is free
    assert _facts(None, engine="vllm", util=0.9).kv_capacity_tokens < 0.8 * trt.kv_capacity_tokens
    half = _facts(TrtllmLaunch(kv_fraction=0.45))
    assert half.kv_capacity_tokens == pytest.approx(trt.kv_capacity_tokens / 2, abs=2)
    note = next(f for f in trt.findings if f.code == "kv-pool")
    assert note.severity == "assumed" and "trtllm-serve's default" in note.message
    assert f"{CUDA_CONTEXT_GIB:g} GiB CUDA context" in note.message
    assert "the launch's" in next(f for f in half.findings if f.code == "kv-pool").message


def test_chunked_prefill_follows_the_launch() -> None:
    off, on = _facts(None), _facts(TrtllmLaunch(chunked_prefill=True))
    assert not off.chunked_prefill and on.chunked_prefill
    codes = {f.code: f.severity for f in on.findings}
    assert codes["chunked-prefill"] == "info"
    assert {f.code: f.severity for f in off.findings}["chunked-prefill"] == "assumed"
    assert _facts(None, engine="vllm").chunked_prefill


def test_without_chunking_a_prompt_waits_for_a_step_with_room_for_all_of_it() -> None:
    """Two waiting 6,000-token prompts, an 8,192-token budget: whole prompts (trtllm-serve's default) start one a
    step; chunked, the second starts with the 2,192 tokens left (the simulation's ``whole_up_to``)."""
    from launchcard.predict._sched import _prefill, _Scan
    from launchcard.predict._sim import _Cohort

    for whole_up_to, chunks in ((8192, [6000]), (0, [6000, 2192])):
        running: list[_Cohort] = []
        waiting = [_Cohort(1, 0.0, 6000, 0, 64), _Cohort(1, 0.0, 6000, 0, 64)]
        out, _, _ = _prefill(_Scan(running, to_end=True), running, waiting, 8192, 2048, 100_000, whole_up_to,
                             to_end=True)
        assert [c.chunk for c in out] == chunks, whole_up_to


def _cli(*extra: str) -> dict[str, object]:
    from launchcard.cli import app

    res = CliRunner().invoke(app, ["predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "2000", "--osl",
                                   "100", "--rate", "inf", "--num-requests", "50", "--json", *extra])
    assert res.exit_code == 0, res.output
    out: dict[str, object] = json.loads(res.output)
    return out


def test_a_trtllm_serve_command_predicts_as_its_options_do() -> None:
    cmd = _cli("--command", "trtllm-serve Qwen/Qwen3-32B --enable_chunked_prefill "
                            "--kv_cache_free_gpu_memory_fraction 0.8")
    opts = _cli("--engine", "trtllm", "--enable-chunked-prefill", "--kv-cache-free-gpu-memory-fraction", "0.8")
    assert cmd["engine"] == opts["engine"] == "trtllm"
    for key in ("tpot_ms_mean", "ttft_ms_mean", "output_tok_per_s"):
        assert cmd[key] == opts[key], key
    plain = _cli("--engine", "trtllm")
    assert plain["ttft_ms_mean"] != cmd["ttft_ms_mean"]


def test_trtllm_options_on_a_vllm_plan_are_bad_input() -> None:
    res = run_cli("predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "200", "--osl", "20",
                  "--enable-chunked-prefill")
    assert res.returncode == 2 and "TPOT" not in res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and "--enable-chunked-prefill" in line and "--engine trtllm" in line, line


def test_the_calibration_runs_take_their_scripts_kv_share() -> None:
    """bench/predict_accuracy.py: InferenceX's TensorRT-LLM scripts' own free_gpu_memory_fraction (their options
    files), trtllm-serve's default where a script writes none or is not InferenceX's; other engines none."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from predict_accuracy import inferencex_kv_fraction

    assert inferencex_kv_fraction("deepseek", "trtllm", "h200", "fp8", 8, 1024, 1024, 64) == 0.75
    assert inferencex_kv_fraction("deepseek", "trtllm", "b200", "fp8", 4, 8192, 1024, 16) == 0.75
    assert inferencex_kv_fraction("deepseek", "trtllm", "b200", "fp8", 8, 1024, 8192, 256) == 0.7
    assert inferencex_kv_fraction("deepseek", "trtllm", "b200", "fp8", 8, 1024, 1024, 64) == 0.8
    assert inferencex_kv_fraction("deepseek", "trtllm", "b200", "nvfp4", 4, 1024, 8192, 256) == 0.8
    assert inferencex_kv_fraction("gpt-oss", "trtllm", "h200", "nvfp4", 1, 1024, 1024, 64) == 0.85
    assert inferencex_kv_fraction("llama", "trtllm", "h200", "fp8", 1, 1024, 1024, 64) is None
    assert inferencex_kv_fraction("deepseek", "sglang", "h200", "fp8", 8, 1024, 1024, 64) is None


def test_a_trtllm_plan_does_not_state_vllms_memory_share() -> None:
    """vLLM's --gpu-memory-utilization and batching defaults are the memory planner's, not TensorRT-LLM's: its own
    KV pool, batch and token limits are stated instead."""
    from launchcard.predict import serving_facts

    def said(engine: str) -> str:
        f = serving_facts(QWEN32, Settings(max_model_len=8192), gpu="h100", engine=engine)
        return " ".join(x.message for x in f.findings)

    assert "--gpu-memory-utilization not given" in said("vllm")
    trt = said("trtllm")
    assert "--gpu-memory-utilization" not in trt and "engine defaults" not in trt
    assert "free_gpu_memory_fraction" in trt and "max_batch_size 2048" in trt


def test_its_memory_is_planned_with_a_max_num_tokens_step() -> None:
    """KvCacheCreator's dry run is dummy contexts of max_num_tokens: the planner's activations are of that step."""
    from launchcard.predict._trtllm import planned_settings

    assert planned_settings(Settings()).max_num_batched_tokens == 8192
    assert planned_settings(Settings(max_num_batched_tokens=2048)).max_num_batched_tokens == 2048


def test_a_plans_trtllm_serve_command_reads_back_as_the_plan() -> None:
    """serve_words writes the launch of a derived TensorRT-LLM plan (predict's title was its vLLM form)."""
    from launchcard.memory import Settings
    from launchcard.predict import TrtllmLaunch, read_serve_command, serve_words

    s = Settings(tp=4, pp=2, expert_parallel=True, max_num_seqs=64, max_num_batched_tokens=4096, max_model_len=9000)
    launch = TrtllmLaunch(kv_fraction=0.8, chunked_prefill=True)
    words = serve_words("org/m", s, launch)
    assert words[:2] == ["trtllm-serve", "org/m"]
    over, back = read_serve_command(words)
    assert over == {"tp": 4, "pp": 2, "expert_parallel": True, "max_num_seqs": 64, "max_num_batched_tokens": 4096,
                    "max_model_len": 9000}
    assert (back.kv_fraction, back.chunked_prefill) == (0.8, True)
    assert serve_words("org/m", Settings(), TrtllmLaunch()) == ["trtllm-serve", "org/m", "--tp_size", "1"]


@pytest.mark.parametrize(("words", "said"), [
    ([], "needs its MODEL argument"),
    (["m", "--kv_cache_free_gpu_memory_fraction=inf"], "--kv_cache_free_gpu_memory_fraction must be in (0, 1] (inf)"),
    (["m", "--free_gpu_memory_fraction", "nan"], "--free_gpu_memory_fraction must be in (0, 1] (nan)"),
])
def test_a_command_without_a_model_or_with_a_bad_fraction_names_the_command(words: list[str], said: str) -> None:
    """`trtllm-serve` alone was predicted (trtllm-serve's MODEL is required); a fraction of inf was refused without
    saying it was the command's."""
    with pytest.raises(InputError) as exc:
        read_serve_command(["trtllm-serve", *words])
    assert exc.value.where == "--command" and said in exc.value.one_line()


def test_vllms_memory_share_on_a_trtllm_plan_is_bad_input() -> None:
    """--engine trtllm --gpu-memory-utilization 0.5 was taken: it changed no figure (the KV pool is
    free_gpu_memory_fraction of the memory left free) or, lower, refused the plan with vLLM's start-up check."""
    res = run_cli("predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "200", "--osl", "20", "--engine",
                  "trtllm", "--gpu-memory-utilization", "0.5")
    assert res.returncode == 2 and "TPOT" not in res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --gpu-memory-utilization") and \
        "--kv-cache-free-gpu-memory-fraction" in line, line


@pytest.mark.parametrize(("extra", "said"), [
    (["--kv-cache-dtype", "fp8"], "kv_cache_config: {dtype: ...}"),
    (["--enforce-eager"], "cuda_graph_config: null"),
    (["--dp", "2"], "leave it out"),
])
def test_options_a_trtllm_serve_command_cannot_state_are_bad_input(extra: list[str], said: str) -> None:
    """A trtllm-serve --command took --kv-cache-dtype, --enforce-eager or --dp on top silently: they changed the
    figures of a launch trtllm-serve has no option to state (SGLang's command refuses its equivalents)."""
    res = run_cli("predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "200", "--osl", "20", "--command",
                  "trtllm-serve Qwen/Qwen3-32B", *extra)
    assert res.returncode == 2 and "TPOT" not in res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith(f"launchcard: error: {extra[0]}") and said in line, line


def test_the_cuda_context_is_the_recorded_measurement() -> None:
    """CUDA_CONTEXT_GIB is the median of the fresh processes bench/gpu_cuda_context.py recorded on the lent H200
    (bench/data/gpu_cuda_context_h200.json), to the MiB: the constant and the data it came from cannot drift."""
    import json
    import statistics

    doc = json.loads((Path(__file__).resolve().parents[1] / "bench" / "data" / "gpu_cuda_context_h200.json")
                     .read_text(encoding="utf-8"))
    measured = statistics.median(r["context_bytes"] for r in doc["each"]) / 2**30
    assert len(doc["each"]) == doc["runs"] and doc["context_gib"] == round(measured, 3)
    assert abs(CUDA_CONTEXT_GIB - measured) <= 2**-10


@pytest.mark.parametrize(("words", "isl", "said"), [
    (["--command", "trtllm-serve Qwen/Qwen3-8B --max_seq_len 2048"], "4000", "trtllm-serve's --max_seq_len 2048"),
    (["--engine", "trtllm", "--max-model-len", "2048"], "4000", "trtllm-serve's --max_seq_len 2048"),
    (["--engine", "trtllm"], "60000", "40960"),
])
def test_a_workload_longer_than_a_trtllm_plans_context_is_said_in_trtllm_serves_terms(words: list[str], isl: str,
                                                                                      said: str) -> None:
    """A TensorRT-LLM plan's context refusal named vLLM's --max-model-len and VLLM_ALLOW_LONG_MAX_MODEL_LEN: it names
    trtllm-serve's --max_seq_len (or the options file's max_seq_len) now."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", *words, "--isl", isl, "--osl", "100",
                  "--concurrency", "2")
    assert res.returncode == 2 and "TPOT" not in res.stdout, res.stdout[:200]
    line = res.stderr.strip()
    assert "\n" not in line and said in line and "max_seq_len" in line, line
    assert "--max-model-len" not in line and "VLLM_" not in line and "vLLM" not in line, line


def test_sliding_window_layers_pool_every_token_without_max_attention_window() -> None:
    """trtllm-serve gives no kv_cache_config.max_attention_window, so the KVCacheManager sizes one window,
    max_seq_len, for every layer (resource_manager.py KVCacheManager.__init__): gpt-oss's sliding layers take as
    many bytes a token in the pool as its full ones, where vLLM's hybrid manager pools one layer group's page."""
    from launchcard.memory import kv_read_split

    cfg = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "openai--gpt-oss-20b_config.json"
    arch = arch_from_config(json.loads(cfg.read_text()))
    s = Settings(max_model_len=32768, max_num_batched_tokens=8192)
    acc = find("h100")
    plan = plan_memory(arch, s, gpu=acc)
    full, sliding, window = kv_read_split(arch, s)
    assert sliding > 0 and window > 0 and full + sliding > plan.kv_bytes_per_token_per_gpu
    b = plan.breakdown
    free = b.gpu_memory_gib - b.weights_gib - b.activation_peak_gib - b.non_torch_gib - CUDA_CONTEXT_GIB
    trt = facts_from_memory_plan(arch, s, plan, HardwareFigures.from_accelerator(acc), engine="trtllm")
    assert trt.kv_capacity_tokens == int(0.9 * free * 2**30 / (full + sliding))
    note = next(f for f in trt.findings if f.code == "kv-pool")
    assert f"{full + sliding:,.0f} B a token, every layer's KV at full length" in note.message
    # a model without sliding layers keeps the planner's figure and says nothing of windows
    plain = _facts(None)
    assert "every layer's KV" not in next(f for f in plain.findings if f.code == "kv-pool").message


@pytest.mark.parametrize(("option", "said"), [(("--kv-cache-dtype", "fp8"), "kv_cache_config: {dtype: ...}"),
                                              (("--quantization", "fp8"), "leave it out"),
                                              (("--enforce-eager",), "cuda_graph_config: null"),
                                              (("--no-deep-gemm",), "--no-deep-gemm has no trtllm-serve option")])
def test_options_trtllm_serve_cannot_state_are_refused_with_or_without_a_command(option: tuple[str, ...],
                                                                                 said: str) -> None:
    """trtllm-serve (serve.py at 00209af1) has no KV dtype, quantization or eager option: refused on a
    trtllm-serve --command, and they were taken (and timed) on --engine trtllm without one; the same line now."""
    base = ["predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "200", "--osl", "20", "--concurrency", "2"]
    bare = run_cli(*base, "--engine", "trtllm", *option)
    cmd = run_cli(*base, "--command", "trtllm-serve Qwen/Qwen3-32B --tp_size 2", *option)
    assert bare.returncode == cmd.returncode == 2 and bare.stdout == cmd.stdout == ""
    assert bare.stderr == cmd.stderr and "has no trtllm-serve option" in bare.stderr and said in bare.stderr
