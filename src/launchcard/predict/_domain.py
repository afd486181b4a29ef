"""Where a prediction stands outside the evidence its coefficient set was calibrated on.

A coefficient set is fitted on measured runs (data/predict_coefficients.json names them); the runs span some
batch sizes, prompt and output lengths, engine releases and GPUs, and the fit records that span with the set
(its ``domain``, written by bench/predict_accuracy.py from the rows it fitted on).  A prediction beyond it is an
extrapolation: the figures are still the step model's, but nothing measured stands behind that region, so each
cause is said once, as an ``assumed`` finding (``domain-*`` codes).  Findings only: no number changes here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from launchcard.flagspec import ReleaseKey, default_release_note, release_key
from launchcard.predict._coef import Coefficients, platform_arches, platform_set
from launchcard.predict._cost import facts_block_rule, facts_stand_in
from launchcard.predict._facts import ServingFacts
from launchcard.predict._fused_moe import BlockRule, block_finding, stand_in_finding
from launchcard.predict._kernels import facts_kernels, kernel_basis
from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._trtllm import RESPONSE_PATH_NOTE
from launchcard.predict._types import Domain, Finding

# what a vendor's GPUs run the engines on (named only where the vendor is one the engines support that way)
PLATFORM = {"NVIDIA": "CUDA", "AMD": "ROCm"}


def batch_bucket(n: int) -> str:
    """The bucket a run of ``n`` clients per replica is counted in (``Domain.batch_runs``)."""
    for top in (8, 64, 256, 512):
        if n <= top:
            return f"<={top}"
    return ">512"


def domain_from_runs(runs: list[tuple[int, int, int, int, int, str, str, str]], source: str) -> Domain:
    """The span of ``runs``: (clients per replica, shortest prompt, longest prompt, shortest output, longest
    output, release as recorded, GPU catalog id, GPU vendor) each; what a fit writes with its set."""
    batches: dict[str, int] = {}
    for r in runs:
        batches[batch_bucket(r[0])] = batches.get(batch_bucket(r[0]), 0) + 1
    named = sorted({r[5] for r in runs if release_key(r[5]) is not None}, key=lambda v: release_key(v) or ())
    return Domain(source=source, runs=len(runs), batch_max=max(r[0] for r in runs),
                  batch_runs=tuple((k, batches[k]) for k in ("<=8", "<=64", "<=256", "<=512", ">512") if k in batches),
                  isl=(min(r[1] for r in runs), max(r[2] for r in runs)),
                  osl=(min(r[3] for r in runs), max(r[4] for r in runs)), releases=tuple(named),
                  releases_unnamed=sum(1 for r in runs if release_key(r[5]) is None),
                  gpus=tuple(sorted({r[6] for r in runs})), vendors=tuple(sorted({r[7] for r in runs})))


@lru_cache(maxsize=32)
def _span(releases: tuple[str, ...]) -> tuple[ReleaseKey, ReleaseKey] | None:
    keys = [k for k in (release_key(r) for r in releases) if k is not None]
    return (min(keys), max(keys)) if keys else None


def engine_name(engine: str) -> str:
    return {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}.get(engine, engine)


def domain_findings(f: ServingFacts, isl: tuple[int, int], osl: tuple[int, int], running_max: int,
                    c: Coefficients) -> tuple[Finding, ...]:
    """One ``assumed`` finding per cause that puts this prediction outside ``c``'s calibrated domain: the decode
    batch (``running_max``, most requests running at once on a replica) beyond the largest batch of the set's runs;
    prompt or output lengths (``isl``/``osl``: shortest and longest sent) beyond theirs; the engine release outside
    theirs (or not stated); a GPU without measured kernel tables, or on which no run was measured; another
    platform.  Empty when ``c`` records no domain (a set fitted in a bench, the CPU set)."""
    d = c.domain
    if d is None:
        return ()
    out: list[Finding] = []
    key = c.key
    if running_max > d.batch_max:
        runs = ", ".join(f"{k}: {v}" for k, v in d.batch_runs)
        out.append(Finding("assumed", "domain-batch",
                           f"up to {running_max} requests run at once per replica, more than in any of {key}'s "
                           f"{d.runs} calibration runs (at most {d.batch_max} clients per replica; runs by clients "
                           f"{runs}): the step costs of larger batches are extrapolated"
                           + (RESPONSE_PATH_NOTE if f.engine == "trtllm" else "")))
    if isl[0] < d.isl[0] or isl[1] > d.isl[1] or osl[0] < d.osl[0] or osl[1] > d.osl[1]:
        out.append(Finding("assumed", "domain-lengths",
                           f"prompts of {_span_text(isl)} and outputs of {_span_text(osl)} tokens: outside {key}'s "
                           f"calibration runs (prompts {_span_text(d.isl)}, outputs {_span_text(d.osl)})"))
    out += _release(f, d, key)
    padded = facts_block_rule(f, facts_kernels(f).x_blocks)
    out += _gpu(f, d, key, padded)
    if padded is not None:  # the step model's padded rows (_cost): the tuned file or default rule that set the block
        out.append(block_finding(engine_name(f.engine), padded[0], padded[1], f.moe_n))
    out += _moe_split(f)
    vendor = f.hardware.vendor
    if key.startswith("rocm:"):  # the platform's own set: what its runs pinned and what they did not
        out.append(Finding("assumed", "domain-platform",
                           f"{key} is fitted on {d.source}: their per-layer overhead and attention KV-read share "
                           "(aiter's MLA decode) are its own, every other term the NVIDIA-fitted set's"
                           f"{'' if f.mla else '; this model has no MLA, so that attention share is assumed'}"
                           f"{_rocm_kernels(f, calibrated=True)}"))
    elif vendor is not None and vendor not in d.vendors:
        plat = PLATFORM.get(vendor)
        out.append(Finding("assumed", "domain-platform",
                           f"{vendor} {f.hardware.kind.upper()}{f' ({plat})' if plat else ''}: {key} was calibrated on "
                           f"{', '.join(f'{v} ({PLATFORM[v]})' if v in PLATFORM else v for v in d.vendors)} "
                           "runs only; its kernels and engine overheads on this platform are not measured"
                           f"{_other_arch(f, vendor)}{_rocm_kernels(f) if vendor == 'AMD' else ''}"))
    return tuple(out)


def _other_arch(f: ServingFacts, vendor: str) -> str:
    """Where the vendor's own set for the engine exists but its runs measured other architectures (_coef's gate):
    which GPUs it was fitted on and that this one's architecture is not among them."""
    arch = f.hardware.arch
    key, taken = platform_set(f.engine, vendor, arch)
    if key is None or taken:
        return ""
    entry = _table()["sets"][key]
    gpus = ", ".join(entry["domain"]["gpus"])
    return (f"; {key} is not taken: its runs ({gpus}: {', '.join(sorted(platform_arches(entry)))}) "
            f"measured another architecture than this GPU's ({arch})")


def _rocm_kernels(f: ServingFacts, calibrated: bool = False) -> str:
    """What SGLang runs on ROCm in place of the CUDA kernels the coefficient sets were fitted on, read from the
    sglang 0.5.7 wheel (PyPI) and SGLang's ROCm Dockerfile: no calibration run times any of it, so the step costs
    stay the CUDA kernels' shares of the datasheet figures.  Said for SGLang only (the engine whose ROCm paths
    were read)."""
    if f.engine != "sglang":
        return ""
    mla = " its MLA attention runs aiter's mla_decode_fwd where a rank has 16 or 128 heads, else Triton " \
          "(server_args.py 0.5.7 L1555-1561);" if f.mla else ""
    return (f" (SGLang on ROCm:{mla} its Triton attention splits a decode over 16 KV chunks "
            "(_handle_amd_specifics, L1793-1795); "
            "FP8 weights are converted to e4m3fnuz (fp8_utils.py normalize_e4m3fn_to_e4m3fnuz L130-137); aiter's "
            "fused MoE, FP8 GEMM and top-k kernels run with SGLANG_USE_AITER=1, off in the wheel (environ.py L265) "
            "and set by SGLang's ROCm image with SGLANG_ROCM_FUSED_DECODE_MLA=1 (docker/rocm.Dockerfile, its "
            "performance variables; read at commit 004ae46, a later release's)"
            + ("" if calibrated else "; no public measured AMD serving run is in this set's calibration data, so no "
               "AMD figure replaces the datasheet's") + ")")


def _span_text(span: tuple[int, int]) -> str:
    return str(span[0]) if span[0] == span[1] else f"{span[0]}-{span[1]}"


def _release(f: ServingFacts, d: Domain, key: str) -> list[Finding]:
    span = _span(d.releases)
    if span is None:
        return []
    name = engine_name(f.engine)
    known = f"{name} {d.releases[0]} to {d.releases[-1]}"
    if d.releases_unnamed:
        known += f"; {d.releases_unnamed} of its runs name a nightly build or no release"
    if not f.release:
        # --engine-version is the release predict plans vLLM's and SGLang's defaults by (TensorRT-LLM's are not
        # modelled by release): the advice only where the option does that
        how = " (pass --engine-version)" if f.engine in ("vllm", "sglang") else ""
        # the one default every surface takes (memory, check, plan: flagspec.default_release), named here; the
        # rules predict gates by release say for themselves which release's rule an unstated one gets
        return [Finding("assumed", "domain-release",
                        f"{default_release_note(f.engine)}{how}; {key} was calibrated on {known}")]
    k = release_key(f.release)
    if k is None or k < span[0] or k > span[1]:
        return [Finding("assumed", "domain-release",
                        f"{name} {f.release}: outside the releases {key} was calibrated on ({known})")]
    return []


def _gpu(f: ServingFacts, d: Domain, key: str, padded: tuple[BlockRule, int] | None) -> list[Finding]:
    """The domain-gpu finding (``padded``: the step model's row block rule, :func:`facts_block_rule`, computed once)."""
    hw = f.hardware
    if hw.kind == "cpu":  # vLLM's CPU backend: its own set (no domain); a TPU, HPU or NPU is timed like a GPU
        return []
    k = facts_kernels(f)
    unmeasured = hw.id not in d.gpus
    runs = f"no calibration run of {key} on it (its runs: {', '.join(d.gpus)})"
    if k.source.startswith("default/"):
        engine = k.source.split("/", 1)[1]
        shares = f"dense GEMM {k.g_comp:.2f}"
        if f.experts:
            shares += f", grouped MoE GEMM {k.x_comp:.2f}"
        shares += f", prefill attention {k.ap_comp:.2f}"
        basis = kernel_basis(engine, f.compute_dtype)
        return [Finding("assumed", "domain-gpu",
                        f"{hw.id} has no measured kernel tables: the FLOP/s shares of {engine}'s kernels are assumed "
                        f"to be the median of {', '.join(basis) or 'the GPUs measured'} ({shares} of the datasheet "
                        f"{f.compute_dtype} FLOP/s){'; ' + runs if unmeasured else ''}"
                        + _block_lent(f, k.gemm_block, k.g_comp, k.block_stand_in))]
    if k.source == "none":
        return [Finding("assumed", "domain-gpu", f"no kernel tables at all: {hw.id}'s datasheet FLOP/s taken at full "
                                                 f"rate{'; ' + runs if unmeasured else ''}")]
    # a class its tables lack (the A100's TensorRT-LLM 1.0.0 MoE rows: skewed routing only) is the median's
    lent = "".join(f"; its {k.source.split('/', 1)[1]} tables have no {LENT[c]} rows: that share is the median of "
                   f"the GPUs that have them ({share:.2f})"
                   for c, share in (("moe", k.x_comp), ("attn_prefill", k.ap_comp))
                   if c in k.borrowed and (c != "moe" or f.experts))
    lent += _block_lent(f, k.gemm_block, k.g_comp, k.block_stand_in)
    if k.moe_from and f.experts:  # another engine's rows of the same kernel on this GPU (_kernels.MOE_STAND_IN)
        lent += (f"; its {f.engine} tables have no balanced-routing grouped MoE GEMM rows: that share ({k.x_comp:.2f}, "
                 f"call latency {k.x_t0 * 1e6:.0f} us) is {k.moe_from}'s fused Triton MoE on the same GPU, measured "
                 f"as fast as {f.engine}'s where both run the same config (bench/kernel_checks.py moe_stand_in_checks)")
        ratio = facts_stand_in(f, k.moe_from, padded)
        if ratio is not None and padded is not None:
            lent += stand_in_finding(ratio, padded[1], f.moe_n, engine_name(f.engine), engine_name(ratio.stand_in))
    if unmeasured:
        return [Finding("assumed", "domain-gpu", f"{hw.id}: kernel tables measured, but {runs}{lent}")]
    if lent:
        return [Finding("assumed", "domain-gpu", f"{hw.id}{lent}")]
    return []


def _moe_split(f: ServingFacts) -> list[Finding]:
    """Where the routed experts' FLOP/s share is read at their N per rank (a record's "by_n",
    launchcard.predict._by_n.share_at_n): the share, the split it follows from and the table it was read from."""
    k = facts_kernels(f)
    if not (f.experts and k.x_by_n):
        return []
    split = f"{f.tp * f.replicas}-way expert parallel" if f.ep else f"each expert split {f.tp}-way"
    return [Finding("info", "moe-split",
                    f"{engine_name(f.engine)}'s routed experts ({split}: N {f.moe_n} per rank) timed at "
                    f"{k.x_comp:.3f} of the {f.expert_dtype or f.compute_dtype} datasheet FLOP/s, the share its "
                    f"fused MoE's measured rows reach at that N ({k.x_by_n}); a tensor-parallel split's smaller N "
                    "runs at a lower share")]


LENT = {"moe": "grouped MoE GEMM", "attn_prefill": "prefill attention"}


def _block_lent(f: ServingFacts, how: str, share: float, stand_in: str = "") -> str:
    """What a plan with block-scaled FP8 dense GEMMs (ServingFacts.gemm_block) takes for them where its GPU has no
    record of its engine's block kernel, or where the record is another engine's table of the kernel it runs
    (``stand_in``, launchcard.predict._kernels._block_gemm); "" where it is the engine's own.  vLLM without DeepGEMM
    on a GPU its CUTLASS blockwise op is timed on (ServingFacts.block_cutlass): the block-fp8-kernel finding says."""
    if f.block_cutlass:
        return ""
    if how == "own" and stand_in:
        # vLLM runs DeepGEMM only where the deep_gemm package imports (is_deep_gemm_supported = VLLM_USE_DEEP_GEMM and
        # has_deep_gemm() and SM90/SM100, vllm/utils/deep_gemm.py L23-30 at v0.11.0); the 0.11.0 wheel does not
        # require it (no deep_gemm in its Requires-Dist), and without it apply_w8a8_block_fp8_linear runs CUTLASS's
        # blockwise GEMM (rows padded to a multiple of 4 on SM90, fp8_utils.py L154-170), which no wheel table times
        # at served shapes (its CutlassFp8BlockScaledMMKernel rows: K 32/64 only)
        which = (" when the deep_gemm package is installed (vllm/utils/deep_gemm.py is_deep_gemm_supported; the "
                 "vllm wheel does not require it: assumed installed; without it CUTLASS's blockwise GEMM runs: say so "
                 "with --no-deep-gemm)") if f.engine == "vllm" else ""
        return (f"; its block-scaled FP8 dense GEMMs (weight_block_size) take {stand_in}'s DeepGEMM rows on "
                f"{f.hardware.id} ({share:.2f}): {f.engine} runs the same kernel there{which}, and its own rows hold "
                "a per-call floor a served step does not pay (bench/predict_kernels.py BLOCK_STAND_IN)")
    if how == "median":
        return (f"; no record of {f.engine}'s block-scaled FP8 GEMM kernel on {f.hardware.id}: its dense GEMMs "
                f"(weight_block_size) take the median share of the GPUs that have one ({share:.2f})")
    if how == "per-tensor":
        return (f"; no record of {f.engine}'s block-scaled FP8 GEMM kernel on any GPU: its dense GEMMs "
                f"(weight_block_size) are timed at the per-tensor FP8 share ({share:.2f})")
    return ""


def plans_outside(per_plan: Sequence[tuple[Finding, ...]], best: tuple[Finding, ...] = (), *,
                  noun: str = "predicted plans") -> list[str]:
    """A search's domain findings: each cause once, with how many of the predicted plans (``per_plan``: each plan's
    domain findings) it concerns, in the predictor's words for ``best`` (the winner) when it has that cause."""
    counts: dict[str, int] = {}
    said: dict[str, Finding] = {}
    for found in per_plan:
        for code in dict.fromkeys(f.code for f in found):  # a plan's two pools (disaggregated) count once
            counts[code] = counts.get(code, 0) + 1
        for f in found:
            said.setdefault(f.code, f)
    mine = {f.code: f for f in best}
    out = []
    for code, n in counts.items():
        who = f"all {len(per_plan)} {noun}" if n == len(per_plan) else f"{n} of {len(per_plan)} {noun}"
        if code in mine and n < len(per_plan):
            who += ", the best among them"
        out.append(f"assumed ({who}): {(mine.get(code) or said[code]).message}")
    return out
