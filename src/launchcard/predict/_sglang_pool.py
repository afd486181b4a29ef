"""SGLang's memory for one scheduler: the static share of the GPU it keeps (``--mem-fraction-static``'s default),
the KV pool in tokens that share leaves past the weights (a sliding-window hybrid's pool divided by its own bytes per
token) and the requests that pool runs at once.  Split out of ``predict._sglang`` (the command read as a plan), which
imports these; each rule cited where it is applied."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from launchcard.limits import sglang_release as _release
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch
    from launchcard.predict._facts import ServingFacts


class _Plan(Protocol):
    """What these rules read of ``predict._sglang.SglangPlan`` (a protocol: that module imports this one)."""

    @property
    def mem_fraction_static(self) -> float: ...
    @property
    def version(self) -> str | None: ...
    @property
    def disable_hybrid_swa_memory(self) -> bool: ...
    @property
    def max_running_requests(self) -> int | None: ...
    @property
    def replicas(self) -> int: ...
    @property
    def dp_attention(self) -> bool: ...


def mem_fraction(gpu_mib: float | None, chunk: int, max_prefill: int, graph_bs: int, tp: int, pp: int, dp: int,
                  dpa: bool, algo: str | None, vision: bool) -> float:
    """ServerArgs._handle_gpu_memory_settings' mem_fraction_static (server_args.py:848-897), piecewise CUDA
    graphs off (their default)."""
    if gpu_mib is None:
        return 0.88
    reserved = 512 + max(chunk if chunk > 0 else max_prefill, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024
    if dpa:
        reserved += graph_bs * dp * 3 + (graph_bs * dp * 1.5 if graph_bs > 300 else 0.0)
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if algo == "STANDALONE":
        reserved += 6 * 1024
    elif algo is not None and algo != "NGRAM":
        reserved += 2 * 1024
    frac = round((gpu_mib - reserved) / gpu_mib, 3)
    if vision:
        # adjust_mem_fraction_for_vlm (server_args.py:4402-4438): x 0.95 x a factor of the ViT's size, which the
        # facts do not carry: its neutral value 1.0 (the factor is clamped to 0.8..1.05)
        frac *= 0.95
    return frac


def no_kv_fix(weights_gib: float, gpu_memory_gib: float) -> str:
    """What leaves SGLang a KV pool (:func:`sglang_kv_tokens`: the static share of the GPU less the weights): a
    share above weights / memory (rounded up), which SGLang takes only below 1 (a GPU the weights alone fill: more
    GPUs only)."""
    need = weights_gib / gpu_memory_gib
    if need >= 1:
        return f"use more GPUs (--tp-size): the weights alone exceed the GPU's {gpu_memory_gib:g} GiB"
    least = -(-need * 1000 // 1) / 1000  # rounded up: a share of that leaves at least one token's room
    return f"use more GPUs (--tp-size) or raise --mem-fraction-static to at least {least:.3f}"


def sglang_kv_tokens(plan: _Plan, weights_gib: float, kv_bytes_per_token: float, gpu_memory_gib: float) -> int:
    """SGLang's KV pool in tokens on one rank: memory kept static minus the weights, over a token's KV bytes
    (ModelRunner.profile_max_num_token: memory free after loading - total x (1 - mem_fraction_static), SGLang
    0.5.6.post2 python/sglang/srt/model_executor/model_runner.py:1363-1440; the CUDA context's few hundred MiB
    are not subtracted here)."""
    rest = gpu_memory_gib * plan.mem_fraction_static - weights_gib
    return max(0, int(rest * 2**30 / kv_bytes_per_token)) if kv_bytes_per_token > 0 else 0


# SGLang's gpt-oss branch of ServerArgs sets disable_hybrid_swa_memory (0.5.1.post3 server_args.py L2278, 0.5.2
# L2488, 0.5.3.post3 L915, 0.5.4.post3 L982, 0.5.5.post3 L1025, 0.5.6.post2 L1176); 0.5.14's (L3813-3939) and
# 0.5.21's gpt-oss overrides (arg_groups/model_overrides/gpt_oss.py) no longer do.  The releases between were not read
SWA_OFF_FOR_GPT_OSS_UNTIL = (0, 5, 6)
SWA_ON_FOR_GPT_OSS_FROM = (0, 5, 14)
SWA_FULL_TOKENS_RATIO = 0.8  # --swa-full-tokens-ratio's default (0.5.4.post3 server_args.py L272)


def swa_token_bytes(arch: Arch, plan: _Plan, facts: ServingFacts, planned: float, out: list[Finding]) -> float:
    """KV bytes per token SGLang's pool is divided by.  The memory planner's figure is vLLM's (one block group's
    layers for a sliding-window hybrid); SGLang either keeps every layer's KV per token (hybrid SWA memory off), or
    splits the pool into a full-attention and a sliding-window part whose tokens are ``SWA_FULL_TOKENS_RATIO`` of the
    full part's (0.5.4.post3 model_runner.py set_num_token_hybrid L1455-1475: full tokens = every-layer tokens x
    layers / (ratio x sliding layers + full layers)); a request's sliding-window tokens past the window are freed,
    so the full part bounds it."""
    from launchcard.memory import ATTENTION_KINDS, SLIDING

    n_swa = sum(1 for k in arch.layer_kinds if k == SLIDING)
    n_full = sum(1 for k in arch.layer_kinds if k in ATTENTION_KINDS and k != SLIDING)  # full and MLA layers
    if not (n_swa and n_full and facts.kv_bytes_per_token > 0):
        return planned
    every = facts.kv_bytes_per_token
    rel = _release(plan.version)
    gpt_oss = "GptOssForCausalLM" in (arch.architectures or ())
    off = plan.disable_hybrid_swa_memory or (gpt_oss and rel is not None and rel[:3] <= SWA_OFF_FOR_GPT_OSS_UNTIL)
    if off:
        out.append(Finding("info", "sglang-swa-memory", "SGLang keeps every attention layer's KV per token (hybrid SWA "
                                                         "memory off: --disable-hybrid-swa-memory, or its gpt-oss "
                                                         "default through 0.5.6): the pool is divided by all "
                                                         f"{n_swa + n_full} layers' KV bytes"))
        return every
    if gpt_oss and (rel is None or rel[:3] < SWA_ON_FOR_GPT_OSS_FROM):
        out.append(Finding("assumed", "sglang-swa-memory",
                           f"SGLang {plan.version or '(release not stated)'} on gpt-oss: its hybrid SWA memory pool "
                           "taken to be on (0.5.14 no longer turns it off for gpt-oss, 0.5.6 still did; the releases "
                           "between were not read); pass --disable-hybrid-swa-memory for the every-layer pool"))
    layers = n_swa + n_full
    return every * (SWA_FULL_TOKENS_RATIO * n_swa + n_full) / layers


def sglang_running_limit(plan: _Plan, kv_tokens: int, context_len: int, profiled: int | None = None) -> int:
    """Requests one scheduler of ``plan`` runs at once (:func:`sglang_running`)."""
    return sglang_running(plan.max_running_requests, kv_tokens, context_len,
                          plan.replicas if plan.dp_attention else 1, profiled)


def sglang_running(given: int | None, kv_tokens: int, context_len: int, dp_attention_ranks: int = 1,
                   profiled: int | None = None) -> int:
    """Requests one scheduler runs at once: --max-running-requests ``given`` (split over the DP-attention ranks),
    else half the KV pool in tokens; never more than the request pool (TpModelWorker,
    python/sglang/srt/managers/tp_worker.py:292-300; the pool: min(max(pool tokens / context x 512, 2048), 4096),
    model_runner.py:1672-1680, of the ``profiled`` pool: before --max-total-tokens caps it, L1716-1723)."""
    pool = min(max(int((kv_tokens if profiled is None else profiled) / max(1, context_len) * 512), 2048), 4096)
    if given is not None:
        return max(1, min(given // max(1, dp_attention_ranks), pool))
    return max(1, min(kv_tokens // 2, pool))
