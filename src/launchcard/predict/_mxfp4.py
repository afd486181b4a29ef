"""gpt-oss's MXFP4 experts: the MoE kernel each engine runs on each GPU (its key in the kernel tables) and the dtype its
math runs at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from launchcard.limits import compute_capability
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


def unused_backend_note(backend: str) -> str:
    """What ``predict`` (a finding) and ``plan`` (a search finding per checkpoint) say of an MXFP4 MoE backend given
    for a checkpoint without MXFP4 experts: vLLM reads VLLM_MXFP4_USE_MARLIN in its MXFP4 method alone
    (vllm/model_executor/layers/quantization/mxfp4.py 0.12.0 L99, L161, its only readers; 0.11.0 declares it in
    envs.py L1120 and reads it nowhere), so it neither refuses it nor changes a kernel; --mxfp4-backend is
    launchcard's word for that choice, not a flag vLLM reads."""
    return (f"MXFP4 MoE backend {backend} (--mxfp4-backend or VLLM_MXFP4_USE_MARLIN) has no effect: the checkpoint "
            "has no MXFP4 experts")


def mxfp4_kernel(engine: str, hw: _Gpu, expert_dtype: str, out: list[Finding], *,
                 release: tuple[int, int] | None = None, stated: str | None = None,
                 moe_n: int = 0, upcast: str = "") -> tuple[str | None, str]:
    """The MXFP4 MoE kernel ``engine`` runs for gpt-oss's experts on ``hw`` where the kernel tables time it (its key
    under "kernels" -> moe, recorded by bench/predict_kernels.py MXFP4_PATHS), and the dtype its math runs at.

    TensorRT-LLM (examples/models/core/gpt_oss/README.md, MoE support matrix): BF16 activations on Hopper, MXFP8 on
    Blackwell (its TRTLLM/CUTLASS MoE: the FP8 rate), each timed with its measured MXFP4 kernel.  vLLM
    (vllm/model_executor/layers/quantization/mxfp4.py get_mxfp4_backend, 0.10.2 L54-102, 0.18.1 L109-173):
    FlashInfer's TRT-LLM MXFP4 x BF16 kernel on SM100, OpenAI's Triton kernels on SM90 when the triton_kernels
    package imports, Marlin otherwise and below SM90.  On SM90 which of the two runs is a fact of the release
    (:func:`sm90_vllm_backend`, ``release`` as stated, None: not stated) unless the launch or the user states the
    backend (``stated``: Settings.mxfp4_backend); Marlin there returns :data:`MARLIN` (the experts run vLLM's Marlin
    kernels: ServingFacts.marlin "experts", timed with ``_marlin``'s measured shares), Triton and FlashInfer keep the
    BF16 grouped-GEMM class (their own measured shares made the calibration runs' gpt-oss predictions worse).  Below
    SM90 the weight-only rule (``_marlin``) says Marlin.  SGLang (:func:`_sglang`): its
    grouped-GEMM class of the dtype its runner multiplies at (FP8 on SM100: MXFP8 activations, else BF16); ``upcast``
    (Settings.mxfp4_upcast): why its plan converts the experts to BF16 at load, whose Triton fused MoE then runs them.
    ``moe_n``: the experts' N per rank, which Marlin's share is read at (``_marlin.MarlinShares.at_n``)."""
    cc = compute_capability(hw.compute_capability)
    if engine == "sglang" and hw.kind == "gpu" and cc is not None:
        return None, _sglang(hw, cc[0], expert_dtype, out, upcast)
    if hw.kind != "gpu" or cc is None or engine not in ("vllm", "trtllm"):
        out.append(Finding("info", "compute-dtype", "MXFP4 weights multiply bf16 activations: timed at the bf16 rate "
                                                    f"with {engine}'s BF16 grouped-GEMM shares"))
        return None, expert_dtype
    major = cc[0]
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
            out.append(_trtllm_sm90_backend(release) if major == 9 else
                       Finding("info", "moe-kernel", "TensorRT-LLM runs gpt-oss's MXFP4 experts with BF16 activations "
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
        return _sm90_vllm(hw, expert_dtype, out, release, stated, moe_n)
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


# SGLang's MoE runner for GptOssForCausalLM's MXFP4 experts at --moe-runner-backend auto (ServerArgs.
# _handle_model_specific_adjustments: 0.5.3 python/sglang/srt/server_args.py L762-777, 0.5.4.post2 L951-966,
# 0.5.6.post2 L1158-1167): FlashInfer's TRT-LLM MXFP4 MoE ("flashinfer_mxfp4") on SM100 (is_sm100_supported in
# 0.5.3, is_blackwell_supported, SM100 or SM120, from 0.5.4), which quantizes the activations to MXFP8 at the default
# --flashinfer-mxfp4-moe-precision "default" (python/sglang/srt/layers/quantization/mxfp4.py apply: 0.5.3 L662-663,
# 0.5.4.post2 L629-630, 0.5.6.post2 L636-637; "bf16" keeps them BF16); otherwise OpenAI's triton_kernels
# ("triton_kernel": matmul_ogs, MXFP4 weights x BF16 activations) at --ep-size 1 where the package imports.  It is
# no requirement of the sglang wheel (0.5.3-0.5.14 METADATA), yet a server without it does not load the checkpoint
# (Mxfp4MoEMethod.process_weights_after_loading imports triton_kernels' upcast_from_mxfp: 0.5.4.post2 mxfp4.py
# L569-577, 0.5.6.post2 L575-583), so a running one has it.  At --ep-size > 1 the runner stays "auto" (triton_kernel
# asserts ep_size == 1) and that upcast turns the experts into BF16 weights for SGLang's Triton fused MoE
# (0.5.6.post2 mxfp4.py L578-592; the whole rule, by release, and the plan holding BF16 experts:
# memory._sglang_mxfp4.sglang_mxfp4_runner, Settings.mxfp4_upcast, which :func:`_sglang` is told).
# triton_kernels keeps the weights in its Hopper / Blackwell MX layouts from SM90 and strided below
# (tensor_details/layout.py make_default_matmul_mxfp4_w_layout), where no native MXFP4 MMA exists.  No kernel table
# measures SGLang's triton_kernel runner: the aiconfigurator wheel's SGLang 0.5.14 w4a16_mxfp4 rows at gpt-oss's
# shapes on the H100 and L40S (kernel_source "sglang_fused_moe_triton") are the upcast-at-load BF16 Triton fused MoE
# above, which its collector runs at --moe-runner-backend "triton" on SM89/SM90 (ai-dynamo/aiconfigurator e23be5a7
# collector/cases/base_ops/moe.yaml L106-115; collector/sglang/collect_moe.py L597-601 names the triton_kernel
# runner "sglang_triton_kernel_moe", a source no table holds)
SGLANG_MXFP8_PRECISION = "default"  # --flashinfer-mxfp4-moe-precision's default (0.5.6.post2 server_args.py L432)
_SGLANG_RULE = "SGLang's gpt-oss MoE runner (server_args.py _handle_model_specific_adjustments, 0.5.6.post2 L1158-1167)"


def _sglang(hw: _Gpu, major: int, expert_dtype: str, out: list[Finding], upcast: str = "") -> str:
    """The dtype SGLang's MXFP4 MoE runner multiplies gpt-oss's experts at on a GPU of compute capability ``major``
    (the rules above), said as a finding; the experts are timed with SGLang's grouped-GEMM class of that dtype.
    ``upcast``: why the plan holds them as BF16 (memory._sglang_mxfp4.sglang_mxfp4_runner)."""
    rule = _SGLANG_RULE
    if upcast:
        out.append(Finding("info", "moe-kernel",
                           f"{rule}: {upcast}, so SGLang runs the experts it upcast to BF16 at load with its Triton "
                           "fused MoE (mxfp4.py create_moe_runner, 0.5.4.post2 L586-595): timed at the bf16 rate "
                           "with SGLang's BF16 grouped-GEMM shares and its padded row blocks, reading BF16 expert "
                           "weights"))
        return expert_dtype
    if major == 10 and "fp8" in hw.flops:
        out.append(Finding("info", "moe-kernel",
                           f"{rule} on SM100 is FlashInfer's TRT-LLM MXFP4 MoE, its activations quantized to MXFP8 "
                           f"at --flashinfer-mxfp4-moe-precision {SGLANG_MXFP8_PRECISION} (mxfp4.py apply, "
                           "0.5.6.post2 L636-637): timed at the FP8 rate with SGLang's FP8 grouped-GEMM shares "
                           "(its MXFP4 x MXFP8 kernel is not recorded)"))
        return "fp8"
    if major >= 10:
        out.append(Finding("assumed", "moe-kernel",
                           f"{rule} on {hw.id} (compute capability {hw.compute_capability}) is FlashInfer's MXFP4 MoE "
                           "in 0.5.4-0.5.6 (is_blackwell_supported) and Marlin in 0.5.14 (SM120), neither measured "
                           "here: timed at the bf16 rate with SGLang's BF16 grouped-GEMM shares"))
        return expert_dtype
    if major == 9:
        out.append(Finding("info", "moe-kernel",
                           f"{rule} on SM90 is OpenAI's triton_kernels (matmul_ogs, MXFP4 weights x BF16 "
                           "activations; the server does not load the checkpoint without the package): timed at the "
                           "bf16 rate with SGLang's BF16 grouped-GEMM shares"))
        return expert_dtype
    out.append(Finding("assumed", "moe-kernel",
                       f"{rule} on {hw.id} (compute capability {hw.compute_capability}) is OpenAI's triton_kernels "
                       "(matmul_ogs), its MXFP4 weights in the strided layout it keeps below SM90, where no native "
                       "MXFP4 MMA exists (Triton's dot_scaled converts them in the kernel); no kernel table measures "
                       "that kernel below SM90 (vLLM runs Marlin there): timed at the bf16 rate with SGLang's BF16 "
                       "grouped-GEMM shares, its real speed unknown"))
    return expert_dtype


# The first vLLM release whose wheel and image carry OpenAI's triton_kernels: PR #28788 bundles them at build time as
# vllm/third_party/triton_kernels, which import_utils.has_triton_kernels reads from 0.12.0 (L431-438; 0.11.2 L398-400
# imports a triton_kernels package only).  Before, the package was installed by hand: PR #27370 (after 0.11.0) said
# "users have to install triton_kernels manually", added it to requirements/cuda.txt, and PR #27659 reverted that
# (a URL dependency breaks wheel installs); vLLM's own recipe of those releases says Hopper runs "Marlin MXFP4 MoE"
# by default (vllm-project/recipes OpenAI/GPT-OSS.md L54, at 888856d for 0.10.1 through 1e750f8 for 0.11.0)
VLLM_TRITON_KERNELS_FROM = (0, 12)
# mxfp4_kernel's answer where vLLM runs the experts through its Marlin kernels (ServingFacts.marlin "experts")
MARLIN = "marlin"
_MARLIN_RULE = ("get_mxfp4_backend takes Marlin on SM90 when triton_kernels does not import (0.10.2 "
                "vllm/model_executor/layers/quantization/mxfp4.py L90-94, 0.11.0 L95-99, 0.11.2 L135-142)")


def sm90_vllm_backend(release: tuple[int, int] | None, stated: str | None = None) -> tuple[str, str]:
    """The MXFP4 MoE backend vLLM of ``release`` (None: not stated, the newest rules) runs on SM90, and why: the one
    ``stated`` (the launch asks for it: VLLM_MXFP4_USE_MARLIN=1, 0.12.0 mxfp4.py L161-163 and 0.19.1
    fused_moe/oracle/mxfp4.py L336-343; --moe-backend, 0.19.1 oracle L262-276; or the user says which one ran, e.g.
    triton_kernels installed by hand), else from the release's own wheel or image: "marlin" before 0.12 (no
    triton_kernels shipped), "triton" from 0.12 (ahead of Marlin in 0.19.1's priority list, oracle L174-183)."""
    if stated in ("marlin", "triton"):
        how = "VLLM_MXFP4_USE_MARLIN=1, --moe-backend marlin" if stated == "marlin" else "--moe-backend triton"
        return stated, f"stated ({how} or --mxfp4-backend {stated})"
    if release is not None and release < VLLM_TRITON_KERNELS_FROM:
        return "marlin", (f"vLLM {release[0]}.{release[1]} ships no triton_kernels (bundled from 0.12, PR #28788; "
                          "added to requirements/cuda.txt after 0.11.0 by PR #27370 and reverted by PR #27659; its "
                          "recipe says Hopper runs Marlin MXFP4 MoE by default) and " + _MARLIN_RULE)
    return "triton", ("vLLM bundles OpenAI's triton_kernels from 0.12 (vllm/third_party, PR #28788) and runs them on "
                      "SM90 (get_mxfp4_backend, 0.12.0 mxfp4.py L152-166)")


def _sm90_vllm(hw: _Gpu, expert_dtype: str, out: list[Finding], release: tuple[int, int] | None,
               stated: str | None, moe_n: int) -> tuple[str | None, str]:
    """vLLM's MXFP4 experts on a Hopper GPU: Marlin timed with its measured kernel where the GPU has the record,
    Triton with the BF16 grouped GEMM's shares (see :func:`mxfp4_kernel`)."""
    from launchcard.predict._marlin import expert_share_text, marlin_shares

    backend, why = sm90_vllm_backend(release, stated)
    if backend == "marlin":
        m = marlin_shares(hw.id)
        if m is not None:
            bf16 = _moe_record(hw.id, "vllm", "bf16")
            vs = f" against the BF16 grouped GEMM's {bf16['e_comp']:.3f}" if bf16 else ""
            # the record is Marlin's MoE kernel on W4A16 (integer) weights: MXFP4's reaching the same shares is
            # assumed, as the weight-only finding says of every format but the integer ones (_marlin)
            out.append(Finding("assumed", "moe-kernel",
                               f"vLLM runs gpt-oss's MXFP4 experts on this GPU with Marlin (MXFP4 weights, bf16 "
                               f"activations): {why}; timed at the bf16 rate with Marlin's measured shares "
                               f"({expert_share_text(m, moe_n)}{vs}; {m.source}, W4A16 weights: MXFP4's assumed to "
                               "reach the same shares)"
                               + ("" if stated else "; with triton_kernels installed by hand it runs OpenAI's Triton "
                                                    "kernels instead: say so with --mxfp4-backend triton")))
            return MARLIN, expert_dtype
        out.append(Finding("assumed", "moe-kernel",
                           f"vLLM runs gpt-oss's MXFP4 experts with Marlin: {why}; Marlin's share is not measured on "
                           f"{hw.id}: timed at the bf16 rate with " + _bf16_class(hw.id, "vllm")))
        return None, expert_dtype
    # a backend the launch or the user states is a fact, whatever the release: no release rule to assume
    known = release is not None or stated == "triton"
    told = "" if known else (
        "the release is not stated, so its newest rules; releases before 0.12 run Marlin unless triton_kernels was "
        "installed by hand (a git dependency of vLLM's CUDA requirements only briefly, vllm PR #27370, reverted), ")
    out.append(Finding("info" if known else "assumed", "compute-dtype",
                       f"MXFP4 weights multiply bf16 activations: vLLM on SM90 runs them with OpenAI's Triton "
                       f"kernels: {told}{why}; timed as Triton, at the bf16 rate with the BF16 grouped GEMM's shares "
                       "(Marlin, with VLLM_MXFP4_USE_MARLIN=1, has half its measured FLOP/s share)"))
    return None, expert_dtype


def _moe_record(hw_id: str, engine: str, key: str) -> dict[str, float] | None:
    """The kernel tables' MoE record ``key`` of ``engine`` measured on ``hw_id`` (None: not recorded)."""
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    rec = (((gpus.get(hw_id) or {}).get(engine) or {}).get("moe") or {}).get(key)
    return rec if isinstance(rec, dict) else None


# TensorRT-LLM's MoE backend for gpt-oss's MXFP4 experts on Hopper.  The kernel tables' MXFP4 x BF16 record is OpenAI's
# Triton kernels' (aiconfigurator_core 0.12.0 sdk/common.py L1292-1293: w4a16_mxfp4 is "GPT-OSS's triton_kernels mxfp4
# path"; recorded from TensorRT-LLM 1.3.0rc20's rows, bench/predict_kernels.py MXFP4_PATHS), which TensorRT-LLM runs
# where moe_config.backend is TRITON.  MoeConfig.backend defaulted to CUTLASS (llmapi/llm_args.py) until NVIDIA/
# TensorRT-LLM PR #11074 (merged 2026-01-30) made it AUTO, resolved to TRITON for gpt-oss on Hopper (that PR's
# deployment-guide change; the 1.3 release notes, PR #19035: "the single configuration AUTO resolves to TRITON");
# the 1.2.0rc2.post2 deployment guide still reads "The default moe backend is CUTLASS", and at 1.0 its gpt-oss blog
# (blog9, PR #7101) says "CUTLASS backend support is still ongoing" on Hopper, where examples/models/core/gpt_oss/
# README.md recommends TRITON "for best performance".  No table measures the CUTLASS MXFP4 x BF16 MoE on Hopper:
# CutlassFusedMoE takes WFP4A16FusedMoEMethod for W4A16_MXFP4 (fused_moe/quantization.py: SM90 only, "WFP4A16 MoE is
# unsupported on SM{n}" elsewhere) and runs it as the fused_moe op's weight-only grouped GEMM, MXFP4 weights x BF16
# activations (fused_moe_cutlass.py forward_chunk: use_w4_group_scaling, weight_dtype uint8; every stored version
# read), the kernel aiconfigurator_core 0.12.0 names w4a16_mxfp4_cutlass (sdk/common.py L1289-1293: "DSV4 Hopper
# silicon data pending"), of which the wheel holds no row on any GPU; its Hopper TensorRT-LLM w4a16_mxfp4 rows are
# kernel_source "moe_torch_flow", TritonFusedMoE (ai-dynamo/aiconfigurator collector/trtllm/collect_moe.py, a stored
# version: moe_backend "triton" for gpt-oss on 90 <= SM < 100).  Neither of its
# neighbours bounds it: the BF16 CUTLASS MoE rows reach 480-550 TFLOP/s at 8,192 tokens on the H100 (E128 top-4,
# hidden 6,144, TP1), above the Triton MXFP4 rows' 375-380, and a weight-only kernel converts the weights before its
# BF16 MMAs by its own, unmeasured, cost.  Slower than Triton is what is said of it, not measured: the 1.0 blog
# ("significant speed-ups" from the Triton kernels on Hopper) and vllm-project/vllm PR #23369 (FlashInfer's CUTLASS
# BF16 x MXFP4 fused MoE on Hopper, flashinfer PR #1396, use_w4_group_scaling too: "a performance regression compared
# to triton", one serving run each, vLLM's)
TRTLLM_AUTO_MOE_FROM = (1, 3)
TRTLLM_CUTLASS_MOE_UNTIL = (1, 2)  # documented through 1.2.0rc2.post2; the later 1.2 releases are not read


def _trtllm_sm90_backend(release: tuple[int, int] | None) -> Finding:
    """What TensorRT-LLM of ``release`` (None: not stated) runs gpt-oss's MXFP4 experts with on Hopper, and that they
    are timed with the Triton kernels' measured shares whichever it is (see ``TRTLLM_AUTO_MOE_FROM``).  An options
    file's moe_config is not read (_trtllm_options names it as not modelled)."""
    timed = "timed with the measured MXFP4 x BF16 kernel, OpenAI's Triton kernels (moe_config.backend TRITON)"
    if release is not None and release >= TRTLLM_AUTO_MOE_FROM:
        return Finding("info", "moe-kernel", f"TensorRT-LLM {release[0]}.{release[1]} runs gpt-oss's MXFP4 experts "
                                             "with BF16 activations on Hopper through OpenAI's Triton kernels (its "
                                             "default moe_config.backend AUTO resolves to TRITON for gpt-oss there, "
                                             f"NVIDIA/TensorRT-LLM PR #11074): {timed}")
    auto = ("AUTO, which picks TRITON for gpt-oss on Hopper, became the default with NVIDIA/TensorRT-LLM PR #11074 "
            "(2026-01-30) and is 1.3's")
    if release is None:
        why = f"no release stated: MoeConfig's default backend is CUTLASS through 1.2.0rc2 at least; {auto}"
    else:
        why = (f"TensorRT-LLM {release[0]}.{release[1]}: MoeConfig's default backend CUTLASS; {auto}"
               + ("; the 1.2.0rc2.post2 docs still say CUTLASS, the later 1.2 releases are not read"
                  if release == TRTLLM_CUTLASS_MOE_UNTIL else ""))
    return Finding("assumed", "moe-kernel",
                   f"TensorRT-LLM runs gpt-oss's MXFP4 experts with BF16 activations on Hopper through the backend "
                   f"moe_config names ({why}); its CUTLASS MXFP4 x BF16 MoE (WFP4A16FusedMoEMethod, a weight-only "
                   "grouped GEMM) is not measured on Hopper, so the experts are "
                   f"{timed}, the backend TensorRT-LLM's gpt_oss README recommends on Hopper for best performance: a "
                   "CUTLASS run is likely slower than timed, by an unmeasured amount")


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
    return _moe_record(hw_id, engine, key) is not None
