"""Engine defaults by release: what vLLM, SGLang and TensorRT-LLM do when a launch does not say.

The rules a plan's facts apply (scheduling policy, token budget, CUDA graph capture sizes, async scheduling,
admission, weight-only kernels on GPUs without the format's tensor cores, collectives without GPU peer-to-peer
access), each with the engine release, file and line it comes from.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from launchcard.limits import compute_capability
from launchcard.predict._figures import HardwareFigures
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Settings


ENGINES = ("vllm", "sglang", "trtllm")
# Scheduling policy by engine: vLLM V1 and TensorRT-LLM put prefill chunks into decode
# steps (one token budget); SGLang runs a prefill batch on its own unless --enable-mixed-chunk.
MIXED = {"vllm": True, "trtllm": True, "sglang": False}
# TensorRT-LLM's token budget per step when the launch sets none (BuildConfig / LLM API max_num_tokens 8192; the
# option's and get_llm_args' default is BuildConfig's, commands/serve.py at 00209af1 L446-452, L98-99, L159); the
# memory planner's default is vLLM's (16,384 on >= 160 GiB GPUs from its 0.29 rule), not TensorRT-LLM's
TRTLLM_MAX_NUM_TOKENS = 8192
# trtllm-serve's --max_batch_size default: BuildConfig's max_batch_size 2048 (tensorrt_llm/builder.py BuildConfig at
# NVIDIA/TensorRT-LLM 008b2b8d; commands/serve.py passes BuildConfig.model_fields["max_batch_size"].default as the
# option's and get_llm_args' default and on as the LLM's max_batch_size, at 00209af1 L440-445, L96-97, L158), not
# vLLM's max_num_seqs rule
TRTLLM_MAX_BATCH = 2048
# trtllm-serve's --kv_cache_free_gpu_memory_fraction default (commands/serve.py at 00209af1: the click option's
# default=0.9, L497-503, and get_llm_args' free_gpu_memory_fraction: float = 0.9, L107; pyexecutor/_util.py's
# ``if fraction is None: fraction = 0.9`` where a launch leaves KvCacheConfig's own None, d8ae02ca L94-98)
TRTLLM_KV_FRACTION = 0.9
# The device memory a PyTorch process holds outside torch's allocator from its first CUDA call on (the CUDA context and
# what the driver loads with it): 0.514 GiB, measured on the lent H200 (torch 2.11.0+cu130, driver 580.159.04, five
# fresh processes, all equal: bench/gpu_cuda_context.py, bench/data/gpu_cuda_context_h200.json) and taken for every
# GPU.  TensorRT-LLM's KV estimate counts it (it reads the device's used memory: predict._trtllm.kv_tokens); vLLM's
# profile starts its baseline after it (memory_profiling: non_torch_increase = after_profile - before_create), so the
# memory planner's non-torch figures, fitted on vLLM's logs, leave it out: the same processes held 0.16 GiB more
# after a GEMM and an attention kernel, the size of the planner's one-GPU figure (0.15)
CUDA_CONTEXT_GIB = 0.514
# trtllm-serve builds SchedulerConfig(capacity_scheduler_policy=GUARANTEED_NO_EVICT) unless --extra_llm_api_options
# sets scheduler_config (commands/serve.py get_llm_args at 00209af1 L132-135; SchedulerConfig's own default too,
# llmapi/llm_args.py; an options file's scheduler_config: predict._trtllm_options): the capacity
# scheduler admits a request only when the KV blocks it needs to completion (prompt + max_tokens) are free beside
# what the running ones still need to theirs, so it never evicts one (ServingFacts.reserve_to_end)
TRTLLM_NO_EVICT = True
# the KV block that reservation is counted in: KvCacheConfig.tokens_per_block, default 32 (tensorrt_llm/llmapi/
# llm_args.py; trtllm-serve sets no other, commands/serve.py get_llm_args at 00209af1 L125-126 builds KvCacheConfig
# from the fraction alone).  The capacity scheduler's GuaranteedNoEvictScheduler (cpp/tensorrt_llm/batch_manager/
# capacityScheduler.cpp at 02a10fed) counts each running request's getRemainingBlocksToCompletion and admits a
# waiting one, first come first served, while enoughAvailableBlocks holds, stopping at the first that does not fit
# ("break"); KVCacheManager::getRemainingBlocksToCompletion (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, the
# same in every stored version read: 002ba6a7 and the per-window form) sizes a request at
# numTotalBlocksPerBeam = ceilDiv(min(promptLen + maxNewTokens, window) + sinkBubbleLength, tokensPerBlock): whole
# blocks, so a request of P + M tokens holds ceil((P + M) / 32) x 32 of the pool from admission
# (predict._sched.reserved)
TRTLLM_TOKENS_PER_BLOCK = 32
# TensorRT-LLM's CUDA graphs when the launch gives no cuda_graph_config (trtllm-serve sets none: commands/serve.py
# get_llm_args' LLM arguments at 00209af1 L144-171): TorchLlmArgs.cuda_graph_config defaults to CudaGraphConfig(),
# whose max_batch_size 0 becomes 128
# (llmapi/llm_args.py validate_cuda_graph_config, ``config.max_batch_size or 128``) and whose sizes without
# enable_padding (default False) are 1..31, 32, 64, 128 (CudaGraphConfig._generate_cuda_graph_batch_sizes); the
# PyTorch engine replays a graph only for a generation-only batch of exactly a captured size when it does not pad
# (pyexecutor/model_engine.py _maybe_get_cuda_graph: ``batch_size not in self._cuda_graph_batch_sizes``)
TRTLLM_GRAPH_BATCH = 128
TRTLLM_GRAPH_SIZES = (*range(1, 32), 32, 64, 128)
# how such an eager generation-only batch is timed: the gpu:trtllm set's one eager per-layer term, which its calibration
# fitted on steps that carry prefill tokens alone, since its runs capture every decode batch they reach, padded
# (bench/predict_accuracy.py _facts: InferenceX's and aiconfigurator's cuda_graph_config); so no calibration step
# timed an eager decode batch's launches, and the term is laid in series with the kernels (launches that overlap a
# long step's kernels are not told apart)
TRTLLM_EAGER_DECODE_NOTE = ("; such a batch's launches are timed with gpu:trtllm's eager per-layer term, fitted on "
                            "steps carrying prefill tokens only (its calibration runs capture every decode batch, "
                            "padded), in series with the kernels")


# vLLM's V1 engine, whose scheduler predict simulates (one token budget per step, prefill chunks beside decodes), is
# the default from 0.8.0 (vLLM PR #13726 "[V1] Enable V1 by default", in 0.8.0's release notes); before, the V0 engine
# ran prefills in steps of their own and chunked prompts only above 32K context (the memory planner still accounts
# its memory, launchcard.memory._model): an older release named is refused, not timed by another engine's rules
V1_DEFAULT_FROM = (0, 8)
# SGLang's and TensorRT-LLM's floors: the oldest release whose rules predict reads, so that an older one is refused,
# not timed silently as the oldest read.  SGLang: 0.5.3 (python/sglang/srt/server_args.py, schedule_policy.py,
# layers/quantization/mxfp4.py and models/deepseek_v2.py are read from 0.5.3 / 0.5.3.post3 to 0.5.9: _sglang_rules,
# _attn_backend, _mxfp4, _sglang_mla; 0.5.1.post3 and 0.5.2 are read for one gpt-oss pool default and their flags
# only).  TensorRT-LLM: 1.0 (the kernel tables' TensorRT-LLM 1.0.0 rows, the 1.0 gpt-oss deployment blog read in
# _mxfp4; the held-out runs name 1.0.0 to 1.2.0rc5).  A pre-release counts as its release line, as the memory
# planner's parse_version reads one (0.5.3rc0 carries 0.5.3's code)
RELEASE_FLOORS: dict[str, tuple[tuple[int, ...], str]] = {
    "vllm": (V1_DEFAULT_FROM, "0.8.0"),
    "sglang": ((0, 5, 3), "0.5.3"),
    "trtllm": ((1, 0), "1.0.0"),
}


def release_refusal(engine: str, version: str | None) -> tuple[str, str] | None:
    """(message, fix) when ``engine``'s release ``version`` is older than the oldest release predict times
    (``RELEASE_FLOORS``: vLLM before V1, SGLang and TensorRT-LLM before the oldest release whose rules are read);
    None for that release or a later one, none named, or a form that is no release (refused where it is read)."""
    from launchcard.flagspec import release_numbers

    floor = RELEASE_FLOORS.get(engine)
    nums = release_numbers(version) if version else None
    if floor is None or nums is None:
        return None
    line = nums[:len(floor[0])] + (0,) * (len(floor[0]) - len(nums))
    if line >= floor[0]:
        return None
    if engine == "vllm":
        return (f"vLLM {version} ran the V0 engine, whose scheduler predict does not simulate: the oldest release it "
                f"times is 0.8.0, where V1 became the default (vLLM PR #13726)",
                "pass --engine-version 0.8.0 or later (`launchcard memory --vllm-version` still plans V0's memory)")
    name = "SGLang" if engine == "sglang" else "TensorRT-LLM"
    return (f"{name} {version} is older than {floor[1]}, the oldest {name} release whose rules predict reads: its "
            f"defaults and scheduler are not known to be {floor[1]}'s",
            f"pass --engine-version {floor[1]} or later (an older {name} release is not timed)")


# vLLM's hybrid KV cache manager: sliding-window layers in their own block groups, freed out of the window (the memory
# planner's grouping rule, launchcard.memory._model: one unified group before 0.10)
HYBRID_KV_FROM = (0, 10)


# NVIDIA GPUs below compute capability 8.9 have no FP8 tensor cores, below 10.0 no FP4 ones: vLLM serves such
# checkpoints there with its Marlin weight-only kernels (vLLM PR #5975, "Expand FP8 support to Ampere GPUs using FP8
# Marlin": the weights dequantized to bf16 inside the GEMM; FP4: marlin_utils_fp4.py)
NATIVE_CC = {"fp8": (8, 9), "mxfp4": (10, 0), "nvfp4": (10, 0)}
WEIGHT_ONLY_BITS = {"fp8": "FP8", "mxfp4": "FP4", "nvfp4": "FP4"}
# integer weight-only checkpoints (W4A16/W8A16: compressed-tensors pack-quantized, GPTQ, AWQ) run Marlin on every GPU
# from SM 8.0: the experts whenever Marlin's MoE kernel takes the layer (compressed_tensors_moe.py "Prefer to use the
# MarlinMoE kernel when it is supported", 0.11.0 L115-131, 0.13.0 L157-196; gptq_marlin.py / awq_marlin.py the same
# test), AWQ's dense layers always (awq_marlin.py apply_awq_marlin_linear), GPTQ's and compressed-tensors' through
# choose_mp_linear_kernel, whose first pick on SM 9.0 is Machete (kernels/mixed_precision/__init__.py L28-37,
# machete.py L35: SM 9.0 only), Marlin elsewhere
WNA16 = ("int4", "awq", "gptq")
# ... until AWQ joined them: vLLM 0.32.0 maps awq / awq_marlin / auto_awq to AutoAWQConfig (quantization/__init__.py
# L157-159), whose linear method picks its kernel with choose_mp_linear_kernel (auto_awq.py L391-395; the CUDA list
# puts Machete before Marlin, kernels/linear/__init__.py L523-532, and Machete takes uint4 with zero points, AWQ's
# format, machete_utils.py L12-16): on SM 9.0 AWQ's dense GEMMs run Machete from that release.  Read in 0.32.0 (the
# release launchcard models when none is stated) and in 0.11.0 / 0.13.0 (awq_marlin.py, Marlin always); the release
# between where AWQ moved (auto_awq is a --quantization choice from 0.24.0 in the captured specs) is not read, and a
# stated release in that span is timed as 0.13.0 ran it, said in the finding
AWQ_MP_KERNEL_FROM = (0, 32)
AWQ_MARLIN_READ_UNTIL = (0, 13)


def _cc(hw: HardwareFigures) -> tuple[int, int] | None:
    """The CUDA compute capability of an NVIDIA catalog GPU (None: not NVIDIA, or not stated)."""
    return compute_capability(hw.compute_capability) if hw.vendor == "NVIDIA" else None


def _weight_only_finding(quant: str, hw: HardwareFigures, parts: str, machete: bool = False,
                         moe_n: int = 0) -> Finding:
    """vLLM's Marlin weight-only kernels for ``parts`` of the plan (launchcard.predict._marlin: the rule, the
    measured shares, the experts' at their N per rank ``moe_n``); ``machete``: its dense GEMMs run Machete instead
    (GPTQ / compressed-tensors on SM 9.0)."""
    from launchcard.predict._marlin import weight_only_finding

    return weight_only_finding(quant, hw.id, hw.compute_capability, parts, WEIGHT_ONLY_BITS.get(quant, ""),
                               machete=machete, moe_n=moe_n)


def _no_p2p_finding(hw: HardwareFigures, engine: str, tp: int) -> Finding:
    """What a plan's collectives run over when its GPUs have no peer-to-peer access, and how they are timed."""
    from launchcard.predict._nccl import (
        RELEASE,
        SHM_CALL_MEASURED_US,
        SHM_CALL_SOURCE,
        SHM_SOURCE,
        SOURCE,
        pci_ring,
        shm_call_extra_us,
        shm_share,
    )

    gbs = (hw.link_bps or 0.0) * 2 / 1e9
    own = ("vLLM's custom all-reduce needs it (vLLM 0.10.1.1 distributed/device_communicators/custom_all_reduce.py "
           "L147 disables it, as its start-up log prints)" if engine == "vllm"
           else "an engine's custom all-reduce reads its peers' memory, which needs it")
    basis = f"{hw.link_assumed} assumed" if hw.link_assumed else "the catalog's link.host_gbps"
    head = (f"no GPU peer-to-peer access (--no-gpu-p2p): {own}, so each collective is NCCL's through host memory "
            f"(its SHM transport) over each GPU's host link ({hw.id}: {gbs:g} GB/s both ways, {basis})")
    if (hw.link_domain is not None and tp > hw.link_domain) or not hw.host_link_bps:
        return Finding("assumed", "gpu-p2p", head + ", between nodes over the network, at the set's collective "
                                                    "share and latency (fitted with peer access)")
    ring = pci_ring(tp, hw.host_link_bps, hw.compute_capability)
    extra = (" and to vLLM's embedding all-reduce and V1's logits all-gather" if engine == "vllm" else "")
    return Finding("assumed", "gpu-p2p",
                   f"{head}: every TP all-reduce at the set's per-collective latency (fitted with peer access) plus "
                   f"what NCCL {RELEASE}'s own cost model of that path adds to it{extra} "
                   f"({SOURCE}: ring or tree, LL or Simple by size, PCI hop latencies over NVLink's; NCCL's figure of "
                   f"the link "
                   f"{ring.link_gbs:g} GB/s, its ring search {ring.channels} x {ring.speed:g} GB/s on an Intel host "
                   "(x6/5 PCIe overhead; an AMD host's 2 x 12 GB/s times the same: the share below is taken "
                   "against the same host's model), the GPUs under one CPU socket), at the "
                   f"bus-bandwidth share a bidirectional SHM collective reached in NCCL's published runs "
                   f"(all-reduce {shm_share('all_reduce'):.2f}, all-gather {shm_share('all_gather'):.2f}: "
                   f"{SHM_SOURCE}, PCIe Gen3, NCCL 2.4.8); each all-reduce also takes the "
                   f"{shm_call_extra_us():.1f} us a call through host memory was measured beyond NCCL's model "
                   f"({SHM_CALL_SOURCE}: a 10 KB decode all-reduce in {SHM_CALL_MEASURED_US:g} us on 2 RTX 5070 Ti, "
                   f"PCIe 4.0 x16, where the model says {SHM_CALL_MEASURED_US - shm_call_extra_us():.1f}; per call "
                   "at any GPU count; a host whose PCIe reads of "
                   "memory are faster or slower moves it)")


def _sglang_recv_lag(pp: int, spec: bool) -> int:
    """SGLang's receive lag by its default loop (no --disable-overlap-schedule, SGLANG_ENABLE_SPEC_V2 unset)."""
    from launchcard.predict._sglang_rules import overlap_schedule, recv_lag

    return recv_lag(overlap_schedule(disabled=False, pp=pp, spec=spec, spec_v2=False))


# vLLM's default CUDA graph ceiling: min(max_num_seqs x 2, 512) tokens (vLLM 0.10.2 vllm/config/scheduler.py L239-244,
# 0.11.0 config/scheduler.py L222-227 as cuda_graph_sizes; 0.11.2 vllm/config/vllm.py L850-855 as
# max_cudagraph_capture_size); x (1 + speculative tokens) from 0.13 (0.13.0 config/vllm.py L1066-1075); 1024 instead
# of 512 on compute capability 10.x (B200, B300) from 0.28 (0.28.0 config/vllm.py L1933-1945); always at most
# max_num_batched_tokens. Steps of more tokens run eagerly, smaller ones padded to the next captured size (0.10.1
# vllm/v1/worker/gpu_model_runner.py L1524-1531)
FULL_PROMPT_ADMISSION_FROM = (0, 19)
# releases whose default cudagraph_mode captures whole decode steps (FULL_AND_PIECEWISE, vLLM PR #25444, after 0.10.2)
FULL_DECODE_GRAPHS_FROM = (0, 11)
# vLLM turns async scheduling on by default from 0.14 (0.14.1 vllm/config/scheduler.py L133 async_scheduling None,
# vllm/config/vllm.py L588-625: on unless pipeline parallel, a speculative method outside EagleModelTypes, or an
# executor other than mp/uni/external_launcher); before, off unless --async-scheduling (0.13.0 config/scheduler.py
# L133, 0.10.2 L155: False)
ASYNC_SCHEDULING_FROM = (0, 14)
# the speculative methods async scheduling takes (0.14.1 vllm/config/speculative.py L31-42 EagleModelTypes: eagle,
# eagle3 and the *_mtp draft heads; 0.32.0 L70-72 adds dflash, extract_hidden_states)
_ASYNC_SPEC = ("eagle", "mtp", "dflash")


def vllm_async_scheduling(version: tuple[int, int], given: bool | None, pp: int, spec_method: str | None) -> bool:
    """Whether a vLLM launch schedules asynchronously (:func:`vllm_async_rule`)."""
    return vllm_async_rule(version, given, pp, spec_method)[0]


def vllm_async_rule(version: tuple[int, int], given: bool | None, pp: int,
                    spec_method: str | None) -> tuple[bool, str]:
    """Whether a vLLM launch schedules asynchronously, and why: ``given`` (--async-scheduling /
    --no-async-scheduling), else the release's default (see ``ASYNC_SCHEDULING_FROM``).  A Ray executor, which also
    turns it off, is not read from the launch."""
    if given is not None:
        return given, "--async-scheduling" if given else "--no-async-scheduling"
    since = ".".join(map(str, ASYNC_SCHEDULING_FROM))
    if version < ASYNC_SCHEDULING_FROM:
        return False, f"vLLM before {since} does not schedule asynchronously unless --async-scheduling"
    if pp > 1:
        return False, f"vLLM {since}+ turns its default async scheduling off with pipeline parallelism (pp {pp})"
    if spec_method is None or any(k in spec_method.lower() for k in _ASYNC_SPEC):
        return True, f"vLLM {since}+ default"
    return False, (f"vLLM {since}+ turns its default async scheduling off for the speculative method {spec_method} "
                   "(only EAGLE-type and MTP drafts keep it)")


GRAPH_CEILING = 512
GRAPH_CEILING_SM100 = 1024
GRAPH_SM100_FROM = (0, 28)
GRAPH_SPEC_FROM = (0, 13)
GRAPH_GRID_16_FROM = (0, 11)  # sizes 8 apart up to 256, then 16 apart (0.11.2 config/vllm.py L876-888); before: 8


def _vllm_grid(top: int, version: tuple[int, int]) -> list[int]:
    """The capture sizes vLLM generates up to ``top``."""
    out = [i for i in (1, 2, 4) if i <= top]
    if version >= GRAPH_GRID_16_FROM:
        return out + list(range(8, min(top + 1, 256), 8)) + list(range(256, top + 1, 16))
    return out + list(range(8, top + 1, 8))


@lru_cache(maxsize=1024)  # a plan search asks for every batch limit of every plan: a few distinct answers
def vllm_graph_tokens(version: tuple[int, int], max_num_seqs: int, budget: int, per_seq: int = 1, *,
                      ceiling: int = GRAPH_CEILING, given_max: int | None = None,
                      sizes: tuple[int, ...] | None = None) -> int:
    """The largest step (tokens) vLLM of ``version`` captures a CUDA graph for: ``sizes`` as given (those within the
    token budget), else the size grid up to ``given_max`` or the release's default ceiling; with speculative
    decoding (``per_seq`` tokens a sequence) sizes are rounded up to its multiples and kept within the ceiling
    (0.11.2 vllm/config/compilation.py L938-956)."""
    if sizes:
        grid = [x for x in sizes if x <= budget]
        top = max(grid, default=0)
    else:
        if given_max is None:
            q = per_seq if version >= GRAPH_SPEC_FROM else 1
            given_max = min(max_num_seqs * q * 2, ceiling)
        top = min(given_max, budget)
        grid = _vllm_grid(top, version)
    if per_seq > 1 and version >= GRAPH_GRID_16_FROM:  # none left: vLLM keeps the sizes as they were
        grid = [r for r in (math.ceil(x / per_seq) * per_seq for x in grid) if r <= top] or grid
    return max(grid, default=0)


def _trtllm_graph_sizes(max_num_seqs: int) -> str:
    """TensorRT-LLM's default captured batch sizes (1..31, 32, 64, 128) a launch of ``max_num_seqs`` can fill, as
    text ("1-31, 32 or 64")."""
    sizes = [b for b in TRTLLM_GRAPH_SIZES if b <= max_num_seqs]
    runs: list[str] = []
    if sizes:
        last = min(len(sizes), 31)
        runs.append(f"1-{sizes[last - 1]}" if last > 1 else "1")
        runs += [str(b) for b in sizes[last:]]
    if len(runs) < 2:
        return runs[0] if runs else "none"
    return f"{', '.join(runs[:-1])} or {runs[-1]}"


def _graph_limit(s: Settings, hw: HardwareFigures, engine: str, max_num_seqs: int, budget: int, per_seq: int,
                 found: list[Finding], gpu_gib: float | None) -> tuple[int | None, tuple[int, int, int] | None]:
    """(graph_tokens, graph_rule) of a memory-planned plan (see ServingFacts)."""
    if engine == "trtllm":
        if s.max_cudagraph_capture_size is not None or s.cudagraph_capture_sizes:
            top = s.max_cudagraph_capture_size or max(s.cudagraph_capture_sizes or (0,))
            found.append(Finding("info", "cuda-graphs", f"CUDA graphs for generation-only batches up to {top} "
                                                        "(the launch's cuda_graph_config, padded to a captured "
                                                        "size); bigger batches and steps with a context run "
                                                        "eagerly"))
            return top * per_seq, None
        top = min(TRTLLM_GRAPH_BATCH, max_num_seqs)
        found.append(Finding("assumed", "cuda-graphs",
                             f"CUDA graphs for generation-only batches of {_trtllm_graph_sizes(max_num_seqs)} "
                             f"request{'s' if max_num_seqs > 1 else ''}: "
                             "TensorRT-LLM's default cuda_graph_config (max_batch_size 128, no padding; "
                             "tensorrt_llm/llmapi/llm_args.py), which trtllm-serve keeps unless an "
                             "--extra_llm_api_options file sets one; any other batch runs eagerly"
                             + TRTLLM_EAGER_DECODE_NOTE))
        return top * per_seq, None
    if engine == "sglang":
        # the calibration's SGLang runs (facts planned without an SGLang command): SGLang's default by GPU memory
        # and TP (predict._sglang; sglang_serving_facts sets the command's own)
        from launchcard.predict._sglang_rules import default_graph_bs

        bs, why = default_graph_bs(gpu_gib, s.tp)
        found.append(Finding("assumed", "cuda-graphs", f"CUDA graphs up to batch {bs} ({why}); bigger decode "
                                                       "batches run eagerly"))
        return bs * per_seq, None
    v = s.version
    if s.cudagraph_capture_sizes or s.max_cudagraph_capture_size is not None:
        top = vllm_graph_tokens(v, max_num_seqs, budget, per_seq, given_max=s.max_cudagraph_capture_size,
                                sizes=s.cudagraph_capture_sizes)
        given = (f"captured sizes {list(s.cudagraph_capture_sizes)}" if s.cudagraph_capture_sizes
                 else f"max_cudagraph_capture_size {s.max_cudagraph_capture_size}")
        found.append(Finding("info", "cuda-graphs", f"CUDA graphs captured up to {top} tokens per step (the launch's "
                                                    f"{given}, within max_num_batched_tokens {budget}); bigger "
                                                    "steps run eagerly"))
        return top, None
    sm100 = (compute_capability(hw.compute_capability) or (0, 0))[0] == 10
    rule = (v[0], v[1], GRAPH_CEILING_SM100 if sm100 and v >= GRAPH_SM100_FROM else GRAPH_CEILING)
    return vllm_graph_tokens(v, max_num_seqs, budget, per_seq, ceiling=rule[2]), rule


# `vllm serve` flags that change how a step runs, how big the KV pool is or how many GPUs serve, which the prediction
# does not read (flag spellings, when the value is not vLLM's default, what is not modelled): each given is said as
# an ``assumed`` finding rather than timed as absent in silence. Meanings are the captured parser's help
# (data/flags/vllm-0.34.0.json) and vLLM's docs/serving/context_parallel_deployment.md at 020505c2.
_UNTIMED: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("--cpu-offload-gb",), "positive", "weights kept in CPU memory and read over the host link in every forward "
                                        "pass; the memory plan and every step keep them on the GPU"),
    (("--kv-cache-memory-bytes",), "given", "the KV cache sized by this figure instead of --gpu-memory-utilization; "
                                            "the pool is the memory planner's"),
    (("--num-gpu-blocks-override",), "given", "the KV pool overridden to this many blocks; the pool is the memory "
                                              "planner's"),
    (("--kv-offloading-size",), "given", "a CPU KV offloading buffer; requests evicted to it and loaded back are "
                                         "not simulated"),
    (("--prefill-context-parallel-size", "-pcp"), "above one",
     "prefill split over PCP ranks that expand the world size: neither the split nor the extra GPUs are counted"),
    (("--long-prefill-token-threshold",), "positive", "a long prompt's chunk per step capped at this many tokens; the "
                                                      "scheduler simulated fills the whole token budget"),
    (("--enable-chunked-prefill", "--no-enable-chunked-prefill", "--disable-chunked-prefill"), "off",
     "prompts are not chunked (a prompt waits for a step whose budget holds it whole); the scheduler simulated "
     "chunks them"),
    (("--enable-dbo", "--no-enable-dbo", "--disable-dbo"), "on", "dual batch overlap; steps are timed without it"),
)


def untimed_vllm_flags(argv: list[str] | tuple[str, ...]) -> list[Finding]:
    """The ``untimed-flag`` findings of a ``vllm serve`` command: one per flag of :data:`_UNTIMED` set to other
    than vLLM's default, naming it as written."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError

    cmd = parse_command(list(argv), engine="vllm")
    out: list[Finding] = []
    for flags, when, why in _UNTIMED:
        occ = cmd.last(*flags)
        if occ is None:
            continue
        try:
            if when in ("off", "on"):
                on = cmd.get_bool(*flags)
                hit, shown = on is (when == "on"), occ.written
            else:
                text = cmd.get_str(*flags)
                value = None if when == "given" or text is None else cmd.get_float(*flags)
                hit = text is not None and (when == "given" or (value or 0) > (1 if when == "above one" else 0))
                shown = f"{occ.written} {text}"
        except ArgvError:  # a bad value is the parser's and the memory planner's to refuse
            continue
        if hit:
            out.append(Finding("assumed", "untimed-flag", f"{shown}: {why} (predicted as if it were not given)"))
    return out
