"""Plan facts: what one step of the engine has to move and compute, per GPU, for one resolved plan.

Everything the step model needs is read once here, from the memory planner (weights per
rank split into always-read and routed-expert bytes, KV bytes per token, the KV pool in
tokens, the engine's batching limits) and from the hardware catalog (datasheet bandwidth,
dense FLOP/s of the dtype the GEMMs run in, interconnect), so a prediction is arithmetic
over a frozen record: a plan search can evaluate thousands a second.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError
from launchcard.predict._dsa import DsaFacts, dsa_facts, dsa_layers
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.hardware import Accelerator
    from launchcard.memory import Arch, MemoryPlan, Settings

ENGINES = ("vllm", "sglang", "trtllm")
# Scheduling policy by engine: vLLM V1 and TensorRT-LLM put prefill chunks into decode
# steps (one token budget); SGLang runs a prefill batch on its own unless --enable-mixed-chunk.
MIXED = {"vllm": True, "trtllm": True, "sglang": False}
# TensorRT-LLM's token budget per step when the launch sets none (BuildConfig / LLM API max_num_tokens 8192); the
# memory planner's default is vLLM's (16,384 on >= 160 GiB GPUs from its 0.29 rule), not TensorRT-LLM's
TRTLLM_MAX_NUM_TOKENS = 8192
# TensorRT-LLM's CUDA graphs when the launch gives no cuda_graph_config (trtllm-serve sets none: commands/serve.py
# get_llm_args): TorchLlmArgs.cuda_graph_config defaults to CudaGraphConfig(), whose max_batch_size 0 becomes 128
# (llmapi/llm_args.py validate_cuda_graph_config, ``config.max_batch_size or 128``) and whose sizes without
# enable_padding (default False) are 1..31, 32, 64, 128 (CudaGraphConfig._generate_cuda_graph_batch_sizes); the
# PyTorch engine replays a graph only for a generation-only batch of exactly a captured size when it does not pad
# (pyexecutor/model_engine.py _maybe_get_cuda_graph: ``batch_size not in self._cuda_graph_batch_sizes``)
TRTLLM_GRAPH_BATCH = 128
TRTLLM_GRAPH_SIZES = (*range(1, 32), 32, 64, 128)


# bidirectional GB/s of an x16 PCIe link by generation, as NVIDIA's datasheets print them (A100: "PCIe Gen4: 64GB/s",
# H100: "PCIe Gen5: 128GB/s"; each generation doubles the lane rate): the rate of a catalog entry whose link is PCIe
# of a stated generation without a figure (its cards are x16; the finding ``link`` says the lanes are assumed)
PCIE_X16_GBPS = {"3.0": 32.0, "4.0": 64.0, "5.0": 128.0, "6.0": 256.0}
_PCIE_KIND = re.compile(r"PCIe (\d\.0)\b")


@dataclass(frozen=True, slots=True)
class HardwareFigures:
    """The datasheet (or measured) figures a step is timed against, each with where it comes from."""

    id: str
    kind: str  # gpu | cpu | ...
    bandwidth_bps: float  # bytes/s of device memory
    flops: dict[str, float] = field(hash=False)  # dense FLOP/s per dtype
    link_bps: float | None = None  # per-device scale-up bandwidth, one direction, bytes/s
    sources: tuple[tuple[str, str], ...] = ()  # (figure, URL or method)
    link_domain: int | None = None  # devices the scale-up link joins (None: unknown)
    scale_out_bps: float | None = None  # per-device network between domains, one direction, bytes/s
    # measured microseconds of one small kernel call from Python on the engine's core (CPU: the eager step's
    # per-op dispatch); the host overhead terms fitted at another speed are scaled by it (None: not measured)
    host_op_us: float | None = None
    # the same for the API server's process (its front end: HTTP, tokenizer, streaming), when measured apart
    front_op_us: float | None = None
    # ... for the benchmark client's process (it reads every stream), and for a request's path through the client
    # and the API server together (their CPU time over the share of a core each got, bench/predict_cpu.py)
    client_op_us: float | None = None
    request_op_us: float | None = None
    # measured (rows, factor): a memory-bound weight pass with that many token rows takes factor x the one-row
    # pass (CPU: one core does not hide the extra rows' GEMM and element-wise work under the weight stream);
    # empty: rows are free until the compute roofline (a GPU's datasheet figures)
    decode_rows: tuple[tuple[int, float], ...] = ()
    # measured: a GEMM of ``rows`` token rows reaches rows / (rows + this) of the FLOP/s (a chunk too short to fill
    # the core's blocking); 0: the whole figure at any size
    gemm_half_rows: float = 0.0
    vendor: str | None = None  # the catalog's vendor (NVIDIA, AMD, ...); None: measured figures, not a catalog entry
    compute_capability: str = ""  # CUDA "major.minor" ("": not CUDA, or not in the catalog)
    # the device's host interface (PCIe), one direction, bytes/s (None: not in the catalog)
    host_link_bps: float | None = None
    # whether a node's GPUs reach each other's memory (peer-to-peer, over NVLink or PCIe); False: collectives go
    # through host memory over each GPU's host link (:meth:`without_p2p`)
    p2p: bool = True
    # where link_bps is not a catalog figure but the x16 rate of the PCIe generation the catalog names (PCIE_X16_GBPS)
    link_assumed: str | None = None

    @classmethod
    def from_accelerator(cls, acc: Accelerator) -> HardwareFigures:
        if not acc.bandwidth_tbps:
            raise InputError(f"the hardware catalog has no memory bandwidth for {acc.id}",
                             fix="add bandwidth_tbps with its source to data/hardware.yaml, or pass "
                                 "--hardware-figures FILE (measured)", field="gpu")
        srcs = [("bandwidth_tbps", acc.source("bandwidth_tbps") or "")]
        srcs += [(f"tflops.{d}", acc.source(f"tflops.{d}") or "") for d in acc.tflops]
        link = acc.link.gbps * 1e9 / 2 if acc.link.gbps else None  # catalog: bidirectional GB/s
        if link:
            srcs.append(("link_gbps", acc.source("link_gbps") or ""))
        out = acc.link.scale_out_gbit * 1e9 / 8 if acc.link.scale_out_gbit else None
        host = acc.link.host_gbps * 1e9 / 2 if acc.link.host_gbps else None
        # a PCIe card: its GPUs talk over the host interface; no figure: the generation's x16 rate
        gen = _PCIE_KIND.match(acc.link.kind)
        assumed = None
        if gen and gen.group(1) in PCIE_X16_GBPS:
            rate = PCIE_X16_GBPS[gen.group(1)] * 1e9 / 2
            if link is None:
                link, assumed = rate, f"PCIe {gen.group(1)} x16"
            if host is None:  # not a datasheet figure: no source URL, the assumption named instead
                host = rate
                srcs.append(("host_link_gbps", f"assumed: the PCIe {gen.group(1)} x16 rate (no link.host_gbps)"))
        srcs += [(k, acc.source(k) or "") for k, v in (("link_domain", acc.link.domain), ("scale_out_gbit", out),
                                                       ("host_link_gbps", host)) if v and not (
            k == "host_link_gbps" and not acc.link.host_gbps)]
        return cls(id=acc.id, kind=acc.kind, bandwidth_bps=acc.bandwidth_tbps * 1e12,
                   flops={d: v * 1e12 for d, v in acc.tflops.items()}, link_bps=link, sources=tuple(srcs),
                   link_domain=acc.link.domain, scale_out_bps=out, vendor=acc.vendor,
                   compute_capability=acc.compute_capability, host_link_bps=host, link_assumed=assumed)

    def without_p2p(self, figures_file: str | None = None) -> HardwareFigures:
        """These figures on a host whose GPUs have no peer-to-peer access to each other (``nvidia-smi topo -p2p r``
        shows NS; vLLM logs "Custom allreduce is disabled because your platform lacks GPU P2P capability"): NCCL
        then moves a collective's data through host memory, each GPU's share over its own host link (PCIe) at once,
        so a collective runs at the host link's rate, whatever NVLink the board has.  ``figures_file``: these
        figures came from --hardware-figures FILE (which carries no host link), not the hardware catalog."""
        if self.host_link_bps is None and figures_file is not None:
            raise InputError(f"the hardware figures file gives no host link (PCIe) figure for {self.id}, so "
                             "collectives without GPU peer-to-peer access cannot be timed", where=figures_file,
                             fix="drop --no-gpu-p2p, or pass --gpu NAME (a catalog GPU with link.host_gbps) instead "
                                 "of --hardware-figures", field="hardware_figures")
        if self.host_link_bps is None:
            raise InputError(f"the hardware catalog has no host link (PCIe) figure for {self.id}, so collectives "
                             "without GPU peer-to-peer access cannot be timed",
                             fix="add link.host_gbps with its source to data/hardware.yaml, or drop --no-gpu-p2p",
                             field="gpu")
        # between nodes the network stays the path (link_domain, scale_out_bps kept): only the scale-up part changes
        return replace(self, link_bps=self.host_link_bps, p2p=False)

    @classmethod
    def from_file(cls, path: str | Path) -> HardwareFigures:
        """Measured figures: ``{"id", "kind", "bandwidth_gbs", "tflops": {dtype: x}, "method"}``."""
        where = str(path)
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            bw = float(doc["bandwidth_gbs"])
            tf = {str(k): float(v) * 1e12 for k, v in dict(doc["tflops"]).items()}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a hardware figures file ({exc.__class__.__name__}: {exc})", where=where,
                             fix="write {\"bandwidth_gbs\": X, \"tflops\": {\"fp32\": Y}, \"method\": \"...\"} "
                                 "(bench/measure_cpu.py does)", field="hardware_figures") from None
        if bw <= 0 or not tf or min(tf.values()) <= 0:
            raise InputError("bandwidth and FLOP/s must be positive", where=where,
                             fix="measure again (bench/measure_cpu.py)", field="hardware_figures")
        method = str(doc.get("method") or where)
        op = doc.get("op_us")
        fop, cop, rop = doc.get("front_op_us"), doc.get("client_op_us"), doc.get("request_op_us")
        for name, v in (("op_us", op), ("front_op_us", fop), ("client_op_us", cop), ("request_op_us", rop)):
            if v is not None and not (isinstance(v, (int, float)) and v > 0):
                raise InputError(f"{name} must be a positive number of microseconds ({v!r})", where=where,
                                 fix=f"measure again (bench/measure_cpu.py) or drop {name}", field="hardware_figures")
        rows = doc.get("decode_rows") or {}
        try:
            table = tuple(sorted((int(m), float(x)) for m, x in dict(rows).items()))
        except (TypeError, ValueError):
            table = ()
        if any(m < 1 or not x > 0 for m, x in table) or (table and rows and table[0][0] != 1) or (rows and not table):
            raise InputError(f"decode_rows must map row counts from 1 up to positive factors ({rows!r})", where=where,
                             fix="measure again (bench/measure_cpu.py --config) or drop decode_rows",
                             field="hardware_figures")
        half = doc.get("gemm_half_rows") or 0.0
        if not isinstance(half, (int, float)) or half < 0:
            raise InputError(f"gemm_half_rows must be a number of rows >= 0 ({half!r})", where=where,
                             fix="measure again (bench/measure_cpu.py --config) or drop gemm_half_rows",
                             field="hardware_figures")
        return cls(id=str(doc.get("id") or "measured"), kind=str(doc.get("kind") or "cpu"), bandwidth_bps=bw * 1e9,
                   flops=tf, link_bps=None, sources=(("bandwidth_gbs", method), ("tflops", method)),
                   host_op_us=float(op) if op is not None else None,
                   front_op_us=float(fop) if fop is not None else None,
                   client_op_us=float(cop) if cop is not None else None,
                   request_op_us=float(rop) if rop is not None else None, decode_rows=table,
                   gemm_half_rows=float(half))


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
    # vLLM's async scheduling (:func:`vllm_async_scheduling`): the engine's per-request host work of a step
    # (scheduler, output building, the model runner's input preparation) runs while the GPU computes the step before,
    # so it costs time only where it is longer than the step's kernels; False: in series with them
    host_overlap: bool = False
    host_overlap_rule: str = ""  # why vLLM schedules asynchronously or not (:func:`vllm_async_rule`)
    # the routed experts' kernel where it is not their dtype's grouped GEMM (MXFP4, :func:`mxfp4_kernel`): its key in
    # the kernel tables ("kernels" -> moe); None: the expert dtype's grouped-GEMM class
    moe_kernel: str | None = None
    # vLLM's hybrid KV cache manager (0.10+) keeps sliding-window layers' blocks apart and frees those wholly out of
    # the window (0.10.2 vllm/v1/core/single_type_kv_cache_manager.py L375-391, SlidingWindowManager.
    # remove_skipped_blocks, called by kv_cache_manager.py allocate_slots L252): the pool holds ``kv_pool_tokens``
    # tokens of every attention layer, and a request of context L takes L of its full-attention layers' share and at
    # most window + one block of its sliding layers' (:func:`kv_tokens_at`); 0: KV grows with the whole context
    kv_pool_tokens: int = 0
    kv_block: int = 16

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


# default per-token acceptance by speculative method when the workload does not give one: round typical
# values with no source for any given model or traffic, so every prediction that uses one says so (an
# "assumed" finding) and names the option that replaces it
DEFAULT_ACCEPTANCE = {"mtp": 0.8, "eagle3": 0.75, "eagle": 0.7, "ngram": 0.4, "suffix": 0.5, "draft": 0.7}


# the dtype a quantized GEMM's tensor cores multiply in: the activations', for schemes that keep 16-bit
# activations (weight-only W4A16 / W8A16 dequantize in registers). MXFP4 MoE takes bf16 activations: vLLM's
# Mxfp4Config.get_supported_act_dtypes is [bfloat16] and its SM100 default backend is FlashInfer MXFP4 x BF16 (MXFP8
# activations only with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8), vllm/model_executor/layers/quantization/mxfp4.py
MATH_DTYPE = {"fp8": "fp8", "nvfp4": "fp4", "int8": "int8"}


# vLLM's hybrid KV cache manager: sliding-window layers in their own block groups, freed out of the window (the memory
# planner's grouping rule, launchcard.memory._model: one unified group before 0.10)
HYBRID_KV_FROM = (0, 10)


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
    for alt in ("bf16", "fp16", "fp32"):  # never a faster format than the weights allow
        if alt in hw.flops:
            out.append(Finding("assumed", "compute-dtype", f"no {base} FLOP/s figure for {hw.id}: timed at {alt}"))
            return alt
    raise InputError(f"the hardware figures of {hw.id} give no FLOP/s",
                     fix="add tflops with a source to data/hardware.yaml or pass --hardware-figures",
                     field="gpu")


def facts_from_memory_plan(arch: Arch, settings: Settings, plan: MemoryPlan, hardware: HardwareFigures, *,
                           model: str = "model", engine: str = "vllm") -> ServingFacts:
    """The plan facts of a memory-planned plan (``plan`` from :func:`launchcard.memory.plan_memory`)."""
    from launchcard.memory import ATTENTION_KINDS, SLIDING, kv_read_split, weight_split

    if engine not in ENGINES:
        raise InputError(f"unknown engine ({engine!r})", fix=f"use one of {', '.join(ENGINES)}",
                         field="engine")
    s = settings
    found: list[Finding] = []
    split = weight_split(arch, s)
    act = 4 if arch.torch_dtype == "float32" and s.dtype in ("auto", "float32", "float") else 2
    if s.dtype in ("float32", "float"):
        act = 4
    # the experts' GEMMs run in their scheme's math dtype; the always-read ones only when the scheme covers them
    # (gpt-oss keeps attention and router in bf16, MXFP4 experts only)
    expert_dtype = _compute_dtype(split.quant, act, hardware, found)
    cc = _cc(hardware)
    if engine == "vllm" and split.quant in NATIVE_CC and cc is not None and cc < NATIVE_CC[split.quant] and not (
            split.quant == "mxfp4" and arch.is_moe and cc[0] == 9):  # SM90's MXFP4 experts: mxfp4_kernel says
        found.append(_weight_only_finding(split.quant, hardware))
    dense_q = bool(split.covers & {"attn", "mlp", "shared_experts"}) or not split.covers
    dtype = expert_dtype if dense_q else _compute_dtype("none", act, hardware, found)
    moe_kernel: str | None = None
    if split.quant == "mxfp4" and arch.is_moe:  # the experts' own kernel (the dense GEMMs keep ``dtype``)
        from launchcard.predict._mxfp4 import mxfp4_kernel

        moe_kernel, expert_dtype = mxfp4_kernel(engine, hardware, expert_dtype, found)
    heads_rank = arch.num_heads / s.tp
    attn_layers = sum(1 for k in arch.layer_kinds if k in ATTENTION_KINDS) / s.pp
    slide_layers = sum(1 for k in arch.layer_kinds if k == SLIDING) / s.pp
    kv_full, kv_slide, window = kv_read_split(arch, s)
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
        dsa = dsa_facts(arch, s, engine, hardware.compute_capability, layers_dsa, found)
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
    replicas = s.dp
    kv_cap = plan.kv_cache_tokens
    pool_tokens = 0
    if engine == "vllm" and kv_slide and window and s.version >= HYBRID_KV_FROM and kv_full + kv_slide > 0:
        # the pool in tokens of every attention layer (what vLLM prints before 0.21; from 0.21 it prints the
        # concurrency at max_model_len x that length instead)
        pool_tokens = int(plan.num_blocks * plan.block_size * plan.kv_bytes_per_token_per_gpu / (kv_full + kv_slide))
    group = s.tp * (s.dp if s.expert_parallel and arch.is_moe else 1)
    if hardware.kind != "cpu" and not hardware.p2p and group > 1:
        found.append(_no_p2p_finding(hardware, engine))
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
    g_tokens, g_rule = _graph_limit(s, hardware, engine, plan.max_num_seqs, budget, per_seq,
                                    found, plan.breakdown.gpu_memory_gib) if graphs else (None, None)
    g_sizes = None
    if graphs and engine == "trtllm" and g_rule is None and s.max_cudagraph_capture_size is None \
            and not s.cudagraph_capture_sizes:
        g_sizes = frozenset(b * per_seq for b in TRTLLM_GRAPH_SIZES if b <= plan.max_num_seqs)
    by_chunk = engine == "vllm" and (
        s.version < FULL_PROMPT_ADMISSION_FROM if s.scheduler_reserve_full_isl is None
        else not s.scheduler_reserve_full_isl)
    if by_chunk:
        found.append(Finding("info", "admission", f"vLLM {s.version[0]}.{s.version[1]} admits a request when KV for "
                                                  "its first prefill chunk is free and preempts the newest requests "
                                                  "when a later chunk finds none (before 0.19, or with "
                                                  "--no-scheduler-reserve-full-isl)"))
    if engine == "trtllm":
        found.append(Finding("assumed", "chunked-prefill", "TensorRT-LLM without enable_chunked_prefill (its default): "
                                                           "a prompt is prefilled whole, in a step with room for it"))
    async_on, async_why = vllm_async_rule(s.version, s.async_scheduling, s.pp, spec_method)
    facts = ServingFacts(
        model=model, engine=engine, hardware=hardware, gpus=s.tp * s.pp * s.dp, replicas=replicas, tp=s.tp,
        pp=s.pp, ep=s.expert_parallel, layers=math.ceil(arch.num_layers / s.pp), hidden=arch.hidden_size,
        act_bytes=act, dense_bytes=split.dense_bytes, dense_params=split.dense_params - split.lm_head_params,
        lm_head_params=split.lm_head_params,
        expert_bytes=split.expert_bytes, expert_params=split.expert_params, experts=arch.num_experts,
        experts_per_token=max(1, arch.experts_per_tok) if arch.is_moe else 0, moe_layers=moe_layers,
        kv_bytes_per_token=kv_full + kv_slide, attn_flops_per_pair=pair, sliding_kv_bytes=kv_slide,
        sliding_flops_per_pair=pair_slide, window=window if kv_slide else 0, compute_dtype=dtype,
        expert_dtype=expert_dtype if arch.is_moe else dtype,
        kv_capacity_tokens=kv_cap, max_num_seqs=plan.max_num_seqs,
        max_num_batched_tokens=budget, max_model_len=plan.max_model_len,
        cuda_graphs=graphs, spec_method=spec_method,
        spec_tokens=s.num_speculative_tokens if spec_method else 0, draft_fraction=draft_fraction,
        findings=tuple(found), prefill_flops_per_pair=pf_pair, chunked_prefill=engine != "trtllm",
        release=s.vllm_version,
        graph_tokens=g_tokens, graph_rule=g_rule, graph_sizes=g_sizes, dsa=dsa, admit_by_chunk=by_chunk,
        recv_lag=_sglang_recv_lag(s.pp, bool(spec_method)) if engine == "sglang" else 0,
        # the GPU sets' measured per-request host term is stated for GPU hosts; the CPU set was fitted serial
        host_overlap=engine == "vllm" and hardware.kind == "gpu" and async_on,
        host_overlap_rule=async_why if engine == "vllm" else "",
        moe_kernel=moe_kernel, kv_pool_tokens=pool_tokens, kv_block=plan.block_size,
    )
    if g_rule is not None and g_tokens is not None:
        facts = replace(facts, findings=(*facts.findings, _graph_finding(facts, g_tokens, g_rule)))
    if engine == "vllm" and graphs and s.version < FULL_DECODE_GRAPHS_FROM:
        facts = replace(facts, findings=(*facts.findings, Finding(
            "assumed", "cuda-graph-mode",
            f"vLLM {s.version[0]}.{s.version[1]} replays piecewise CUDA graphs in decode steps too (cudagraph_mode "
            "PIECEWISE, as vLLM 0.10.1.1's start-up log prints it: attention launched between the captured pieces; "
            "FULL_AND_PIECEWISE, whole decode graphs, is the default only since vLLM PR #25444, merged "
            "2025-09-23): timed as the sets' whole decode graphs (their vLLM runs are 0.11.2 or later), so small "
            "decode batches are likely predicted fast")))
    return facts


# NVIDIA GPUs below compute capability 8.9 have no FP8 tensor cores, below 10.0 no FP4 ones: vLLM serves such
# checkpoints there with its Marlin weight-only kernels (vLLM PR #5975, "Expand FP8 support to Ampere GPUs using FP8
# Marlin": the weights dequantized to bf16 inside the GEMM; FP4: marlin_utils_fp4.py)
NATIVE_CC = {"fp8": (8, 9), "mxfp4": (10, 0), "nvfp4": (10, 0)}
WEIGHT_ONLY_BITS = {"fp8": "FP8", "mxfp4": "FP4", "nvfp4": "FP4"}


def _cc(hw: HardwareFigures) -> tuple[int, int] | None:
    """The CUDA compute capability of an NVIDIA catalog GPU (None: not NVIDIA, or not stated)."""
    if hw.vendor != "NVIDIA" or not re.fullmatch(r"\d+\.\d+", hw.compute_capability):
        return None
    major, minor = hw.compute_capability.split(".")
    return int(major), int(minor)


def _weight_only_finding(quant: str, hw: HardwareFigures) -> Finding:
    kind = WEIGHT_ONLY_BITS[quant]
    return Finding("assumed", "weight-only",
                   f"{quant} weights on {hw.id} (compute capability {hw.compute_capability}, no {kind} tensor cores): "
                   f"vLLM runs them through its Marlin weight-only kernels, which read the {quant} bytes and multiply "
                   f"in bf16 (vLLM PR #5975; its start-up log says 'Weight-only {kind} compression will be used "
                   "leveraging the Marlin kernel', e.g. vLLM 0.10.1.1 marlin_utils_fp4.py L196 serving gpt-oss on "
                   "A100s, dennislee22/vLLM-benchmarking log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log L79): "
                   "timed at those bytes and the bf16 rate at the dense GEMM class's share; Marlin's own share of "
                   "it is not measured (no kernel table)")


def _no_p2p_finding(hw: HardwareFigures, engine: str) -> Finding:
    """What a plan's collectives run over when its GPUs have no peer-to-peer access."""
    gbs = (hw.link_bps or 0.0) * 2 / 1e9
    own = ("vLLM's custom all-reduce needs it (vLLM 0.10.1.1 distributed/device_communicators/custom_all_reduce.py "
           "L147 disables it, as its start-up log prints)" if engine == "vllm"
           else "an engine's custom all-reduce reads its peers' memory, which needs it")
    basis = f"{hw.link_assumed} assumed" if hw.link_assumed else "the catalog's link.host_gbps"
    return Finding("assumed", "gpu-p2p",
                   f"no GPU peer-to-peer access (--no-gpu-p2p): {own}, so each all-reduce is NCCL's through host "
                   f"memory, timed over each GPU's host link ({hw.id}: {gbs:g} GB/s both ways, {basis}) at the "
                   "set's collective share and latency (fitted over NVLink and peer access, not measured through "
                   "host memory)")


def _sglang_recv_lag(pp: int, spec: bool) -> int:
    """SGLang's receive lag by its default loop (no --disable-overlap-schedule, SGLANG_ENABLE_SPEC_V2 unset)."""
    from launchcard.predict._sglang_rules import overlap_schedule, recv_lag

    return recv_lag(overlap_schedule(disabled=False, pp=pp, spec=spec, spec_v2=False))


def with_limits(facts: ServingFacts, **changes: Any) -> ServingFacts:
    """A copy with other batching limits or engine (what a plan search varies without re-planning memory); vLLM's
    default CUDA graph ceiling follows max_num_seqs and the token budget."""
    f = replace(facts, **changes)
    rule = f.graph_rule
    if rule is not None and "graph_tokens" not in changes and (f.max_num_seqs, f.max_num_batched_tokens) != (
            facts.max_num_seqs, facts.max_num_batched_tokens):
        top = graph_tokens_at(f, f.max_num_seqs)
        assert top is not None
        f = replace(f, graph_tokens=top, findings=tuple(
            _graph_finding(f, top, rule) if x.code == "cuda-graphs" else x for x in f.findings))
    return f


def graph_tokens_at(f: ServingFacts, max_num_seqs: int) -> int | None:
    """``f.graph_tokens`` were max_num_seqs ``max_num_seqs`` (vLLM's default follows it; a given limit does not)."""
    rule = f.graph_rule
    if rule is None:
        return f.graph_tokens
    return vllm_graph_tokens((rule[0], rule[1]), max_num_seqs, f.max_num_batched_tokens, 1 + f.spec_tokens,
                             ceiling=rule[2])


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


def _graph_finding(f: ServingFacts, top: int, rule: tuple[int, int, int]) -> Finding:
    spec = f" x {1 + f.spec_tokens} tokens per sequence" if f.spec_tokens and (rule[0], rule[1]) >= GRAPH_SPEC_FROM \
        else ""
    return Finding("assumed", "cuda-graphs",
                   f"CUDA graphs captured up to {top} tokens per step: vLLM {rule[0]}.{rule[1]}'s default "
                   f"min(2 x max_num_seqs {f.max_num_seqs}{spec}, {rule[2]}) within max_num_batched_tokens "
                   f"{f.max_num_batched_tokens} (vllm/config/vllm.py _set_cudagraph_sizes); bigger steps run eagerly "
                   "(pass --max-cudagraph-capture-size for the launch's own)")


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
                             "tensorrt_llm/llmapi/llm_args.py), which trtllm-serve keeps unless "
                             "--extra_llm_api_options sets one (not read here); any other batch runs eagerly"))
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
    sm100 = hw.compute_capability.split(".")[0] == "10"
    rule = (v[0], v[1], GRAPH_CEILING_SM100 if sm100 and v >= GRAPH_SM100_FROM else GRAPH_CEILING)
    return vllm_graph_tokens(v, max_num_seqs, budget, per_seq, ceiling=rule[2]), rule
