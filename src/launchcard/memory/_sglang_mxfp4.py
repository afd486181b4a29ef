"""SGLang's MoE runner for gpt-oss's MXFP4 experts and what it holds them as: the padding it allocates them at and
whether it upcasts them to BF16 at load.  The one rule predict's SGLang plan (``predict._sglang``) and check's SGLang
memory plan (``check._vram``) apply, below both in the layer order; each rule cited where it is stated."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from launchcard.limits import compute_capability, forced_flashinfer_mxfp4, sglang_blackwell
from launchcard.memory._arch import Arch
from launchcard.memory._settings import Settings
from launchcard.memory._weights import mxfp4_experts


class Said(NamedTuple):
    """What a rule says about the plan: a finding's severity, code and message (predict renders it as its Finding,
    check as its own)."""

    severity: str
    code: str
    message: str


# The MXFP4 experts SGLang allocates, per rank (Mxfp4MoEMethod.create_weights, layers/quantization/mxfp4.py): with the
# FlashInfer MXFP4 runner on SM100 the intermediate and the hidden size rounded up to 256 (0.5.3 L301-318,
# 0.5.4.post2 L289-307, 0.5.6.post2 L298-316, 0.5.14 L392-397); that runner is SGLang's default for gpt-oss's MXFP4
# checkpoint on SM100 (0.5.3 server_args.py L762-766, 0.5.6.post2 L1158-1167, 0.5.14 L3876-3881).  Marlin (0.5.14's
# default on SM120, L3882-3887) pads 128 / 256 (0.5.14 mxfp4.py L382-391), vLLM's own padding.  Elsewhere
# create_weights rounds the intermediate size up to 32 (64 in 0.5.14) for triton_kernels, whose value layout then
# stores the experts again (_swizzle_mxfp4 convert_layout: on SM90 HopperMXValueLayout pads the packed axes to 64 /
# 256, triton-lang/triton python/triton_kernels/.../hopper_value.py _padded_shape; below SM90 a strided layout in the
# 2025 builds, HopperAmpereMXValueLayout in later ones): the build SGLang's image installs is not pinned by the wheel
SGLANG_FLASHINFER_MXFP4_PAD = (256, 256)
_TRITON_PAD = {True: 32, False: 64}  # create_weights' multiple for triton_kernels: through 0.5.6.post2 / 0.5.14
_OLD_RULE_UNTIL = (0, 5, 6, 99)


def sglang_mxfp4_pad(release: tuple[int, int, int, int] | None, capability: str | None,
                     runner: str | None) -> tuple[tuple[int, int] | None, Said]:
    """((intermediate, hidden) multiples SGLang ``release`` allocates a rank's MXFP4 experts at, None: vLLM's
    padding planned, the finding that says so) on a GPU of compute ``capability`` ("9.0") with --moe-runner-backend
    ``runner`` (None or "auto": SGLang's pick)."""
    cc = compute_capability(capability)
    major = cc[0] if cc else 0
    old = release is None or release <= _OLD_RULE_UNTIL
    pick = runner if runner not in (None, "auto") else (
        "flashinfer_mxfp4" if major == 10 else "marlin" if major == 12 and not old else "triton_kernel")
    if major == 10 and pick == "flashinfer_mxfp4":
        return SGLANG_FLASHINFER_MXFP4_PAD, Said(
            "info", "sglang-mxfp4", "SGLang's FlashInfer MXFP4 MoE runner allocates the experts with the per-rank "
            "intermediate and the hidden size rounded up to 256 (layers/quantization/mxfp4.py create_weights, "
            "0.5.6.post2 L298-316)")
    if pick == "marlin" and not old:
        return None, Said("info", "sglang-mxfp4", "SGLang's Marlin MXFP4 MoE runner pads the experts as vLLM's "
                                                     "does: intermediate to 128, hidden to 256 (0.5.14 "
                                                     "layers/quantization/mxfp4.py L382-391)")
    return None, Said(
        "assumed", "sglang-mxfp4",
        f"SGLang allocates the MXFP4 experts with the per-rank intermediate size rounded up to {_TRITON_PAD[old]} "
        "(layers/quantization/mxfp4.py create_weights, 0.5.6.post2 L309-316) and triton_kernels then re-lays them "
        "out with padding of its own (on SM90 the packed axes to 64 / 256), in a build the sglang wheel does not pin: "
        "planned with vLLM's padding (intermediate 128, hidden 256); for gpt-oss-120b the unpadded experts are "
        "~5 GiB smaller, which a plan with little room after its weights gives to its KV pool, so the pool is not "
        "known to better than that (SGLang logs it: \"Load weight end ... mem usage\", \"KV Cache is allocated\")")


# SGLang's MoE runner for gpt-oss's MXFP4 experts and what it holds them as (CUDA; ServerArgs.
# _handle_model_specific_adjustments, GptOssForCausalLM).  0.5.3 / 0.5.4.post2 (server_args.py L762-777 / L951-966):
# FlashInfer MXFP4 on SM100 (0.5.3 is_sm100_supported; 0.5.4 is_blackwell_supported: SM100 or SM120) whatever
# --moe-runner-backend says, else triton_kernel where the runner is "auto", --ep-size is 1 and triton_kernels imports.
# 0.5.5.post1 L993-1008: the same only where the runner is "auto".  0.5.6 L1102-1122, 0.5.6.post2 L1155-1175, 0.5.7
# L1193-1213, 0.5.8 L1301-1320: --enable-piecewise-cuda-graph first keeps "auto", on every GPU.  0.5.9 L1370-1403: no
# piecewise clause; triton_kernel also needs --quantization unset.  Mxfp4MoEMethod.process_weights_after_loading keeps
# the experts MXFP4 for FlashInfer (shuffled) and triton_kernel (swizzled) and otherwise upcasts them to BF16 weights
# for SGLang's Triton fused MoE (upcast_from_mxfp, its scales deleted: 0.5.3 mxfp4.py L583-597, 0.5.4.post2 L569-583,
# 0.5.5.post1 L577-591, 0.5.6 / 0.5.6.post2 / 0.5.7 L578-592, 0.5.8 L564-584, 0.5.9 L704-724), at the shape
# create_weights allocated (the intermediate size per rank rounded up to 32 with triton_kernels installed, to 64 on
# SM100: 0.5.4.post2 L286-306).  triton_kernels is found by importlib (is_triton_kernels_available) and taken as
# installed: the upcast imports it too, so a server without it does not load the checkpoint.
SGLANG_MXFP4_RUNNERS = frozenset({"flashinfer_mxfp4", "triton_kernel", "marlin"})  # keep the experts MXFP4
_PIECEWISE_AUTO = ((0, 5, 6, 0), (0, 5, 8, 99))  # releases whose piecewise clause keeps "auto" (read: 0.5.6-0.5.8)
_QUANT_CLAUSE_FROM = (0, 5, 9, 0)  # triton_kernel only with --quantization unset


def sglang_mxfp4_runner(release: tuple[int, int, int, int] | None, capability: str | None, runner: str | None, *,
                        ep: int, piecewise: bool, quantization: str | None) -> tuple[str, str]:
    """(the MoE runner SGLang ``release`` (None: the newest rules read, 0.5.9's) runs gpt-oss's MXFP4 experts with on
    a GPU of compute ``capability``, why) at --moe-runner-backend ``runner`` (None or "auto": SGLang's pick),
    --ep-size ``ep``, --enable-piecewise-cuda-graph ``piecewise`` and --quantization ``quantization``.  "auto" (the
    runner left as it is) and any named runner outside :data:`SGLANG_MXFP4_RUNNERS` upcast the experts to BF16."""
    rel = release or _QUANT_CLAUSE_FROM
    blackwell = sglang_blackwell(rel, capability)
    named = runner not in (None, "auto")
    if forced_flashinfer_mxfp4(rel, capability):
        return "flashinfer_mxfp4", "SGLang <= 0.5.4.post2 takes FlashInfer MXFP4 on SM100 whatever the runner named"
    if named:
        return str(runner), f"--moe-runner-backend {runner}"
    if piecewise and _PIECEWISE_AUTO[0] <= rel <= _PIECEWISE_AUTO[1]:
        return "auto", ("--enable-piecewise-cuda-graph keeps the runner \"auto\" (SGLang 0.5.6-0.5.8 "
                        "server_args.py, 0.5.6.post2 L1156-1160)")
    if blackwell:
        return "flashinfer_mxfp4", "FlashInfer MXFP4 on Blackwell"
    if ep > 1:
        return "auto", (f"--ep-size {ep}: triton_kernel runs at --ep-size 1 only (server_args.py, 0.5.4.post2 "
                        "L961-965, 0.5.6.post2 L1166-1175)")
    if quantization is not None and rel >= _QUANT_CLAUSE_FROM:
        return "auto", f"--quantization {quantization}: 0.5.9 takes triton_kernel only without it (L1390-1395)"
    return "triton_kernel", "triton_kernel at --ep-size 1"


def sglang_mxfp4_upcast(release: tuple[int, int, int, int] | None, capability: str | None, runner: str,
                        why: str) -> tuple[tuple[int, int], Said]:
    """The (intermediate, hidden) multiples SGLang allocates the experts it upcasts to BF16 at, and the finding that
    says so (``runner``, ``why``: :func:`sglang_mxfp4_runner`'s answer outside :data:`SGLANG_MXFP4_RUNNERS`)."""
    cc = compute_capability(capability)
    old = release is None or release <= _OLD_RULE_UNTIL
    inter = 64 if cc and cc[0] == 10 else _TRITON_PAD[old]
    return (inter, 1), Said(
        "info", "sglang-mxfp4",
        f"SGLang runs gpt-oss's MoE with the runner \"{runner}\" ({why}), not an MXFP4 one, so it converts the "
        "MXFP4 experts to BF16 weights at load (Mxfp4MoEMethod.process_weights_after_loading upcast_from_mxfp: "
        "0.5.4.post2 layers/quantization/mxfp4.py L569-583, 0.5.6.post2 L578-592, 0.5.9 L704-724): planned at 2 "
        f"bytes a parameter, the intermediate size per rank rounded up to {inter} (create_weights), about 4x the "
        "MXFP4 bytes, and read so by every step")


def sglang_mxfp4_settings(arch: Arch, s: Settings, release: tuple[int, int, int, int] | None,
                          capability: str | None, runner: str | None, *, ep: int,
                          piecewise: bool) -> tuple[Settings, Said | None]:
    """``s`` with the MXFP4 experts as SGLang ``release`` allocates them (``Settings.mxfp4_pad``) and holds them
    (``Settings.mxfp4_upcast``: BF16 where no MXFP4 runner runs them, :func:`sglang_mxfp4_runner`), and the finding
    that says which; ``s`` itself and None where the plan has no MXFP4 experts.  The one rule predict's SGLang plan
    and check's SGLang memory plan apply."""
    if not mxfp4_experts(arch, s):
        return s, None
    got, why = sglang_mxfp4_runner(release, capability, runner, ep=ep, piecewise=piecewise,
                                   quantization=s.quantization)
    if got in SGLANG_MXFP4_RUNNERS:
        pad, said = sglang_mxfp4_pad(release, capability, runner)
        return replace(s, mxfp4_pad=pad), said
    pad, said = sglang_mxfp4_upcast(release, capability, got, why)
    return replace(s, mxfp4_pad=pad, mxfp4_upcast=why), said
