"""A trtllm-serve --extra_llm_api_options file (predict._trtllm_options): its keys laid over the command's options
(commands/serve.py update_llm_args_with_extra_dict at NVIDIA/TensorRT-LLM 00209af1), read where it is found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from config_support import LLAMA8B
from launchcard.errors import SourceError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, TrtllmLaunch, facts_from_memory_plan, read_serve_command
from launchcard.predict._trtllm_options import graph_batch_sizes

ARCH = arch_from_config(dict(LLAMA8B))
QWEN32 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-32B_config.json"
# InferenceX's dsr1_fp8_h200_trt.sh options file (SemiAnalysisAI/InferenceX benchmarks/ at 1fc5d73c), as it writes it
DSR1 = """cuda_graph_config:
    enable_padding: true
    max_batch_size: 128
enable_attention_dp: false
print_iter_log: true
kv_cache_config:
    dtype: fp8
    free_gpu_memory_fraction: 0.75
    enable_block_reuse: false
stream_interval: 10
moe_config:
    backend: CUTLASS
"""


def test_cuda_graph_config_generates_its_own_batch_sizes() -> None:
    """llm_args.py CudaGraphConfig._generate_cuda_graph_batch_sizes."""
    assert graph_batch_sizes(128, False) == (*range(1, 32), 32, 64, 128)
    assert graph_batch_sizes(512, True) == (1, 2, 4, *range(8, 129, 8), 256, 512)
    assert graph_batch_sizes(1024, False)[-4:] == (128, 256, 512, 1024)
    assert graph_batch_sizes(100, False)[-3:] == (32, 64, 100)
    # powers of two to ceil(log2 max) (the CudaGraphConfig versions; the pre-1.0 floor would leave 256 out)
    assert graph_batch_sizes(300, False)[-3:] == (128, 256, 300)


def _read(tmp_path: Path, text: str, *args: str) -> tuple[dict[str, object], TrtllmLaunch]:
    (tmp_path / "cfg.yml").write_text(text, encoding="utf-8")
    return read_serve_command(["trtllm-serve", "m", *args, "--extra_llm_api_options", "cfg.yml"], base_dir=tmp_path)


def test_an_options_file_found_replaces_the_commands_options(tmp_path: Path) -> None:
    over, launch = _read(tmp_path, DSR1 + "max_num_tokens: 16384\n", "--max_num_tokens", "8192",
                         "--kv_cache_free_gpu_memory_fraction", "0.9")
    assert over == {"max_num_batched_tokens": 16384, "kv_cache_dtype": "fp8"}
    assert launch.kv_fraction == 0.75 and launch.graph_padding and launch.graph_sizes == (1, 2, 4, *range(8, 129, 8))
    notes = {f.severity: f.message for f in launch.findings if f.code == "trtllm-options-file"}
    assert "cfg.yml read" in notes["info"]
    for key in ("enable_attention_dp", "stream_interval", "moe_config"):
        assert key in notes["assumed"], key
    assert "print_iter_log" not in notes["assumed"]
    # enable_block_reuse is read: the prefix cache is off (predict._prefix refuses a --prefix-hit for it)
    assert not launch.block_reuse and "enable_block_reuse" not in notes["assumed"]


def test_an_options_file_not_here_is_named(tmp_path: Path) -> None:
    _, launch = read_serve_command(["trtllm-serve", "m", "--extra_llm_api_options", "gone.yml"], base_dir=tmp_path)
    (note,) = launch.findings
    assert note.severity == "assumed" and "gone.yml is not here to read" in note.message


def _facts(launch: TrtllmLaunch, **over: object) -> ServingFacts:
    s = Settings(max_model_len=16384, max_num_batched_tokens=8192, **over)  # type: ignore[arg-type]
    acc = find("l4")
    return facts_from_memory_plan(ARCH, s, plan_memory(ARCH, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine="trtllm", trtllm=launch)


def test_what_the_file_sets_reaches_the_plan_facts(tmp_path: Path) -> None:
    base = _facts(TrtllmLaunch())
    assert base.reserve_to_end and base.graph_sizes is not None and base.cuda_graphs
    assert base.reserve_block == 32  # KvCacheConfig.tokens_per_block's default
    over, launch = _read(tmp_path, "kv_cache_config:\n  tokens_per_block: 64\n")
    assert _facts(launch, **over).reserve_block == 64
    assert "in whole blocks of 64 tokens" in next(x.message for x in _facts(launch, **over).findings
                                                   if x.code == "capacity-scheduler")
    over, launch = _read(tmp_path, "scheduler_config:\n  capacity_scheduler_policy: MAX_UTILIZATION\n"
                                   "cuda_graph_config:\n  batch_sizes: [1, 8, 64]\n"
                                   "kv_cache_config:\n  max_tokens: 1000\n")
    f = _facts(launch, **over)
    assert not f.reserve_to_end and f.reserve_block == 1 and f.kv_capacity_tokens == 1000
    assert f.graph_sizes == frozenset({1, 8, 64}) and f.graph_tokens == 64
    assert "MAX_UTILIZATION" in next(x.message for x in f.findings if x.code == "capacity-scheduler")
    over, launch = _read(tmp_path, "cuda_graph_config: null\n")
    assert not _facts(launch, **over).cuda_graphs


@pytest.mark.parametrize(("text", "said"), [
    ("kv_cache_config:\n  free_gpu_memory_fraction: 2\n", "cfg.yml:2: kv_cache_config.free_gpu_memory_fraction"),
    ("enable_chunked_prefill: maybe\n", "cfg.yml:1: enable_chunked_prefill must be true or false"),
    ("max_batch_size: -4\n", "max_batch_size must be a positive integer"),
    ("- a\n- b\n", "is a mapping of LLM arguments"),
    ("kv_cache_config: {\n", "YAML syntax error"),
])
def test_a_bad_options_file_is_refused_at_its_line(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(SourceError) as exc:
        _read(tmp_path, text)
    line = exc.value.one_line()
    assert said in line and "\n" not in line, line


def test_predict_reads_the_file_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from launchcard.cli import app

    (tmp_path / "opts.yml").write_text("enable_chunked_prefill: true\nkv_cache_config:\n"
                                       "  free_gpu_memory_fraction: 0.5\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    base = ["predict", "--config", str(QWEN32), "--gpu", "h100", "--isl", "2000", "--osl", "100", "--rate", "inf",
            "--num-requests", "50", "--json"]

    def run(*extra: str) -> dict[str, object]:
        res = CliRunner().invoke(app, [*base, *extra])
        assert res.exit_code == 0, res.output
        out: dict[str, object] = json.loads(res.output)
        return out

    read = run("--command", "trtllm-serve Qwen/Qwen3-32B --extra_llm_api_options opts.yml")
    said = run("--engine", "trtllm", "--enable-chunked-prefill", "--kv-cache-free-gpu-memory-fraction", "0.5")
    for key in ("tpot_ms_mean", "ttft_ms_mean", "output_tok_per_s"):
        assert read[key] == said[key], key


def test_a_files_kv_cache_config_replaces_the_commands_whole(tmp_path: Path) -> None:
    """update_llm_args_with_extra_dict is ``llm_args | llm_args_dict``: the file's kv_cache_config replaces the
    KvCacheConfig the command's --kv_cache_free_gpu_memory_fraction built, so a fraction the file leaves out is the
    default 0.9 (the command's 0.5 was kept)."""
    _, launch = _read(tmp_path, "kv_cache_config:\n  dtype: fp8\n", "--kv_cache_free_gpu_memory_fraction", "0.5")
    assert launch.kv_fraction == 0.9
    _, launch = _read(tmp_path, "max_num_tokens: 4096\n", "--kv_cache_free_gpu_memory_fraction", "0.5")
    assert launch.kv_fraction == 0.5


@pytest.mark.parametrize("text", ["kv_cache_config: 5\n", "scheduler_config: [GUARANTEED_NO_EVICT]\n",
                                  "kv_cache_config:\n"])
def test_a_config_section_that_is_not_a_mapping_is_refused_at_its_line(tmp_path: Path, text: str) -> None:
    """`kv_cache_config: 5` was named 'not modelled' and predicted as if absent; TensorRT-LLM cannot build its
    config from it."""
    with pytest.raises(SourceError) as exc:
        _read(tmp_path, "max_num_tokens: 4096\n" + text)
    assert exc.value.where.endswith("cfg.yml:2") and "must be a mapping" in exc.value.one_line()


def test_an_options_file_that_switches_the_backend_is_refused(tmp_path: Path) -> None:
    """serve.py's launch_server reads llm_args["backend"] after the file is laid over the options: `backend:
    tensorrt` in the file switches the engine as --backend tensorrt does (which is refused); it passed silently."""
    with pytest.raises(SourceError) as exc:
        _read(tmp_path, "max_num_tokens: 4096\nbackend: tensorrt\n")
    assert exc.value.where.endswith("cfg.yml:2") and "backend must be pytorch" in exc.value.one_line()
    _, launch = _read(tmp_path, "backend: pytorch\n")
    assert not [f for f in launch.findings if f.severity == "assumed"]


def test_graph_batch_sizes_and_another_maximum_are_refused(tmp_path: Path) -> None:
    """CudaGraphConfig refuses batch_sizes with a max_batch_size that is not their maximum (its validator: "When
    both are provided, max_batch_size must equal max(batch_sizes)"); the maximum was ignored."""
    text = "cuda_graph_config:\n  batch_sizes: [1, 2, 4]\n  max_batch_size: 64\n"
    with pytest.raises(SourceError) as exc:
        _read(tmp_path, text)
    assert exc.value.where.endswith("cfg.yml:3") and "max(batch_sizes) 4" in exc.value.one_line()
    _, launch = _read(tmp_path, text.replace("64", "4"))
    assert launch.graph_sizes == (1, 2, 4)


def test_eager_generation_batches_say_how_their_launches_are_timed(tmp_path: Path) -> None:
    # the default cuda_graph_config and a file's without padding leave some decode batches eager: gpu:trtllm's
    # eager term was fitted on prefill-carrying steps only (_engine_rules.TRTLLM_EAGER_DECODE_NOTE); padding, none
    from launchcard.predict._engine_rules import TRTLLM_EAGER_DECODE_NOTE

    def graphs_note(f: ServingFacts) -> str:
        return next(x.message for x in f.findings if x.code == "cuda-graphs")

    assert graphs_note(_facts(TrtllmLaunch())).endswith(TRTLLM_EAGER_DECODE_NOTE)
    over, launch = _read(tmp_path, "cuda_graph_config:\n  batch_sizes: [1, 8, 64]\n")
    assert graphs_note(_facts(launch, **over)).endswith(TRTLLM_EAGER_DECODE_NOTE)
    over, launch = _read(tmp_path, "cuda_graph_config:\n  max_batch_size: 64\n  enable_padding: true\n")
    assert TRTLLM_EAGER_DECODE_NOTE not in graphs_note(_facts(launch, **over))
