"""Kernel FLOP/s shares: the share of a dtype's datasheet FLOP/s one engine's kernels reach on one GPU, by
kernel class (dense GEMMs, routed experts' grouped GEMMs, prefill attention, DeepSeek Sparse Attention), read from
the coefficient table's "kernels" (fitted by bench/predict_kernels.py on public measured kernel tables, never on
end-to-end runs).
"""

from __future__ import annotations

import statistics
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from launchcard.predict._by_n import share_at_n
from launchcard.predict._table import coefficient_table as _table

if TYPE_CHECKING:
    from launchcard.predict._facts import ServingFacts


class KernelEff(NamedTuple):
    """Share of the dtype's datasheet FLOP/s one engine's kernels reach on one GPU once the machine is full, by
    kernel class: ``g_`` dense GEMMs, ``x_`` the grouped GEMMs of routed experts, ``ap_`` attention (prefill; a
    compute-bound decode, as MLA's, too); ``*_half`` the tile height in tokens (dense), tokens per running expert
    (MoE) or keys per query (prefill attention): fewer cost a whole tile's FLOPs.  ``x_t0``: seconds a grouped
    MoE call takes on top of its roofline whatever its tokens (routing, sorting and permuting them), measured in
    the same tables."""

    g_comp: float = 1.0
    g_half: float = 0.0
    x_comp: float = 1.0
    x_half: float = 0.0
    x_t0: float = 0.0
    # the routed experts' record is the Triton fused MoE kernel's, fitted over rows padded to get_default_config's
    # BLOCK_SIZE_M (launchcard.predict._fused_moe): (block while tokens <= the rank's experts, block above); (0, 0):
    # rows as routed
    x_blocks: tuple[int, int] = (0, 0)
    ap_comp: float = 1.0
    ap_half: float = 0.0
    # vLLM's Triton unified attention (launchcard.predict._attn_backend.triton_prefill_share): its own share of the
    # datasheet FLOP/s, a ceiling on prefill attention's rate (a prompt takes the longer of FlashAttention's time,
    # short ones costing its tile, and its FLOPs at this share); 0: none
    ap_cap: float = 0.0
    source: str = "none"
    borrowed: tuple[str, ...] = ()  # classes the GPU's own tables lack, taken from the median ("default")
    # the GPU's few-row GEMM weight-read share of its datasheet bandwidth over the calibrated GPUs' (the sets' bw_eff
    # is fitted on their runs): its weight reads are timed at bw_eff x this (1: no table, or a CPU)
    w_read: float = 1.0
    # the routed experts' weight reads (their own kernel's share over the calibrated GPUs': w_read but for Marlin)
    x_read: float = 1.0
    # the lm_head's share and weight-read ratio where the dense GEMMs run another kernel (vLLM's Marlin: the lm_head
    # stays an unquantized cuBLAS GEMM); 0: the dense GEMMs'
    lm_comp: float = 0.0
    lm_read: float = 0.0
    # the GPU's decode-attention KV-read share (its "attn_decode" table) over the calibrated GPUs' median: the sets'
    # attn_eff is fitted on their runs, so a GPU whose decode kernel reads KV slower (A100: FlashAttention 2; vLLM's
    # get_flash_attn_version picks FA3 on SM90 only, vllm/attention/utils/fa_utils.py L36 at vllm-project/vllm
    # 0fa99d44) has its KV reads timed at attn_eff x this (1: no table, or a CPU)
    a_read: float = 1.0
    # the engine whose record of the routed experts' kernel on this GPU stands in for the engine's own (MOE_STAND_IN);
    # "": the engine's own record, the median's (``borrowed``) or a kernel record (Marlin, MXFP4)
    moe_from: str = ""
    # block-scaled FP8 dense GEMMs (ServingFacts.gemm_block): where their share came from: "own" (this GPU's record
    # of the engine's block kernel, "stand_in" naming whose table it is), "median" (the GPUs that have one), or
    # "per-tensor" (no record: the per-tensor FP8 share stands in); "": not block-scaled
    gemm_block: str = ""
    block_stand_in: str = ""
    # the dense GEMMs' smooth-roofline exponent p: a GEMM takes (mem^p + comp^p)^(1/p), not max(mem, comp) (its weight
    # read and its FLOPs overlap only in part near the ridge point); fitted per GPU on its GEMM table
    # (bench/kernel_fit.py ridge_p); 0: max
    g_ridge: float = 0.0
    # the routed experts' FLOP/s share read at their N per rank (ServingFacts.moe_n) from the record's share by N
    # ("by_n": TensorRT-LLM's records, bench/predict_kernels.py moe_by_n): how it was read; "": the record's e_comp
    x_by_n: str = ""


NO_KERNELS = KernelEff()

# (GPU, engine) whose own MoE table holds skewed routing only -> the engine whose record of the same kernel on that GPU
# stands in for the routed experts' class (the fit takes balanced routing: bench/kernel_fit.py moe_points), before
# the other GPUs' median.  A100, vLLM: its 0.14.0 table holds power-law rows only; its fused Triton MoE
# ("vllm_fused_moe") and SGLang 0.5.10's ("sglang_fused_moe_triton", whose balanced rows give the A100's "sglang" moe
# record) take the same time on the 1,377 BF16 shapes without expert parallelism both measured, median ratio 0.99 at
# either power law, 0.96-1.05 at every tokens-per-expert band (bench/kernel_checks.py moe_stand_in_checks); the
# median it replaced is of Hopper and Blackwell kernels (call latency 16 us against the A100's measured 64 us).  Where
# the two releases run a shape with different configs (vLLM's tuned A100 file for E=128, N=192, none in SGLang 0.5.10)
# the experts' time takes the tables' measured ratio for the shape (launchcard.predict._fused_moe.stand_in_ratio)
MOE_STAND_IN = {("a100_80gb", "vllm"): "sglang"}


def _entry(by_cls: dict[str, Any], cls: str, dtype: str) -> dict[str, Any] | None:
    got = by_cls.get(cls) or {}
    e = got.get(dtype) or got.get("bf16")  # a dtype without a table (int8): its class's 16-bit kernels
    return e if isinstance(e, dict) else None


@lru_cache(maxsize=256)
def kernel_eff(hw_id: str, kind: str, engine: str, dtype: str, expert_dtype: str,
               moe_kernel: str | None = None, marlin: str = "", attn: str = "", block: bool = False,
               fused_moe: bool = True, moe_n: int = 0) -> KernelEff:
    """:func:`_kernel_eff`, with the GEMMs ``marlin`` names (launchcard.predict._marlin.PARTS: the dense ones, the
    routed experts or both) timed at vLLM's Marlin kernel's measured shares on ``hw_id`` where a table has them (the
    experts' FLOP/s share at their N per rank ``moe_n``, MarlinShares.at_n; the dense GEMMs' the fit over every shape),
    prefill attention capped at the Triton unified attention's rate where ``attn`` is "triton" (``ap_cap``: its SMs'
    rate, else its share of FlashAttention's, launchcard.predict._attn_backend.triton_prefill_share), and block-scaled
    FP8 dense GEMMs (``block``) at their kernels' shares (:func:`_block_gemm`)."""
    k = _kernel_eff(hw_id, kind, engine, dtype, expert_dtype, moe_kernel, fused_moe, moe_n)
    if block and dtype == "fp8" and k is not NO_KERNELS:
        k = _block_gemm(k, hw_id, engine)
    if attn == "triton" and k is not NO_KERNELS:
        from launchcard.predict._attn_backend import triton_prefill_share

        got = triton_prefill_share(hw_id, k.ap_comp)
        if got is not None:
            k = k._replace(ap_cap=got[0], source=f"{k.source} + triton attention")
    if not marlin or k is NO_KERNELS:
        return k
    from launchcard.predict._marlin import marlin_shares

    m = marlin_shares(hw_id)
    if m is None:
        return k
    basis = ((((_table().get("kernels") or {}).get("weight_read") or {}).get("basis") or {}).get(engine) or {})
    # Marlin's few-token weight reads over the calibrated GPUs' BF16 ones (what w_read is for the BF16 GEMMs)
    read = m.read / float(basis["share"]) if m.read and basis.get("share") else k.w_read
    if marlin in ("dense", "all"):
        # Marlin's dense GEMMs have no table of their own: no ridge exponent measured for them (max)
        k = k._replace(g_comp=m.e_comp, g_half=0.0, g_ridge=0.0, w_read=read, lm_comp=k.g_comp, lm_read=k.w_read)
    if marlin in ("experts", "all"):
        k = k._replace(x_comp=m.at_n(moe_n)[0], x_half=0.0, x_t0=m.t0_s, x_read=read, moe_from="", x_blocks=(0, 0),
                       borrowed=tuple(c for c in k.borrowed if c != "moe"))
    return k._replace(source=f"{k.source} + marlin ({m.source})")


def _kernel_eff(hw_id: str, kind: str, engine: str, dtype: str, expert_dtype: str,
                moe_kernel: str | None = None, fused_moe: bool = True, moe_n: int = 0) -> KernelEff:
    """The recorded kernel FLOP/s shares for a GPU (catalog id) and engine (data/predict_coefficients.json
    "kernels"); a GPU without tables gets the median of the GPUs that have them (``default``), a GPU whose tables
    lack a class (MoE, prefill attention) that class's median; CPUs none (their figures are measured with the
    engine's own kernels).  ``moe_kernel`` names the routed experts' own kernel where it is not their dtype's
    grouped GEMM (MXFP4: ``mxfp4``, ``mxfp4_marlin``, recorded per GPU from the engine's own kernel rows); a GPU
    without that record keeps its dtype's grouped-GEMM class.  ``fused_moe`` False: the experts run another kernel
    (MXFP4's) than the Triton fused MoE a padded record (``row_block``) was fitted on: its unpadded fit ("routed").
    A record with shares by the experts' N per rank ("by_n") is read at ``moe_n`` (:func:`share_at_n`)."""
    if kind != "gpu":
        return NO_KERNELS
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    fallback = (gpus.get("default") or {}).get(engine) or (gpus.get("default") or {}).get("vllm") or {}
    for where in (hw_id, "default"):
        by_engine = gpus.get(where) or {}
        by_cls = by_engine.get(engine) or by_engine.get("vllm")
        if not by_cls:
            continue
        g = _entry(by_cls, "gemm", dtype)
        if g is None:
            continue
        # a class the GPU's tables lack takes the stand-in engine's record of the same kernel on that GPU
        # (MOE_STAND_IN), else the median's (the A100's vLLM 0.14.0 / TRT-LLM 1.0.0 MoE rows hold skewed routing only)
        x, ap = _entry(by_cls, "moe", expert_dtype), _entry(by_cls, "attn_prefill", "bf16")
        stand_in = MOE_STAND_IN.get((hw_id, engine)) if where == hw_id else None
        src, moe_from = f"{where}/{engine if engine in by_engine else 'vllm'}", ""
        if x is None and stand_in:
            x = _entry(by_engine.get(stand_in) or {}, "moe", expert_dtype)
            if x is not None:
                src, moe_from = f"{src} (moe: {stand_in}'s)", stand_in
        borrowed = tuple(c for c, e in (("moe", x), ("attn_prefill", ap)) if e is None and where != "default")
        x = x or _entry(fallback, "moe", expert_dtype)
        ap = ap or _entry(fallback, "attn_prefill", "bf16")
        own = ((gpus.get(hw_id) or {}).get(engine) or {}).get("moe") or {}
        if moe_kernel and isinstance(own.get(moe_kernel), dict):
            x = own[moe_kernel]
            borrowed = tuple(c for c in borrowed if c != "moe")  # the GPU's own record, not the median's
            moe_from = ""
        x_t0 = x.get("t0_us", 0.0) * 1e-6 if x else 0.0  # a GEMM's latency is not a MoE call's
        blocks = x.get("row_block") if x else None
        x_blocks = (int(blocks[0]), int(blocks[1])) if isinstance(blocks, list) and len(blocks) == 2 else (0, 0)
        un = x.get("routed") if x else None
        if x and x_blocks[0] and not fused_moe and isinstance(un, dict):
            # experts whose own kernel this class only times (MXFP4): its fit over the rows as routed, unpadded
            x = {**x, "e_comp": un["e_comp"]}
            x_t0, x_blocks = float(un["t0_us"]) * 1e-6, (0, 0)
        x = x or g
        x_comp, by_n = float(x["e_comp"]), ""
        if x.get("by_n") and moe_n > 0:  # the share at the plan's N per rank (how the experts are split)
            x_comp, how = share_at_n(tuple((float(a), float(b)) for a, b, *_ in x["by_n"]), moe_n, x_comp)
            by_n = f"{how}, {x.get('file') or src}"
        return KernelEff(g_comp=g["e_comp"], g_half=g["s_half"], g_ridge=float(g.get("ridge_p") or 0.0),
                         x_comp=x_comp, x_half=x["s_half"], x_by_n=by_n,
                         x_t0=x_t0, x_blocks=x_blocks,
                         ap_comp=ap["e_comp"] if ap else 1.0, ap_half=ap["s_half"] if ap else 0.0,
                         source=src, borrowed=borrowed,
                         w_read=(wr := weight_read_ratio(hw_id, engine)), x_read=wr,
                         a_read=attn_read_ratio(hw_id, engine), moe_from=moe_from)
    return NO_KERNELS


BLOCK_KEY = "fp8_block"


def _block_gemm(k: KernelEff, hw_id: str, engine: str) -> KernelEff:
    """``k`` with the dense GEMMs' FLOP/s share and tile height taken from the block-scaled FP8 GEMM record of
    ``engine`` on ``hw_id`` ("kernels" -> gpus -> GPU -> engine -> gemm -> fp8_block: DeepGEMM for SGLang, and for
    vLLM where it runs DeepGEMM (SGLang's rows stand in: vLLM's own rows hold a per-call floor, bench/
    predict_kernels.py BLOCK_STAND_IN); TensorRT-LLM's own block-scaling GEMM), else the median of the GPUs that have
    one, else the per-tensor FP8 share ``k`` holds (said by launchcard.predict._domain).  Their weight reads keep the
    BF16-measured ratio: few-row FP8 rows reading >= 100 us of weights are too few on the measured GPUs."""
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    for where, how in ((hw_id, "own"), ("default", "median")):
        e = (((gpus.get(where) or {}).get(engine) or {}).get("gemm") or {}).get(BLOCK_KEY)
        if isinstance(e, dict):
            return k._replace(g_comp=float(e["e_comp"]), g_half=float(e["s_half"]),
                              g_ridge=float(e.get("ridge_p") or 0.0), gemm_block=how,
                              block_stand_in=str(e.get("stand_in") or "") if how == "own" else "",
                              source=f"{k.source} + fp8 block ({where})")
    return k._replace(gemm_block="per-tensor")


def weight_read_ratio(hw_id: str, engine: str) -> float:
    """A GPU's measured weight-read share (BF16 GEMMs of a few rows, "kernels" -> "weight_read") over the median of
    the GPUs the gpu sets are calibrated on, for ``engine``'s kernels; 1 where either is not measured."""
    wr = (_table().get("kernels") or {}).get("weight_read") or {}
    own = ((wr.get("gpus") or {}).get(engine) or {}).get(hw_id)
    basis = (wr.get("basis") or {}).get(engine)
    if not own or not basis:
        return 1.0
    return float(own["share"]) / float(basis["share"])


def attn_read_ratio(hw_id: str, engine: str) -> float:
    """A GPU's measured decode-attention KV-read share (BF16 "attn_decode" e_mem of its generation-attention table)
    over the median of the same share on the GPUs the gpu sets are calibrated on ("weight_read" -> "basis" ->
    "from"), for ``engine``'s kernels; 1 where either is not measured."""
    k = _table().get("kernels") or {}
    gpus = k.get("gpus") or {}

    def share(g: str) -> float | None:
        e = _entry((gpus.get(g) or {}).get(engine) or {}, "attn_decode", "bf16")
        return float(e["e_mem"]) if e and e.get("e_mem") else None

    own = share(hw_id)
    basis = [v for g in (((k.get("weight_read") or {}).get("basis") or {}).get(engine) or {}).get("from") or ()
             if (v := share(str(g))) is not None]
    if own is None or not basis:
        return 1.0
    return own / statistics.median(basis)


def weight_read_basis(engine: str) -> float:
    """The calibrated GPUs' median few-row BF16 GEMM weight-read share of the datasheet bandwidth for ``engine``'s
    kernels ("kernels" -> "weight_read" -> "basis"); 1 where not measured.  A set's ``bw_eff`` above it would time
    every GPU's weight reads faster than its own GEMM kernels measure (bw_eff x share / basis > share)."""
    basis = ((((_table().get("kernels") or {}).get("weight_read") or {}).get("basis") or {}).get(engine) or {})
    return float(basis["share"]) if basis.get("share") else 1.0


def attn_read_basis(engine: str) -> float:
    """The median decode-attention KV-read share (BF16 "attn_decode" e_mem) of ``engine``'s kernels over the GPUs
    the gpu sets are calibrated on (:func:`attn_read_ratio`'s denominator); 1 where not measured."""
    k = _table().get("kernels") or {}
    gpus = k.get("gpus") or {}
    shares = [float(e["e_mem"]) for g in ((((k.get("weight_read") or {}).get("basis") or {}).get(engine) or {})
                                          .get("from") or ())
              if (e := _entry((gpus.get(str(g)) or {}).get(engine) or {}, "attn_decode", "bf16")) and e.get("e_mem")]
    return statistics.median(shares) if shares else 1.0


def max_weight_read_ratio(engine: str) -> float:
    """The largest :func:`weight_read_ratio` of ``engine``'s kernels over every GPU with a measured share (1 when none
    is above 1): a set's ``bw_eff`` times it must stay <= 1, or some GPU's weight reads would beat its datasheet
    bandwidth (bench/predict_accuracy.py bounds the fit with it)."""
    wr = (_table().get("kernels") or {}).get("weight_read") or {}
    own = (wr.get("gpus") or {}).get(engine) or {}
    return max([1.0] + [weight_read_ratio(g, engine) for g in own])


def max_attn_read_ratio(engine: str) -> float:
    """The largest :func:`attn_read_ratio` of ``engine``'s kernels over every GPU with a decode-attention table (1
    when none is above 1): a set's ``attn_eff`` times it must stay <= 1 (bench/predict_accuracy.py bounds the fit)."""
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    return max([1.0] + [attn_read_ratio(g, engine) for g in gpus if g != "default"])


def kernel_basis(engine: str, dtype: str) -> tuple[str, ...]:
    """The GPUs whose measured tables the median dense-GEMM share of ``engine``'s kernels in ``dtype`` (what a GPU
    without tables takes) comes from ("kernels" -> "default")."""
    by_cls = (((_table().get("kernels") or {}).get("gpus") or {}).get("default") or {}).get(engine) or {}
    e = _entry(by_cls, "gemm", dtype)
    return tuple(str(x) for x in (e or {}).get("from") or ())


@lru_cache(maxsize=64)
def dsa_kernel_eff(hw_id: str, kind: str, engine: str) -> tuple[float, float] | None:
    """(sparse MLA, indexer FP8 logits) FLOP/s shares measured for DeepSeek Sparse Attention's kernels on a GPU
    ("kernels" ``dsa_attn`` / ``dsa_logits``, from SGLang's kernel-level tables: FlashMLA sparse and DeepGEMM's MQA
    logits, which vLLM runs too); a GPU without them the median of those that have them; None on CPUs."""
    if kind != "gpu":
        return None
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    for where in (hw_id, "default"):
        by_engine = gpus.get(where) or {}
        by_cls = by_engine.get(engine) if "dsa_attn" in (by_engine.get(engine) or {}) else by_engine.get("sglang")
        a, i = _entry(by_cls or {}, "dsa_attn", "bf16"), _entry(by_cls or {}, "dsa_logits", "fp8")
        if a is not None and i is not None:
            return float(a["e_comp"]), float(i["e_comp"])
    return None


def facts_kernels(f: ServingFacts) -> KernelEff:
    hw = f.hardware
    return kernel_eff(hw.id, hw.kind, f.engine, f.compute_dtype, f.expert_dtype or f.compute_dtype, f.moe_kernel,
                      f.marlin, f.attn_backend, f.gemm_block, f.fused_moe, f.moe_n)
