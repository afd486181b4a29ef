"""vLLM's attention backend for a model whose attention layers carry learnable sinks (gpt-oss), per release and GPU,
and the prefill FLOP/s the kernel it runs reaches (its SMs' rate, else its share of FlashAttention's)."""

from __future__ import annotations

from launchcard.limits import compute_capability
from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Finding

# model_type whose attention layers pass learnable sinks to vLLM's attention (vllm/model_executor/models/gpt_oss.py
# OAIAttention: Attention(..., sinks=self.sinks)), which the backend selector reads as has_sink
SINK_MODELS = ("gpt_oss",)
# vLLM 0.11.0 vllm/platforms/cuda.py get_attn_backend_cls L358-362: on SM80+ a model with sinks runs
# TRITON_ATTN_VLLM_V1 (the Triton unified attention) unless the GPU is SM90 (FlashAttention 3 takes sinks); SM100
# returns FlashInfer before that check.  Both tests are is_device_capability, an exact match (vllm/platforms/
# interface.py L234-255: to_int() == 90 / 100), so SM 10.3 (B300, GB300) takes Triton too.  Releases read: 0.11
# only (later ones moved to per-backend supports_sink lists, and FlashAttention's later took sinks on older GPUs
# too: not read per release here)
TRITON_FOR_SINKS = ((0, 11),)
# the compute capabilities vLLM 0.11 runs sinks on FlashAttention 3 (9.0) or FlashInfer (10.0), exactly
NOT_TRITON_CC = ((9, 0), (10, 0))
TRITON = "triton"


# vLLM's Triton unified attention runs a step whose queries are all one token long (a pure decode step) on its split-KV
# kernel_unified_attention_3d when (query tokens // BLOCK_Q + sequences) x the rank's KV heads is at most 128, else on
# kernel_unified_attention_2d (unified_attention: `if max_seqlen_q > 1 or total_num_q_blocks * num_kv_heads > 128`;
# BLOCK_M 16 rows for up to 16 query heads per KV head, BLOCK_Q = BLOCK_M // query heads per KV head;
# vllm/attention/ops/triton_unified_attention.py: the same test in each stored version read).  The 2D kernel has started
# a sliding-window layer's tile loop at the window since vLLM PR #24390 (merged 2025-09-19, vLLM's weekly summary of
# 2025-09-26, before 0.11.0); the 3D kernel loops over every tile of the context, loading each tile's K and V and
# applying the window as a mask only, until PR #31984 (opened 2026-01-08: "applying the same optimization used in
# the 2D kernel ... only tiles within the defined window are processed"; its loop `for j in range(segm_idx *
# tiles_per_segment, min((segm_idx + 1) * tiles_per_segment, num_tiles))` in the stored file at 001ceb3e).
# Releases read: 0.11 (pruned 2D, unpruned 3D)
TRITON_3D_GRID = 128
TRITON_3D_UNPRUNED = ((0, 11),)


def triton_3d_seqs(attn_backend: str, release: tuple[int, int] | None, heads: int, kv_heads: int,
                   out: list[Finding]) -> int:
    """The most sequences a pure decode step of vLLM's Triton attention (``attn_backend`` :data:`TRITON`) runs on
    the 3D kernel, whose sliding-window layers walk every KV tile of their context in ``release``
    (:data:`TRITON_3D_UNPRUNED`), for ``heads`` query and ``kv_heads`` KV heads on a rank; 0 where that is not so
    (another backend, a release whose kernels are not read, no KV head)."""
    if attn_backend != TRITON or kv_heads < 1 or heads < kv_heads:
        return 0
    if release is None or release[:2] not in TRITON_3D_UNPRUNED:
        return 0
    per_kv = heads // kv_heads
    block_m = 16 if per_kv <= 16 else 1 << (per_kv - 1).bit_length()
    block_q = max(1, block_m // per_kv)
    seqs = 0
    while ((seqs + 1) // block_q + seqs + 1) * kv_heads <= TRITON_3D_GRID:
        seqs += 1
    if seqs:
        out.append(Finding("info", "attention-backend",
                           f"vLLM {release[0]}.{release[1]}'s Triton attention runs a decode-only step of up to "
                           f"{seqs} sequences on its 3D (split-KV) kernel (grid (tokens // {block_q} + sequences) x "
                           f"{kv_heads} KV heads <= {TRITON_3D_GRID}), which walks every KV tile of a sliding-window "
                           "layer's context, the window a mask only (window pruning reached it with vLLM PR "
                           "#31984; the 2D kernel has it since PR #24390, in 0.11.0): those steps read the sliding "
                           "layers' KV over the whole context"))
    return seqs


def triton_attn_share() -> tuple[float, str] | None:
    """The share of FlashAttention-2's prefill FLOP/s vLLM's Triton unified attention reaches (kernel tables'
    "kernels" -> "triton_attn", fitted by bench/predict_kernels.py) and where it was measured; None: not recorded."""
    rec = (_table().get("kernels") or {}).get("triton_attn") or {}
    share = rec.get("share")
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        return None
    gpus = ", ".join(f"{g} {v['share']:.2f}" for g, v in (rec.get("gpus") or {}).items())
    return float(share), f"vLLM 0.24.0 kernel tables ({gpus})"


def triton_attn_rate(hw_id: str) -> tuple[float, str] | None:
    """The FLOP/s vLLM's Triton unified attention's prefill reaches on the catalog GPU ``hw_id``: the kernel tables'
    FLOPs per SM cycle ("kernels" -> "triton_attn" -> "flop_per_sm_cycle", bench/predict_kernels.py) at the entry's
    SMs and boost clock, and what that rests on; None where the entry states neither or no rate is recorded.

    Triton's prefill FLOP/s follow the SMs, not the tensor cores: the same shapes run at 74 TFLOP/s on the L40S (142
    SMs, bf16 362 TFLOP/s), 103 on the RTX PRO 6000 (188 SMs) and 64-70 on the B200-class GPUs (bf16 2,250-2,500), so a
    GPU without a Triton table takes its SMs' rate, not a share of its FlashAttention's (the A100's FA2 reaches 2x the
    L40S's FA2 FLOP/s an SM cycle: a share of it would carry that over to a kernel whose speed does not follow it)."""
    rec = (_table().get("kernels") or {}).get("triton_attn") or {}
    rate = rec.get("flop_per_sm_cycle")
    if not isinstance(rate, (int, float)) or rate <= 0:
        return None
    from launchcard.hardware import catalog

    acc = catalog().lookup(hw_id)
    if acc is None or not acc.sms or not acc.boost_mhz:
        return None
    on = ", ".join(f"{g} {v['flop_per_sm_cycle']:.0f}" for g, v in (rec.get("gpus") or {}).items()
                   if isinstance(v, dict) and "flop_per_sm_cycle" in v)
    return (float(rate) * acc.sms * acc.boost_mhz * 1e6,
            f"{rate:.0f} FLOP an SM cycle (vLLM 0.24.0 kernel tables: {on}) x {acc.sms} SMs x {acc.boost_mhz:,.0f} MHz")


def triton_prefill_share(hw_id: str, fa_share: float) -> tuple[float, str] | None:
    """The share of ``hw_id``'s bf16 datasheet FLOP/s vLLM's Triton attention's prefill is timed at: its SMs' rate
    (:func:`triton_attn_rate`) where the catalog states them, else :func:`triton_attn_share` of the GPU's
    FlashAttention share ``fa_share``; with what it rests on.  None: neither is recorded."""
    from launchcard.hardware import catalog

    acc = catalog().lookup(hw_id)
    peak = acc.tflops.get("bf16") if acc is not None else None
    rate = triton_attn_rate(hw_id)
    if rate is not None and peak:
        # never above FlashAttention's own share: Triton is the slower kernel on every shape both tables hold
        return min(fa_share, rate[0] / (peak * 1e12)), f"{rate[0] / 1e12:.1f} TFLOP/s: {rate[1]}"
    got = triton_attn_share()
    if got is None:
        return None
    return fa_share * got[0], f"{got[0]:.2f} of FlashAttention-2's FLOP/s share ({got[1]}: FA2's latency over Triton's)"


def vllm_sink_attention(model_type: str, hw_kind: str, cc: tuple[int, int] | None,
                        release: tuple[int, int] | None, out: list[Finding], hw_id: str = "") -> str:
    """``TRITON`` where vLLM of ``release`` runs a sink model's attention with its Triton unified attention on a GPU
    of compute capability ``cc`` (prefill attention then timed at :func:`triton_prefill_share` on the catalog GPU
    ``hw_id``); "" where it runs FlashAttention / FlashInfer, or the release's rule is not read (said as assumed)."""
    if model_type not in SINK_MODELS or hw_kind != "gpu" or cc is None or cc < (8, 0) or cc in NOT_TRITON_CC:
        return ""
    if release is None or release[:2] not in TRITON_FOR_SINKS:
        told = "not stated" if release is None else f"{release[0]}.{release[1]}, whose rule is not read"
        out.append(Finding("assumed", "attention-backend",
                           f"attention sinks on compute capability {cc[0]}.{cc[1]}: vLLM 0.11 runs them on its Triton "
                           f"attention here (vllm/platforms/cuda.py L358-362); the release is {told}: timed as "
                           "FlashAttention"))
        return ""
    rate = triton_attn_rate(hw_id)
    got = triton_attn_share()
    if got is None and rate is None:
        out.append(Finding("assumed", "attention-backend",
                           "vLLM 0.11 runs attention sinks on its Triton attention on this GPU (vllm/platforms/"
                           "cuda.py L358-362); its speed is not recorded: timed as FlashAttention"))
        return ""
    if rate is not None:
        timed = (f"{rate[0] / 1e12:.1f} TFLOP/s, its SMs' rate ({rate[1]}; Triton's FLOP/s follow a GPU's SMs, "
                 "not its tensor cores)")
    else:
        assert got is not None
        timed = f"{got[0]:.2f} of FlashAttention-2's FLOP/s share ({got[1]}: FA2's latency over Triton's)"
    out.append(Finding("info", "attention-backend",
                       f"vLLM {release[0]}.{release[1]} runs a model with attention sinks on its Triton unified "
                       f"attention on compute capability {cc[0]}.{cc[1]} (not SM90/SM100: vllm/platforms/cuda.py "
                       f"L358-362): prefill attention no faster than {timed}, FlashAttention's time where longer "
                       "(short prompts: the tables measure both alike up to 64 tokens); decode attention keeps "
                       "FlashAttention's"))
    return TRITON


# vLLM's FLASH_ATTN backend on SM8x runs FlashAttention 2 (vllm/attention/utils/fa_utils.py get_flash_attn_version
# L36-37 in 0.10.1.1 and 0.11.0: FA3 on major 9 only), the default there for models without sinks
# (vllm/platforms/cuda.py: 0.10.1.1 L320-330, 0.11.0 L357-368), one flash_attn_varlen_func call per layer for the
# whole step with max_seqlen_q = the step's longest query (v1/attention/backends/flash_attn.py: 0.10.1.1 L523-553,
# 0.11.0 L516-546).  vllm-flash-attention's varlen forward (csrc/flash_attn/flash_api.cpp at 5714f9de; the same
# code at 632fe2a0 and 90eacc1a) packs a KV head's query heads into one tile and splits the KV only when
# max_seqlen_q == 1 (L593-600, L704-710); otherwise the paged path (L744: force the split kernel) runs
# flash_fwd_splitkv with kBlockM 64 x kBlockN 128 tiles (src/flash_fwd_launch_template.h L165-169, head dim <= 128)
# and grid (m blocks, batch, q heads): each decode query of a step that also carries a prefill chunk (or verifies
# draft tokens) takes a whole 64-row tile per query head over all its keys.  Releases read: 0.10 and 0.11
FA2_UNPACKED_RELEASES = ((0, 10), (0, 11))
FA2_TILE_ROWS = 64
# Beyond SM8x the same releases run FlashAttention 2 too, except on SM90 (FA3: fa_utils.py L36-37) and on exactly
# SM 10.0 (FlashInfer first: cuda.py 0.10.1.1 L301, 0.10.2 L335, 0.11.0 L338, is_device_capability an exact match,
# interface.py L234-255): SM 10.3 (B300, GB300), 12.x fall through to FLASH_ATTN (0.11.0 L357-368), and
# get_flash_attn_version takes 2 on any major but 9 (L45-49 turn 3 into 2 on major 10).  The FA2 library is built
# "8.0+PTX" (vllm-flash-attention CMakeLists.txt L138 at 5714f9de): the 0.10.1.1, 0.10.2 and 0.11.0 wheels'
# vllm_flash_attn/_vllm_fa2_C.abi3.so hold sm_80 code and compute_80 PTX only (their .nv_fatbin entries), so there
# the driver compiles the same kernels from PTX: the same tiles (flash_fwd_launch_template.h L165-169 has no
# architecture test) and host code (mha_varlen_fwd asks only cc_major >= 8, flash_api.cpp L541-543)
FA2_FLASHINFER_CC = (10, 0)


def _runs_fa2(cc: tuple[int, int]) -> bool:
    """vLLM 0.10/0.11's default backend on compute capability ``cc`` is FlashAttention 2 (SM 8.0 and up, not SM90's
    FA3, not SM 10.0's FlashInfer)."""
    return cc >= (8, 0) and cc[0] != 9 and cc != FA2_FLASHINFER_CC


def vllm_fa2_unpacked(hw_kind: str, cc: tuple[int, int] | None, release: tuple[int, int] | None,
                      attn_backend: str, mla: bool, kv_cache_dtype: str, out: list[Finding], gqa: bool = True) -> bool:
    """True where vLLM of ``release`` runs a GQA model's attention with FlashAttention 2 on a GPU of compute
    capability ``cc`` (SM8x; SM 10.3 and 12.x from its PTX, :func:`_runs_fa2`, said as assumed: not measured there),
    so that a step whose longest query is over one token (a prefill chunk beside the decodes, or draft tokens to
    verify) runs its decode queries unpacked, one 64-row tile per query head (:data:`FA2_TILE_ROWS`;
    ``launchcard.predict._cost`` times those tiles at the prefill attention share).  False
    elsewhere: FA3 (SM90), FlashInfer (SM 10.0), the Triton attention of sink models, MLA's own kernels, an FP8 KV
    cache (FA2 reads none), a CPU, an MHA model (``gqa`` False: FA2 packs only num_heads > num_heads_k, flash_api.cpp
    L593, so its decode queries run one tile per head in every step alike, the decode kernel the shares time); and on
    those GPUs at a release whose rule is not read (said as assumed)."""
    if hw_kind != "gpu" or cc is None or not _runs_fa2(cc) or attn_backend or mla or not gqa:
        return False
    if kv_cache_dtype.lower().startswith("fp8"):
        return False
    if release is None or release[:2] not in FA2_UNPACKED_RELEASES:
        told = "not stated" if release is None else f"{release[0]}.{release[1]}, whose rule is not read"
        out.append(Finding("assumed", "attention-backend",
                           f"FlashAttention 2 on compute capability {cc[0]}.{cc[1]}: vLLM 0.10/0.11 run a step's "
                           "decode queries unpacked (a 64-row tile per query head) whenever a prefill chunk shares "
                           "the step (vllm-flash-attention flash_api.cpp L593-600); the release is "
                           f"{told}: decode attention timed as the packed decode kernel in every step"))
        return False
    said = (f"vLLM {release[0]}.{release[1]} runs FlashAttention 2 on compute capability {cc[0]}.{cc[1]}: "
            "in a step that also carries a prefill chunk (or draft tokens) each decode query takes a whole "
            "64-row tile per query head over its keys (vllm-flash-attention flash_api.cpp L593-600, "
            "flash_fwd_launch_template.h L165), timed at the prefill attention's FLOP/s share")
    if cc[0] == 8:
        out.append(Finding("info", "attention-backend", said))
        return True
    out.append(Finding("assumed", "attention-backend",
                       said + f". Here FA2 runs from its compute_80 PTX (the wheel's FA2 library holds sm_80 code and "
                              "PTX only; FlashInfer is taken on SM 10.0 alone, vllm/platforms/cuda.py 0.11.0 L338), "
                              f"which no table measures on compute capability {cc[0]}.{cc[1]}: timed with the GPU's "
                              "attention shares"))
    return True


# SGLang's attention backend for GptOssForCausalLM (learnable sinks, a 128-token sliding window on every other
# layer) when none is given: trtllm_mha on SM100, fa3 on SM90, its Triton backend elsewhere (ServerArgs.
# _handle_model_specific_adjustments: 0.5.3 python/sglang/srt/server_args.py L734-742, 0.5.4.post2 L915-926,
# 0.5.6.post2 L1115-1126; is_sm100_supported / is_sm90_supported test the compute capability's major only)
SGLANG_SINK_ARCHS = ("GptOssForCausalLM",)
SGLANG_SINK_BACKENDS = {10: "trtllm_mha", 9: "fa3"}
SGLANG_SINK_OTHER = "triton"


def sglang_sink_attention(architectures: tuple[str, ...] | list[str], hw_kind: str, cc: str,
                          out: list[Finding]) -> str:
    """The attention backend SGLang runs a sink model (gpt-oss) with on a GPU of compute capability ``cc`` ("9.0")
    when the command states none (the caller's test: a stated one has the command's own finding), said as a finding;
    "" for another model or a CPU.  The step model's attention terms time it whichever it is (no per-backend cost)."""
    parsed = compute_capability(cc)
    if hw_kind != "gpu" or parsed is None or not set(architectures) & set(SGLANG_SINK_ARCHS):
        return ""
    backend = SGLANG_SINK_BACKENDS.get(parsed[0], SGLANG_SINK_OTHER)
    rule = ("SGLang runs gpt-oss's attention (sinks, sliding window) with trtllm_mha on SM100, fa3 on SM90 and its "
            "Triton backend elsewhere (server_args.py _handle_model_specific_adjustments, 0.5.6.post2 L1115-1126)")
    if backend != SGLANG_SINK_OTHER:
        out.append(Finding("info", "attention-backend", f"{rule}: {backend} here, timed by the step model's "
                                                        "attention terms"))
        return backend
    out.append(Finding("assumed", "attention-backend",
                       f"{rule}: {backend} on compute capability {cc}, timed by the step model's attention terms, "
                       "which SGLang's kernel tables measure on FlashAttention (aiconfigurator-core 0.12.0 a100_sxm "
                       "sglang 0.5.10 attention rows: kernel_source flash_attention), not on its Triton kernels"))
    return backend
