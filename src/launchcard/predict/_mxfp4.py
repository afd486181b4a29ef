"""gpt-oss's MXFP4 experts: the MoE kernel each engine runs on each GPU (its key in the kernel tables) and the dtype its
math runs at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Finding


class _Gpu(Protocol):
    """What these rules read of ``_figures.HardwareFigures`` (named here so that _facts, which calls them, is not
    imported back)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def compute_capability(self) -> str | None: ...
    @property
    def flops(self) -> Mapping[str, float]: ...


def mxfp4_kernel(engine: str, hw: _Gpu, expert_dtype: str, out: list[Finding]) -> tuple[str | None, str]:
    """The MXFP4 MoE kernel ``engine`` runs for gpt-oss's experts on ``hw`` where the kernel tables time it (its key
    under "kernels" -> moe, recorded by bench/predict_kernels.py MXFP4_PATHS), and the dtype its math runs at.

    TensorRT-LLM (examples/models/core/gpt_oss/README.md, MoE support matrix): BF16 activations on Hopper, MXFP8 on
    Blackwell (its TRTLLM/CUTLASS MoE: the FP8 rate), each timed with its measured MXFP4 kernel.  vLLM
    (vllm/model_executor/layers/quantization/mxfp4.py get_mxfp4_backend, 0.10.2 L54-102, 0.18.1 L109-173):
    FlashInfer's TRT-LLM MXFP4 x BF16 kernel on SM100, OpenAI's Triton kernels on SM90 when the triton_kernels
    package imports, Marlin otherwise and below SM90; all keep the BF16 grouped-GEMM class here (the Triton and
    FlashInfer kernels' own measured shares made the calibration runs' gpt-oss predictions worse; no Marlin table
    for a GPU below SM90).  SGLang: its BF16 grouped-GEMM class."""
    cc = hw.compute_capability.split(".")[0] if hw.compute_capability else ""
    if hw.kind != "gpu" or not cc.isdigit() or engine not in ("vllm", "trtllm"):
        out.append(Finding("info", "compute-dtype", "MXFP4 weights multiply bf16 activations: timed at the bf16 rate "
                                                    f"with {engine}'s BF16 grouped-GEMM shares"))
        return None, expert_dtype
    major = int(cc)
    if engine == "trtllm":
        if major == 10 and "fp8" in hw.flops:
            out.append(Finding("info", "moe-kernel", "TensorRT-LLM on Blackwell runs gpt-oss's MXFP4 experts with "
                                                     "MXFP8 activations (its gpt_oss README's MoE support matrix): "
                                                     "timed at the FP8 rate with the measured MXFP4 x MXFP8 kernel"))
            return "mxfp4", "fp8"
        if major not in (9, 10):
            out.append(Finding("assumed", "moe-kernel",
                               f"TensorRT-LLM's gpt_oss MoE support matrix covers Hopper and Blackwell (SM100) only, "
                               f"not {hw.id} (compute capability {hw.compute_capability}): assumed to run gpt-oss's "
                               "MXFP4 experts with BF16 activations, timed at the bf16 rate with "
                               + _bf16_class(hw.id, engine)))
            return None, expert_dtype
        if _has_mxfp4(hw.id, engine):
            out.append(Finding("info", "moe-kernel", "TensorRT-LLM runs gpt-oss's MXFP4 experts with BF16 activations "
                                                     "on this GPU: timed with its measured MXFP4 x BF16 MoE kernel"))
            return "mxfp4", expert_dtype
        out.append(Finding("assumed", "moe-kernel",
                           "TensorRT-LLM runs gpt-oss's MXFP4 experts with BF16 activations on this GPU; its MXFP4 "
                           f"MoE kernel is not measured on {hw.id}: timed at the bf16 rate with "
                           + _bf16_class(hw.id, engine)))
        return None, expert_dtype
    if major == 10:
        out.append(Finding("info", "compute-dtype", "MXFP4 weights multiply bf16 activations: vLLM on SM100 runs "
                                                    "FlashInfer's TRT-LLM MXFP4 x BF16 kernel (MXFP8 activations only "
                                                    "with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8), timed at the bf16 "
                                                    "rate with the BF16 grouped GEMM's shares"))
    elif major == 9:
        out.append(Finding("assumed", "compute-dtype",
                           "MXFP4 weights multiply bf16 activations: vLLM on SM90 runs them with OpenAI's Triton "
                           "kernels when the triton_kernels "
                           "package imports (a git dependency of vLLM's CUDA requirements from 0.11.1, vllm PR "
                           "#27370; installed by hand before), else with Marlin (get_mxfp4_backend), whose measured "
                           "FLOP/s share on an H100 is half the BF16 grouped GEMM's (0.164 against 0.326, "
                           "bench/predict_kernels.py): timed as Triton, at the bf16 rate with the BF16 grouped GEMM's "
                           "shares"))
    elif major > 10:
        # get_mxfp4_backend: FlashInfer on the SM100 family only, OpenAI's Triton kernels only for SM90 <= cc < SM110
        # (vLLM main 007d500 mxfp4.py: "SM120 needs this fix", triton-lang/triton PR #8498)
        out.append(Finding("assumed", "compute-dtype",
                           f"MXFP4 weights multiply bf16 activations: vLLM's FlashInfer MXFP4 kernels run on the SM100 "
                           f"family and its Triton ones on SM90-SM10x only, so on {hw.id} (compute capability "
                           f"{hw.compute_capability}) it runs Marlin (get_mxfp4_backend), whose share is not measured "
                           "there: timed at the bf16 rate with the BF16 grouped GEMM's shares"))
    # below SM90: Marlin, said by the weight-only finding (_weight_only_finding)
    return None, expert_dtype


def _has_mxfp4(hw_id: str, engine: str) -> bool:
    """Whether the kernel tables hold ``engine``'s own measured MXFP4 MoE record for ``hw_id`` (what kernel_eff
    times the experts with)."""
    return _own_moe(hw_id, engine, "mxfp4")


def _bf16_class(hw_id: str, engine: str) -> str:
    """Which BF16 grouped-GEMM shares time the experts: the GPU's own, or the median's (kernel_eff's fallback)."""
    if _own_moe(hw_id, engine, "bf16"):
        return f"{engine}'s measured BF16 grouped-GEMM shares on this GPU"
    return f"the median GPU's BF16 grouped-GEMM shares ({engine}'s MoE kernels are not measured on {hw_id})"


def _own_moe(hw_id: str, engine: str, key: str) -> bool:
    """Whether the kernel tables hold a MoE record ``key`` of ``engine`` measured on ``hw_id`` itself (the lookup
    kernel_eff's ``moe_kernel`` override makes)."""
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    return isinstance((((gpus.get(hw_id) or {}).get(engine) or {}).get("moe") or {}).get(key), dict)
