"""A memory verdict that rests on a kernel package the command does not show (memory._kernels).

Both sides, each with its evidence:
- starts: GPUStack's performance lab ran ``vllm serve openai/gpt-oss-120b --max-model-len 32768`` on one H100 SXM
  under vLLM 0.10.2 (gpustack/gpustack@47277d79 docs/performance-lab/gpt-oss-120b/h100.md#L83, result block #L88;
  its own table divides the baseline by one GPU). It fits only with FlashInfer's sampler, which 0.10.2 uses whenever
  the package is installed: the planner cannot decide, it does not refuse.
- refused: vllm-project/vllm issue 23278 (vLLM 0.10.1, same model on one H100, defaults = 131,072 context): "Model
  loading took 65.9651 GiB ... Available KV cache memory: -2.14 GiB ... EngineCore failed to start"; and Qwen3-32B
  bf16 at its 40,960 default on one 80 GB GPU (vLLM 0.11.0): one request needs 10 GiB, more than even the smallest
  activation profile leaves (check_enough_kv_cache_memory, kv_cache_utils.py 0.11.0 :678-723, raised at :706/:717).
  Read in the 0.11.0 sdist: the budget is total x utilization (v1/worker/gpu_worker.py:183), less the weights, the
  torch peak of profile_run and the non-torch growth (:259-280, utils/__init__.py:2832-2858); profile_run runs one
  eager forward of max_num_batched_tokens over min(tokens, max_num_seqs) requests, then the sampler over their last
  hidden states (v1/worker/gpu_model_runner.py:2977, :3125, :3391-3397); CUDA graphs are captured after the KV cache
  is allocated, outside the budget (gpu_worker.py:318, :342-344). On one H100 (71.27 GiB budget, 61.02 GiB weights)
  the 8,192-token forward alone (a 25,600 x 2 gate/up output of 0.78 GiB) leaves less than 10 GiB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.errors import PredictError
from launchcard.memory import MEMORY_UNDECIDED, STARTUP_UNDECIDED, Settings, load_arch, plan_memory, sampler_from_env

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
# the corpus' own file (the held-out fixture reads the same bytes there too)
GPT_OSS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf/openai/gpt-oss-120b/config.json"
QWEN32 = CONFIGS / "Qwen--Qwen3-32B_config.json"


def _undecided(plan: object) -> list[str]:
    return [w for w in plan.warnings if MEMORY_UNDECIDED in w]  # type: ignore[attr-defined]


def test_gpt_oss_120b_one_h100_0_10_2_is_undecided_not_refused() -> None:
    plan = plan_memory(load_arch(GPT_OSS), Settings(vllm_version="0.10.2", max_model_len=32768), gpu="h100")
    assert plan.fits and not plan.problems
    [warning] = _undecided(plan)
    assert "flashinfer" in warning and "no memory left for the KV cache" in warning
    assert STARTUP_UNDECIDED not in warning  # check reports it (it drops the limit rules' undecided warnings)
    # the figures are those of the environment it assumes, and the assumption says so, with low confidence
    assert plan.breakdown.activation_peak_gib < 3.0 and plan.kv_cache_gib_per_gpu > 2.0
    [assumed] = [a for a in plan.assumed if "flashinfer" in a.what]
    assert assumed.confidence == "low" and "topk_topp_sampler.py" in assumed.what


def test_stated_environment_decides() -> None:
    arch = load_arch(GPT_OSS)
    without = plan_memory(arch, Settings(vllm_version="0.10.2", max_model_len=32768, flashinfer_sampler=False),
                          gpu="h100")
    assert not without.fits and "check_enough_kv_cache_memory" in without.problems[0]
    assert without.breakdown.activation_peak_gib > 7.0  # the PyTorch sort path over 1,024 x 201,088 fp32 logits
    with_fi = plan_memory(arch, Settings(vllm_version="0.10.2", max_model_len=32768, flashinfer_sampler=True),
                          gpu="h100")
    assert with_fi.fits and not _undecided(with_fi)


def test_opt_in_release_refuses() -> None:
    """From 0.11.1 FlashInfer's sampler is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1): installed or not, the default
    is the PyTorch path, so the refusal holds."""
    plan = plan_memory(load_arch(GPT_OSS), Settings(vllm_version="0.11.2", max_model_len=32768), gpu="h100")
    assert not plan.fits and not _undecided(plan)


def test_refused_either_way_says_so() -> None:
    """vLLM issue 23278: 0.10.1 at the default context failed to start; with FlashInfer's sampler too."""
    plan = plan_memory(load_arch(GPT_OSS), Settings(vllm_version="0.10.1"), gpu="h100")
    assert not plan.fits and not _undecided(plan)
    assert "refused with the flashinfer package installed too" in plan.problems[0]
    assert plan.breakdown.weights_gib == pytest.approx(65.97, rel=0.01)  # "Model loading took 65.9651 GiB"


@pytest.mark.parametrize("gpu", ["h100", "a100_80gb"])
def test_qwen3_32b_bf16_default_context_one_gpu_refused(gpu: str) -> None:
    plan = plan_memory(load_arch(QWEN32), Settings(vllm_version="0.11.0"), gpu=gpu)
    assert not plan.fits and not _undecided(plan)
    problem = plan.problems[0]
    assert "max_model_len 40,960 needs 10.00 GiB" in problem
    assert "refused with the flashinfer package installed too" in problem
    assert "kv_cache_utils.py" in problem and "0.11.0 :698/:717" in problem


def test_qwen3_32b_shorter_context_is_undecided_on_h100() -> None:
    """At 32,768 tokens one request needs 8 GiB: the PyTorch sampler path leaves ~4.5 GiB, FlashInfer's ~8.1."""
    plan = plan_memory(load_arch(QWEN32), Settings(vllm_version="0.11.0", max_model_len=32768), gpu="h100")
    assert plan.fits and _undecided(plan)
    assert plan.kv_cache_tokens >= 32768


def test_qwen3_32b_32k_context_starts_on_a100() -> None:
    """GPUStack's lab started ``vllm serve Qwen/Qwen3-32B --max-model-len 32768`` on one A100 SXM 80GB under vLLM
    0.11.0 and served 1,000 ShareGPT requests (gpustack/gpustack@47277d79 docs/performance-lab/qwen3-32b/a100.md#L85,
    result #L90): 8 GiB for one request fits the ~8.8 GiB the PyTorch sampler path leaves (A100: 256 sequences,
    2,048 batched tokens, arg_utils.py 0.11.0 :1605-1624), so no FlashInfer assumption is needed."""
    plan = plan_memory(load_arch(QWEN32), Settings(vllm_version="0.11.0", max_model_len=32768), gpu="a100_80gb")
    assert plan.fits and not plan.problems and not _undecided(plan)
    assert plan.kv_cache_tokens >= 32768


def test_no_catalog_gpu_nothing_assumed() -> None:
    """The FlashInfer branch is taken on CUDA only: a device given by its memory alone keeps the plain path."""
    plan = plan_memory(load_arch(GPT_OSS), Settings(vllm_version="0.10.2", max_model_len=32768),
                       gpu_memory_gib=79.19)  # no catalog GPU: platform unknown, nothing assumed
    assert not plan.fits and not _undecided(plan)


def test_predict_other_engines_not_refused_by_vllm_checks() -> None:
    """SGLang and TRT-LLM runs of the pages started (h100.md#L119 SGLang gpt-oss-120b, qwen3-32b/h100.md#L155
    TRT-LLM): vLLM's start-up checks become assumptions of their prediction, not refusals."""
    from launchcard.predict import serving_facts

    f = serving_facts(GPT_OSS, Settings(), gpu="h100", engine="sglang")
    assert any(x.code == "memory-engine" and "not judged for sglang" in x.message for x in f.findings)
    f = serving_facts(QWEN32, Settings(), gpu="h100", engine="trtllm")
    assert any(x.code == "memory-engine" for x in f.findings)
    with pytest.raises(PredictError, match="does not fit"):
        serving_facts(QWEN32, Settings(vllm_version="0.11.0"), gpu="h100", engine="vllm")


def test_predict_carries_undecided_as_assumption() -> None:
    from launchcard.predict import serving_facts

    f = serving_facts(GPT_OSS, Settings(vllm_version="0.10.2", max_model_len=32768), gpu="h100")
    assert any(x.code == "memory-undecided" and MEMORY_UNDECIDED in x.message for x in f.findings)
    # the plan says which warnings are undecided (predict reads that, not the warnings' words)
    plan = plan_memory(load_arch(GPT_OSS), Settings(vllm_version="0.10.2", max_model_len=32768), gpu="h100")
    assert plan.undecided and set(plan.undecided) <= set(plan.warnings)
    assert [x.message for x in f.findings if x.code == "memory-undecided"] == list(plan.undecided)


def test_the_vllm_defaults_another_engine_replaces_are_dropped_by_their_codes() -> None:
    """predict dropped vLLM's memory share and batch defaults from a TensorRT-LLM or SGLang plan by looking for
    "--gpu-memory-utilization" and "engine defaults" in the notes' words: the memory plan's assumptions carry
    codes now (memory.ASSUMED_*), and predict keeps or drops them by code."""
    from launchcard.memory import (
        ASSUMED,
        ASSUMED_ENGINE_LIMITS,
        ASSUMED_KV_CACHE_DTYPE,
        ASSUMED_MAX_MODEL_LEN,
        ASSUMED_UTILIZATION,
        ASSUMED_VLLM_RELEASE,
    )
    from launchcard.predict import serving_facts

    plan = plan_memory(load_arch(QWEN32), Settings(tp=2), gpu="h100")
    codes = {a.code for a in plan.assumed}
    assert {ASSUMED_UTILIZATION, ASSUMED_ENGINE_LIMITS, ASSUMED_MAX_MODEL_LEN, ASSUMED_KV_CACHE_DTYPE,
            ASSUMED_VLLM_RELEASE} <= codes
    assert {a.code for a in plan.assumed if a.what.startswith("--max-model-len not given")} == {ASSUMED_MAX_MODEL_LEN}
    assert all(a.code == ASSUMED for a in plan.assumed if "not given" not in a.what and "auto" not in a.what
               and "engine defaults" not in a.what and "release given" not in a.what)
    trt = serving_facts(QWEN32, Settings(tp=2), gpu="h100", engine="trtllm")
    # vLLM's memory share, batch defaults and default release do not apply to another engine's launch
    kept = [a for a in plan.assumed if a.code not in (ASSUMED_UTILIZATION, ASSUMED_ENGINE_LIMITS,
                                                      ASSUMED_VLLM_RELEASE)]
    said = [x.message for x in trt.findings if x.code == "memory-plan"]
    # the rest kept one for one, vLLM's context and KV dtype defaults restated in trtllm-serve's terms
    assert len(said) == len(kept) and len(kept) < len(plan.assumed)
    for a, msg in zip(kept, said, strict=True):
        assert (msg == a.what) == (a.code not in (ASSUMED_MAX_MODEL_LEN, ASSUMED_KV_CACHE_DTYPE)), (a.what, msg)
    vllm = serving_facts(QWEN32, Settings(tp=2), gpu="h100")
    assert [x.message for x in vllm.findings if x.code == "memory-plan"] == [a.what for a in plan.assumed]


@pytest.mark.parametrize(("env", "version", "want"), [
    ({}, "0.10.2", None),
    ({"VLLM_USE_FLASHINFER_SAMPLER": "0"}, "0.10.2", False),
    ({"VLLM_USE_FLASHINFER_SAMPLER": "1"}, "0.10.2", None),  # 0.9-0.11.0: still needs the package
    ({"VLLM_USE_FLASHINFER_SAMPLER": "1"}, "0.11.1", True),  # opt-in from 0.11.1
    ({"VLLM_USE_FLASHINFER_SAMPLER": "0"}, None, False),
    ({"VLLM_USE_FLASHINFER_SAMPLER": "yes"}, "0.11.1", None),  # vllm/envs.py: bool(int(value))
])
def test_sampler_from_env(env: dict[str, str], version: str | None, want: bool | None) -> None:
    assert sampler_from_env(env, version) is want


def test_cli_decides_with_the_environment(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from launchcard.cli import main

    base = ["memory", "--config", str(GPT_OSS), "--gpu", "h100", "--vllm-version", "0.10.2", "--max-model-len",
            "32768", "--json"]
    assert main(base) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["fits"] and any(MEMORY_UNDECIDED in w for w in plan["warnings"])
    assert main([*base, "--no-flashinfer-sampler"]) == 1
    assert not json.loads(capsys.readouterr().out)["fits"]
    assert main([*base, "--flashinfer-sampler"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["fits"] and not any(MEMORY_UNDECIDED in w for w in plan["warnings"])


def test_check_reads_the_servers_environment() -> None:
    """``check`` takes VLLM_USE_FLASHINFER_SAMPLER from the command's environment: 0 decides (refused, as vLLM
    0.10.2 would); unset leaves the verdict undecided (a warning, not an error)."""
    from launchcard.check import check_plan
    from launchcard.resolve import Command, ResolvedPlan

    def plan(env: dict[str, str]) -> ResolvedPlan:
        cmd = Command(role="single", argv=("vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "32768"),
                      env=env)
        return ResolvedPlan(model="openai/gpt-oss-120b", model_id="openai/gpt-oss-120b", variant="default",
                            hardware="h100", strategy=None, node_count=1, deploy_type="single_node",
                            docker_image="vllm/vllm-openai:v0.10.2", brand="NVIDIA", generation="hopper",
                            gpus_per_node=1, commands=(cmd,))

    off = check_plan(plan({"VLLM_USE_FLASHINFER_SAMPLER": "0"}), config=GPT_OSS, engine_version="0.10.2",
                     flags=False)
    assert "memory-does-not-fit" in [f.code for f in off.findings if f.severity == "error"]
    unset = check_plan(plan({}), config=GPT_OSS, engine_version="0.10.2", flags=False)
    assert "memory-does-not-fit" not in [f.code for f in unset.findings]
    assert any(f.code == "memory-warning" and MEMORY_UNDECIDED in f.message for f in unset.findings)


def test_alternative_only_where_the_release_and_platform_take_it() -> None:
    from launchcard.memory import find_gpu
    from launchcard.memory._kernels import release, sampler_alternative

    h100, mi300x = find_gpu("h100"), find_gpu("mi300x")
    assert sampler_alternative(Settings(vllm_version="0.10.2"), h100) is not None
    assert sampler_alternative(Settings(vllm_version="0.9.0.1"), h100) is not None
    assert sampler_alternative(Settings(vllm_version="0.10.2"), mi300x) is None  # ROCm: the native path
    assert sampler_alternative(Settings(vllm_version="0.8.5"), h100) is None  # FlashInfer >= 0.2.3 refused there
    assert sampler_alternative(Settings(vllm_version="0.11.1"), h100) is None  # opt-in
    assert sampler_alternative(Settings(), h100) is None  # latest release
    assert sampler_alternative(Settings(vllm_version="0.10.2", flashinfer_sampler=False), h100) is None
    assert release("v0.10.1.1") == (0, 10, 1) and release("0.11.0rc2") == (0, 11, 0)
