"""Plan facts: what one step of the engine has to move and compute, per GPU, for one resolved plan.

Everything the step model needs is read once here, from the memory planner (weights per
rank split into always-read and routed-expert bytes, KV bytes per token, the KV pool in
tokens, the engine's batching limits) and from the hardware catalog (datasheet bandwidth,
dense FLOP/s of the dtype the GEMMs run in, interconnect), so a prediction is arithmetic
over a frozen record: a plan search can evaluate thousands a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError
from launchcard.predict._dsa import DsaFacts, dsa_facts, dsa_layers
from launchcard.predict._engine_rules import (
    AWQ_MARLIN_READ_UNTIL,
    AWQ_MP_KERNEL_FROM,
    ENGINES,
    FULL_DECODE_GRAPHS_FROM,
    FULL_PROMPT_ADMISSION_FROM,
    GRAPH_SPEC_FROM,
    HYBRID_KV_FROM,
    MIXED,
    NATIVE_CC,
    TRTLLM_EAGER_DECODE_NOTE,
    TRTLLM_GRAPH_SIZES,
    TRTLLM_MAX_BATCH,
    TRTLLM_MAX_NUM_TOKENS,
    TRTLLM_NO_EVICT,
    TRTLLM_TOKENS_PER_BLOCK,
    WNA16,
    _cc,
    _graph_limit,
    _no_p2p_finding,
    _sglang_recv_lag,
    _weight_only_finding,
    vllm_async_rule,
    vllm_graph_tokens,
)
from launchcard.predict._figures import BASE_DTYPES, HardwareFigures
from launchcard.predict._fused_moe import moe_dtype
from launchcard.predict._prefix import prefix_off
from launchcard.predict._sglang_ops import extend_ops
from launchcard.predict._sglang_rules import DEFAULT_BUDGET, SglangBudget
from launchcard.predict._trtllm import TrtllmLaunch
from launchcard.predict._trtllm import kv_finding as trtllm_kv_finding
from launchcard.predict._trtllm import kv_tokens as trtllm_kv_tokens
from launchcard.predict._trtllm import pool_bytes_per_token as trtllm_pool_bytes
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch, MemoryPlan, Settings


@dataclass(frozen=True, slots=True)
class ServingFacts:
    """One replica of a plan, per GPU: the work of a step and the limits the scheduler works under."""

    model: str
    engine: str
    hardware: HardwareFigures
    gpus: int  # every GPU of the deployment (all replicas)
    replicas: int  # data-parallel groups that each run a scheduler
    tp: int
    pp: int
    ep: bool
    layers: int  # decoder layers on one PP stage
    hidden: int
    act_bytes: int
    dense_bytes: float  # read by every step
    dense_params: float  # every GEMM a token goes through, lm_head excluded
    lm_head_params: float  # the lm_head runs only for the positions a step samples
    expert_bytes: float  # routed experts on this rank
    expert_params: float
    experts: int
    experts_per_token: int
    moe_layers: int
    kv_bytes_per_token: float  # KV bytes per context token a step reads, all attention layers of one rank
    attn_flops_per_pair: float  # FLOPs per (query token, context token) pair, all attention layers of one rank
    sliding_kv_bytes: float  # the part of kv_bytes_per_token in sliding-window layers (read over the window only)
    sliding_flops_per_pair: float  # the part of attn_flops_per_pair in sliding-window layers
    window: int  # their window (0: none)
    compute_dtype: str
    kv_capacity_tokens: int  # per replica
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    cuda_graphs: bool
    spec_method: str | None = None
    spec_tokens: int = 0
    draft_fraction: float = 0.0  # one draft forward relative to one target forward (weights read)
    findings: tuple[Finding, ...] = ()
    # FLOPs per (query, context) pair of a prefill when they differ from decode's (MLA: prefill attends per head
    # over the up-projected q/k/v, decode in the absorbed latent space); None: the same as decode's
    prefill_flops_per_pair: float | None = None
    expert_dtype: str | None = None  # the routed experts' GEMM dtype when it differs (None: compute_dtype)
    # SGLang --scheduler-recv-interval: between decode steps the scheduler takes in new requests only every this
    # many steps (after a prefill batch, or idle, at once); 1 = every step (every engine's default)
    recv_interval: int = 1
    # forward passes the scheduler launches after the one that ended a closed-loop client's request before a
    # receive can find that client's next one (SGLang: 2 with its overlap loop, 1 without; 0: the next pass)
    recv_lag: int = 0
    # prefill chunks: a prompt may start with part of it in a step (vLLM V1, SGLang); TensorRT-LLM's LLM API
    # schedules a context whole unless enable_chunked_prefill (default False, tensorrt_llm/llmapi/llm_args.py)
    chunked_prefill: bool = True
    # the engine release the plan is for, as stated (--engine-version, the page's or command's release); None: not
    # stated (the memory planner then takes its newest rules)
    release: str | None = None
    # the config's model_type: what an engine picks per-model request paths from (vLLM renders gpt_oss chats with
    # openai_harmony, not the jinja chat template: serving_chat.py L146 in 0.11.0)
    model_type: str = ""
    # CUDA graphs (``_clock.graphed``): the most tokens a step may carry and still replay a captured graph (padded up
    # to the next captured size); bigger steps run eagerly. vLLM: the largest of compilation_config's
    # cudagraph_capture_sizes; SGLang: --cuda-graph-max-bs x tokens per sequence. None: no limit modelled
    graph_tokens: int | None = None
    # vLLM's default capture ceiling (the launch sets none): (release major, minor, platform ceiling), kept so that
    # :func:`with_limits` derives ``graph_tokens`` again from other max_num_seqs / token budgets
    graph_rule: tuple[int, int, int] | None = None
    # the only step sizes (tokens) within ``graph_tokens`` that replay a graph, where the engine does not pad a batch
    # up to a captured size (TensorRT-LLM without cuda_graph_config.enable_padding); None: every size (padded)
    graph_sizes: frozenset[int] | None = None
    # DeepSeek Sparse Attention (index_topk): the indexer and top-k sparse MLA replace dense MLA's attention work;
    # kv_bytes_per_token then holds the latent alone (read for the selected tokens only)
    dsa: DsaFacts | None = None
    # vLLM before 0.19 admits a waiting request when KV blocks for its first chunk are free and allocates a running
    # prefill's KV chunk by chunk (0.18.1 vllm/v1/core/sched/scheduler.py L450-493, L700-739); from 0.19
    # scheduler_reserve_full_isl (default True, 0.19.1 vllm/config/scheduler.py L139-143, scheduler.py L732-744)
    # admits it only when its whole prompt fits (the simulation's default rule)
    admit_by_chunk: bool = False
    # TensorRT-LLM's capacity scheduler GUARANTEED_NO_EVICT (trtllm-serve sets it: :data:`TRTLLM_NO_EVICT`): a
    # request is admitted only when KV for its prompt and its whole output (max_tokens) is free, and never preempted
    reserve_to_end: bool = False
    # the tokens of a KV block that reservation is rounded up to (TensorRT-LLM's kv_cache_config.tokens_per_block:
    # :data:`TRTLLM_TOKENS_PER_BLOCK`); 1 where no reservation is made
    reserve_block: int = 1
    # vLLM's async scheduling (:func:`vllm_async_scheduling`): the engine's per-request host work of a step
    # (scheduler, output building, the model runner's input preparation) runs while the GPU computes the step before,
    # so it costs time only where it is longer than the step's kernels; False: in series with them
    host_overlap: bool = False
    host_overlap_rule: str = ""  # why vLLM schedules asynchronously or not (:func:`vllm_async_rule`)
    # the routed experts' kernel where it is not their dtype's grouped GEMM (MXFP4, :func:`mxfp4_kernel`): its key in
    # the kernel tables ("kernels" -> moe); None: the expert dtype's grouped-GEMM class
    moe_kernel: str | None = None
    # the routed experts run vLLM's / SGLang's Triton fused MoE where their record is that kernel's (its padded row
    # blocks: launchcard.predict._fused_moe); False: MXFP4 experts, whose kernels are others (OpenAI's Triton
    # kernels, FlashInfer, Marlin) even where the BF16 class times them
    fused_moe: bool = True
    # the tuned-file dtype that kernel looks its row blocks up by (launchcard.predict._fused_moe.moe_dtype: 16-bit,
    # per-tensor FP8 or block-scaled FP8 experts), whatever record times the experts (the FP8 record is the
    # block-scaled table's fit)
    moe_dtype: str = "bfloat16"
    # N of the experts' w2 on a rank (its intermediate size: the tensor-parallel share, whole under EP), which with
    # the rank's E names a fused MoE kernel's tuned config (launchcard.predict._fused_moe)
    moe_n: int = 0
    # the experts of that kernel on a rank where the engine splits them otherwise than the memory plan (SGLang's MoE
    # tensor-parallel under DP attention, or --ep-size under --tp-size: predict._sglang_layout.moe_shape); 0: the plan's
    moe_e: int = 0
    # which GEMMs vLLM runs through its Marlin weight-only kernels (launchcard.predict._marlin.PARTS: "dense",
    # "experts", "all"; "": none), timed with Marlin's measured shares (_kernels.kernel_eff)
    marlin: str = ""
    # vLLM's Marlin MoE under expert parallelism picks its row block from M scaled by the rank's experts over the
    # global ones (0.26+, launchcard.predict._marlin.ep_block_rows); False: from M as it reaches the rank
    marlin_ep_m: bool = False
    # the dense GEMMs' FP8 weights are scaled per 128 x 128 block (a checkpoint with weight_block_size): the engines
    # run block-scaled kernels (DeepGEMM, TensorRT-LLM's block-scaling GEMM) for them, timed with those kernels'
    # measured shares ("kernels" -> gemm -> fp8_block, launchcard.predict._kernels)
    gemm_block: bool = False
    # vLLM's dense block GEMMs run CUTLASS's blockwise kernel (no deep_gemm, Settings.deep_gemm False) on an SM90 GPU
    # of ``block_sms`` SMs: (N, K, GEMMs per forward, prefill rows only) of one TP rank, timed per shape
    # (launchcard.predict._cutlass_block); (): the fp8_block record's shares time them
    block_cutlass: tuple[tuple[int, int, int, bool], ...] = ()
    block_sms: int = 0
    # vLLM's attention backend where it is not FlashAttention/FlashInfer (launchcard.predict._attn_backend: "triton",
    # a sink model's Triton unified attention off SM90/SM100 in 0.11); "": theirs
    attn_backend: str = ""
    # the most sequences a decode-only step of that Triton attention runs on its 3D kernel, whose sliding-window
    # layers read every KV tile of their context (launchcard.predict._attn_backend.triton_3d_seqs); 0: none
    triton_3d_seqs: int = 0
    # vLLM's FlashAttention 2 (SM8x, 10.3, 12.x: launchcard.predict._attn_backend.vllm_fa2_unpacked): a step whose
    # longest query is over one token runs its decode queries unpacked, a 64-row tile per query head each (_cost
    # times those tiles)
    fa2_unpacked: bool = False
    # vLLM's hybrid KV cache manager (0.10+) keeps sliding-window layers' blocks apart and frees those wholly out of
    # the window (0.10.2 vllm/v1/core/single_type_kv_cache_manager.py L375-391, SlidingWindowManager.
    # remove_skipped_blocks, called by kv_cache_manager.py allocate_slots L252): the pool holds ``kv_pool_tokens``
    # tokens of every attention layer, and a request of context L takes L of its full-attention layers' share and at
    # most window + one block of its sliding layers' (:func:`kv_tokens_at`); 0: KV grows with the whole context
    kv_pool_tokens: int = 0
    kv_block: int = 16
    # the tokens a prefix-cache hit is reused in (launchcard.predict._prefix): vLLM's KV block, SGLang's page,
    # 1 for TensorRT-LLM's partial block reuse; ``prefix_read`` False: SGLang's page not read from the command
    prefix_block: int = 1
    prefix_read: bool = True
    # the option that turns the engine's prefix cache off ("" where it is on): the hit is reused nowhere (_prefix)
    prefix_off: str = ""
    # SGLang's admission estimate and retraction (:class:`launchcard.predict._sglang_rules.SglangBudget`); None: the
    # engine admits by KV for the prompt and preempts the newest request (vLLM, TensorRT-LLM)
    sglang_budget: SglangBudget | None = None
    # ops an eager extend batch launches on one PP stage (SGLang: launchcard.predict._sglang_ops), what its
    # extend_layer_us is paid per; 0: per kernel group (``layers`` plus the MoE layers), as eager_layer_us
    extend_ops: int = 0
    # SGLang DP attention: this many ranks step together, each step as long as the busiest rank's and run without
    # CUDA graphs on every rank while any rank prefills (0.5.6.post2 managers/scheduler_dp_attn_mixin.py L68-69,
    # L127-131): predict simulates them as schedulers of their own stepping together (_sglang_dp, _clock); 1: each
    # replica runs apart
    lockstep: int = 1
    # vLLM --data-parallel-size > 1 on a MoE model without --enable-expert-parallel (memory.moe_split): each rank's
    # MoE layers hold 1/(tp x dp) of every expert and run the tokens of this many DP ranks, gathered to the layer and
    # reduced back over the DP group (FusedMoE.forward_impl's naive dispatch/combine, get_ep_group() = the flattened
    # TP x DP group); 1: none
    moe_dp: int = 1
    # SGLang DP attention on its DeepSeek model file (:func:`launchcard.predict._cost.dp_gather_fn`): the decoder
    # layers of a stage whose MLP / MoE run over the whole TP group on every rank's tokens (ScatterMode.FULL: hidden
    # states gathered before, scattered after), whether the MoE layers are among them (no --moe-a2a-backend: no
    # all-to-all), and the vocabulary whose logits the LM head gathers the same way (0: --enable-dp-lm-head)
    dp_gather_layers: int = 0
    dp_gather_moe: bool = False
    dp_gather_vocab: int = 0
    attn_params: float = 0.0  # the part of dense_params in attention projections (memory.WeightSplit.attn_params)
    # SGLang 0.5.5.post2-0.5.6.post2 (launchcard.predict._sglang_mla): FLOPs per prefill token of the second kv_b_proj
    # an MHA-form DeepSeek extend runs, all MLA layers of a rank, and the rule by which a step takes that form
    # ("always", "threshold", "fresh", "dense"); 0: none
    mha_kvb: float = 0.0
    mha_rule: str = ""

    @property
    def flops_per_s(self) -> float:
        return self.hardware.flops[self.compute_dtype]

    @property
    def expert_flops_per_s(self) -> float:
        return self.hardware.flops[self.expert_dtype or self.compute_dtype]

    @property
    def attn_flops_per_s(self) -> float:
        """Attention's matmuls run in the activations' dtype (bf16/fp16, fp32 on a float32 model), not in the
        FP8/FP4 of quantized weights."""
        fl = self.hardware.flops
        for d in (("fp32",) if self.act_bytes == 4 else ("bf16", "fp16")):
            if d in fl:
                return fl[d]
        return self.flops_per_s

    @property
    def mixed_batches(self) -> bool:
        return MIXED.get(self.engine, True)

    @property
    def mla(self) -> bool:
        """Multi-head latent attention (DeepSeek, Kimi, GLM-5): the one plan fact with a prefill pair cost apart from
        decode's (facts_from_memory_plan sets it for a kv_lora_rank only); its decode runs the MLA kernels, not the
        GQA/MHA ones the attn_decode tables time."""
        return self.prefill_flops_per_pair is not None


# default per-token acceptance by speculative method when the workload does not give one: round typical
# values with no source for any given model or traffic, so every prediction that uses one says so (an
# "assumed" finding) and names the option that replaces it
DEFAULT_ACCEPTANCE = {"mtp": 0.8, "eagle3": 0.75, "eagle": 0.7, "ngram": 0.4, "suffix": 0.5, "draft": 0.7}


# the dtype a quantized GEMM's tensor cores multiply in: the activations', for schemes that keep 16-bit
# activations (weight-only W4A16 / W8A16 dequantize in registers). MXFP4 MoE takes bf16 activations: vLLM's
# Mxfp4Config.get_supported_act_dtypes is [bfloat16] and its SM100 default backend is FlashInfer MXFP4 x BF16 (MXFP8
# activations only with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8), vllm/model_executor/layers/quantization/mxfp4.py
MATH_DTYPE = {"fp8": "fp8", "nvfp4": "fp4", "int8": "int8"}


def kv_tokens_at(f: ServingFacts, context: float) -> int:
    """The KV capacity (tokens per replica) the simulation charges requests of ``context`` tokens against: the plan's
    pool, or, where vLLM frees sliding-window blocks out of the window (``kv_pool_tokens``), the pool in tokens of
    every attention layer scaled by what such a request really holds (its full-attention layers' KV for the whole
    context, its sliding layers' for the window and one block more: the blocks a decode step keeps)."""
    if not f.kv_pool_tokens or context <= 0:
        return f.kv_capacity_tokens
    full = f.kv_bytes_per_token - f.sliding_kv_bytes
    held = full * context + f.sliding_kv_bytes * min(context, f.window + f.kv_block)
    return int(f.kv_pool_tokens * f.kv_bytes_per_token * context / held) if held > 0 else f.kv_capacity_tokens


def _compute_dtype(quant: str, weight_bytes: int, hw: HardwareFigures, out: list[Finding]) -> str:
    """The dtype the plan's GEMMs run in, among those the hardware has a figure for."""
    want = MATH_DTYPE.get(quant)
    base = "fp32" if weight_bytes == 4 else "bf16"
    if want and want in hw.flops:
        return want
    if want:
        out.append(Finding("assumed", "compute-dtype",
                           f"{quant} weights: {hw.id} has no {want} FLOP/s figure, GEMMs timed at {base}"))
    if base in hw.flops:
        return base
    # never a faster format than the weights allow; none of them: bad input (HardwareFigures.require_flops)
    alt = next(d for d in BASE_DTYPES if d in hw.require_flops().flops)
    out.append(Finding("assumed", "compute-dtype", f"no {base} FLOP/s figure for {hw.id}: timed at {alt}"))
    return alt


def facts_from_memory_plan(arch: Arch, settings: Settings, plan: MemoryPlan, hardware: HardwareFigures, *,
                           model: str = "model", engine: str = "vllm",
                           trtllm: TrtllmLaunch | None = None) -> ServingFacts:
    """The plan facts of a memory-planned plan (``plan`` from :func:`launchcard.memory.plan_memory`); ``trtllm``:
    what a TensorRT-LLM launch sets beyond the plan (None: trtllm-serve's defaults)."""
    from launchcard.memory import (
        ATTENTION_KINDS,
        SLIDING,
        dtype_bytes,
        kv_read_split,
        moe_split,
        mxfp4_experts,
        weight_split,
    )

    if engine not in ENGINES:
        raise InputError(f"unknown engine ({engine!r})", fix=f"use one of {', '.join(ENGINES)}",
                         field="engine")
    s = settings
    found: list[Finding] = []
    split = weight_split(arch, s)
    # the memory plan's element width: --dtype auto runs a float32 checkpoint in bf16 (the plan read its weights
    # at 2 bytes while its GEMMs were timed in fp32, with a finding that no fp32 FLOP/s figure was there)
    act = dtype_bytes(arch, s)
    # the experts' GEMMs run in their scheme's math dtype; the always-read ones only when the scheme covers them
    # (gpt-oss keeps attention and router in bf16, MXFP4 experts only)
    expert_dtype = _compute_dtype(split.quant, act, hardware, found)
    cc = _cc(hardware)
    dense_q = bool(split.covers & {"attn", "mlp", "shared_experts"}) or not split.covers
    # N of the experts' w2 on a rank (ServingFacts.moe_n)
    moe_tp = moe_split(s)[1]
    moe_n = arch.moe_intermediate_size // moe_tp if arch.is_moe else 0
    marlin = ""
    wna16 = split.quant in WNA16 and cc is not None and cc >= (8, 0)
    # below the native GPU (SM90's MXFP4 experts excepted: mxfp4_kernel says)
    below = (split.quant in NATIVE_CC and cc is not None and cc < NATIVE_CC[split.quant]
             and not (split.quant == "mxfp4" and arch.is_moe and cc[0] == 9))
    if engine == "vllm" and cc is not None and (wna16 or below):
        from launchcard.predict._marlin import marlin_parts

        # the dense GEMMs the checkpoint quantizes and the model has (gpt-oss: MXFP4 experts, bf16 attention)
        has = {"attn": True, "linear_attn": "linear" in arch.layer_kinds,
               "mlp": not arch.is_moe or arch.dense_layers > 0, "shared_experts": arch.shared_expert_intermediate > 0}
        dense_m = not split.covers or any(has.get(c, False) for c in split.covers)
        awq_mp = split.quant != "awq" or s.version >= AWQ_MP_KERNEL_FROM  # AWQ via choose_mp_linear_kernel
        machete = dense_m and wna16 and awq_mp and cc[0] == 9  # choose_mp_linear_kernel (WNA16)
        marlin = marlin_parts(dense_m and not machete, arch.is_moe and ("experts" in split.covers or not split.covers))
        if marlin or machete:
            found.append(_weight_only_finding(split.quant, hardware, marlin, machete, moe_n))
        if dense_m and split.quant == "awq" and cc[0] == 9 and AWQ_MARLIN_READ_UNTIL < s.version < AWQ_MP_KERNEL_FROM:
            found.append(Finding("assumed", "awq-kernel", f"AWQ's dense GEMMs on {hardware.id} timed with Marlin as "
                                 "vLLM 0.13.0 runs them (awq_marlin.py); vLLM 0.32.0 runs them with Machete "
                                 "(AutoAWQConfig, choose_mp_linear_kernel): the release between where it moved is "
                                 "not read"))
    dtype = expert_dtype if dense_q else _compute_dtype("none", act, hardware, found)
    moe_kernel: str | None = None
    # the release the plan is for: a TensorRT-LLM launch's own (TrtllmLaunch.release, never a vLLM number), else the
    # vLLM release the settings name
    release = trtllm.release if engine == "trtllm" and trtllm is not None and trtllm.release else s.vllm_version
    if mxfp4_experts(arch, s):  # the experts' own kernel (the dense GEMMs keep ``dtype``)
        from launchcard.memory import parse_version
        from launchcard.predict._mxfp4 import MARLIN, mxfp4_kernel

        moe_kernel, expert_dtype = mxfp4_kernel(engine, hardware, expert_dtype, found,
                                                release=parse_version(release) if release else None,
                                                stated=s.mxfp4_backend, moe_n=moe_n,
                                                # SGLang's runner rule (--ep-size, --moe-runner-backend) is applied
                                                # by its plan: memory._sglang_mxfp4.sglang_mxfp4_settings
                                                upcast=s.mxfp4_upcast)
        if moe_kernel == MARLIN:  # vLLM on SM90 before 0.12 (or as stated): its Marlin kernels, _marlin's shares
            moe_kernel, marlin = None, "experts"
    elif s.mxfp4_backend is not None:  # said, but nothing it chooses runs: say so rather than drop it silently
        from launchcard.predict._mxfp4 import unused_backend_note

        found.append(Finding("info", "moe-kernel", unused_backend_note(s.mxfp4_backend)))
    marlin_ep_m = False
    if engine == "vllm" and marlin in ("experts", "all") and s.expert_parallel and s.tp * s.dp > 1:
        from launchcard.predict._marlin import ep_block_finding

        marlin_ep_m, said = ep_block_finding(s.version if s.vllm_version else None, s.tp * s.dp)
        found.append(said)
    attn_backend = ""
    fa2_unpacked = False
    tri_3d = 0
    if engine == "vllm":
        from launchcard.predict._attn_backend import triton_3d_seqs, vllm_fa2_unpacked, vllm_sink_attention

        attn_backend = vllm_sink_attention(arch.model_type, hardware.kind, cc,
                                           s.version if s.vllm_version else None, found, hardware.id)
        tri_3d = triton_3d_seqs(attn_backend, s.version if s.vllm_version else None, arch.num_heads // s.tp,
                                max(1, arch.num_kv_heads // s.tp), found)
        fa2_unpacked = vllm_fa2_unpacked(hardware.kind, cc, s.version if s.vllm_version else None, attn_backend,
                                         bool(arch.kv_lora_rank), s.kv_cache_dtype, found,
                                         gqa=arch.num_heads // s.tp > max(1, arch.num_kv_heads // s.tp))
    heads_rank = arch.num_heads / s.tp
    attn_layers = sum(1 for k in arch.layer_kinds if k in ATTENTION_KINDS) / s.pp
    slide_layers = sum(1 for k in arch.layer_kinds if k == SLIDING) / s.pp
    kv_full, kv_slide, window = kv_read_split(arch, s)
    kv_pool_full = kv_full  # before a DSA index cache is taken out of what a step reads: the pool holds it
    pf_pair: float | None = None
    if arch.kv_lora_rank:  # MLA decode attends in the latent space (absorbed): rank + rope dims per head
        qk, v = arch.kv_lora_rank + arch.qk_rope_head_dim, arch.kv_lora_rank
        # ... its prefill per head over the up-projected keys (nope + rope dims) and values (vLLM's and SGLang's
        # MLA backends run prefill unabsorbed: the latent would cost kv_lora_rank FLOPs per pair for every head)
        pf_qk = (arch.qk_nope_head_dim or arch.head_dim) + arch.qk_rope_head_dim
        pf_pair = 2 * heads_rank * (pf_qk + (arch.v_head_dim or arch.head_dim)) * attn_layers
    else:
        qk = v = arch.head_dim
    pair = 2 * heads_rank * (qk + v) * attn_layers
    dsa: DsaFacts | None = None
    if arch.index_topk:
        from launchcard.memory import index_cache_bytes

        layers_dsa = dsa_layers(arch, s.pp)
        dsa = dsa_facts(arch, s, engine, hardware.compute_capability, layers_dsa, found, max_len=plan.max_model_len)
        kv_full -= index_cache_bytes(arch) * layers_dsa
    pair_slide = 2 * heads_rank * (qk + v) * slide_layers
    moe_layers = (arch.num_layers - arch.dense_layers) if arch.is_moe else 0
    spec_method = s.speculative_method
    draft_fraction = 0.0
    if spec_method:
        draft_fraction = 1.0 / max(1, arch.num_layers) if any(k in spec_method.lower() for k in
                                                               ("eagle", "mtp")) else 0.0
        if draft_fraction == 0.0 and spec_method.lower() not in ("ngram", "suffix", "ngram_gpu"):
            found.append(Finding("assumed", "draft-cost",
                                 f"draft model {spec_method!r}: its forward cost is not counted (config not read)"))
    if s.dcp > 1:  # the pool is DCP's (memory planner); the step is not: said, not guessed
        found.append(Finding("assumed", "dcp",
                             f"--decode-context-parallel-size {s.dcp}: the KV cache is sharded over the TP ranks "
                             f"along the context (its pool is counted: {plan.kv_cache_tokens:,} tokens), but every "
                             f"step is timed as TP {s.tp} without it: each rank's 1/{s.dcp} of the decode "
                             "attention's KV reads and the collectives that merge the ranks' partial outputs are not "
                             "timed (vLLM docs/serving/context_parallel_deployment.md at 020505c2, Decode Context "
                             "Parallel: 'With larger dcp size, the KV cache duplication is reduced, but the "
                             "communication overhead increases')"))
    replicas = s.dp
    kv_cap = plan.kv_cache_tokens
    launch = (trtllm or TrtllmLaunch()) if engine == "trtllm" else None
    if launch is not None:  # its pool is a share of the memory left free, not vLLM's share of the device
        pool_per = trtllm_pool_bytes(plan, kv_pool_full, kv_slide)
        kv_cap = trtllm_kv_tokens(plan, launch.kv_fraction, pool_per)
        if launch.kv_max_tokens is not None:  # kv_cache_config.max_tokens: the smaller of the two pools
            kv_cap = min(kv_cap, launch.kv_max_tokens)
        found.append(trtllm_kv_finding(plan, launch, kv_cap, pool_per))
        found.extend(launch.findings)
    pool_tokens = 0
    if engine == "vllm" and kv_slide and window and s.version >= HYBRID_KV_FROM and kv_full + kv_slide > 0:
        # the pool in tokens of every attention layer (what vLLM prints before 0.21; from 0.21 it prints the
        # concurrency at max_model_len x that length instead)
        pool_tokens = int(plan.num_blocks * plan.block_size * plan.kv_bytes_per_token_per_gpu / (kv_full + kv_slide))
    moe_dp = moe_tp // s.tp if arch.is_moe and not s.expert_parallel else 1
    if moe_dp > 1:
        found.append(Finding("info", "moe-dp-flat",
                             f"--data-parallel-size {s.dp} without --enable-expert-parallel: vLLM's MoE layers are "
                             f"tensor-parallel over TP x DP = {s.tp * s.dp} GPUs (vllm 0.11.0 fused_moe/config.py "
                             "FusedMoEParallelConfig.make, flatten_tp_across_dp): each GPU holds 1/"
                             f"{s.tp * s.dp} of every expert and its MoE runs all {moe_dp} DP ranks' tokens, "
                             "gathered and reduced over the DP group in every MoE layer (FusedMoE naive dispatch/"
                             "combine), timed as an all-gather and a reduce-scatter; each DP rank is timed as "
                             "holding the same batch (its steps not held in lockstep), as under --enable-expert-"
                             "parallel"))
    group = s.tp * (s.dp if (s.expert_parallel or moe_dp > 1) and arch.is_moe else 1)
    if hardware.kind != "cpu" and not hardware.p2p and group > 1:
        found.append(_no_p2p_finding(hardware, engine, s.tp))
    elif hardware.kind != "cpu" and group > 1 and hardware.link_assumed:
        found.append(Finding("assumed", "link", f"{hardware.id}'s catalog link has no figure: collectives timed at "
                                                f"{hardware.link_assumed}, {(hardware.link_bps or 0.0) * 2 / 1e9:g} "
                                                "GB/s both ways (x16 lanes assumed; GPU peer-to-peer over PCIe)"))
    elif hardware.kind != "cpu" and group > 1 and hardware.link_bps is None:
        found.append(Finding("assumed", "link", f"no interconnect figure for {hardware.id}: collectives timed at "
                                                "its memory bandwidth (add link.gbps with its source to "
                                                "data/hardware.yaml)"))
    dom = hardware.link_domain
    if hardware.kind != "cpu" and dom is not None and group > dom:
        if hardware.scale_out_bps:
            found.append(Finding("info", "scale-out", f"collectives span {group} GPUs, more than one {dom}-GPU "
                                                      f"{hardware.id} link domain: the part that leaves it runs "
                                                      f"at {hardware.scale_out_bps * 8 / 1e9:g} Gb/s per GPU"))
        else:
            found.append(Finding("assumed", "scale-out",
                                 f"collectives span {group} GPUs, more than one {dom}-GPU link domain, and the "
                                 f"catalog gives no network figure for {hardware.id}: timed at the scale-up "
                                 "link's bandwidth"))
    budget = plan.max_num_batched_tokens or plan.max_model_len
    if engine == "trtllm" and s.max_num_batched_tokens is None:
        budget = TRTLLM_MAX_NUM_TOKENS
        found.append(Finding("assumed", "max-num-tokens", f"TensorRT-LLM's default max_num_tokens {budget} per step "
                                                          "(pass --max-num-batched-tokens for the launch's own)"))
    graphs = not (s.enforce_eager or s.cudagraphs_off or hardware.kind == "cpu")
    per_seq = 1 + (s.num_speculative_tokens if spec_method else 0)
    g_sizes = None
    g_tokens: int | None
    g_rule: tuple[int, int, int] | None
    if graphs and launch is not None and launch.graph_sizes:  # an options file's cuda_graph_config
        g_tokens, g_rule = max(launch.graph_sizes) * per_seq, None
        g_sizes = None if launch.graph_padding else frozenset(b * per_seq for b in launch.graph_sizes)
        found.append(Finding("info", "cuda-graphs", f"CUDA graphs for generation-only batches of "
                                                    f"{', '.join(map(str, launch.graph_sizes))} (the options file's "
                                                    "cuda_graph_config, "
                                                    + ("padded up to the next size)" if launch.graph_padding else
                                                       "no padding: any other batch runs eagerly)"
                                                       + TRTLLM_EAGER_DECODE_NOTE)))
    else:
        g_tokens, g_rule = _graph_limit(s, hardware, engine, plan.max_num_seqs, budget, per_seq,
                                        found, plan.breakdown.gpu_memory_gib) if graphs else (None, None)
    if graphs and engine == "trtllm" and g_rule is None and s.max_cudagraph_capture_size is None \
            and not s.cudagraph_capture_sizes and not (launch is not None and launch.graph_sizes):
        g_sizes = frozenset(b * per_seq for b in TRTLLM_GRAPH_SIZES if b <= plan.max_num_seqs)
    by_chunk = engine == "vllm" and (
        s.version < FULL_PROMPT_ADMISSION_FROM if s.scheduler_reserve_full_isl is None
        else not s.scheduler_reserve_full_isl)
    if by_chunk:
        found.append(Finding("info", "admission", f"vLLM {s.version[0]}.{s.version[1]} admits a request when KV for "
                                                  "its first prefill chunk is free and preempts the newest requests "
                                                  "when a later chunk finds none (before 0.19, or with "
                                                  "--no-scheduler-reserve-full-isl)"))
    seqs = plan.max_num_seqs
    if engine == "trtllm":
        if s.max_num_seqs is None:
            seqs = TRTLLM_MAX_BATCH
            found.append(Finding("assumed", "max-batch-size", f"TensorRT-LLM's default max_batch_size {seqs} "
                                                              "(trtllm-serve's --max_batch_size default, BuildConfig; "
                                                              "pass --max-num-seqs for the launch's own)"))
        block = launch.tokens_per_block if launch is not None else TRTLLM_TOKENS_PER_BLOCK
        found.append(Finding("assumed", "capacity-scheduler",
                             "TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler (trtllm-serve's default): a "
                             "request starts only when KV for its prompt and its whole output (max_tokens) is free, "
                             f"in whole blocks of {block} tokens (kv_cache_config.tokens_per_block), the first "
                             "waiting request that does not fit holding back those behind it; none is preempted")
                     if launch is None or launch.no_evict else
                     Finding("assumed", "capacity-scheduler",
                             "TensorRT-LLM's MAX_UTILIZATION capacity scheduler (the options file's "
                             "scheduler_config): timed as admission by the prompt's KV with the newest request "
                             "preempted when KV runs out (vLLM's rule; TensorRT-LLM pauses it)"))
        found.append(Finding("info", "chunked-prefill", "TensorRT-LLM with enable_chunked_prefill (the launch's "
                                                         "--enable_chunked_prefill): a prompt's chunks fill each "
                                                         "step's token budget beside the running decodes")
                     if launch is not None and launch.chunked_prefill else
                     Finding("assumed", "chunked-prefill", "TensorRT-LLM without enable_chunked_prefill "
                                                           "(trtllm-serve's default): a prompt is prefilled whole, in "
                                                           "a step with room for it"))
    async_on, async_why = vllm_async_rule(s.version, s.async_scheduling, s.pp, spec_method)
    gemm_block = split.block and dtype == "fp8" and marlin not in ("dense", "all")
    cutlass: tuple[tuple[int, int, int, bool], ...] = ()
    sms = 0
    if engine == "vllm" and gemm_block and s.deep_gemm is False:
        from launchcard.predict._cutlass_block import cutlass_plan

        cutlass, sms = cutlass_plan(arch, s.tp, hardware, cc, found, s.version if s.vllm_version else None)
    # the findings stated last, built before the record (no copy of it to add them): the default CUDA graph
    # ceiling's, and the piecewise decode graphs of releases before FULL_DECODE_GRAPHS_FROM
    if g_rule is not None and g_tokens is not None:
        found.append(_graph_note(s.num_speculative_tokens if spec_method else 0, seqs, budget, g_tokens, g_rule))
    if engine == "vllm" and graphs and s.version < FULL_DECODE_GRAPHS_FROM:
        found.append(Finding(
            "assumed", "cuda-graph-mode",
            f"vLLM {s.version[0]}.{s.version[1]} replays piecewise CUDA graphs in decode steps too (cudagraph_mode "
            "PIECEWISE, as vLLM 0.10.1.1's start-up log prints it: attention launched between the captured pieces; "
            "FULL_AND_PIECEWISE, whole decode graphs, is the default only since vLLM PR #25444, merged "
            "2025-09-23): timed as the sets' whole decode graphs (their vLLM runs are 0.11.2 or later), so small "
            "decode batches are likely predicted fast"))
    return ServingFacts(
        model=model, engine=engine, hardware=hardware, gpus=s.tp * s.pp * s.dp, replicas=replicas, tp=s.tp,
        pp=s.pp, ep=s.expert_parallel, layers=math.ceil(arch.num_layers / s.pp), hidden=arch.hidden_size,
        act_bytes=act, dense_bytes=split.dense_bytes, dense_params=split.dense_params - split.lm_head_params,
        lm_head_params=split.lm_head_params, attn_params=split.attn_params,
        expert_bytes=split.expert_bytes, expert_params=split.expert_params, experts=arch.num_experts,
        experts_per_token=max(1, arch.experts_per_tok) if arch.is_moe else 0, moe_layers=moe_layers,
        kv_bytes_per_token=kv_full + kv_slide, attn_flops_per_pair=pair, sliding_kv_bytes=kv_slide,
        sliding_flops_per_pair=pair_slide, window=window if kv_slide else 0, compute_dtype=dtype,
        expert_dtype=expert_dtype if arch.is_moe else dtype,
        kv_capacity_tokens=kv_cap, max_num_seqs=seqs,
        max_num_batched_tokens=budget, max_model_len=plan.max_model_len,
        cuda_graphs=graphs, spec_method=spec_method,
        spec_tokens=s.num_speculative_tokens if spec_method else 0, draft_fraction=draft_fraction,
        findings=tuple(found), prefill_flops_per_pair=pf_pair,
        chunked_prefill=launch.chunked_prefill if launch is not None else True,
        release=release, model_type=arch.model_type,
        graph_tokens=g_tokens, graph_rule=g_rule, graph_sizes=g_sizes, dsa=dsa, admit_by_chunk=by_chunk,
        reserve_to_end=launch is not None and launch.no_evict and TRTLLM_NO_EVICT,
        reserve_block=launch.tokens_per_block if launch is not None and launch.no_evict else 1,
        recv_lag=_sglang_recv_lag(s.pp, bool(spec_method)) if engine == "sglang" else 0,
        # the GPU sets' measured per-request host term is stated for GPU hosts; the CPU set was fitted serial
        host_overlap=engine == "vllm" and hardware.kind == "gpu" and async_on,
        host_overlap_rule=async_why if engine == "vllm" else "",
        # MXFP4 experts upcast to BF16 at load run the engine's Triton fused MoE (Settings.mxfp4_upcast)
        moe_kernel=moe_kernel, fused_moe=split.quant != "mxfp4" or bool(s.mxfp4_upcast),
        moe_dtype=moe_dtype(expert_dtype, split.block) if arch.is_moe else "bfloat16",
        moe_n=moe_n, moe_dp=moe_dp,
        marlin=marlin, marlin_ep_m=marlin_ep_m, attn_backend=attn_backend, fa2_unpacked=fa2_unpacked,
        triton_3d_seqs=tri_3d,
        kv_pool_tokens=pool_tokens,
        gemm_block=gemm_block, block_cutlass=cutlass, block_sms=sms,
        kv_block=plan.block_size,
        prefix_block=plan.block_size if engine == "vllm" else 1,
        prefix_off=prefix_off(engine, enable_prefix_caching=s.enable_prefix_caching,
                              block_reuse=launch is None or launch.block_reuse),
        sglang_budget=DEFAULT_BUDGET if engine == "sglang" else None,
        extend_ops=extend_ops(arch, s.tp, s.pp, dtype, expert_dtype if arch.is_moe else dtype,
                              hardware.compute_capability, ep=s.expert_parallel) if engine == "sglang" else 0,
    )


_FIELDS = tuple(x.name for x in fields(ServingFacts))
_VALUES = attrgetter(*_FIELDS)
# each field's slot setter: what the generated __init__'s object.__setattr__ reaches for a slotted frozen class
_SETTERS = {name: vars(ServingFacts)[name].__set__ for name in _FIELDS}
_SET_ALL = tuple(_SETTERS.values())


def facts_with(facts: ServingFacts, **changes: Any) -> ServingFacts:
    """``dataclasses.replace(facts, **changes)``, the same record, without building every field's keyword for the
    generated ``__init__`` (a cold plan search copies facts ~3,300 times: 13 us a copy instead of 32).  The same:
    ServingFacts has no ``__post_init__`` and every field is an init field, so ``__init__`` only sets each slot
    (tests/test_predict_facts_with.py holds both to it)."""
    new = object.__new__(ServingFacts)
    for put, value in zip(_SET_ALL, _VALUES(facts), strict=True):
        put(new, value)
    for name, value in changes.items():
        put = _SETTERS.get(name)
        if put is None:
            raise TypeError(f"ServingFacts has no field {name!r}")
        put(new, value)
    return new


def with_limits(facts: ServingFacts, **changes: Any) -> ServingFacts:
    """A copy with other batching limits or engine (what a plan search varies without re-planning memory); vLLM's
    default CUDA graph ceiling follows max_num_seqs and the token budget.  One copy: the new ceiling and its finding
    are derived from the values the copy will hold (a search makes a few hundred copies of a 55-field record)."""

    def new(name: str) -> Any:
        return changes[name] if name in changes else getattr(facts, name)

    rule = new("graph_rule")
    seqs, budget = new("max_num_seqs"), new("max_num_batched_tokens")
    if rule is not None and "graph_tokens" not in changes and (seqs, budget) != (
            facts.max_num_seqs, facts.max_num_batched_tokens):
        spec = new("spec_tokens")
        top = _graph_top(rule, seqs, budget, spec)
        changes["graph_tokens"] = top
        changes["findings"] = tuple(_graph_note(spec, seqs, budget, top, rule) if x.code == "cuda-graphs" else x
                                    for x in new("findings"))
    return facts_with(facts, **changes)


def graph_tokens_at(f: ServingFacts, max_num_seqs: int) -> int | None:
    """``f.graph_tokens`` were max_num_seqs ``max_num_seqs`` (vLLM's default follows it; a given limit does not)."""
    rule = f.graph_rule
    if rule is None:
        return f.graph_tokens
    return _graph_top(rule, max_num_seqs, f.max_num_batched_tokens, f.spec_tokens)


def _graph_top(rule: tuple[int, int, int], max_num_seqs: int, budget: int, spec_tokens: int) -> int:
    """vLLM's default CUDA graph ceiling under ``rule`` (the release and its ceiling) for these limits: the one
    place :func:`graph_tokens_at` and :func:`with_limits` take it from."""
    return vllm_graph_tokens((rule[0], rule[1]), max_num_seqs, budget, 1 + spec_tokens, ceiling=rule[2])


def _graph_note(spec_tokens: int, max_num_seqs: int, budget: int, top: int, rule: tuple[int, int, int]) -> Finding:
    spec = f" x {1 + spec_tokens} tokens per sequence" if spec_tokens and (rule[0], rule[1]) >= GRAPH_SPEC_FROM \
        else ""
    return Finding("assumed", "cuda-graphs",
                   f"CUDA graphs captured up to {top} tokens per step: vLLM {rule[0]}.{rule[1]}'s default "
                   f"min(2 x max_num_seqs {max_num_seqs}{spec}, {rule[2]}) within max_num_batched_tokens "
                   f"{budget} (vllm/config/vllm.py _set_cudagraph_sizes); bigger steps run eagerly "
                   f"(pass {_graph_flag((rule[0], rule[1]))} for the launch's own)")


def _graph_flag(version: tuple[int, int]) -> str:
    """The flag that sets the largest captured size in vLLM ``version``: --max-cudagraph-capture-size from 0.11.1
    (vLLM PR #26016: 0.11.1 vllm/engine/arg_utils.py L1123-1126 adds it for
    CompilationConfig.max_cudagraph_capture_size, config/compilation.py L448, and L1114-1122 makes --cuda-graph-sizes
    a deprecated alias of the full list --cudagraph-capture-sizes; 0.11.0 arg_utils.py L893-894 has only
    --cuda-graph-sizes, SchedulerConfig's, whose one value is that size, memory.settings_from_argv)."""
    if version < (0, 11):
        return "--cuda-graph-sizes N (one value: the largest size)"
    if version < (0, 12):
        return "--max-cudagraph-capture-size (0.11.1 and later; --cuda-graph-sizes in 0.11.0)"
    return "--max-cudagraph-capture-size"
