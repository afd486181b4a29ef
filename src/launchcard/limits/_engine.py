"""Other start-up refusals vLLM makes from the flags (and the GPU) alone: scheduler and parallel config.

Each function follows one ``raise`` of the captured release (``SchedulerConfig.verify_max_model_len``,
``ParallelConfig``'s validator, ``CudaPlatform.check_if_supports_dtype``) and returns the engine's
sentence with the values filled in (evidence), or None when vLLM starts.  A value the user did not
give is passed as None and never judged: vLLM's defaults for it depend on the GPU and usage context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from launchcard.limits._data import compute_capability, quote, table
from launchcard.limits._kv import vllm_platform

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


# how both engines split the layers over pipeline stages: layers // pp each, the remainder one more each; with more
# stages than layers, pp - layers stages hold no layer (no GPU of theirs serves the model): a plan that fails its
# check on every surface (check, memory, predict, plan), as TP not dividing the heads
PP_LAYERS_RULE = ("vLLM 0.32.0 vllm/distributed/utils.py L153-158 (get_pp_indices: num_hidden_layers // pp_size per "
                  "stage, the remainder one more to as many stages); SGLang 0.5.6.post2 "
                  "python/sglang/srt/distributed/utils.py L86-97 (the same split)")


def pp_layers_refusal(pp: int, layers: int | None) -> tuple[str, str] | None:
    """(message, fix) when ``pp`` pipeline stages exceed the model's ``layers`` (``PP_LAYERS_RULE``); None when they
    do not or the layer count is unknown.  The one wording of ``check``, ``memory``, ``predict`` and ``plan``."""
    if not layers or pp <= layers:
        return None
    return (f"pipeline parallel size {pp} exceeds the {layers} layers: {pp - layers} stage(s) would hold no layer",
            f"use a pipeline parallel size of {layers} or less")


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
    cc = compute_capability(capability)
    if (dtype or "").lower() not in _BF16 or cc is None or cc >= (8, 0):
        return None
    return quote("bfloat16_capability", gpu_name=device, compute_str=f"has compute capability {cc[0]}.{cc[1]}")


# the catalog's (vendor, kind) -> vLLM's platform whose supported_quantization list applies (a CPU of any vendor:
# cpu); Intel Gaudi (hpu) and Huawei Ascend (npu) run out-of-tree platform plugins whose lists are not captured
def quant_platform_of(vendor: str | None, kind: str | None) -> str | None:
    """vLLM's platform for a catalog entry, for the quantization list (None: not a platform the wheel holds)."""
    return vllm_platform(vendor, kind)


@dataclass(frozen=True, slots=True)
class QuantVerdict:
    """``Platform.verify_quantization`` for one method: refused (with the engine's sentence), undecided (why),
    or neither (the platform's list takes it, or the platform lists none and so refuses none)."""

    refused: Refusal | None = None
    undecided: str | None = None


def platform_quant_verdict(method: str | None, platform: str | None, *, checkpoint: bool = False,
                           device: str = "the target") -> QuantVerdict:
    """Whether vLLM's ``platform`` takes quantization ``method`` at start-up (``ModelConfig._verify_quantization``
    calls ``current_platform.verify_quantization``: a method not in a non-empty ``supported_quantization`` is
    refused).  ``checkpoint``: the method is the checkpoint's ``quantization_config.quant_method``, which vLLM may
    first rename (its ``override_quantization_method`` chain), so a name the list lacks is undecided, not refused.
    """
    name = (method or "").lower()
    if not name or name == "none":
        return QuantVerdict()
    got = table().get("platform_quantization") or {}
    entry = (got.get("platforms") or {}).get(platform or "")
    if platform is None or entry is None:
        return QuantVerdict(undecided=f"quantization {name} on {device}: no vLLM platform list captured for it "
                                      f"(vllm/platforms/ of {_release()} holds cuda, rocm, xpu, cpu, tpu)")
    if entry.get("external"):
        return QuantVerdict(undecided=f"quantization {name} on {device}: vLLM's {platform} platform comes from the "
                                      f"{entry['external']} package ({entry.get('where')}), whose "
                                      "supported_quantization is not in the captured wheel")
    methods = [str(m) for m in entry.get("methods") or []]
    if not methods or name in methods:
        return QuantVerdict()
    listed = f"{_release()} {entry.get('where')} ({entry.get('class')}.supported_quantization: {', '.join(methods)})"
    if checkpoint:
        return QuantVerdict(undecided=f"the checkpoint's method ({name}) is not in vLLM's {platform} list, but vLLM "
                                      "may map a checkpoint's method to another before it verifies it (the "
                                      f"override_quantization_method chain): cannot decide; {listed}")
    rule = got.get("rule") or {}
    text = str(rule.get("wording") or "").replace("{quant}", name).replace("{cls.device_name}",
                                                                             str(entry.get("device_name")))
    return QuantVerdict(refused=Refusal(
        "quant_platform", f"--quantization {name} on {device}: vLLM's {platform} platform does not list it",
        f"use a method vLLM's {platform} platform lists ({', '.join(methods)}), or a GPU of another platform",
        f'{_release()} {rule.get("where")}: "{text}"; {listed}'))


def _release() -> str:
    return f"vllm {table().get('version', '?')}"


def checkpoint_quant_method(quantization_config: object) -> str | None:
    """The method name vLLM verifies for a checkpoint's ``quantization_config``: its ``quant_method``, with
    ModelOpt's renaming by ``quant_algo`` applied as vLLM 0.32.0's ``override_quantization_method`` does
    (``vllm/model_executor/layers/quantization/modelopt.py``: FP8 -> modelopt (:449), NVFP4/FP4 -> modelopt_fp4
    (:772), MXFP8 -> modelopt_mxfp8 (:1205), MIXED_PRECISION -> modelopt_mixed (:1627)).  Other renamings are not
    modelled: :func:`platform_quant_verdict` with ``checkpoint=True`` leaves a name the list lacks undecided."""
    if not isinstance(quantization_config, dict):
        return None
    method = str(quantization_config.get("quant_method") or "").lower()
    if not method.startswith("modelopt"):
        return method or None
    inner = quantization_config.get("quantization", quantization_config)
    if not isinstance(inner, dict):
        return method
    algo = str(inner.get("quant_algo") or "").upper()
    if algo == "FP8":
        return "modelopt"
    if "NVFP4" in algo or "FP4" in algo:
        return "modelopt_fp4"
    if "MXFP8" in algo:
        return "modelopt_mxfp8"
    if algo == "MIXED_PRECISION":
        return "modelopt_mixed"
    return method
