"""vLLM's weight-only Marlin kernels: which GEMMs of a plan run them, and the shares of the datasheet they reach.

Where vLLM runs them (the same rule in 0.10.1.1, 0.11.0 and 0.13.0, the releases of the held-out A100 runs): FP8
weights on a GPU below compute capability 8.9, for the dense layers (``Fp8LinearMethod``: ``use_marlin = not
has_device_capability(89)``, vllm/model_executor/layers/quantization/fp8.py 0.10.1.1 L199, 0.11.0 L234, 0.13.0 L392)
and the experts (``Fp8MoEMethod``: 0.10.1.1 L497 and 0.11.0 L447 the same test, then ``fused_marlin_moe`` at L976 /
L1019; 0.13.0 ``get_fp8_moe_backend`` L162-170 returns ``Fp8MoeBackend.MARLIN``, ``fused_marlin_moe`` at L1238), block-
scaled checkpoints included; MXFP4 experts below SM90 (mxfp4.py 0.10.1.1 ``_should_use_marlin`` L123-135: "marlin
kernel has better performance on ampere"; 0.11.0 ``get_mxfp4_backend`` L94-98; 0.13.0 L140-160); NVFP4 below SM100
(marlin_utils_fp4).  The activations stay 16-bit: the weights are dequantized in registers and multiplied on the
bf16/fp16 tensor cores (mma.sync m16n8k16), so the GEMMs run at the bf16 rate; the lm_head stays unquantized (cuBLAS).

How fast (``"kernels"`` -> ``"marlin"``, bench/predict_kernels.py ``marlin_record``): the aiconfigurator-core 0.12.0
wheel measures Marlin's MoE kernel with W4A16 weights on most GPUs (on the A100 only SGLang 0.5.10's port,
``sglang_marlin_moe``: 972 balanced shapes, e_comp 0.461 of the bf16 rate over the rows it multiplies, weight reads
0.704 of the datasheet at <= 8 tokens per expert against 0.761 for the A100's BF16 GEMMs, 48 us a call); no table holds
a dense Marlin GEMM or an FP8 Marlin MoE.  Once the FLOPs bind, the share rises with the experts' N per rank and is
flat in tokens per expert (H100: 0.080 at N 64 to 0.282 at 2048; A100: 0.345 at 256 to 0.50 at 16384): the experts
take the share at their own N (:meth:`MarlinShares.at_n`, the record's ``by_n``), the dense GEMMs the fit over every
shape (``e_comp``).  The MoE kernel multiplies whole row blocks: ``fused_marlin_moe`` takes a
block of 8, 16, 32, 48 or 64 rows from M x top-k / E (:func:`moe_block`) and pads every expert's rows to a multiple of
it, so the fit counts the padded rows of the tables' balanced routing (:func:`padded_balanced`: the A100's error median
8.5% -> 5.6%, p90 24.9% -> 16.6%; every other GPU's falls too) and a step the expected padded rows of uniform routing
(:func:`padded_random`: a 2,048-token step of Qwen3-235B's 128 experts, top-8, runs 64-row blocks whose padding adds 24%
to the rows, a 256-token one 32-row blocks that double them).  The dense Marlin GEMMs are timed with the MoE kernel's
shares over full blocks (an ``assumed`` finding): vLLM's MoE kernel is the dense one's template with the experts' row
gathering added (csrc/moe/marlin_moe_wna16/marlin_template.h includes the dense kernel's
quantization/gptq_marlin/marlin.cuh and dequant.h, the same mma.sync pipeline and striped partitioning), and FP8's 8-bit
weights go through the same pipeline at twice the bytes (the bytes are the plan's).  What this changes is the
large-batch end: Marlin's tensor-core share is half of cuBLAS's on an A100 (0.461 against 0.831), which is what vLLM's
own start-up warning says ("This may degrade performance for compute-heavy workloads", marlin_utils_fp8.py
``prepare_fp8_layer_for_marlin``) and what Marlin's author says past ~128 tokens (IST-DASLab/marlin issue #21); few
tokens stay bound by the weight reads.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Finding

# what a plan runs through Marlin (``ServingFacts.marlin``): its dense GEMMs, its routed experts, or both
PARTS = ("", "dense", "experts", "all")


class MarlinShares(NamedTuple):
    """The Marlin MoE kernel's measured shares on one GPU: of the bf16 datasheet FLOP/s once the machine is full,
    seconds a MoE call takes above its roofline, and of the datasheet bandwidth its few-token weight reads reach
    (None: not measured)."""

    e_comp: float
    t0_s: float
    read: float | None
    source: str
    # (N, FLOP/s share) by the experts' N on a rank, N ascending (bench/predict_kernels.py marlin_by_n); (): none
    by_n: tuple[tuple[float, float], ...] = ()

    def at_n(self, n: int) -> tuple[float, str]:
        """The FLOP/s share at the experts' N per rank ``n`` and how it was read (launchcard.predict._by_n.
        share_at_n: interpolated in log N, ``e_comp`` where no N is recorded)."""
        from launchcard.predict._by_n import share_at_n

        return share_at_n(self.by_n, n, self.e_comp)


# The row blocks of vLLM's Marlin MoE kernel: fused_marlin_moe picks the first of these whose block the mean expert
# would fill to 0.9 or less (M tokens x top-k over the rank's E experts; vllm/model_executor/layers/fused_moe/
# fused_marlin_moe.py 0.11.0 L99-103, the same test in SGLang 0.5.9's port, sglang/srt/layers/moe/fused_moe_triton/
# fused_marlin_moe.py L101-103), the last where none does; moe_align_block_size then pads every expert's rows to a
# multiple of it (fused_moe/moe_align_block_size.py 0.11.0 L48-49), and the kernel multiplies whole blocks
MOE_BLOCKS = (8, 16, 32, 48, 64)
MOE_FILL = 0.9


# Under expert parallelism the rank's M is every token that reaches it while E = w1.size(0) is its own experts, so
# M x top-k / E overstates the rows each expert gets by the EP size.  vLLM PR #48144 ("update marlin M size for EP")
# first scales M by E / global experts before the block test: in 0.26.0 (fused_moe/experts/marlin_moe.py
# L316-320), not in 0.25.1 (the same file, block test L315-318 on M as it comes); 0.34.0 the same as 0.26.0
# (L301-310), the newest release read
MARLIN_EP_M_FROM = (0, 26)
MARLIN_EP_M_READ_UNTIL = (0, 34)


def ep_block_rows(rows: float, topk: int, rank_experts: float, experts: int, scaled: bool) -> float:
    """fused_marlin_moe's M x top-k / E on a rank that ``rows`` tokens reach and holds ``rank_experts`` of the
    model's ``experts``; ``scaled``: the release scales M by E / global experts first (:data:`MARLIN_EP_M_FROM`)."""
    if scaled and 0 < rank_experts < experts:
        rows = math.ceil(rows * rank_experts / experts)
    return rows * topk / rank_experts


def ep_block_finding(release: tuple[int, int] | None, ep: int) -> tuple[bool, Finding]:
    """Whether vLLM ``release`` scales Marlin MoE's M by the rank's share of the experts (EP size ``ep``), and the
    finding that says which rule the prediction applies; ``release`` None (not stated): the newest rule read, said
    as assumed (as every release-gated vLLM rule says an unstated release)."""
    read = f"{MARLIN_EP_M_READ_UNTIL[0]}.{MARLIN_EP_M_READ_UNTIL[1]}"
    rel = release or MARLIN_EP_M_READ_UNTIL
    told = f"{rel[0]}.{rel[1]}" if release is not None else "(release not stated)"
    head = f"vLLM {told} with expert parallelism ({ep} ranks) picks Marlin MoE's row block from "
    if rel < MARLIN_EP_M_FROM:
        return False, Finding("info", "marlin-ep",
                              head + "every token reaching the rank over its own experts (M x top-k / E, E the "
                                     "rank's experts: fused_marlin_moe, 0.25.1 marlin_moe.py L315-318), so it "
                                     f"overstates each expert's rows {ep}-fold; vLLM PR #48144 scales M by E / "
                                     "global experts from 0.26.0")
    said = (head + "M scaled by the rank's experts over the global ones first (vLLM PR #48144, 0.26.0 "
                   "marlin_moe.py L316-320, 0.34.0 L301-310): the block follows each expert's mean rows")
    if release is None:  # an unstated release: the newest rule read, said as assumed (as every release-gated rule)
        return True, Finding("assumed", "marlin-ep",
                             said + f"; the release is not stated: {read}'s rule, the newest read, taken")
    if release > MARLIN_EP_M_READ_UNTIL:
        return True, Finding("assumed", "marlin-ep",
                             f"{said}; the newest release read is {read}, its rule taken for "
                             f"{release[0]}.{release[1]}")
    return True, Finding("info", "marlin-ep", said)


def moe_block(rows_per_expert: float) -> int:
    """The row block fused_marlin_moe takes where its M x top-k / E is ``rows_per_expert``."""
    for b in MOE_BLOCKS:
        if rows_per_expert / b < MOE_FILL:
            return b
    return MOE_BLOCKS[-1]


def padded_balanced(rows: int, experts: int, block: int) -> int:
    """Rows the kernel multiplies when ``rows`` (tokens x top-k) are spread as evenly as possible over ``experts``
    (the kernel tables' "balanced" routing), each expert's padded to a multiple of ``block``."""
    q, r = divmod(rows, experts)
    return (experts - r) * (-(-q // block) * block) + r * (-(-(q + 1) // block) * block)


@lru_cache(maxsize=4096)
def padded_random(tokens: int, share: float, block: int) -> float:
    """Expected rows one expert's padded block list holds over its expected rows, when each of ``tokens`` tokens
    routes to it with probability ``share`` on its own (uniform routing: the step model's
    ``1 - (1 - k/E)^tokens``): E[ceil(n / block) x block] / E[n], n ~ Binomial(tokens, share)."""
    mean = tokens * share
    if mean <= 0.0:
        return 1.0
    if share >= 1.0:
        return -(-tokens // block) * block / tokens
    # E[ceil(n / b)] = sum over j >= 0 of P(n > j b): the binomial pmf walked in log space over mean +- 12 standard
    # deviations (what lies outside is below 1e-30); every block boundary under the walk is passed with certainty
    sd = math.sqrt(mean * (1.0 - share))
    lo = max(0, int(mean - 12.0 * sd) - 1)
    hi = min(tokens, int(mean + 12.0 * sd + 2 * block + 1))
    log_q, log_s = math.log1p(-share), math.log(share)
    log_pmf = (math.lgamma(tokens + 1) - math.lgamma(lo + 1) - math.lgamma(tokens - lo + 1) + lo * log_s
               + (tokens - lo) * log_q)
    cdf, blocks = 0.0, float(-(-lo // block))  # the boundaries j b < lo
    for n in range(lo, hi + 1):
        if n > lo:
            log_pmf += math.log((tokens - n + 1) / n) + log_s - log_q
        cdf += math.exp(log_pmf)
        if n % block == 0:
            blocks += max(0.0, 1.0 - cdf)  # P(n > j b) at n = j b
    return blocks * block / mean


def marlin_parts(dense: bool, experts: bool) -> str:
    """The ``PARTS`` value of a plan whose dense GEMMs (``dense``) and routed experts (``experts``) run Marlin."""
    return PARTS[int(dense) + 2 * int(experts)]


def marlin_shares(hw_id: str) -> MarlinShares | None:
    """The Marlin kernel's recorded shares on ``hw_id`` (a catalog GPU), None where no table measures it."""
    rec = ((((_table().get("kernels") or {}).get("marlin") or {}).get("gpus") or {}).get(hw_id))
    if not isinstance(rec, dict):
        return None
    read = rec.get("weight_read")
    return MarlinShares(e_comp=float(rec["e_comp"]), t0_s=float(rec.get("t0_us", 0.0)) * 1e-6,
                        read=float(read) if read else None,
                        by_n=tuple((float(n), float(v)) for n, v, *_ in rec.get("by_n") or ()),
                        source=f"{rec.get('engine')} {rec.get('version')} {rec.get('dtype')} Marlin MoE rows "
                               f"({rec.get('file')})")


def expert_share_text(m: MarlinShares, moe_n: int) -> str:
    """The routed experts' FLOP/s share as a finding states it: the share at the experts' N per rank ``moe_n``
    (:meth:`MarlinShares.at_n`) and how it was read."""
    share, how = m.at_n(moe_n)
    return f"FLOP/s {share:.3f} of the bf16 datasheet at the experts' N {moe_n} per rank ({how})"


def weight_only_finding(quant: str, hw_id: str, compute_capability: str, parts: str, bits: str, *,
                        machete: bool = False, moe_n: int = 0) -> Finding:
    """What the prediction assumes of a plan vLLM serves with Marlin (``parts``: which of its GEMMs; ``bits``: the
    float format the GPU has no tensor cores for, "" for integer weight-only schemes, which run Marlin on every GPU
    from SM 8.0; ``machete``: the dense GEMMs run vLLM's Machete kernel instead, SM 9.0; ``moe_n``: the experts'
    N per rank, which their share is read at)."""
    mach = (" Its dense GEMMs run vLLM's Machete kernel on SM 9.0 (choose_mp_linear_kernel's first pick, "
            "kernels/mixed_precision/__init__.py L28-37, machete.py L35), which no table measures: timed with the "
            "BF16 GEMM class's shares." if machete else "")
    if not parts:
        return Finding("assumed", "weight-only", f"{quant} weights on {hw_id} (integer weight-only, vLLM)." + mach)
    where = {"dense": "dense GEMMs", "experts": "routed experts", "all": "dense GEMMs and routed experts"}[parts]
    if not bits:
        head = (f"{quant} weights (integer weight-only) on {hw_id}: vLLM runs its {where} through its Marlin "
                "kernels, which read the packed bytes and multiply in bf16 (compressed_tensors_moe.py 'Prefer to use "
                "the MarlinMoE kernel when it is supported', 0.11.0 L115-131, 0.13.0 L157-196; gptq_marlin.py, "
                "awq_marlin.py): ")
        return _with_shares(head, quant, hw_id, parts, mach, moe_n)
    said = ("vLLM 0.10.1.1 / 0.11.0 marlin_utils_fp8.py L82 (dense) and L171 (MoE), 0.13.0 L101 / L198"
            if quant == "fp8" else
            "e.g. vLLM 0.10.1.1 marlin_utils_fp4.py L196 serving gpt-oss on A100s, dennislee22/vLLM-benchmarking "
            "log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log L79")
    head = (f"{quant} weights on {hw_id} (compute capability {compute_capability}, no {bits} tensor cores): vLLM "
            f"runs its {where} through its Marlin weight-only kernels, which read the {quant} bytes and multiply in "
            f"bf16 (vLLM PR #5975; its start-up log says 'Weight-only {bits} compression will be used leveraging the "
            f"Marlin kernel', {said}): ")
    return _with_shares(head, quant, hw_id, parts, mach, moe_n)


def _with_shares(head: str, quant: str, hw_id: str, parts: str, tail: str, moe_n: int) -> Finding:
    got = marlin_shares(hw_id)
    if got is None:
        return Finding("assumed", "weight-only", head + "timed at those bytes and the bf16 rate with the BF16 GEMM "
                                                        f"classes' shares; Marlin is not measured on {hw_id}." + tail)
    read = f", weight reads at {got.read:.3f} of the datasheet" if got.read else ""
    call = (f", {got.t0_s * 1e6:g} us a MoE call, each expert's rows padded to the kernel's row block: 8-64 rows by "
            "M x top-k / E, fused_marlin_moe.py 0.11.0 L99-109" if parts in ("experts", "all") else "")
    dense = (" The dense GEMMs take the MoE kernel's shares too, its FLOP/s share fitted over every shape (no table "
             "measures a dense Marlin GEMM; vLLM's MoE kernel is the dense one's template, "
             "csrc/moe/marlin_moe_wna16/marlin_template.h)." if parts in ("dense", "all") else "")
    comp = (expert_share_text(got, moe_n) if parts in ("experts", "all") else
            f"FLOP/s {got.e_comp:.3f} of the bf16 datasheet")
    if parts == "all":
        comp += f", the dense GEMMs' {got.e_comp:.3f}"
    return Finding("assumed", "weight-only",
                   head + f"timed at those bytes and the bf16 rate with Marlin's measured shares on {hw_id} "
                          f"({comp}{read}{call}; "
                          f"{got.source}, W4A16 weights" + ("" if quant in ("int4", "awq", "gptq") else
                                                            f": {quant}'s assumed to reach the same shares")
                   + ")." + dense + tail)
