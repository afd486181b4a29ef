"""Other start-up refusals vLLM makes from the flags (and the GPU) alone: scheduler and parallel config.

Each function follows one ``raise`` of the captured release (``SchedulerConfig.verify_max_model_len``,
``ParallelConfig``'s validator, ``CudaPlatform.check_if_supports_dtype``) and returns the engine's
sentence with the values filled in (evidence), or None when vLLM starts.  A value the user did not
give is passed as None and never judged: vLLM's defaults for it depend on the GPU and usage context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from launchcard.limits._data import quote, table

_BF16 = ("bfloat16", "bf16")


@dataclass(frozen=True, slots=True)
class Refusal:
    """One start-up refusal: the rule, what is wrong and the fix in launchcard's words, the engine's sentence."""

    rule: str
    message: str
    fix: str
    evidence: str

    @property
    def code(self) -> str:
        return self.rule.replace("_", "-")


@dataclass(frozen=True, slots=True)
class Scheduling:
    """The scheduler flags as given (None: not on the command line)."""

    max_model_len: int | None = None  # --max-model-len, else the length vLLM derives from the config
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    chunked_prefill: bool | None = None  # --[no-]enable-chunked-prefill
    long_prefill_token_threshold: int | None = None


def scheduler_refusals(s: Scheduling) -> list[Refusal]:
    """Each ``SchedulerConfig.verify_max_model_len`` refusal the flags decide."""
    out: list[Refusal] = []
    mnbt, length = s.max_num_batched_tokens, s.max_model_len
    if mnbt is not None and length is not None and length > 0 and s.chunked_prefill is False and mnbt < length:
        out.append(Refusal(
            "max_num_batched_tokens_below_len",
            f"--max-num-batched-tokens {mnbt} is below the max model length {length} with chunked prefill off",
            f"raise --max-num-batched-tokens to {length}, lower --max-model-len to {mnbt}, or drop "
            "--no-enable-chunked-prefill",
            quote("max_num_batched_tokens_below_len", max_num_batched_tokens=mnbt, max_model_len=length)))
    if mnbt is not None and s.max_num_seqs is not None and mnbt < s.max_num_seqs:
        out.append(Refusal(
            "max_num_batched_tokens_below_seqs",
            f"--max-num-batched-tokens {mnbt} is below --max-num-seqs {s.max_num_seqs}",
            f"raise --max-num-batched-tokens to {s.max_num_seqs} or lower --max-num-seqs to {mnbt}",
            quote("max_num_batched_tokens_below_seqs", max_num_batched_tokens=mnbt, max_num_seqs=s.max_num_seqs)))
    lp = s.long_prefill_token_threshold
    if lp is not None and length is not None and length > 0 and lp > length:
        out.append(Refusal(
            "long_prefill_over_len", f"--long-prefill-token-threshold {lp} is above the max model length {length}",
            f"use --long-prefill-token-threshold {length} or less",
            quote("long_prefill_over_len", long_prefill_token_threshold=lp, max_model_len=length)))
    return out


@dataclass(frozen=True, slots=True)
class Parallel:
    """The parallel flags as given (sizes default to vLLM's 1)."""

    tp: int = 1
    dp: int = 1
    dp_local: int | None = None
    pcp: int = 1
    dcp: int = 1
    expert_parallel: bool = False
    eplb: bool = False
    redundant_experts: int | None = None  # --eplb-config num_redundant_experts


def parallel_refusals(p: Parallel, platform: str | None) -> list[Refusal]:
    """Each ``ParallelConfig`` refusal the flags (and vLLM's platform) decide."""
    out: list[Refusal] = []
    if p.dp_local is not None and p.dp_local > p.dp:
        out.append(Refusal("dp_local_over_dp", f"--data-parallel-size-local {p.dp_local} is above "
                           f"--data-parallel-size {p.dp}",
                           f"use --data-parallel-size-local {p.dp} or less, or raise --data-parallel-size",
                           quote("dp_local_over_dp", data_parallel_size_local=p.dp_local, data_parallel_size=p.dp)))
    if p.eplb:
        if platform is not None and platform not in ("cuda", "rocm", "xpu"):
            out.append(Refusal("eplb_platform", f"--enable-eplb on vLLM's {platform} platform: it balances experts "
                               "only on CUDA, ROCm and XPU", "drop --enable-eplb", quote("eplb_platform")))
        elif not p.expert_parallel:
            out.append(Refusal("eplb_needs_ep", "--enable-eplb without --enable-expert-parallel",
                               "add --enable-expert-parallel, or drop --enable-eplb", quote("eplb_needs_ep")))
        elif p.tp * p.pcp * p.dp <= 1:
            out.append(Refusal("eplb_needs_parallel", "--enable-eplb on one rank (TP x PCP x DP = 1)",
                               "drop --enable-eplb, or raise TP or DP above 1",
                               quote("eplb_needs_parallel", tensor_parallel_size=p.tp,
                                     prefill_context_parallel_size=p.pcp, data_parallel_size=p.dp)))
    elif p.redundant_experts:
        out.append(Refusal("redundant_experts_without_eplb",
                           f"--eplb-config num_redundant_experts {p.redundant_experts} without --enable-eplb",
                           "add --enable-eplb, or drop num_redundant_experts",
                           quote("redundant_experts_without_eplb",
                                 eplb_config__num_redundant_experts=p.redundant_experts)))
    if p.pcp == 1 and p.dcp > 1 and p.tp % p.dcp:
        good = [d for d in range(1, p.tp + 1) if p.tp % d == 0]
        out.append(Refusal("dcp_divides_tp", f"--decode-context-parallel-size {p.dcp} does not divide "
                           f"--tensor-parallel-size {p.tp}",
                           f"use a decode-context-parallel size dividing {p.tp}: {', '.join(map(str, good))}",
                           quote("dcp_divides_tp", tp=p.tp, dcp=p.dcp)))
    return out


def pp_refusal(architectures: Sequence[str], pp: int) -> Refusal | None:
    """``--pipeline-parallel-size`` > 1 for a model class that does not implement ``SupportsPP``
    (``ModelConfig.verify_with_parallel_config``; the registry's classes captured from the engine).
    The first architecture vLLM's registry knows decides; an unknown or uncaptured one is not judged."""
    if pp <= 1:
        return None
    support = table().get("pp_support") or {}
    arch = next((a for a in architectures if a in support), None)
    if arch is None or support[arch].get("pp") is not False:
        return None
    return Refusal("pp_unsupported", f"--pipeline-parallel-size {pp}: vLLM's {arch} ({support[arch]['source']}) "
                   "does not implement pipeline parallelism", "use --pipeline-parallel-size 1 (TP or DP across the "
                   "GPUs instead)", quote("pp_unsupported"))


def dcp_model_refusal(heads: int | None, kv_heads: int | None, mla: bool, tp: int, dcp: int) -> Refusal | None:
    """Decode context parallelism against the model's KV heads (GQA/MQA; MLA is exempt), in the order
    ``ModelConfig.verify_with_parallel_config`` checks: TP above the KV heads, DCP within TP // KV heads,
    query heads per KV head divisible by DCP.  A fix names only sizes that pass every rule."""
    if dcp <= 1 or mla or not kv_heads:
        return None
    per_kv = (heads or kv_heads) // kv_heads
    most = tp // kv_heads
    rule, message, values = "", "", {}
    if tp <= kv_heads:
        rule = "dcp_needs_tp_over_kv_heads"
        message = (f"--decode-context-parallel-size {dcp} with --tensor-parallel-size {tp}: TP must exceed the "
                   f"model's {kv_heads} KV heads")
        values = {"tensor_parallel_size": tp, "total_num_kv_heads": kv_heads}
    elif dcp > most:
        rule = "dcp_over_max"
        message = f"--decode-context-parallel-size {dcp} is above {most} (TP {tp} // {kv_heads} KV heads)"
        values = {"decode_context_parallel_size": dcp, "max_dcp_size": most, "tensor_parallel_size": tp,
                  "total_num_kv_heads": kv_heads}
    elif per_kv % dcp:
        rule = "dcp_q_per_kv"
        message = f"--decode-context-parallel-size {dcp} does not divide the {per_kv} query heads per KV head"
        values = {"num_q_per_kv": per_kv, "decode_context_parallel_size": dcp}
    else:
        return None
    good = [d for d in range(2, most + 1) if tp % d == 0 and per_kv % d == 0] if tp > kv_heads else []
    fix = (f"use --decode-context-parallel-size {' or '.join(map(str, good))} at TP {tp}, or 1" if good
           else f"use --decode-context-parallel-size 1 (at TP {tp} this model takes no other)")
    return Refusal(rule, message, fix, quote(rule, **values))


def bfloat16_refusal(dtype: str | None, capability: str | None, device: str = "NVIDIA") -> str | None:
    """``--dtype bfloat16`` on an NVIDIA GPU below compute capability 8.0 (the worker refuses it at start)."""
    if (dtype or "").lower() not in _BF16 or not capability:
        return None
    try:
        major, minor = (int(p) for p in capability.split(".")[:2])
    except ValueError:
        return None
    if (major, minor) >= (8, 0):
        return None
    return quote("bfloat16_capability", gpu_name=device, compute_str=f"has compute capability {major}.{minor}")
