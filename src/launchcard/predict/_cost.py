"""The time of one engine step, from the work it does.

A step runs the plan's GEMMs over every token scheduled in it (decode tokens and
prefill chunks alike) and attention over each sequence's context.  Each part takes
the longer of its bytes over the memory bandwidth and its FLOPs over the dense FLOP/s
of the dtype it runs in (a roofline per part, summed: GEMMs and attention, decode and
prefill attention, are separate kernels); the dense GEMMs take the smooth roofline their GPU's GEMM table
measures near its ridge point, (bytes^p + FLOPs^p)^(1/p) (:attr:`KernelEff.g_ridge`).
FLOP/s are scaled by the share the engine's kernels of that class reach on that GPU in that dtype
(:class:`KernelEff`, fitted on public measured kernel tables by bench/predict_kernels.py, never on end-to-end
runs): FP8/FP4 GEMMs reach about half of their datasheet rate, grouped MoE GEMMs a fifth to a third, and fewer
tokens than a tile's rows (per running expert, for MoE; keys per query for prefill
attention) cost a whole tile.  Memory time is scaled by the coefficient set's shares,
fitted on served steps (a served decode step also moves what the modelled kernels do not:
norms, rotary, KV writes).  Tensor-parallel all-reduces and expert-parallel all-to-alls move
activations over the interconnect; a few overhead terms cover what is not data movement (the
scheduler and sampler per step and per sequence, kernel launches without CUDA graphs,
the HTTP/tokenizer path of a request).  The efficiency and overhead terms are the only
fitted numbers (:class:`Coefficients`, each set with the data it was fitted on).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from launchcard.idmemo import IdMemo
from launchcard.limits import experts_per_rank
from launchcard.predict._attn_backend import FA2_TILE_ROWS
from launchcard.predict._coef import Coefficients, seq_count
from launchcard.predict._cutlass_block import block_gemms_s
from launchcard.predict._facts import ServingFacts
from launchcard.predict._figures import HardwareFigures
from launchcard.predict._fused_moe import BlockRule, StandInRatio, block_rule, row_block, stand_in_ratio
from launchcard.predict._kernels import dsa_kernel_eff, facts_kernels, kernel_eff
from launchcard.predict._marlin import ep_block_rows, moe_block, padded_random
from launchcard.predict._sglang_mla import mha_form


class StepWork(NamedTuple):
    """Seconds a step would take at 100% of the datasheet bandwidth and at the share of the datasheet FLOP/s its
    kernels reach (:class:`KernelEff`), by part.  A named tuple, not a frozen
    dataclass: a plan search builds one per simulated step (tens of thousands a search), and a frozen
    dataclass's field-by-field ``__init__`` cost as much as the arithmetic."""

    gemm_mem: float  # weights every token goes through (attention projections, dense MLP, shared experts, lm_head)
    gemm_flop: float
    attn_mem: float  # attention parts bound by memory (decode's KV reads, as a rule)
    attn_flop: float  # attention parts bound by compute (prefill, as a rule): added to attn_mem, not maxed with it
    comm: float
    collectives: int
    seqs: int
    # kernel groups: decoder layers, MoE layers (once where their call's latency is timed: moe_fixed) and DSA
    # layers (the indexer) counted twice
    layers: int
    moe_mem: float = 0.0  # routed experts: their own grouped-GEMM kernels, so their own roofline
    moe_flop: float = 0.0
    moe_fixed: float = 0.0  # their calls' measured latency above that roofline (KernelEff.x_t0)
    # kernel groups launched one by one without CUDA graphs (eager_layer_us): ``layers`` plus the MoE layers
    # whose call latency is measured (moe_fixed), which ``layers`` then counts once
    eager_layers: int = 0
    # the per-sequence host work runs beside the kernels (vLLM's async scheduling: ServingFacts.host_overlap)
    overlap: bool = False
    # seconds NCCL's own cost model adds to collectives without GPU peer access (one node: predict._nccl), beyond
    # their latency with it (counted in ``collectives``); not scaled by the set's link share
    comm_fixed: float = 0.0
    # the step carries prefill tokens (an extend batch: extend_layer_us where it runs without CUDA graphs)
    prefill: bool = False
    # the dense GEMMs' smooth-roofline exponent (KernelEff.g_ridge): they take (mem^p + comp^p)^(1/p); 0: max
    ridge: float = 0.0
    # what an eager extend batch pays extend_layer_us for: the ops it launches (ServingFacts.extend_ops); 0: the
    # kernel groups (``eager_layers``)
    extend_ops: int = 0


def step_work(f: ServingFacts, dec_seqs: int, dec_ctx: float, pf_tokens: int, pf_pairs: float,
              pf_ctx_read: float = 0.0) -> StepWork:
    """Work of one step: ``dec_seqs`` decode sequences holding ``dec_ctx`` context tokens in all,
    ``pf_tokens`` prefill tokens whose attention covers ``pf_pairs`` (query, key) pairs and reads
    ``pf_ctx_read`` cached tokens (prefix hits, earlier chunks).  See :func:`work_fn`."""
    return work_fn(f)(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read)


StepFn = Callable[[int, float, int, float, float], StepWork]
# a step's work but attention, from (dec_seqs, pf_tokens) alone; attention's (memory, compute) seconds from the five
TokenFn = Callable[[int, int], StepWork]
AttnFn = Callable[[int, float, int, float, float], tuple[float, float]]
# facts -> its step function and its two parts: a plan search times ~40,000 steps of a few hundred plans
_FNS: IdMemo[ServingFacts, tuple[StepFn, TokenFn, AttnFn]] = IdMemo(4096)


def _fns(f: ServingFacts) -> tuple[StepFn, TokenFn, AttnFn]:
    return _FNS.get(f, _work_fns)


def work_fn(f: ServingFacts) -> StepFn:
    """:func:`step_work` of ``f`` as a function of the step's ``(dec_seqs, dec_ctx, pf_tokens, pf_pairs,
    pf_ctx_read)`` (what a simulation calls once per step)."""
    return _fns(f)[0]


def split_fn(f: ServingFacts) -> tuple[TokenFn, AttnFn]:
    """:func:`work_fn` in its two parts: ``token(dec_seqs, pf_tokens)``, the step's work with its attention fields 0
    (GEMMs, experts, collectives, counts: they depend on the step's tokens alone), and ``attention(dec_seqs, dec_ctx,
    pf_tokens, pf_pairs, pf_ctx_read)``, its ``(attn_mem, attn_flop)``.  A run meets far fewer token counts than
    steps (a closed loop's decode batch keeps its size while its context grows), so a simulation keeps the first
    part per token count (``_Clock``); the step function is these two put together (the same figures)."""
    _, token, attention = _fns(f)
    return token, attention


def _work_fns(f: ServingFacts) -> tuple[StepFn, TokenFn, AttnFn]:
    """The step function of ``f``: what depends on the plan alone is computed here, once; each constant is the
    left part of a product as the step writes it (``2.0 * params * tokens`` is ``(2.0 * params) * tokens``), so a
    step does the same operations in the same order as computing it all per step would (the same figures, to the
    last bit), in half the time.

    With pipeline parallelism a step is one round of the pipeline: the batch is split into ``pp``
    micro-batches in flight at once (vLLM keeps ``pp`` batches scheduled), each stage runs every
    micro-batch in turn (reading its weights once per micro-batch), so a token waits ``pp`` stage
    times: the round costs ``pp`` times one stage's work on ``1/pp`` of the batch."""
    hw = f.hardware
    k = facts_kernels(f)
    m = max(1, f.pp)
    per_seq = 1 + f.spec_tokens  # a speculative step verifies k draft tokens plus one
    bw = hw.bandwidth_bps
    wbw = bw * k.w_read  # weight reads: the GPU's measured share relative to the calibrated GPUs'
    # decode KV reads: the GPU's decode-attention share relative to the calibrated GPUs' (tables of GQA/MHA decode
    # kernels: MLA's latent decode runs other kernels and keeps attn_eff)
    dbw = bw * (1.0 if f.mla else k.a_read)
    # FLOP/s at the share the kernels reach (attention's matmuls in the activations' dtype whatever the weights)
    fl, attn_fl, expert_fl = (f.flops_per_s * k.g_comp, f.attn_flops_per_s * k.ap_comp,
                              f.expert_flops_per_s * k.x_comp)
    g_half, x_half, ap_half = k.g_half, k.x_half, k.ap_half
    # vLLM's Triton attention (KernelEff.ap_cap): prefill attention no faster than its FLOPs at that kernel's own rate
    cap_fl = f.attn_flops_per_s * k.ap_cap
    dense_bytes = f.dense_bytes
    dense_2 = 2.0 * f.dense_params
    lm_head_2 = 2.0 * f.lm_head_params
    xbw = bw * k.x_read  # the routed experts' reads: their own kernel's share (vLLM's Marlin)
    if k.lm_comp:  # the dense GEMMs run Marlin, the unquantized lm_head cuBLAS: its FLOPs and bytes at its own shares
        lm_head_2 *= k.g_comp / k.lm_comp
        dense_bytes += f.lm_head_params * f.act_bytes * (k.w_read / k.lm_read - 1.0)
    experts = f.experts
    # with EP every DP rank's tokens reach the experts; vLLM DP without EP gathers them to every rank's MoE
    # (ServingFacts.moe_dp)
    glob_per_token = f.replicas if f.ep else f.moe_dp
    p = f.experts_per_token / experts if experts else 0.0
    miss = 1.0 - p
    expert_bytes = f.expert_bytes
    expert_2p = 2.0 * f.expert_params * p
    # the drafter runs k single-token forwards of ~one target layer each
    draft = f.draft_fraction
    draft_bytes = f.spec_tokens * f.draft_fraction * f.dense_bytes
    draft_2 = 2.0 * f.spec_tokens * f.draft_fraction * f.dense_params
    kv_bytes, pair = f.kv_bytes_per_token, f.attn_flops_per_pair
    pf_pair = f.attn_flops_per_pair if f.prefill_flops_per_pair is None else f.prefill_flops_per_pair
    window, sliding_kv, sliding_pair = f.window, f.sliding_kv_bytes, f.sliding_flops_per_pair
    tri_3d = f.triton_3d_seqs
    # FlashAttention 2 under vLLM (ServingFacts.fa2_unpacked): a step whose longest query is over one token runs each
    # decode query in a whole 64-row tile per query head over all its keys; a speculative step's all are over one
    unpacked = f.fa2_unpacked and f.dsa is None
    tile_rows = FA2_TILE_ROWS / per_seq
    # DSA: the indexer's FP8 logits at the FP8 GEMM class's share (DeepGEMM's MQA-logits kernels are FP8 matmuls)
    dsa_attn = None
    if f.dsa is not None:
        from launchcard.predict._dsa import dsa_attention

        # the shares measured on DSA's own kernels; else the attention and FP8 GEMM classes'
        shares = dsa_kernel_eff(hw.id, hw.kind, f.engine)
        idx_share = kernel_eff(hw.id, hw.kind, f.engine, "fp8", "fp8").g_comp if "fp8" in hw.flops else k.g_comp
        sparse_fl = f.attn_flops_per_s * shares[0] if shares else attn_fl
        dsa_attn = dsa_attention(f.dsa, kv_bytes, pf_pair, bw, attn_fl, sparse_fl,
                                 (hw.flops.get("fp8") or f.attn_flops_per_s) * (shares[1] if shares else idx_share),
                                 ap_half, per_seq, f.mha_kvb / fl if f.mha_kvb and f.mha_rule == "dense" else 0.0)
    link = hw.link_bps or bw
    domain, out = hw.link_domain, hw.scale_out_bps
    tp, pp, replicas, hidden, act_bytes = f.tp, f.pp, f.replicas, f.hidden, f.act_bytes
    ar_coll = 2 * f.layers
    shm = _shm_collectives(f)
    ep = tp * replicas
    # SGLang DP attention (ServingFacts.dp_gather_*): the MoE layers gathered to the whole TP group exchange no
    # tokens (dp_gather_fn times the gather); the attention's reduction of a gathered layer rides in the gather
    # (dp_gather_partial sums the attention TP ranks' partial outputs, dp_attention.py 0.5.6.post2 L443-495), the
    # other layers' reduce-scatter and all-gather over the attention TP group (communicator.py L788-807, L911-930):
    # one all-reduce's bytes in two calls
    a2a = bool(f.ep and experts and ep > 1) and not f.dp_gather_moe
    ar_calls = ar_bytes = ar_coll
    if f.dp_gather_layers or f.dp_gather_vocab:
        ar_bytes = f.layers - f.dp_gather_layers
        ar_calls = 2 * ar_bytes
    a2a_coll = 2 * f.moe_layers // max(1, pp)
    a2a_2 = 2 * (f.moe_layers / pp)
    ept = f.experts_per_token
    # vLLM's Marlin MoE kernel multiplies every expert's rows padded to its row block (launchcard.predict._marlin):
    # the block from the rank's M x top-k over its experts (EP: E = w1.shape[0], the rank's experts / ep, while every
    # token reaches it, fused_marlin_moe.py 0.11.0 L94-103; from 0.26 M is first scaled by E / global experts,
    # ServingFacts.marlin_ep_m), the padding from each expert's binomial share of the step's tokens
    x_pad = f.marlin in ("experts", "all") and experts > 0
    # the heaviest rank's experts where EP does not divide them (vLLM: the first E % ep ranks hold one more)
    rank_experts = float(experts_per_rank(experts, ep) if f.ep else experts)
    # vLLM's and SGLang's Triton fused MoE pads each expert's rows to its BLOCK_SIZE_M as well (launchcard.predict.
    # _fused_moe): where the experts' record is that kernel's (fitted over padded rows), the step's M tokens on the
    # rank against its E experts pick the block
    padded = facts_block_rule(f, k.x_blocks)  # (rule, the kernel's E) where so, the finding's (_domain) alike
    t_rule, kernel_e = padded if padded is not None else (None, 0)
    # another engine's rows standing in for the experts' kernel (KernelEff.moe_from) where the two run the shape with
    # different configs: the experts' time at the tables' measured ratio (launchcard.predict._fused_moe.stand_in_ratio)
    stand_in = facts_stand_in(f, k.moe_from, padded)
    ep_m = f.marlin_ep_m
    layers = f.layers + f.moe_layers // max(1, pp) + (f.dsa.kernel_groups if f.dsa is not None else 0)
    # a MoE layer's second kernel group stood for its grouped call's tails inside CUDA graphs; where the kernel
    # tables time that call (moe_fixed), the group counts once for layer_us (still twice for eager launches)
    eager = layers
    if k.x_t0:
        layers -= f.moe_layers // max(1, pp)
    moe_fixed = (f.moe_layers / m) * k.x_t0  # each MoE layer's grouped call: its measured fixed latency
    ext_ops = f.extend_ops
    # measured against row counts (CPU figures of the model's own layer; never a catalog GPU's): see _measured_rows
    measured = bool(hw.decode_rows or hw.gemm_half_rows)
    overlap = f.host_overlap
    ridge = k.g_ridge
    # vLLM without DeepGEMM: its dense block GEMMs timed per shape as CUTLASS's blockwise op, a measured whole-op
    # time (its weight reads inside): the step's GEMM time is then the larger part, not a blend
    cutlass = f.block_cutlass
    fp8, sms, stage = hw.flops.get("fp8", 0.0), f.block_sms, 1.0 / m
    if cutlass:
        ridge = 0.0
        dense_2 = 0.0
    # SGLang 0.5.5.post2-0.5.6.post2's second kv_b_proj on an MHA-form DeepSeek extend (ServingFacts.mha_kvb): with
    # every extend step, a GEMM of the token part; where the form depends on the step's prefixes or lengths, timed
    # with its attention (which sees them) at the dense GEMMs' FLOP/s
    kvb_rule = f.mha_rule if f.mha_kvb else ""
    kvb_always = f.mha_kvb if kvb_rule == "always" else 0.0
    kvb_s = f.mha_kvb / fl if kvb_rule in ("threshold", "fresh") else 0.0  # "dense": dsa_attention's dense branch

    def token(dec_seqs: float, pf_tokens: float) -> StepWork:
        if m > 1:  # one stage's work on one micro-batch
            seqs = round(dec_seqs) + (1 if pf_tokens else 0)  # dec_seqs is a whole number here
            dec_seqs, pf_tokens = dec_seqs / m, pf_tokens / m
        tokens = dec_seqs * per_seq + pf_tokens
        wbytes = dense_bytes
        # the lm_head runs only for the positions sampled: every decode token; of a prefill, the last position
        # (counted once per step: a few rows against thousands of tokens)
        sampled = dec_seqs * per_seq + (1 if pf_tokens else 0)
        flops = dense_2 * tokens + lm_head_2 * sampled
        if kvb_always and pf_tokens:
            flops += kvb_always * pf_tokens
        moe_bytes = moe_flops = moe_fix = 0.0
        x_tile = 1.0
        if experts and tokens:
            moe_fix = moe_fixed
            glob = tokens * glob_per_token
            touched = 1.0 - miss ** glob if glob else 0.0
            moe_bytes = expert_bytes * touched
            moe_flops = expert_2p * glob
            # tokens each expert that runs gets (balanced routing; few tokens: only the touched experts run)
            per_expert = glob * p / touched if touched else 0.0
            if x_pad:
                block = moe_block(ep_block_rows(glob, ept, rank_experts, experts, ep_m))
                x_tile = padded_random(round(glob), p, block)
            elif t_rule is not None:
                x_tile = padded_random(round(glob), p, row_block(glob, kernel_e, t_rule))
            elif 0.0 < per_expert < x_half:
                x_tile = x_half / per_expert
            if stand_in is not None:
                r = stand_in.at(glob, kernel_e)
                moe_bytes, moe_flops, moe_fix = moe_bytes * r, moe_flops * r, moe_fix * r
        if draft and dec_seqs:
            wbytes += draft_bytes
            flops += draft_2 * dec_seqs
        gemm_flop, moe_flop = flops / fl, moe_flops / expert_fl * x_tile
        if 0.0 < tokens < g_half:  # fewer tokens than a tile's rows cost the whole tile
            gemm_flop *= g_half / tokens
        if cutlass:  # this stage's share of the model's block GEMMs (the lm_head and a drafter stay in flops)
            gemm_flop += block_gemms_s(cutlass, tokens, pf_tokens, fp8, bw, sms) * stage
        comm = fixed = 0.0
        coll = 0
        act = tokens * hidden * act_bytes
        if shm is not None:  # the same collectives at the set's latency, plus what the path without peer access adds
            coll += ar_coll
            fixed = shm(act, sampled)
        elif tp > 1:
            coll += ar_calls
            comm += ar_bytes * _all_reduce(act, tp, link, domain, out)
        if a2a:
            coll += a2a_coll
            # the attention TP ranks hold the same tokens: each dispatches (and combines) its 1/tp share of them
            comm += a2a_2 * _all_to_all(ept * act / tp, ep, link, domain, out)
        if f.moe_dp > 1 and experts:
            # vLLM DP without EP (ServingFacts.moe_dp): each MoE layer all-gathers the DP ranks' hidden states and
            # reduce-scatters the outputs over the DP group (VLLM_ALL2ALL_BACKEND's default allgather_reducescatter,
            # vllm envs.py) (every attention TP rank its own group, whole rows),
            # each moving (g - 1) / g of the gathered buffer; the TP all-reduce above stays as it was (the layer
            # still reduces over its attention TP group after the combine)
            coll += a2a_coll
            comm += a2a_2 * _all_to_all(act * f.moe_dp, f.moe_dp, link, domain, out)
        if pp > 1:
            comm += act / link  # this stage's activations to the next
        g_mem = wbytes / wbw
        if measured:  # CPU figures measured against row counts (no kernel table: gemm_flop is flops / FLOP/s)
            g_mem, gemm_flop = _measured_rows(hw, g_mem, gemm_flop, tokens)
        if m == 1:
            return StepWork(g_mem, gemm_flop, 0.0, 0.0, comm, coll,
                            round(dec_seqs) + (1 if pf_tokens else 0), layers, moe_bytes / xbw, moe_flop, moe_fix,
                            eager, overlap, fixed, pf_tokens > 0, ridge, ext_ops)
        return StepWork(g_mem * m, gemm_flop * m, 0.0, 0.0, comm * m,
                        coll * m + (m - 1), seqs, layers * m, moe_bytes / xbw * m, moe_flop * m, moe_fix * m, eager * m,
                        overlap, fixed * m, pf_tokens > 0, ridge, ext_ops * m)

    def attention(dec_seqs: float, dec_ctx: float, pf_tokens: float, pf_pairs: float, pf_ctx_read: float
                  ) -> tuple[float, float]:
        # the MHA form's second kv_b_proj: the batch's prefix sum decides it (before a micro-batch's share)
        kvb = kvb_s * pf_tokens if kvb_s and pf_tokens and mha_form(kvb_rule, pf_ctx_read) else 0.0
        if m > 1:  # one stage's work on one micro-batch
            dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read = (dec_seqs / m, dec_ctx / m, pf_tokens / m,
                                                                   pf_pairs / m, pf_ctx_read / m)
        if dsa_attn is not None:  # sparse attention: the indexer and top-k MLA
            attn_mem, attn_flop = dsa_attn(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read)
            return (attn_mem, attn_flop) if m == 1 else (attn_mem * m, attn_flop * m)
        # KV is read once per step whatever the queries (a speculative step's k+1 share the reads); sliding-window
        # layers only over their window.  Decode and prefill attention are separate kernels: a roofline each
        pf_ctx = pf_ctx_read + pf_tokens
        dec_bytes, pf_bytes = dec_ctx * kv_bytes, pf_ctx * kv_bytes
        dec_flops, pf_flops = pair * dec_ctx * per_seq, pf_pair * pf_pairs
        dec_slid = 0.0  # the sliding-window layers' decode FLOPs (within their window)
        if window:
            # vLLM 0.11's Triton 3D kernel (a decode-only step of few sequences) walks the sliding layers' whole
            # context (ServingFacts.triton_3d_seqs)
            whole = not pf_tokens and per_seq == 1 and 0 < dec_seqs <= tri_3d
            dec_over = 0.0 if whole else max(0.0, dec_ctx - dec_seqs * window)
            dec_bytes -= dec_over * sliding_kv
            pf_bytes -= max(0.0, pf_ctx - (pf_tokens + window)) * sliding_kv
            dec_flops -= sliding_pair * dec_over * per_seq
            pf_flops -= sliding_pair * max(0.0, pf_pairs - pf_tokens * window)
            dec_slid = sliding_pair * (dec_ctx - dec_over) * per_seq
        attn_mem = attn_flop = 0.0
        a_m, a_c = dec_bytes / dbw, dec_flops / attn_fl
        if unpacked and dec_seqs and (pf_tokens or per_seq > 1):
            # the tiles' FLOPs at the prefill attention's share (the A100's vLLM context-attention table costs a
            # 16-row query block as a full 64 x 128 tile and more: bench/fa2_tiles.py); fewer keys per query than a
            # tile's half-fill cost as many, the prefill rule below.  Sliding-window layers are never packed (the
            # swap needs window_size_left < 0, flash_api.cpp 5714f9de L593): their decode kernel is a decode-only
            # step's, so only the full-attention layers' decode FLOPs take the tiles
            full = (dec_flops - dec_slid) * tile_rows
            keys = dec_ctx / dec_seqs
            if 0.0 < keys < ap_half:
                full *= ap_half / keys
            a_c = (full + dec_slid) / attn_fl
        if a_m >= a_c:
            attn_mem = a_m
        else:
            attn_flop = a_c
        if pf_tokens:
            a_m, a_c = pf_bytes / bw, pf_flops / attn_fl
            keys = pf_pairs / pf_tokens  # keys per query: fewer than a tile's cost the tile
            if 0.0 < keys < ap_half:
                a_c *= ap_half / keys
            if cap_fl and pf_flops / cap_fl > a_c:
                # vLLM's Triton attention: as fast as FlashAttention on short prompts, its own rate on long ones (the
                # L40S / RTX PRO 6000 tables: FA2's latency over Triton's 0.9-1.2 up to 64 tokens, 0.36-0.46 from 2,048)
                a_c = pf_flops / cap_fl
            if a_m >= a_c:
                attn_mem += a_m
            else:
                attn_flop += a_c
        if kvb:
            attn_flop += kvb / m  # the whole step's, as the return scales a micro-batch's
        return (attn_mem, attn_flop) if m == 1 else (attn_mem * m, attn_flop * m)

    def step(dec_seqs: float, dec_ctx: float, pf_tokens: float, pf_pairs: float, pf_ctx_read: float) -> StepWork:
        w = token(dec_seqs, pf_tokens)
        a_m, a_c = attention(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read)
        return StepWork(w[0], w[1], a_m, a_c, *w[4:])

    return step, token, attention


def _shm_collectives(f: ServingFacts) -> Callable[[float, float], float] | None:
    """Seconds a step's tensor-parallel collectives take beyond their latency with peer access when one node's GPUs
    have none (``p2p`` False): each is NCCL's through host memory (SHM), and NCCL 2.26.2's own cost model of that
    path (:mod:`launchcard.predict._nccl`) gives what it adds to the same call with peer access (the longer PCI
    hops, the bytes at the SHM bandwidth and, for an all-reduce, the latency a call through host memory was measured
    to take beyond the model), as a function of the step's activation bytes and sampled positions.  The
    layers' calls keep the set's per-collective latency (the step counts them as with peer access): NCCL's model
    ranks paths, its absolute latency is under what served steps measure, and a call through host memory is never
    faster than one over NVLink.  The calls are the two all-reduces of every decoder layer (attention output and
    MLP down projections, the row-parallel layers) and, for vLLM, the vocab-parallel embedding's all-reduce of the
    step's tokens (0.10.1.1 model_executor/layers/vocab_parallel_embedding.py L414) and V1's all-gather of the
    sampled positions' logit shards (model_executor/layers/logits_processor.py L91-97; platforms/interface.py
    L476-486: all-gather under V1), in the activations' dtype; those two are in the fitted steps with peer access
    without a term of their own, so here too only what the path adds.  None: the plan's collectives are timed by
    the coefficient set (peer access, one GPU, or a group beyond one node)."""
    hw = f.hardware
    if hw.p2p or f.tp < 2 or not hw.host_link_bps or (hw.link_domain is not None and f.tp > hw.link_domain):
        return None
    from launchcard.predict._nccl import all_gather_model, all_reduce_model, pci_ring, shm_call_extra_us, shm_share

    ring = pci_ring(f.tp, hw.host_link_bps, hw.compute_capability)
    # an all-reduce through host memory also takes the latency measured beyond NCCL's model of it (a served decode
    # step's 10 KB call, predict._nccl.SHM_CALL_SOURCE); no small all-gather over SHM was found measured
    ar = all_reduce_model(ring, shm_share("all_reduce"), shm_call_extra_us()).beyond_peer
    ag = all_gather_model(ring, shm_share("all_gather")).beyond_peer
    n_ar = 2 * f.layers
    if f.engine != "vllm":
        return lambda act, sampled: n_ar * ar(act)
    # the gathered logits of one sampled position: every rank's vocabulary shard of the lm_head, activations' dtype
    row = f.lm_head_params / f.hidden * f.tp * f.act_bytes if f.hidden else 0.0
    return lambda act, sampled: (n_ar + 1) * ar(act) + ag(sampled * row)


def _measured_rows(hw: HardwareFigures, g_mem: float, g_flop: float, rows: float) -> tuple[float, float]:
    """The dense GEMMs' (memory, compute) seconds timed by the figures measured against row counts (CPU:
    bench/measure_cpu.py on the model's own layer): the weight pass lengthened by the extra rows
    (``decode_rows``), the FLOP/s short of its full figure for a chunk too short to fill the core
    (``gemm_half_rows``)."""
    if hw.decode_rows:
        g_mem *= rows_factor(hw.decode_rows, rows)
    if hw.gemm_half_rows and rows > 0:
        g_flop *= (rows + hw.gemm_half_rows) / rows
    return g_mem, g_flop


def rows_factor(table: tuple[tuple[int, float], ...], tokens: float) -> float:
    """The measured weight pass at ``tokens`` rows over the one-row pass (``HardwareFigures.decode_rows``):
    linear between measured row counts (one row is 1), held past the last one (more rows run into the compute
    roofline, which the step's max() takes from there).  Taken as measured, also below 1 or falling with more
    rows: the engine's GEMM library picks its kernel by the row count, and on some cores a few rows stream the
    weights faster than one (oneDNN on an AMD EPYC core: 4 rows at 0.82-0.86 of one row in all 9 probes of a
    comparison, 2 rows 1.13-1.22, 8 rows 1.04-1.16; an Intel core measured 1.03-1.05 / 1.04-1.09 / 1.19-1.26)."""
    prev_m, prev_x = 1, 1.0
    for m, x in table:
        if tokens <= m:
            if m == prev_m:
                return x
            return prev_x + (x - prev_x) * (max(tokens, prev_m) - prev_m) / (m - prev_m)
        prev_m, prev_x = m, x
    return prev_x


def facts_block_rule(f: ServingFacts, x_blocks: tuple[int, int]) -> tuple[BlockRule, int] | None:
    """(the rule, the kernel's E) by which the step model pads the routed experts' rows (``launchcard.predict._cost``)
    and the finding names it (``_domain``): where the experts' record is the Triton fused MoE's, fitted over padded
    rows (``x_blocks``, :attr:`KernelEff.x_blocks`), and they run that kernel (vLLM or SGLang, not Marlin, not MXFP4's
    own kernels); None otherwise.  E: ``ServingFacts.moe_e``, else the heaviest rank's experts under expert
    parallelism (:func:`launchcard.limits.experts_per_rank`: vLLM's first E % ep ranks hold one more), else all."""
    if not (f.experts > 0 and f.fused_moe and x_blocks[0] and f.engine in ("vllm", "sglang")
            and f.marlin not in ("experts", "all")):
        return None
    e = f.moe_e or (experts_per_rank(f.experts, f.tp * f.replicas) if f.ep else f.experts)
    return block_rule(f.engine, f.release, f.hardware.id, e, f.moe_n, f.moe_dtype), e


def facts_stand_in(f: ServingFacts, moe_from: str,
                   padded: tuple[BlockRule, int] | None) -> StandInRatio | None:
    """The factor on the routed experts' time where ``moe_from``'s rows stand in for the engine's own
    (:attr:`KernelEff.moe_from`) and the two engines run the shape's fused MoE with different configs
    (launchcard.predict._fused_moe.stand_in_ratio), for the kernel's E of ``padded`` (:func:`facts_block_rule`);
    None where no stand-in times them or the configs agree.  The step model and the domain finding both read it."""
    if not moe_from or padded is None:
        return None
    return stand_in_ratio(f.engine, f.release, f.hardware.id, padded[1], f.moe_n, f.moe_dtype, moe_from)


def projection_s(f: ServingFacts) -> float:
    """Seconds per token of the attention layers' projections (``ServingFacts.attn_params``: q / kv / o, a DSA
    indexer's) at the dense GEMMs' FLOP/s share, before the set's ``flops_eff``: what a DP-attention rank with more
    prefill tokens than an even share runs on them (each rank projects only its own tokens; the parts after the
    gather run every rank's, :func:`dp_gather_fn`)."""
    fl = f.flops_per_s * facts_kernels(f).g_comp
    return 2.0 * f.attn_params / fl if fl else 0.0


def dp_gather_fn(f: ServingFacts) -> Callable[[int, int], tuple[float, int]] | None:
    """Seconds (at the whole link, before the set's share) and calls of the collectives SGLang's DP-attention ranks
    run around the parts spanning the whole TP group (``ServingFacts.dp_gather_*``), as a function of the group
    step's decode sequences and prefill tokens (all ranks'); None where the plan has none.  Release 0.5.6.post2
    (0.5.5.post1 and 0.5.7 the same rules):

    * a step with an extend batch on any rank (is_extend_in_batch, the max over ranks: managers/
      scheduler_dp_attn_mixin.py L69) pads to the ranks' summed tokens (DpPaddingMode SUM_LEN, layers/
      dp_attention.py L61-65): a gathered layer all-reduces that buffer over the TP group in (L443-475, each rank's
      rows copied to their offset, the rest zero) and all-reduces the MLP / MoE output out (models/deepseek_v2.py
      L829-832, L907-910; MLP L519) before dp_scatter's local copy (dp_attention.py L530-549);
    * a decode step pads every rank to the busiest's tokens (MAX_LEN: CUDA graphs' default, model_executor/
      cuda_graph_runner.py L581, L639, dp_attention.py L76-84; eagerly when the summed tokens are over half of
      ranks x busiest, L67-72, which round-robin's balanced batches are): all_gather_into_tensor of that buffer in
      (L478-495) and a reduce-scatter out in place of the all-reduce (layers/communicator.py L522-533, L903-905;
      dp_attention.py L552-560), plus, with attention TP over 1 GPU, a reduce-scatter and an all-gather of the
      rank's rows inside its attention group;
    * the LM head (unless --enable-dp-lm-head) gathers the sampled rows by all-reduce (logits metadata always
      SUM_LEN, layers/logits_processor.py L196, L832-838) and all-gathers each rank's vocabulary shard of their
      logits over the TP group (L880-909) before dp_scatter (L911-920).

    Ring bytes as the step's tensor-parallel all-reduces (:func:`_all_reduce`; an all-gather or reduce-scatter
    moves (g - 1) / g of the whole buffer, :func:`_all_to_all`'s sum), at the step's per-collective latency."""
    n, vocab, g = f.dp_gather_layers, f.dp_gather_vocab, f.lockstep
    if g < 2 or not (n or vocab):
        return None
    hw = f.hardware
    link, domain, out = hw.link_bps or hw.bandwidth_bps, hw.link_domain, hw.scale_out_bps
    a = f.tp  # the attention's TP group: the whole group is a x g GPUs
    whole = a * g
    row, head_row, per_seq = f.hidden * f.act_bytes, vocab * f.act_bytes, 1 + f.spec_tokens

    def gather(nd: int, pf: int) -> tuple[float, int]:
        if pf:  # SUM_LEN: an all-reduce of the summed buffer in and one out
            sec, calls = 2 * n * _all_reduce((nd * per_seq + pf) * row, whole, link, domain, out), 2 * n
        else:  # MAX_LEN: all-gather in, reduce-scatter out, of g x the busiest rank's rows
            m = -(-nd // g) * per_seq
            sec, calls = 2 * n * _all_to_all(g * m * row, whole, link, domain, out), 2 * n
            if a > 1:  # the rank's rows reduce-scattered, then all-gathered, inside its attention TP group
                sec += 2 * n * _all_to_all(m * row, a, link, domain, out)
                calls += 2 * n
        if vocab:
            sampled = nd * per_seq + (1 if pf else 0)
            sec += _all_reduce(sampled * row, whole, link, domain, out) + _all_to_all(
                sampled * head_row, whole, link, domain, out)
            calls += 2
        return sec, calls

    return gather


def _all_reduce(nbytes: float, g: int, link: float, domain: int | None, out: float | None) -> float:
    """Seconds of an all-reduce of ``nbytes`` per GPU over ``g`` GPUs: a ring on the scale-up link; across link
    domains hierarchical (reduce-scatter inside a domain, all-reduce of each GPU's 1/d share between the n
    domains over the network, all-gather inside), as NCCL does."""
    if domain is None or out is None or g <= domain:
        return 2 * (g - 1) / g * nbytes / link
    d = domain
    n = math.ceil(g / d)
    return 2 * (d - 1) / d * nbytes / link + 2 * (n - 1) / n * (nbytes / d) / out


def _all_to_all(nbytes: float, g: int, link: float, domain: int | None, out: float | None) -> float:
    """Seconds of an all-to-all where each of ``g`` GPUs sends ``nbytes`` spread evenly over the group: what
    goes to GPUs of another link domain crosses the network, the rest the scale-up link, both at once."""
    if domain is None or out is None or g <= domain:
        return nbytes * (g - 1) / g / link
    return max(nbytes * (domain - 1) / g / link, nbytes * (g - domain) / g / out)


def step_terms(w: StepWork, c: Coefficients, graphs: bool) -> tuple[float, float, float, float]:
    """(memory, compute, communication, overhead) seconds of a step under coefficients ``c``."""
    mem, comp, comm, ovh, seq = token_terms(w, c, graphs)
    # attention: KV reads at the set's share, compute at the kernels' (already in the work) times flops_eff; the
    # MoE calls' measured fixed latency with the kernel terms (flops_eff is 1 where the kernel tables apply)
    mem += w.attn_mem / c.attn_eff
    comp += (w.attn_flop + w.moe_fixed) / c.flops_eff
    if not w.overlap:
        return mem, comp, comm, ovh + seq
    # async scheduling: the host's work of the next step (its per-step part and the per-sequence part, both in
    # ``seq`` here) runs while this one's kernels do
    rest = mem + comp + comm + ovh
    return mem, comp, comm, ovh + (seq - rest if seq > rest else 0.0)


def token_terms(w: StepWork, c: Coefficients, graphs: bool) -> tuple[float, float, float, float, float]:
    """:func:`step_terms` but attention (``w``'s attention fields are not read) and before the per-sequence host
    work is laid beside the kernels: (memory, compute, communication, overhead, per-sequence) seconds, each summed in
    step_terms' order (attention is added last), so the step's terms are these and its attention put together."""
    mem = comp = 0.0
    # the GEMMs, then the routed experts' (written out: a step of every simulation calls it)
    g_m, g_c = w.gemm_mem / c.bw_eff, w.gemm_flop / c.flops_eff
    if w.ridge and g_m and g_c:  # the smooth roofline: counted under the larger part
        g = (g_m ** w.ridge + g_c ** w.ridge) ** (1.0 / w.ridge)
        if g_m >= g_c:
            mem += g
        else:
            comp += g
    elif g_m >= g_c:
        mem += g_m
    else:
        comp += g_c
    g_m, g_c = w.moe_mem / c.bw_eff, w.moe_flop / c.flops_eff
    if g_m >= g_c:
        mem += g_m
    else:
        comp += g_c
    comm = w.comm / c.link_eff + w.collectives * c.collective_us * 1e-6 + w.comm_fixed
    # step_us: the engine's host work every step pays (scheduler, input preparation, output building); in series
    # with the kernels (the overhead) unless async scheduling lays it beside them with the per-sequence part
    ovh = (0.0 if w.overlap else c.step_us) + c.layer_us * w.layers
    if not graphs:  # kernels launched one by one; an extend batch's own cost on top (extend_layer_us)
        ovh += c.eager_layer_us * (w.eager_layers or w.layers)
        if w.prefill:
            ovh += c.extend_layer_us * (w.extend_ops or w.eager_layers or w.layers)
    ovh *= 1e-6
    n, rise = w.seqs, c.seq_rise  # seq_count(c, n), written out (a step of every simulation calls it)
    if rise.hi > rise.lo and n > rise.lo:
        seq = c.seq_us * n * (1.0 + rise.growth * min(1.0, (n - rise.lo) / (rise.hi - rise.lo))) * 1e-6
    else:
        seq = c.seq_us * n * 1e-6
    if w.overlap:
        seq += c.step_us * 1e-6
    return mem, comp, comm, ovh, seq


# A step's time is linear in these terms once the roofline branch of the GEMMs is known:
# t = features(w) . theta(c).  The calibration fits theta by least squares over whole runs.
def features(w: StepWork, c: Coefficients, graphs: bool) -> tuple[float, ...]:
    """Seconds (GEMM memory, compute at the kernels' FLOP/s shares, attention memory, communication), then counts x 1e-6
    (collectives, step, sequences, layers, eager layers, eager layers of an extend batch): the step time is
    ``features . theta``."""
    seqs = seq_count(c, w.seqs) * 1e-6
    step = 1e-6
    if w.overlap:  # the host's work (per step, per sequence) hides behind the kernels, or they behind it (piecewise)
        host = c.step_us * step + c.seq_us * seqs
        if host > sum(step_terms(w._replace(overlap=False), c, graphs)) - host:
            return (0.0, 0.0, 0.0, 0.0, 0.0, step, seqs, 0.0, 0.0, 0.0)
        seqs = step = 0.0
    g_m, g_c = w.gemm_mem / c.bw_eff, w.gemm_flop / c.flops_eff
    g_mem = g_m >= g_c
    # the smooth roofline as the larger part times (1 + (smaller / larger)^p)^(1/p), the ratio at these coefficients
    # (exact here; a fit that moves them re-reads the features, as it re-reads the branch)
    smooth = (1.0 + (min(g_m, g_c) / max(g_m, g_c)) ** w.ridge) ** (1.0 / w.ridge) if w.ridge and g_m and g_c else 1.0
    e_mem = w.moe_mem / c.bw_eff >= w.moe_flop / c.flops_eff
    eager = 0.0 if graphs else (w.eager_layers or w.layers) * 1e-6
    return ((w.gemm_mem * smooth if g_mem else 0.0) + (w.moe_mem if e_mem else 0.0),
            (0.0 if g_mem else w.gemm_flop * smooth) + (0.0 if e_mem else w.moe_flop) + w.attn_flop + w.moe_fixed,
            w.attn_mem,
            # what NCCL's model adds without peer access rides on the link feature at the set's share, so that
            # features . theta stays the step time (no calibration run has it: every one ran with peer access)
            w.comm + w.comm_fixed * c.link_eff,
            w.collectives * 1e-6, step, seqs, w.layers * 1e-6, eager,
            (w.extend_ops * 1e-6 if w.extend_ops and not graphs else eager) if w.prefill else 0.0)
