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
``sglang_marlin_moe``: 972 balanced shapes, e_comp 0.413 of the bf16 rate against 0.312 for the median GPU's BF16
grouped GEMM, weight reads 0.704 of the datasheet at <= 8 tokens per expert against 0.761 for the A100's BF16 GEMMs,
32 us a call); no table holds a dense Marlin GEMM or an FP8 Marlin MoE.  The dense Marlin GEMMs are timed with the MoE
kernel's shares (an ``assumed`` finding): vLLM's MoE kernel is the dense one's template with the experts' row
gathering added (csrc/moe/marlin_moe_wna16/marlin_template.h includes the dense kernel's
quantization/gptq_marlin/marlin.cuh and dequant.h, the same mma.sync pipeline and striped partitioning), and FP8's
8-bit weights go through the same pipeline at twice the bytes (the bytes are the plan's).  What this changes is the
large-batch end: Marlin's tensor-core share is half of cuBLAS's on an A100 (0.413 against 0.831), which is what
vLLM's own start-up warning says ("This may degrade performance for compute-heavy workloads",
marlin_utils_fp8.py ``prepare_fp8_layer_for_marlin``) and what Marlin's author says past ~128 tokens
(IST-DASLab/marlin issue #21); few tokens stay bound by the weight reads.
"""

from __future__ import annotations

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
                        source=f"{rec.get('engine')} {rec.get('version')} {rec.get('dtype')} Marlin MoE rows "
                               f"({rec.get('file')})")


def weight_only_finding(quant: str, hw_id: str, compute_capability: str, parts: str, bits: str, *,
                        machete: bool = False) -> Finding:
    """What the prediction assumes of a plan vLLM serves with Marlin (``parts``: which of its GEMMs; ``bits``: the
    float format the GPU has no tensor cores for, "" for integer weight-only schemes, which run Marlin on every GPU
    from SM 8.0; ``machete``: the dense GEMMs run vLLM's Machete kernel instead, SM 9.0)."""
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
        return _with_shares(head, quant, hw_id, parts, mach)
    said = ("vLLM 0.10.1.1 / 0.11.0 marlin_utils_fp8.py L82 (dense) and L171 (MoE), 0.13.0 L101 / L198"
            if quant == "fp8" else
            "e.g. vLLM 0.10.1.1 marlin_utils_fp4.py L196 serving gpt-oss on A100s, dennislee22/vLLM-benchmarking "
            "log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log L79")
    head = (f"{quant} weights on {hw_id} (compute capability {compute_capability}, no {bits} tensor cores): vLLM "
            f"runs its {where} through its Marlin weight-only kernels, which read the {quant} bytes and multiply in "
            f"bf16 (vLLM PR #5975; its start-up log says 'Weight-only {bits} compression will be used leveraging the "
            f"Marlin kernel', {said}): ")
    return _with_shares(head, quant, hw_id, parts, mach)


def _with_shares(head: str, quant: str, hw_id: str, parts: str, tail: str) -> Finding:
    got = marlin_shares(hw_id)
    if got is None:
        return Finding("assumed", "weight-only", head + "timed at those bytes and the bf16 rate with the BF16 GEMM "
                                                        f"classes' shares; Marlin is not measured on {hw_id}." + tail)
    read = f", weight reads at {got.read:.3f} of the datasheet" if got.read else ""
    call = f", {got.t0_s * 1e6:g} us a MoE call" if parts in ("experts", "all") else ""
    dense = (" The dense GEMMs take the MoE kernel's shares too (no table measures a dense Marlin GEMM; vLLM's MoE "
             "kernel is the dense one's template, csrc/moe/marlin_moe_wna16/marlin_template.h)."
             if parts in ("dense", "all") else "")
    return Finding("assumed", "weight-only",
                   head + f"timed at those bytes and the bf16 rate with Marlin's measured shares on {hw_id} "
                          f"({got.e_comp:.3f} of the bf16 FLOP/s{read}{call}; "
                          f"{got.source}, W4A16 weights" + ("" if quant in ("int4", "awq", "gptq") else
                                                            f": {quant}'s assumed to reach the same shares")
                   + ")." + dense + tail)
