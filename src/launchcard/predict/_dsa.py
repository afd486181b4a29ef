"""DeepSeek Sparse Attention (DSA: DeepSeek-V3.2's lightning indexer + top-k sparse MLA) in a step's work.

A DSA layer runs two kernels where a dense MLA layer runs one.  The *indexer* scores every context token for
every query token: ``index_n_heads`` x ``index_head_dim`` FP8 products per (query, key) pair over the whole
context (DeepGEMM ``fp8_mqa_logits`` in prefill, ``fp8_paged_mqa_logits`` in decode), reading its own FP8 key
cache (132 bytes per token per layer for V3.2) and writing float32 logits that a top-k kernel reads back.  Its
projections are replicated, so every tensor-parallel rank scores with all heads.  The *sparse MLA* then attends
each query to the ``index_topk`` selected tokens only, in the absorbed latent form (keys of kv_lora_rank + rope
dims, values of kv_lora_rank) for prefill and decode alike.

How much of that the engines' kernels compute (read from their sources, per release):

* vLLM FLASHMLA_SPARSE (0.11-0.23): "the kernels want to use MQA 576/512 approach for both prefill and decode"
  (vllm/v1/attention/backends/mla/flashmla_sparse.py, 0.13.0 L959-960); FlashMLA's SM90 sparse kernel walks all
  ``topk / 64`` index blocks and masks the invalid ones (csrc/sm90/prefill/sparse/fwd.cu ``num_topk_blocks``), so
  a query costs ``index_topk`` keys whatever its context, and it computes heads in blocks of 64 (``B_H = 64``;
  vLLM pads the rank's heads to 64 on Hopper, 128 on Blackwell, flashmla_sparse.py 0.13.0 L722, L936-943).
  From 0.24 vLLM passes each query's valid length (``topk_length``, flashmla_sparse.py 0.24.0 L619-633): a query
  costs min(context, topk) keys.
* SGLang NSA/DSA backend: a prefill batch whose longest sequence fits in ``index_topk`` runs dense MHA
  (``MHA_ONE_SHOT``, srt/models/deepseek_v2.py 0.5.5.post3 L415-433; aiconfigurator's SGLang 0.5.14 DSA tables
  record it with an FP8 cache too) and the indexer only writes keys (nsa_indexer.py L588-600); longer ones run
  FlashMLA's sparse prefill on Hopper (every topk block, heads padded to 64 or 128); decode runs FA3 over
  ``min(context, topk)`` selected tokens without padding with a bf16 cache (nsa_backend.py ``nsa_cache_seqlens_int32``
  "clipped to topk", L101), FlashMLA with an FP8 one (``flashmla_kv``); Blackwell runs TensorRT-LLM's kernels
  for decode, and prefill with an FP8 cache (srt/arg_groups/overrides.py 0.5.21 L675-686; 0.5.5.post3 ran FlashMLA
  there: server_args.py L1130-1141).
* vLLM 0.11-0.15 ask DeepGEMM to *clean* the indexer's logits (vllm/utils/deep_gemm.py 0.13.0 L300-309
  ``clean_logits=True``; 0.11.2-0.15.1 alike): a decode query's logits row is ``max_model_len`` floats
  (deepseek_v2.py 0.13.0 L737-745 passes ``max_model_len``), and DeepGEMM's cleaner writes -inf over every
  column outside the query's context (deep_gemm/include/deep_gemm/impls/smxx_clean_logits.cuh: the loop over
  ``seq_len_kv``), so every decode token writes ``max_model_len`` x 4 bytes per DSA layer however short its
  context; a prefill chunk's logits are [chunk tokens, the chunk's keys] and DeepGEMM's ``fp8_mqa_logits`` cleans
  by default (its ``clean_logits = true`` default; vLLM 0.13.0's wrapper passes none), so the whole matrix is
  written.  From 0.16 vLLM passes ``clean_logits=False`` for both (model_executor/layers/sparse_attn_indexer.py
  0.16.0 L111, L161); SGLang never cleans (nsa_indexer.py 0.5.6.post2 L318, L439).
* TensorRT-LLM on Hopper runs FlashMLA's sparse prefill kernel for prefill and decode (modules/attention.py
  ``forward_sparse_mla_kvcache_bf16`` below SM100, NVIDIA/TensorRT-LLM 00547a25; PR #9484): heads padded to 64,
  every topk block (no ``topk_length``).  Its Blackwell kernels were not read here: timed at min(context, topk) keys
  without padding, the least the mechanism costs (an ``assumed`` finding says so).

The sparse MLA and the indexer's FP8 logits run at the FLOP/s shares measured on their own kernels
(:func:`launchcard.predict._kernels.dsa_kernel_eff`, fitted by bench/predict_kernels.py on the wheel's kernel-level
tables); without them, the attention class's and the FP8 GEMM class's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from launchcard.limits import compute_capability
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch, Settings

# vLLM passes each query's valid top-k length to FlashMLA from this release (flashmla_sparse.py 0.24.0 L619-632;
# 0.23.0 has no topk_length)
VLLM_TOPK_LENGTH_FROM = (0, 24)
# vLLM passes clean_logits=False to DeepGEMM's MQA-logits kernels from this release (sparse_attn_indexer.py
# 0.16.0 L111, L161; 0.15.1's vllm/utils/deep_gemm.py L331 still cleans)
VLLM_NO_CLEAN_FROM = (0, 16)
LOGIT_WRITE = 4  # a float32 logit written
LOGIT_BYTES = 4 + 4  # a float32 logit per (query, key) pair, written by the indexer and read by its top-k


class DsaFacts(NamedTuple):
    """The DSA work of one rank, all its DSA layers together (one PP stage)."""

    topk: int  # keys a query attends
    dec_pair_flops: float  # FLOPs per (query, attended key) of the decode kernel (padded heads included)
    pf_pair_flops: float  # the same for prefill
    dec_full: bool  # the decode kernel computes all topk keys whatever the context
    pf_full: bool
    dense_prefill: bool  # a prefill whose sequences fit in topk runs dense MLA, the indexer writes keys only
    index_pair_flops: float  # indexer FLOPs per (query, context key), FP8
    index_kv_bytes: float  # indexer key cache bytes per context token
    index_pair_bytes: float  # logits bytes per (query, context key)
    # kernel groups the indexer adds per step (one per DSA layer): its projections, logits and top-k kernels double
    # a layer's fixed cost; aiconfigurator's vLLM 0.24.0 H200 module tables at the smallest shapes (launch and
    # tail bound): MLA generation module 0.088 ms, DSA 0.167 ms (16 heads; 128 heads 0.132 vs 0.209)
    kernel_groups: int = 0
    # logits cleaned to -inf by the indexer (vLLM before 0.16): a decode query writes a row of this many float32
    # logits whatever its context (the max model length; 0: no cleaning), a prefill chunk its whole
    # [tokens x keys] matrix
    clean_row: float = 0.0
    # a speculative step's verify pass, where the engine runs it through its prefill kernel (SGLang: TARGET_VERIFY is
    # an extend mode, so nsa_backend.forward_extend runs the prefill implementation, 0.5.6.post2 L861-1025): FLOPs
    # per (query, key) and whether every slot is computed; 0: the decode kernel's
    verify_pair_flops: float = 0.0
    verify_full: bool = False
    # SGLang's FlashMLA kv kernel over a bf16 cache quantizes the layer's whole KV buffer to FlashMLA's FP8 record
    # before every call ("inefficiently quantize the whole cache"): bytes a decode / prefill step reads and writes
    # for it, all DSA layers (requant_bytes); 0: no such step
    dec_requant: float = 0.0
    pf_requant: float = 0.0
    # SGLang's decode indexer asks DeepGEMM for its paged-MQA-logits schedule, a kernel JIT-compiled per batch size
    # rounded up to JIT_ALIGN (launchcard.predict._sglang_nsa.nsa_jit): seconds an eager decode step stalls the first
    # time it meets a rounded size above :func:`jit_warm`'s; 0: none
    jit_s: float = 0.0


# DeepGEMM's paged-MQA-logits schedule kernel takes the batch rounded up to this as a template argument
# (csrc/jit_kernels/impls/smxx_fp8_paged_mqa_logits.hpp ``align(batch_size, 32)``)
JIT_ALIGN = 32


def jit_warm(graph_tokens: int | None, graphs: bool) -> int:
    """The largest rounded batch (tokens: a verify step's are batch x draft tokens) whose schedule kernel the engine
    compiled before serving: its CUDA graph capture runs every captured size up to ``graph_tokens``; without graphs,
    the warm-up request's batch of one."""
    top = graph_tokens if graphs and graph_tokens else 1
    return -(-top // JIT_ALIGN) * JIT_ALIGN


def dsa_layers(arch: Arch, pp: int) -> float:
    """DSA layers on one PP stage: every MLA layer of a DSA model (the memory planner's share of the layers)."""
    return sum(1 for k in arch.layer_kinds if k == "mla") * math.ceil(arch.num_layers / pp) / max(1, arch.num_layers)


# SGLang --nsa-prefill-backend / --nsa-decode-backend (--dsa-* from 0.5.15) -> (padded heads, every topk slot): the
# FlashMLA kernels pad heads and walk every index block; FA3 runs the clipped length (nsa_backend.py 0.5.5.post3
# L101) on the rank's own heads
_SGLANG_KERNELS = {"flashmla_sparse": ("prefill", True), "flashmla_kv": ("decode", True),
                   "flashmla_auto": ("decode", True), "fa3": ("", False)}


def dsa_facts(arch: Arch, s: Settings, engine: str, capability: str, layers: float, found: list[Finding],
              backends: tuple[str | None, str | None] = (None, None), max_len: int = 0) -> DsaFacts | None:
    """The DSA facts of a plan (None for a model without ``index_topk``); ``layers``: DSA layers on one PP stage;
    ``backends``: SGLang's (prefill, decode) backends when the command names them (None: its defaults);
    ``max_len``: the plan's max model length (the logits row vLLM before 0.16 cleans; 0: not known)."""
    if not arch.index_topk:
        return None
    from launchcard.memory import dsa_fp8_default, index_cache_bytes

    heads = arch.num_heads / s.tp
    qk, v = arch.kv_lora_rank + arch.qk_rope_head_dim, arch.kv_lora_rank
    cc = compute_capability(capability)  # None: not a CUDA GPU
    major = cc[0] if cc is not None else 0
    blackwell = major == 10
    # FlashMLA's sparse kernels compute whole head blocks: the BF16 prefill kernel 64 heads on Hopper, 128 on
    # Blackwell (vLLM 0.15.1 flashmla_sparse.py L729-732; 0.13.0 L722); the FP8 decode kernel 64 or 128, whichever
    # holds the rank's heads (0.15.1 L691-694; SGLang 0.5.21 dsa_backend.py L408-411)
    pf_padded = math.ceil(heads / (128 if blackwell else 64)) * (128 if blackwell else 64)
    dec_padded = 64 if heads <= 64 else math.ceil(heads / 128) * 128
    fp8 = (s.kv_cache_dtype or "auto").lower().startswith("fp8") or dsa_fp8_default(arch, s)
    plain, pad, dpad = (2 * h * (qk + v) * layers for h in (heads, pf_padded, dec_padded))
    clean = 0
    if engine == "vllm":
        full = s.version < VLLM_TOPK_LENGTH_FROM
        # DeepGEMM's kernels on CUDA GPUs only (ROCm runs rocm_fp8_paged_mqa_logits, deepseek_v2.py 0.13.0 L730-736)
        if s.version < VLLM_NO_CLEAN_FROM and max_len > 0 and cc is not None:
            clean = max_len
            found.append(Finding("info", "dsa-logits",
                                 f"vLLM {s.vllm_version or 'before 0.16'}: the indexer's logits are cleaned to -inf "
                                 f"over the max model length ({max_len:,} float32 per decode token per layer, "
                                 "however short the context; a prefill chunk's whole tokens x keys matrix): "
                                 "clean_logits=True until 0.16 (vllm/utils/deep_gemm.py 0.13.0 L300-309); a "
                                 "smaller --max-model-len writes less"))
        # a bf16 cache: the prefill kernel for every token; FP8: the FP8 decode kernel for every token below 32 heads
        # per rank (mixed batch), else prefill kernel + decode kernel (flashmla_sparse.py 0.13.0 L46-56)
        pf = pad if not fp8 or heads >= 32 else dpad
        dec, pf_full, dec_full, dense = (dpad if fp8 else pad), full, full, False
        verify = False  # a verify pass is decode tokens to vLLM's FlashMLA sparse backend
    elif engine == "sglang":
        # backends by GPU and cache dtype (srt/arg_groups/overrides.py 0.5.21 L675-686): Hopper FlashMLA sparse
        # prefill (padded heads, every topk block) and FA3 decode (bf16) or FlashMLA for both (fp8); Blackwell
        # TRT-LLM's kernels for decode (and prefill with an fp8 cache)
        trt_pf = blackwell and fp8
        flash_dec = fp8 and not blackwell
        pf, pf_full = (plain, False) if trt_pf else (pad, True)
        dec, dec_full = (dpad, True) if flash_dec else (plain, False)
        dense = True
        verify = True
        for i, name in enumerate(backends):
            if name is None:
                continue
            padded_full = _SGLANG_KERNELS.get(name.lower())
            if padded_full is None:
                found.append(Finding("assumed", "dsa-kernels",
                                     f"SGLang DSA backend {name}: its kernels not read; timed at min(context, "
                                     f"{arch.index_topk}) keys per query without head padding"))
                padded_full = ("", False)
            cost = {"prefill": pad, "decode": dpad}.get(padded_full[0], plain)
            if i == 0:
                pf, pf_full = cost, padded_full[1]
            else:
                dec, dec_full = cost, padded_full[1]
        if blackwell and not all(backends):
            found.append(Finding("assumed", "dsa-kernels",
                                 "SGLang on Blackwell: TensorRT-LLM's sparse MLA kernels timed at min(context, "
                                 f"{arch.index_topk}) keys per query without head padding (their source not read)"))
    elif engine == "trtllm" and major == 9:
        # TensorRT-LLM on Hopper runs FlashMLA's sparse *prefill* kernel for context and generation alike
        # (tensorrt_llm/_torch/modules/attention.py forward_context_sparse_mla / forward_generation_sparse_mla ->
        # forward_sparse_mla_kvcache_bf16 below SM100, NVIDIA/TensorRT-LLM 00547a25; the path PR #9484 fixed for TP,
        # merged 2025-11-26, before 1.2.0rc5): the rank's heads padded to a multiple of 64 and no topk_length
        # passed, so every index block is walked (the kernel vLLM before 0.24 runs with a bf16 cache)
        dec, pf, dec_full, pf_full, dense = pad, pad, True, True, False
        verify = False
        found.append(Finding("info", "dsa-kernels",
                             "TensorRT-LLM on Hopper: the sparse MLA runs FlashMLA's sparse prefill kernel for "
                             f"prefill and decode (heads padded to {pf_padded}, all {arch.index_topk} slots; "
                             "modules/attention.py forward_sparse_mla_kvcache_bf16 below SM100)"))
    else:
        dec, pf, dec_full, pf_full, dense = plain, plain, False, False, False
        verify = False
        found.append(Finding("assumed", "dsa-kernels",
                             f"{engine}: its DSA kernels are not modelled from its source: the sparse MLA timed at "
                             f"min(context, {arch.index_topk}) keys per query without head padding"))
    how = []
    if (pf == pad and pad != plain) or (dec == dpad and dpad != plain) or (pf == dpad and dpad != plain):
        how.append(f"FlashMLA computes whole head blocks: {heads:g} heads per rank cost "
                   f"{pf_padded if pf == pad else dec_padded}")
    if dec_full or pf_full:
        how.append(f"all {arch.index_topk} slots computed whatever the context in "
                   + ("prefill and decode" if dec_full and pf_full else "decode" if dec_full else "prefill"))
    if dense:
        how.append(f"a prefill whose sequences fit in {arch.index_topk} runs dense MLA")
    found.append(Finding("info", "dsa", f"DeepSeek Sparse Attention: indexer of {arch.index_n_heads} x "
                                        f"{arch.index_head_dim} FP8 over every context token, MLA over the top "
                                        f"{arch.index_topk}" + (f" ({'; '.join(how)})" if how else "")))
    return DsaFacts(topk=arch.index_topk, dec_pair_flops=dec, pf_pair_flops=pf, dec_full=dec_full, pf_full=pf_full,
                    dense_prefill=dense, index_pair_flops=2.0 * arch.index_n_heads * arch.index_head_dim * layers,
                    index_kv_bytes=index_cache_bytes(arch) * layers, index_pair_bytes=LOGIT_BYTES * layers,
                    kernel_groups=round(layers), clean_row=float(clean),
                    verify_pair_flops=pf if verify else 0.0, verify_full=verify and pf_full)


# SGLang NSA backend: a call of FlashMLA's kv kernel (flash_mla_with_kvcache) on a bf16 cache first quantizes the
# layer's whole KV buffer, pool tokens x (kv_lora_rank + rope) bf16, into FlashMLA's FP8 record (nsa_backend.py
# _forward_flashmla_kv: 0.5.5.post1 L1166-1168, 0.5.6.post2 L1254-1256, 0.5.7 L1436-1438 under
# SGLANG_NSA_FLASHMLA_BACKEND_DECODE_COMPUTE_FP8, default "true" (nsa/utils.py 0.5.6.post2 L16-18); 0.5.9 L1729-1731
# always); the buffer is get_key_buffer(layer_id) (L1061), every slot of the pool.  Releases read: 0.5.5-0.5.9
REQUANT_RELEASES = ((0, 5, 5, 0), (0, 5, 9, 99))
REQUANT_ENV = "SGLANG_NSA_FLASHMLA_BACKEND_DECODE_COMPUTE_FP8"


def requant_bytes(kv_lora_rank: int, rope_dim: int, pool_tokens: int, layers: float) -> float:
    """Bytes one FlashMLA kv call per DSA layer moves re-quantizing a bf16 pool of ``pool_tokens``: the latent read
    at 2 bytes an element, FlashMLA's FP8 record written (the latent in FP8, a float32 scale per 128, the rope part
    bf16: 656 bytes for V3.2; flash_mla_interface's layout, quant_k_cache.py 0.5.6.post2 L24-38)."""
    record = kv_lora_rank + kv_lora_rank // 128 * 4 + 2 * rope_dim
    return pool_tokens * ((kv_lora_rank + rope_dim) * 2 + record) * layers


AttnFn = Callable[[float, float, float, float, float], tuple[float, float]]


def dsa_attention(d: DsaFacts, kv_bytes: float, dense_pf_pair: float, bw: float, attn_fl: float, sparse_fl: float,
                  index_fl: float, ap_half: float, per_seq: int, dense_gemm_s: float = 0.0) -> AttnFn:
    """``(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read) -> (attention memory s, attention compute s)`` at
    100% of the bandwidth: each kernel (indexer, sparse MLA; decode and prefill) a roofline of its own.
    ``kv_bytes``: the latent's bytes per token, all layers; ``dense_pf_pair``: a dense MLA prefill's FLOPs per
    pair (SGLang's short prefills, at ``attn_fl``); ``sparse_fl`` / ``index_fl``: the sparse MLA's and the
    indexer's FLOP/s; ``dense_gemm_s``: seconds per prefill token of a GEMM only the dense prefill runs (SGLang
    0.5.5.post2-0.5.6.post2's second kv_b_proj, launchcard.predict._sglang_mla).  Contexts are the step's totals:
    min(context, topk) is taken over the average sequence."""
    topk = d.topk
    dec_pair, pf_pair, dec_full, pf_full = d.dec_pair_flops, d.pf_pair_flops, d.dec_full, d.pf_full
    i_pair, i_kv, i_logit = d.index_pair_flops, d.index_kv_bytes, d.index_pair_bytes
    dense = d.dense_prefill
    clean_row = d.clean_row
    if per_seq > 1 and d.verify_pair_flops:  # speculative steps verify through the prefill kernel
        dec_pair, dec_full = d.verify_pair_flops, d.verify_full
    # bytes per logit written (the rest of LOGIT_BYTES is the top-k's read of the computed ones)
    i_write = i_logit * LOGIT_WRITE / LOGIT_BYTES

    def roof(mem: float, comp: float, acc: list[float]) -> None:
        if mem >= comp:
            acc[0] += mem
        else:
            acc[1] += comp

    def attn(dec_seqs: float, dec_ctx: float, pf_tokens: float, pf_pairs: float,
             pf_ctx_read: float) -> tuple[float, float]:
        acc = [0.0, 0.0]
        if dec_seqs:
            acc[0] += d.dec_requant / bw  # a kernel of its own, bandwidth-bound whatever the batch
            picked = min(dec_ctx, dec_seqs * topk)
            keys = dec_seqs * topk if dec_full else picked
            roof(picked * kv_bytes / bw, dec_pair * keys * per_seq / sparse_fl, acc)
            queries = dec_ctx * per_seq  # (query, context key) pairs
            logit_bytes = queries * i_logit
            if clean_row:  # every query's whole row written, the computed part read back by the top-k
                logit_bytes += max(0.0, dec_seqs * per_seq * clean_row - queries) * i_write
            roof((dec_ctx * i_kv + logit_bytes) / bw, i_pair * queries / index_fl, acc)
        if pf_tokens:
            pf_ctx = pf_ctx_read + pf_tokens
            # SGLang's test is the longest sequence's whole length, prefix included (seq_lens_cpu.max() <= topk:
            # nsa_backend.py 0.5.6.post2 L1436-1454, nsa_indexer.py L830-837).  b alike chunks of t tokens after a
            # p-token prefix (p = 0: fresh prompts) make T = bt tokens, R = bp read and T (p + t/2) pairs, so
            # b = (T R + T^2 / 2) / pairs and each sequence is (R + T) / b tokens long: exact for one sequence and
            # for alike ones (a batch of prefix-cache hits), the batch's mean length otherwise
            longest = (pf_ctx_read + pf_tokens) * pf_pairs / (pf_tokens * (pf_ctx_read + pf_tokens / 2.0))
            if dense and longest <= topk:
                comp = dense_pf_pair * pf_pairs / attn_fl
                per_query = pf_pairs / pf_tokens
                if 0.0 < per_query < ap_half:
                    comp *= ap_half / per_query
                roof(pf_ctx * kv_bytes / bw, comp, acc)
                acc[1] += dense_gemm_s * pf_tokens
            else:
                acc[0] += d.pf_requant / bw
                keys = pf_tokens * topk if pf_full else min(pf_pairs, pf_tokens * topk)
                roof(pf_ctx * kv_bytes / bw, pf_pair * keys / sparse_fl, acc)
                logit_bytes = pf_pairs * i_logit
                if clean_row:  # the chunk's [tokens x keys] matrix written whole
                    logit_bytes += max(0.0, pf_tokens * pf_ctx - pf_pairs) * i_write
                roof((pf_ctx * i_kv + logit_bytes) / bw, i_pair * pf_pairs / index_fl, acc)
        return acc[0], acc[1]

    return attn
