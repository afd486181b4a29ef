"""SGLang's parallel layout of a MoE / DP-attention plan: which parts of its DeepSeek model file split over the whole
--tp-size under DP attention (:func:`deepseek_dense`), what the ranks gather (:func:`dp_gather_parts`), the experts a
rank's fused MoE kernel holds (:func:`moe_shape`) and SGLang's refusal of an --ep-size (:func:`ep_refusal`).  Read
from ``predict._sglang``'s plan; each rule cited where it is applied."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from launchcard.limits import sglang_release
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.argv import ParsedCommand
    from launchcard.memory import Arch, Settings
    from launchcard.predict._facts import ServingFacts


class _Plan(Protocol):
    """What these rules read of ``predict._sglang.SglangPlan`` (a protocol: that module imports this one)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def replicas(self) -> int: ...
    @property
    def dp_attention(self) -> bool: ...
    @property
    def moe_a2a(self) -> bool: ...
    @property
    def moe_ep(self) -> int: ...


# architectures of SGLang's DeepSeek model file, which under DP attention keeps only the attention per DP rank
# (its TP size tp / dp): the embedding whole on every rank (VocabParallelEmbedding enable_tp = not DP attention,
# 0.5.6.post2 models/deepseek_v2.py L2984-2988), the LM head over the whole TP group unless --enable-dp-lm-head
# (L3237-3243), the dense MLPs of the first layers over the whole TP group unless --moe-dense-tp-size 1
# (L2754-2767: DeepseekV2MLP with tp_size None, i.e. the TP world size, layers/linear.py L313-316) and the shared
# experts alike (L688-705; fused into the routed experts' TP MoE when the fusion is on, L3271-3312); EntryClass
# L3997, deepseek_nextn.py L250.  Other model files were not read for this: they keep the replicated plan
DENSE_OVER_TP = frozenset({"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                           "DeepseekV3ForCausalLMNextN"})
DENSE_OVER_TP_NOTE = ("DP attention on SGLang's DeepSeek model file: attention weights whole per rank (its TP size "
                      "{attn_tp}), the embedding whole on every rank, the LM head, dense MLPs and shared experts split "
                      "over the whole --tp-size {tp}, routed experts over the group (SGLang 0.5.6.post2 "
                      "models/deepseek_v2.py L2984-2988, L3237-3243, L2754-2767, L688-705){local}")
# the all-to-all MoE backends under which the DeepSeek file keeps the shared experts whole on every rank
# (DeepseekV2MLP tp_size=1, by the first release read with the list: 0.5.6.post2 deepseek_v2.py L700-703 deepep,
# mooncake; 0.5.7 L716-720 adds ascend_fuseep; 0.5.9 L474-480 mori and flashinfer)
SHARED_WHOLE_A2A = {(0, 5, 6, 2): frozenset({"deepep", "mooncake"}),
                    (0, 5, 7, 0): frozenset({"deepep", "mooncake", "ascend_fuseep"}),
                    (0, 5, 9, 0): frozenset({"deepep", "mooncake", "mori", "ascend_fuseep", "flashinfer"})}


def deepseek_dense(cmd: ParsedCommand, version: str | None, tp: int, attn_tp: int, a2a: str | None,
                   found: list[Finding]) -> tuple[str, ...]:
    """The parts of SGLang's DeepSeek file that do not split over the whole --tp-size under DP attention
    (``memory.Settings.dense_local``): the dense MLPs whole with --moe-dense-tp-size 1 (enable_moe_dense_fully_dp,
    0.5.6.post2 deepseek_v2.py L2755-2758, 0.5.9 L2302-2305), the shared experts whole under an all-to-all backend
    (:data:`SHARED_WHOLE_A2A`), the LM head over the attention's group with --enable-dp-lm-head (L3242, 0.5.9 L2823)
    and, from 0.5.9, the embedding too (VocabParallelEmbedding use_attn_tp_group, 0.5.9 L2531-2535; 0.5.7 keeps it
    whole, L3039-3043)."""
    rel = sglang_release(version) or (0, 5, 6, 2)
    local: list[str] = []
    if cmd.get_int("--moe-dense-tp-size") == 1:
        local.append("mlp")
    listed = max(k for k in SHARED_WHOLE_A2A if k <= max(rel, (0, 5, 6, 2)))  # the release's list (earlier: 0.5.6's)
    if a2a and a2a.lower() in SHARED_WHOLE_A2A[listed]:
        local.append("shared_experts")
    elif (cmd.get_str("--moe-runner-backend") or "").lower() == "flashinfer_cutlass":
        found.append(Finding("assumed", "sglang-dp-attention", "--moe-runner-backend flashinfer_cutlass: on a "
                                                               "ModelOpt FP4 checkpoint with --ep-size equal to the DP "
                                                               "size SGLang keeps the shared experts whole on every "
                                                               "rank (0.5.6.post2 deepseek_v2.py L703, "
                                                               "layers/moe/utils.py L254-264), "
                                                               f"planned split over {tp}"))
    if cmd.get_bool("--enable-dp-lm-head", default=False):
        local.append("lm_head")
    if rel >= (0, 5, 9, 0):
        local.append("embed")
    elif rel >= (0, 5, 8, 0) and attn_tp > 1:
        found.append(Finding("assumed", "sglang-dp-attention", f"SGLang {version}'s embedding under DP attention is "
                                                               "not read (0.5.7 whole on every rank, 0.5.9 over the "
                                                               f"attention's {attn_tp} GPUs): planned whole"))
    return tuple(local)


def ep_refusal(plan: _Plan, arch: Arch) -> tuple[str, str] | None:
    """SGLang's refusal of an --ep-size (or the TP group a --moe-a2a-backend makes it) that does not divide the
    routed experts (launchcard.limits.SGLANG_EP_RULE); None where it starts."""
    from launchcard.limits import ep_experts_refusal

    if not arch.is_moe:
        return None
    s = plan.settings
    whole = s.tp * s.dp if plan.dp_attention else s.tp  # --tp-size
    return ep_experts_refusal("sglang", arch.num_experts, plan.moe_ep, "--ep-size", whole)


def moe_shape(plan: _Plan, arch: Arch) -> dict[str, int]:
    """ServingFacts' ``moe_e`` / ``moe_n``: the experts and the intermediate size a rank's fused MoE kernel holds
    (which name its tuned config, launchcard.predict._fused_moe).  SGLang splits the experts over --ep-size and each
    expert over the rest of --tp-size (0.5.6.post2 distributed/parallel_state.py L1636-1637, layers/moe/
    fused_moe_triton/layer.py L178-190), also under DP attention, whose memory plan splits them over the group
    (same bytes per GPU).  Empty for a dense model."""
    if not arch.is_moe:
        return {}
    s = plan.settings
    whole = s.tp * s.dp if plan.dp_attention else s.tp  # --tp-size
    ep = plan.moe_ep  # at most --tp-size (limits.sglang_ep_size)
    return {"moe_e": arch.num_experts // ep, "moe_n": arch.moe_intermediate_size // (whole // ep)}


def dp_gather_parts(plan: _Plan, facts: ServingFacts, vocab: int) -> dict[str, Any]:
    """ServingFacts' ``dp_gather_*`` of a DP-attention plan on SGLang's DeepSeek model file (``Settings.dense_tp``
    set): which parts run over the whole TP group on every rank's tokens (0.5.6.post2 layers/communicator.py
    L258-275 _compute_mlp_mode, 0.5.5.post1 / 0.5.7 the same): a MoE layer's MLP is FULL (gathered) unless a
    --moe-a2a-backend dispatches its tokens, a dense layer's unless --moe-dense-tp-size 1 keeps it whole
    (``dense_local`` "mlp"); the LM head gathers the sampled rows unless --enable-dp-lm-head (logits_processor.py
    L244-257, ``dense_local`` "lm_head").  Empty where the ranks do not gather (one DP rank: attention DP size 1
    takes the plain all-reduce, communicator.py L666-673, L767-782)."""
    s = plan.settings
    if not plan.dp_attention or plan.replicas < 2 or not s.dense_tp:
        return {}
    moe = facts.moe_layers // max(1, facts.pp)
    dense = max(0, facts.layers - moe)
    moe_full = bool(moe) and not plan.moe_a2a
    layers = (moe if moe_full else 0) + (0 if "mlp" in s.dense_local else dense)
    return {"dp_gather_layers": layers, "dp_gather_moe": moe_full,
            "dp_gather_vocab": 0 if "lm_head" in s.dense_local else vocab}
