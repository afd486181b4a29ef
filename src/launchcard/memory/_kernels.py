"""Memory that depends on a kernel package being installed, which a plan (a command line) does not show.

vLLM picks some kernels by what is importable at start-up, not by a flag.  Where that choice
moves the start-up memory enough to flip the verdict, the planner must not assert either
outcome: it plans the setting the command states (or, when it states none, the plain ``pip
install vllm`` environment) and, if that is refused while the other environment starts, it says
it cannot decide instead of refusing.

Captured so far: FlashInfer's top-k/top-p sampler.  From vLLM 0.9 to 0.11.0 the V1 sampler
runs FlashInfer's kernel whenever the ``flashinfer`` package imports on a CUDA GPU and
``VLLM_USE_FLASHINFER_SAMPLER`` is not set to 0 (read in the release wheels:
0.9.0.1 ``vllm/v1/sample/ops/topk_topp_sampler.py:32-49``, 0.10.2 ``:42-60``, 0.11.0 ``:39-57``);
from 0.11.1 it is opt-in (``VLLM_USE_FLASHINFER_SAMPLER=1``, 0.11.1 ``:34-40``).  ``flashinfer``
is an extra of the vllm wheel (0.10.2 ``model_executor/layers/quantization/mxfp4.py:84-87``:
"Please `pip install vllm[flashinfer]`"), so a command line does not show it.  The start-up
profile runs the sampler over ``max_num_seqs`` rows of fp32 logits (``gpu_model_runner.
_dummy_sampler_run``): the PyTorch sort path peaks at ~9.6 copies of them, FlashInfer's at ~3.5
(``_model.SAMPLER_COPIES_FLASHINFER``), which for a 200K vocabulary at 1,024 sequences is 7.4 against 2.7 GiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from launchcard.flagspec import release_numbers
from launchcard.memory._hardware import Gpu
from launchcard.memory._settings import Settings, default_vllm

# how a plan's warning says the verdict depends on something the plan does not state
MEMORY_UNDECIDED = "cannot decide whether it fits"

# releases whose V1 sampler uses FlashInfer by default when the package is installed (first, last; inclusive)
FLASHINFER_SAMPLER_DEFAULT = ((0, 9, 0), (0, 11, 0))
FLASHINFER_SAMPLER_EVIDENCE = ("vLLM 0.10.2 vllm/v1/sample/ops/topk_topp_sampler.py:42-60, 0.11.0 :39-57: "
                               "FlashInfer's top-k/top-p kernel whenever the flashinfer package imports and "
                               "VLLM_USE_FLASHINFER_SAMPLER is not 0; opt-in from 0.11.1 (:34-40)")


def release(text: str | None) -> tuple[int, int, int]:
    """``0.11.0`` / ``v0.10.1.1`` / ``0.26.1rc1.dev6`` -> (0, 11, 0) / (0, 10, 1) / (0, 26, 1): the release line
    (``flagspec.release_numbers``: a pre-release or developmental build of 0.26.1 carries 0.26.1's code, so it
    counts as 0.26.1 here on purpose); None or no release: the default release
    (:func:`launchcard.flagspec.default_release`)."""
    nums = release_numbers(text)
    if nums is None:
        return (*default_vllm(), 0)
    major, minor, patch = (*nums, 0, 0)[:3]
    return major, minor, patch


def sampler_alternative(s: Settings, g: Gpu | None) -> Settings | None:
    """The settings as they would be with FlashInfer installed, when the plan does not say whether it is and
    the release would then sample with it by default on this GPU; None where that does not apply."""
    from launchcard.limits import platform_of

    if s.flashinfer_sampler is not None or s.device == "cpu" or g is None:
        return None
    if platform_of(g.vendor, g.kind) != "cuda":
        return None  # the FlashInfer branch is taken on CUDA only
    first, last = FLASHINFER_SAMPLER_DEFAULT
    if not first <= release(s.vllm_version) <= last:
        return None
    return replace(s, flashinfer_sampler=True)


def sampler_from_env(env: Mapping[str, str] | None, version: str | None) -> bool | None:
    """What ``VLLM_USE_FLASHINFER_SAMPLER`` in the server's environment decides (vllm/envs.py reads it as
    ``bool(int(value))``): 0 -> the PyTorch path in every release; 1 -> FlashInfer's kernel from 0.11.1 (opt-in),
    while in 0.9-0.11.0 the kernel still needs the package (None: undecided); unset or unreadable: None."""
    raw = str((env or {}).get("VLLM_USE_FLASHINFER_SAMPLER", "")).strip()
    try:
        on = bool(int(raw))
    except ValueError:
        return None
    if not on:
        return False
    return True if release(version) > FLASHINFER_SAMPLER_DEFAULT[1] else None


def sampler_note(s: Settings, without_gib: float, with_gib: float) -> str:
    """The assumption a plan makes when it fits only with FlashInfer's sampler."""
    return (f"flashinfer installed (assumed, unknown from the command): vLLM {s.vllm_version} then samples with "
            f"FlashInfer's kernel and its start-up sampler pass peaks at ~{with_gib:.2f} GiB instead of "
            f"~{without_gib:.2f} GiB ({FLASHINFER_SAMPLER_EVIDENCE}); decide it with --flashinfer-sampler / "
            "--no-flashinfer-sampler, or VLLM_USE_FLASHINFER_SAMPLER=0 in the server's environment")


def sampler_warning(refusal: str) -> str:
    return (f"{MEMORY_UNDECIDED}: it fits only if the flashinfer package is installed (an extra of the vllm wheel: "
            "0.10.2 model_executor/layers/quantization/mxfp4.py:84-87 asks for `pip install vllm[flashinfer]`); "
            f"without it vLLM refuses to start: {refusal}")
