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
                     runner: str | None) -> tuple[tuple[int, int] | None, Finding]:
    """((intermediate, hidden) multiples SGLang ``release`` allocates a rank's MXFP4 experts at, None: vLLM's
    padding planned, the finding that says so) on a GPU of compute ``capability`` ("9.0") with --moe-runner-backend
    ``runner`` (None or "auto": SGLang's pick)."""
    from launchcard.limits import compute_capability

    cc = compute_capability(capability)
    major = cc[0] if cc else 0
    old = release is None or release <= _OLD_RULE_UNTIL
    pick = runner if runner not in (None, "auto") else (
        "flashinfer_mxfp4" if major == 10 else "marlin" if major == 12 and not old else "triton_kernel")
    if major == 10 and pick == "flashinfer_mxfp4":
        return SGLANG_FLASHINFER_MXFP4_PAD, Finding(
            "info", "sglang-mxfp4", "SGLang's FlashInfer MXFP4 MoE runner allocates the experts with the per-rank "
            "intermediate and the hidden size rounded up to 256 (layers/quantization/mxfp4.py create_weights, "
            "0.5.6.post2 L298-316)")
    if pick == "marlin" and not old:
        return None, Finding("info", "sglang-mxfp4", "SGLang's Marlin MXFP4 MoE runner pads the experts as vLLM's "
                                                     "does: intermediate to 128, hidden to 256 (0.5.14 "
                                                     "layers/quantization/mxfp4.py L382-391)")
    return None, Finding(
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
_FORCED_FLASHINFER_UNTIL = (0, 5, 4, 99)  # SM100's FlashInfer pick overrides a named runner through 0.5.4.post2
_PIECEWISE_AUTO = ((0, 5, 6, 0), (0, 5, 8, 99))  # releases whose piecewise clause keeps "auto" (read: 0.5.6-0.5.8)
_QUANT_CLAUSE_FROM = (0, 5, 9, 0)  # triton_kernel only with --quantization unset


def sglang_mxfp4_runner(release: tuple[int, int, int, int] | None, capability: str | None, runner: str | None, *,
                        ep: int, piecewise: bool, quantization: str | None) -> tuple[str, str]:
    """(the MoE runner SGLang ``release`` (None: the newest rules read, 0.5.9's) runs gpt-oss's MXFP4 experts with on
    a GPU of compute ``capability``, why) at --moe-runner-backend ``runner`` (None or "auto": SGLang's pick),
    --ep-size ``ep``, --enable-piecewise-cuda-graph ``piecewise`` and --quantization ``quantization``.  "auto" (the
    runner left as it is) and any named runner outside :data:`SGLANG_MXFP4_RUNNERS` upcast the experts to BF16."""
    from launchcard.limits import compute_capability

    cc = compute_capability(capability)
    major = cc[0] if cc else 0
    rel = release or _QUANT_CLAUSE_FROM
    blackwell = major == 10 or (major == 12 and rel > (0, 5, 3, 99))
    named = runner not in (None, "auto")
    if blackwell and rel <= _FORCED_FLASHINFER_UNTIL:
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
                        why: str) -> tuple[tuple[int, int], Finding]:
    """The (intermediate, hidden) multiples SGLang allocates the experts it upcasts to BF16 at, and the finding that
    says so (``runner``, ``why``: :func:`sglang_mxfp4_runner`'s answer outside :data:`SGLANG_MXFP4_RUNNERS`)."""
    from launchcard.limits import compute_capability

    cc = compute_capability(capability)
    old = release is None or release <= _OLD_RULE_UNTIL
    inter = 64 if cc and cc[0] == 10 else _TRITON_PAD[old]
    return (inter, 1), Finding(
        "info", "sglang-mxfp4",
        f"SGLang runs gpt-oss's MoE with the runner \"{runner}\" ({why}), not an MXFP4 one, so it converts the "
        "MXFP4 experts to BF16 weights at load (Mxfp4MoEMethod.process_weights_after_loading upcast_from_mxfp: "
        "0.5.4.post2 layers/quantization/mxfp4.py L569-583, 0.5.6.post2 L578-592, 0.5.9 L704-724): planned at 2 "
        f"bytes a parameter, the intermediate size per rank rounded up to {inter} (create_weights), about 4x the "
        "MXFP4 bytes, and read so by every step")


def sglang_mxfp4_settings(arch: Arch, s: Settings, release: tuple[int, int, int, int] | None,
                          capability: str | None, runner: str | None, *, ep: int,
                          piecewise: bool) -> tuple[Settings, Finding | None]:
    """``s`` with the MXFP4 experts as SGLang ``release`` allocates them (``Settings.mxfp4_pad``) and holds them
    (``Settings.mxfp4_upcast``: BF16 where no MXFP4 runner runs them, :func:`sglang_mxfp4_runner`), and the finding
    that says which; ``s`` itself and None where the plan has no MXFP4 experts.  The one rule predict's SGLang plan
    and check's SGLang memory plan apply."""
    from dataclasses import replace

    from launchcard.memory import mxfp4_experts

    if not mxfp4_experts(arch, s):
        return s, None
    got, why = sglang_mxfp4_runner(release, capability, runner, ep=ep, piecewise=piecewise,
                                   quantization=s.quantization)
    if got in SGLANG_MXFP4_RUNNERS:
        pad, said = sglang_mxfp4_pad(release, capability, runner)
        return replace(s, mxfp4_pad=pad), said
    pad, said = sglang_mxfp4_upcast(release, capability, got, why)
    return replace(s, mxfp4_pad=pad, mxfp4_upcast=why), said
