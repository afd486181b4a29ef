"""vLLM's start-up refusals for a memory plan (:mod:`launchcard.limits`, the rules ``check`` applies too).

A refused setting is a problem of the plan (it does not start, so it does not fit), a setting
launchcard cannot judge offline is a warning, and every piece of advice is passed through
:func:`accepts` before it is proposed.
"""

from __future__ import annotations

from typing import NamedTuple

from launchcard.idmemo import IdMemo
from launchcard.memory._arch import Arch
from launchcard.memory._hardware import Gpu
from launchcard.memory._settings import Settings, settings_with

# how a plan's problem / warning says it is a start-up refusal (check reports those as the limit rules' own
# findings and keeps memory's finding to memory)
STARTUP_REFUSAL = "vLLM refuses to start"
STARTUP_UNDECIDED = "cannot decide whether vLLM starts"
# the runtime --quantization a quantized-variant suggestion stands for (vLLM method names)
VARIANT_METHOD = {"fp8": "fp8", "nvfp4": "modelopt_fp4"}


def _device(s: Settings, g: Gpu | None) -> tuple[str | None, str | None]:
    from launchcard.limits import platform_of

    if g is None:
        return ("cpu" if s.device == "cpu" else None), None
    platform = platform_of(g.vendor, g.kind)
    return platform, (g.compute_capability or None) if platform == "cuda" else None


def mla_kind(a: Arch) -> tuple[bool, bool]:
    """(MLA, sparse) as vLLM decides them for this model."""
    from launchcard.limits import attention_kind

    return attention_kind(dict(a.attention_config))


class Startup(NamedTuple):
    """What vLLM refuses at start-up beyond the length rule (each problem with the engine's sentence as
    evidence), what cannot be decided offline, and the fix of each problem."""

    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    fixes: tuple[str, ...]


def startup_refusals(a: Arch, s: Settings, g: Gpu | None) -> Startup:
    """vLLM's start-up refusals for these settings on ``g`` (:class:`Startup`).  Only the scheduler's rules read
    the batch limits (``max_num_seqs``, ``max_num_batched_tokens``); the rest is remembered for every batch limit
    at once (a plan search plans one model at ~8 limits), keyed by the arch's and GPU's identity, kept with the
    value so that a reused id never hits."""
    from launchcard.limits import Scheduling, scheduler_refusals

    before, after, warnings = _RULES.get(a, lambda arch: _other_refusals(arch, s, g),
                                         settings_with(s, max_num_seqs=None, max_num_batched_tokens=None), pin=g)
    rules = scheduler_refusals(Scheduling(max_num_batched_tokens=s.max_num_batched_tokens,
                                          max_num_seqs=s.max_num_seqs))
    found = [*before, *((r.message, r.fix, r.evidence) for r in rules), *after]
    return Startup(tuple(f"{STARTUP_REFUSAL}: {what}; {fix} (evidence: {ev})" for what, fix, ev in found),
                   warnings, tuple(fix for _, fix, _ in found))


def unregistered_architecture(architectures: tuple[str, ...]) -> str | None:
    """The startup-undecided line for a config none of whose architectures vLLM's model registry holds (the
    registry captured whole from the engine: ``launchcard.limits`` table ``pp_support``, every class
    ``ModelRegistry.models`` lists).  vLLM then serves it only through its Transformers backend, where transformers
    implements the class (``ModelRegistry.resolve_model_cls``'s fallback), and otherwise refuses to start
    ("Model architectures [...] are not supported for now", ``_raise_for_unsupported``,
    vllm/model_executor/models/registry.py); launchcard times vLLM's own model classes.  None when one is
    registered, the config names none, or no registry was captured."""
    from launchcard.limits import source, table

    registry = table().get("pp_support") or {}
    if not architectures or not registry or any(a in registry for a in architectures):
        return None
    return (f"architecture {', '.join(architectures)}: {STARTUP_UNDECIDED} (not in the model registry of "
            f"{source()}, the release captured: vLLM serves it only through its Transformers backend where "
            "transformers implements the class, else refuses to start, 'Model architectures [...] are not "
            "supported for now', vllm/model_executor/models/registry.py _raise_for_unsupported; its figures "
            "time vLLM's own model classes)")


def pooling_architecture(architectures: tuple[str, ...]) -> str | None:
    """Why vLLM serves this config with its pooling runner (embeddings, scores, classes: no generated token), or
    None.  vLLM takes the first of the config's architectures its registry holds and, with ``--runner auto`` (the
    default), runs a class that sets ``is_pooling_model`` as a pooling model (0.32.0 vllm/config/model.py
    ``_get_default_runner_type`` L1280-1285; ``_ModelInfo.is_pooling_model``, vllm/model_executor/models/
    registry.py L894-895), captured per class (``pp_support``'s ``pooling``).  A class the capture could not
    import, or a config whose architectures the registry lacks, is not judged here."""
    from launchcard.limits import source, table

    registry = table().get("pp_support") or {}
    arch = next((a for a in architectures if a in registry), None)
    if arch is None or not registry[arch].get("pooling"):
        return None
    return (f"architecture {arch} is a pooling model in {source()} ({registry[arch]['source']}): vllm serve runs "
            "it with the pooling runner (vllm/config/model.py _get_default_runner_type), which returns embeddings "
            "or scores and generates no token")


# the arch, with the GPU (pinned) and the settings without batch limits -> _other_refusals; see startup_refusals
_RULES: IdMemo[Arch, tuple[tuple[tuple[str, str, str], ...], tuple[tuple[str, str, str], ...], tuple[str, ...]]] = (
    IdMemo(4096))


def _other_refusals(a: Arch, s: Settings, g: Gpu | None) -> tuple[
        tuple[tuple[str, str, str], ...], tuple[tuple[str, str, str], ...], tuple[str, ...]]:
    """:func:`startup_refusals` but the scheduler's rules: the (what, fix, evidence) found before them and after
    them, in order, and the warnings; none of it reads the batch limits."""
    from launchcard.limits import (
        Parallel,
        bfloat16_refusal,
        dcp_model_refusal,
        dense_ep_refusal,
        kv_dtype_verdict,
        kv_dtypes_accepted,
        own_backends,
        parallel_refusals,
        pp_refusal,
        quant_capability_refusal,
        tp_refusal,
    )

    found: list[tuple[str, str, str]] = []  # (what, fix, the engine's evidence)
    warnings: list[str] = []
    platform, cap = _device(s, g)
    name = g.id if g is not None else "the target"
    unregistered = unregistered_architecture(a.architectures)
    if unregistered:
        warnings.append(unregistered)
    pooling = pooling_architecture(a.architectures)
    if pooling:  # its KV cache (none for encoder-only attention) is not the generate runner's planned here
        warnings.append(f"{pooling}; this plan is the generate runner's memory (a KV cache for every token), not the "
                        "pooling runner's, which launchcard does not plan")
    mla, sparse = mla_kind(a)
    kv = s.kv_cache_dtype or "auto"
    own = own_backends(dict(a.attention_config))
    if kv != "auto" and own:
        warnings.append(f"--kv-cache-dtype {kv}: {STARTUP_UNDECIDED} ({own})")
    elif kv != "auto" and (g is not None or platform == "cpu"):
        verdict = kv_dtype_verdict(kv, platform=platform, capability=cap, mla=mla, sparse=sparse, device=name)
        if verdict.refused:
            takes = kv_dtypes_accepted(platform=platform, capability=cap, mla=mla, sparse=sparse)
            found.append((f"no attention backend it tries on {name} takes --kv-cache-dtype {kv} for this "
                          f"{'MLA ' if mla else ''}model",
                          "drop --kv-cache-dtype" + (f" or use one of {', '.join(takes)}" if takes else ""),
                          verdict.refused))
        elif verdict.undecided:
            warnings.append(f"--kv-cache-dtype {kv} on {name}: {STARTUP_UNDECIDED} ({verdict.undecided})")
    if tp_refusal(a.num_heads, a.num_kv_heads, s.tp, mla) and not a.num_heads % s.tp:
        from launchcard.limits import KV_HEADS_RULE

        found.append((f"--tensor-parallel-size {s.tp} cannot split the {a.num_kv_heads} KV heads (neither divides "
                      "the other)", f"use a TP that divides {a.num_kv_heads} or that {a.num_kv_heads} divides",
                      KV_HEADS_RULE))
    dense_ep = dense_ep_refusal(a.num_experts if a.is_moe else 0, s.expert_parallel)
    if dense_ep:  # vLLM verifies it beside the heads split, before the scheduler's rules
        found.append(dense_ep)
    before = tuple(found)
    found = []  # the scheduler's rules go here (startup_refusals)
    rules = parallel_refusals(Parallel(tp=s.tp, dp=s.dp, dcp=s.dcp, expert_parallel=s.expert_parallel), platform)
    rules += [r for r in (pp_refusal(a.architectures, s.pp),
                          dcp_model_refusal(a.num_heads, a.num_kv_heads, mla, s.tp, s.dcp)) if r is not None]
    found += [(r.message, r.fix, r.evidence) for r in rules]
    bf16 = bfloat16_refusal(s.dtype, cap, g.name if g is not None else "NVIDIA")
    if bf16:
        found.append((f"--dtype {s.dtype} on {name} (compute capability {cap})", "use --dtype float16", bf16))
    # the method vLLM verifies: --quantization, else the checkpoint's (its quantization_config)
    method = s.quantization if s.quantization and s.quantization.lower() != "none" else a.quant_method
    what = f"--quantization {method}" if method == s.quantization else f"the checkpoint's quantization {method}"
    quant = quant_capability_refusal(method, cap)
    if quant:
        found.append((f"{what} needs a newer GPU than {name}",
                      "use a GPU the method supports, or a checkpoint in another format", quant))
    if method and (g is not None or s.device == "cpu"):
        from launchcard.limits import platform_quant_verdict, quant_platform_of

        pq = platform_quant_verdict(method, "cpu" if g is None else quant_platform_of(g.vendor, g.kind),
                                    checkpoint=method != s.quantization, device=name)
        if pq.refused is not None:
            found.append((pq.refused.message, pq.refused.fix, pq.refused.evidence))
        elif pq.undecided:
            warnings.append(f"{what} on {name}: {STARTUP_UNDECIDED} ({pq.undecided})")
    return before, tuple(found), tuple(warnings)


def accepts(a: Arch, s: Settings, g: Gpu | None, *, variant: str | None = None) -> bool:
    """Whether vLLM starts with ``s`` (and a checkpoint quantized as ``variant``) as far as the offline rules
    tell: advice proposes only settings this accepts (undecidable ones are not proposed either)."""
    from launchcard.limits import kv_dtype_verdict, quant_capability_refusal

    if startup_refusals(a, s, g).problems:
        return False
    kv = s.kv_cache_dtype or "auto"
    if kv != "auto":
        from launchcard.limits import own_backends

        if own_backends(dict(a.attention_config)):
            return False
        platform, cap = _device(s, g)
        mla, sparse = mla_kind(a)
        if not kv_dtype_verdict(kv, platform=platform, capability=cap, mla=mla, sparse=sparse).accepted_by:
            return False
    if variant is not None:
        _, cap = _device(s, g)
        method = VARIANT_METHOD.get(variant)
        if method is None or quant_capability_refusal(method, cap) is not None:
            return False
        from launchcard.limits import platform_quant_verdict, quant_platform_of

        pq = platform_quant_verdict(method, "cpu" if g is None else quant_platform_of(g.vendor, g.kind))
        return pq.refused is None and pq.undecided is None
    return True
