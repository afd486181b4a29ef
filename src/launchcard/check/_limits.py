"""vLLM's start-up refusals for one command, from :mod:`launchcard.limits` (vLLM's own wording as evidence)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from launchcard.check._config import ModelConfig
from launchcard.check._types import Finding

if TYPE_CHECKING:
    from launchcard.argv import ParsedCommand
    from launchcard.check._argv import ArgvView
    from launchcard.flags import Finding as FlagFinding
    from launchcard.hardware import Accelerator


def _tp_flag(engine: str) -> str:
    """The tensor-parallel flag by the name the plan's engine takes (SGLang's server args, vLLM's engine args)."""
    return {"sglang": "--tp-size", "trtllm": "--tp_size"}.get(engine, "--tensor-parallel-size")


def _split(engine: str, tp: int, attn_tp: int, dp_flag: str = "--dp-size") -> str:
    """What the heads are split over, in the engine's words: the TP flag, or SGLang's attention TP size under DP
    attention (``launchcard.limits.ATTENTION_TP_RULE``), its ranks named by the flag that states them."""
    if attn_tp == tp:
        return f"{_tp_flag(engine)} {tp}"
    return f"the attention TP size {attn_tp} (--tp-size {tp} / {dp_flag} {tp // attn_tp} with DP attention)"


def heads_finding(cfg: ModelConfig, tp: int, role: str, engine: str = "vllm",
                  attn_tp: int | None = None, dp_flag: str = "--dp-size") -> Finding | None:
    """The error when TP does not divide the attention heads (the engine refuses to start), quoting its check
    (vLLM's, or SGLang's for an SGLang plan: over ``attn_tp``, the attention TP size it splits the heads over,
    :func:`launchcard.limits.attention_tp`); the one wording of this rule for ``check`` on a command and on a plan,
    the plan search and ``predict``."""
    from launchcard.limits import ATTENTION_TP_RULE, SGLANG_HEADS_RULE, TRTLLM_HEADS_RULE, heads_refusal

    split = attn_tp or tp
    quote = heads_refusal(cfg.heads, split)
    if not quote or not cfg.heads:
        return None
    good = [d for d in range(1, min(cfg.heads, 64) + 1) if cfg.heads % d == 0]
    why, rule = {"sglang": ("SGLang's attention layers assert it: the server fails to start",
                            SGLANG_HEADS_RULE + ("; " + ATTENTION_TP_RULE if split != tp else "")),
                 "trtllm": ("TensorRT-LLM's attention layers assert it: the server fails to start",
                            TRTLLM_HEADS_RULE)}.get(engine, ("vLLM refuses to start", quote))
    return Finding(severity="error", code="tp-heads", role=role,
                   message=f"{_split(engine, tp, split, dp_flag)} does not divide the {cfg.heads} attention heads "
                           f"({why})",
                   evidence=f"{cfg.field('num_attention_heads')}; {rule}",
                   fix=f"use a{'n attention' if split != tp else ''} TP that divides {cfg.heads}: "
                       f"{', '.join(map(str, good[-6:]))}")


def tp_findings(cfg: ModelConfig, tp: int, role: str, engine: str = "vllm",
                attn_tp: int | None = None, dp_flag: str = "--dp-size") -> list[Finding]:
    """What the engine says of a tensor-parallel size for the model's heads: the attention heads must divide (config
    check), the KV heads must split or replicate evenly (``QKVParallelLinear``, at load); the one rule for
    ``check`` on a command and on a plan. ``attn_tp``: SGLang's attention TP size (DP attention), which its
    attention layers split both over."""
    from launchcard.limits import ATTENTION_TP_RULE, KV_HEADS_RULE, SGLANG_HEADS_RULE, tp_refusal

    refused = heads_finding(cfg, tp, role, engine, attn_tp, dp_flag)
    if refused is not None:
        return [refused]
    split = attn_tp or tp
    kv = cfg.kv_heads
    if cfg.mla or not kv or split == 1:
        return []
    refused_kv = (kv >= split and kv % split) or (kv < split and split % kv)
    # the TPs the engine accepts, for the fix: only when this one is refused (a plan search asks of every candidate)
    good = [t for t in range(1, min(max(cfg.heads or kv, kv), 64) + 1)
            if tp_refusal(cfg.heads, kv, t) is None] if refused_kv else []
    choices = ", ".join(map(str, good[-6:]))
    who, rule = (("SGLang", SGLANG_HEADS_RULE + ("; " + ATTENTION_TP_RULE if split != tp else ""))
                 if engine == "sglang" else ("vLLM", KV_HEADS_RULE))
    what = _split(engine, tp, split, dp_flag)
    if kv >= split and kv % split:
        return [Finding(severity="error", code="tp-kv-heads", role=role,
                        message=f"{what} does not divide the {kv} KV heads "
                                f"({who} needs KV heads divisible by TP, or TP divisible by KV heads; the model "
                                "fails to load)",
                        evidence=f"{cfg.field('num_key_value_heads')}; {rule}",
                        fix=f"use a TP {who} accepts for {cfg.heads} heads and {kv} KV heads: {choices}")]
    if kv < split and split % kv:
        return [Finding(severity="error", code="tp-kv-heads", role=role,
                        message=f"{what} is not a multiple of the {kv} KV heads, so they "
                                "cannot be replicated evenly (the model fails to load)",
                        evidence=f"{cfg.field('num_key_value_heads')}; {rule}",
                        fix=f"use a TP {who} accepts for {cfg.heads} heads and {kv} KV heads: {choices}")]
    if kv < split:
        return [Finding(severity="info", code="kv-heads-replicated", role=role,
                        message=f"{kv} KV heads on TP {split}: each KV head is replicated on {split // kv} GPUs "
                                "(KV cache per GPU does not shrink beyond TP = KV heads)",
                        evidence=cfg.field("num_key_value_heads"))]
    return []


def split_tp(cfg: ModelConfig, tp: int, dp: int, dp_attention: bool, engine: str, version: str | None = None) -> int:
    """The TP size the engine splits the attention heads over: vLLM's whole TP; SGLang's attention TP size for the
    checkpoint's architecture in SGLang ``version`` (:func:`launchcard.limits.attention_tp`)."""
    if engine != "sglang":
        return tp
    from launchcard.limits import attention_tp

    archs = cfg.raw.get("architectures")
    return attention_tp(tp, dp, dp_attention, str(archs[0]) if isinstance(archs, list) and archs else None, version)


def sglang_split_findings(cfg: ModelConfig, v: ArgvView, role: str, version: str | None = None) -> list[Finding]:
    """How an SGLang command splits the attention: DP-attention ranks that do not divide the TP group (SGLang
    asserts it), else the heads and KV heads over the attention TP size its attention layers split them over
    (``version``: the SGLang release, None: the newest read)."""
    from launchcard.limits import ATTENTION_TP_RULE, dp_attention_split

    uneven = dp_attention_split(v.tp, v.dp, v.dp_attention, v.dp_flag)
    if uneven:
        return [Finding(severity="error", code="dp-attention-split", role=role, message=uneven[0],
                        evidence=ATTENTION_TP_RULE, fix=uneven[1])]
    return tp_findings(cfg, v.tp, role, "sglang", split_tp(cfg, v.tp, v.dp, v.dp_attention, "sglang", version),
                       v.dp_flag)


def pp_layers_findings(cfg: ModelConfig, pp: int, role: str) -> list[Finding]:
    """More pipeline stages than the model has layers (:func:`launchcard.limits.pp_layers_refusal`): an error on a
    command and on a plan, the rule ``memory``, ``predict`` and ``plan`` refuse the same split by (exit 1)."""
    from launchcard.limits import PP_LAYERS_RULE, pp_layers_refusal

    refused = pp_layers_refusal(pp, cfg.layers)
    if refused is None:
        return []
    return [Finding(severity="error", code="pp-exceeds-layers", role=role, message=refused[0],
                    evidence=f"{cfg.field('num_hidden_layers')}; {PP_LAYERS_RULE}", fix=refused[1])]


def sglang_rank_rules(argv: Sequence[str], role: str) -> list[Finding]:
    """SGLang counts of ranks below 1 (:func:`launchcard.limits.rank_refusal`, the rule ``predict`` refuses them by):
    the captured parser takes any int, the server does not start."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError
    from launchcard.limits import DENSE_TP_RULE, RANK_FLAGS, RANKS_RULE, dense_tp_refusal, rank_refusal

    try:
        cmd = parse_command(list(argv), engine="sglang")
    except ArgvError:
        return []
    if cmd.engine != "sglang":  # another program's command: not checked (the flag findings say so)
        return []
    out: list[Finding] = []
    for flag in RANK_FLAGS:
        refused = rank_refusal(flag, cmd.try_int(flag))
        if refused:
            out.append(Finding(severity="error", code="ranks-below-1", role=role, message=f"{flag}: {refused[0]}",
                               evidence=RANKS_RULE, fix=refused[1]))
    dense = dense_tp_refusal(cmd.try_int("--moe-dense-tp-size"))
    if dense:  # predict's rule too (bad input there)
        out.append(Finding(severity="error", code="moe-dense-tp-size", role=role,
                           message=f"--moe-dense-tp-size: {dense[0]}", evidence=DENSE_TP_RULE, fix=dense[1]))
    return out


def sglang_split_rules(cfg: ModelConfig, argv: Sequence[str], role: str, version: str | None = None) -> list[Finding]:
    """The SGLang start-up refusals launchcard knows for one command (:func:`sglang_split_findings`' errors), and
    an EAGLE launch that drafts with a checkpoint without MTP layers (:func:`sglang_draft_rules`)."""
    from launchcard.check._argv import read_argv

    v = read_argv(argv)
    return [f for f in sglang_split_findings(cfg, v, role, version) if f.severity == "error"] + \
        pp_layers_findings(cfg, v.pp, role) + ep_findings(cfg, v, role, "sglang") + \
        sglang_draft_rules(cfg, argv, role)


def sglang_runner_findings(cfg: ModelConfig, argv: Sequence[str], role: str, gpu: Accelerator | None,
                           version: str | None) -> list[Finding]:
    """gpt-oss with --moe-runner-backend triton_kernel at --ep-size > 1, which SGLang ``version`` asserts away at
    start-up (:func:`launchcard.limits.triton_kernel_ep_refusal`; ``gpu``: the accelerator, which decides it through
    0.5.4.post2): an error on a command, a recipe plan's and a card's too; ``predict``, the plan search and the
    web's panel refuse it through :func:`startup_refusal`."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError
    from launchcard.limits import TRITON_KERNEL_EP_RULE, triton_kernel_ep_refusal

    try:
        cmd = parse_command(list(argv), engine="sglang")
    except ArgvError:
        return []
    archs = cfg.raw.get("architectures")
    refused = triton_kernel_ep_refusal(
        str(archs[0]) if isinstance(archs, list) and archs else None, cmd.get_str("--moe-runner-backend"),
        cmd.try_int("--ep-size"), version, mxfp4=_checkpoint_method(cfg) == "mxfp4",
        capability=gpu.compute_capability if gpu is not None and gpu.vendor == "NVIDIA" else None,
        gpu_known=gpu is not None)
    if refused is None:
        return []
    return [Finding(severity="error", code="moe-runner-ep", role=role, message=refused[0],
                    evidence=f"{cfg.field('architectures')}; {TRITON_KERNEL_EP_RULE}", fix=refused[1])]


def sglang_draft_rules(cfg: ModelConfig, argv: Sequence[str], role: str) -> list[Finding]:
    """SGLang EAGLE / NEXTN without --speculative-draft-model-path on a checkpoint without MTP layers
    (:func:`launchcard.limits.draft_self_refusal`, the rule ``predict`` and ``plan`` refuse it by, bad input there)."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError
    from launchcard.limits import DRAFT_SELF_RULE, draft_self_refusal, mtp_layer_count

    try:
        cmd = parse_command(list(argv), engine="sglang")
    except ArgvError:
        return []
    refused = draft_self_refusal(cmd.get_str("--speculative-algorithm"),
                                 cmd.get_str("--speculative-draft-model-path"), mtp_layer_count(dict(cfg.raw)))
    if refused is None:
        return []
    return [Finding(severity="error", code="speculative-draft", role=role,
                    message=f"--speculative-algorithm: {refused[0]}", evidence=DRAFT_SELF_RULE, fix=refused[1])]


def speculative_findings(cfg: ModelConfig, cmd: ParsedCommand, role: str, version: str | None) -> list[Finding]:
    """vLLM ``version``'s (None: :func:`launchcard.flagspec.default_release`, as check reads the flags and memory
    plans) start-up refusals of a ``--speculative-config``: a method it does not know (code ``speculative-method``),
    a drafted method without its "model", MTP on a checkpoint without MTP layers (``speculative-config``;
    :func:`launchcard.memory.speculative_refusal`, :func:`launchcard.memory.spec_mtp_refusal`: the rules ``memory``
    and ``predict`` refuse it by, bad input there, in the same words)."""
    import json

    from launchcard.limits import mtp_layer_count
    from launchcard.memory import parse_version, spec_mtp_refusal, unknown_method_refusal
    from launchcard.memory import speculative_refusal as refusal

    raw = cmd.get_str("--speculative-config")
    try:
        spec = json.loads(raw) if raw else None
    except ValueError:
        return []  # not JSON: the flag checks say so
    if not isinstance(spec, dict):
        return []
    release = parse_version(version)  # none given: the one default release (flagspec.default_release), as memory's
    method = spec.get("method")
    unknown = method is not None and unknown_method_refusal(method, release) is not None
    refused = refusal(spec, release)
    if refused is None:  # the one MTP layer count (Arch.mtp_layers and the SGLang draft rule read it too)
        refused = spec_mtp_refusal(spec, mtp_layer_count(dict(cfg.raw)), cfg.path)
    if refused is None:
        return []
    return [Finding(severity="error", code="speculative-method" if unknown else "speculative-config", role=role,
                    message=f"--speculative-config: {refused[0]}",
                    evidence="vLLM 0.32.0 vllm/config/speculative.py (SpeculativeMethod L38-83, __post_init__ "
                             "L1141-1190, L1326-1389)", fix=refused[1])]


def ep_findings(cfg: ModelConfig, v: ArgvView, role: str, engine: str) -> list[Finding]:
    """How a command splits the routed experts over its expert-parallel group (``v.ep_size``: vLLM's TP x DP under
    --enable-expert-parallel, an SGLang command's --ep-size, :func:`launchcard.limits.sglang_ep_size`, the size
    ``predict`` and the plan check's memory read): vLLM's refusal on a dense model, more ranks than experts, and
    a group that does not divide them (:func:`launchcard.limits.ep_experts_refusal`: SGLang and TensorRT-LLM refuse,
    vLLM gives the first ranks one more)."""
    from launchcard.limits import VLLM_EP_RULE, ep_experts_refusal, experts_per_rank

    ep, experts = v.ep_size, cfg.experts or 0
    if v.expert_parallel and v.moe_ep is None:  # vLLM's --enable-expert-parallel
        dense = ep_dense_finding(cfg, role)
        if dense:
            return [dense]
    if ep <= 1 or experts <= 0:
        return []
    group = "--ep-size" if v.moe_ep is not None else "TP x DP"
    if ep > experts:
        return [Finding(severity="error", code="ep-exceeds-experts", role=role,
                        message=f"expert-parallel size {group} = {ep} exceeds the {experts} experts "
                                "(some ranks would hold none)",
                        evidence=cfg.field("experts"), fix=f"keep {group} <= {experts}")]
    refused = ep_experts_refusal(engine, experts, ep, group, v.tp if v.moe_ep is not None else None)
    if refused:
        return [Finding(severity="error", code="ep-uneven", role=role, message=refused[0],
                        evidence=cfg.field("experts"), fix=refused[1])]
    if experts % ep:
        return [Finding(severity="warning", code="ep-uneven", role=role,
                        message=f"{experts} experts over an expert-parallel size of {ep} (TP x DP): vLLM gives "
                                f"the first {experts % ep} ranks one expert more ({VLLM_EP_RULE}), the fullest "
                                f"rank ({experts_per_rank(experts, ep)} experts) sets the pace",
                        evidence=cfg.field("experts"), fix=f"pick TP x DP dividing {experts}")]
    return []


# the flag check's finding that says the same fact as the ``speculative-method`` finding (the release's captured
# SpeculativeConfig.method literal): dropped where that one is said, so the fact is said once, in the words memory
# and predict give it
SAID_BY_LIMITS = {"speculative-method": ("--speculative-config.method", "bad-config-value")}


def said_by_limits(flag: str, rule: str, codes: Iterable[str] = SAID_BY_LIMITS) -> bool:
    """Whether the flag check's ``rule`` finding on ``flag`` says again the fact of a start-up refusal coded one of
    ``codes`` (:data:`SAID_BY_LIMITS`; all of its codes by default: a surface whose own rule says each of them, as
    ``predict``'s memory planner does).  The one reading of the table :func:`without_repeats`,
    :func:`without_repeated_flags` and ``predict --command`` drop a repeat by."""
    return any(SAID_BY_LIMITS.get(code) == (flag, rule) for code in codes)


def without_repeats(flag_findings: Sequence[FlagFinding], refusals: Sequence[Finding]) -> list[FlagFinding]:
    """``flag_findings`` but those a start-up refusal in ``refusals`` says again (:func:`said_by_limits`)."""
    codes = {r.code for r in refusals}
    return [f for f in flag_findings if not said_by_limits(f.flag, f.rule, codes)]


def without_repeated_flags(findings: Sequence[Finding]) -> list[Finding]:
    """:func:`without_repeats` on a plan's findings, where a flag finding is ``flag-RULE`` with ``FLAG: ...`` as
    its message (``check_plan``), per role."""
    codes: dict[str | None, set[str]] = {}
    for r in findings:
        codes.setdefault(r.role, set()).add(r.code)
    return [f for f in findings if not (f.code.startswith("flag-") and ": " in f.message and said_by_limits(
        f.message.split(": ", 1)[0], f.code.removeprefix("flag-"), codes[f.role]))]


def eplb_findings(cfg: ModelConfig, cmd: ParsedCommand, role: str) -> list[Finding]:
    """vLLM's EPLB refusal of an expert-parallel group (TP x PCP x DP) that does not divide the routed plus
    redundant experts (:func:`launchcard.limits.eplb_uneven_refusal`); without --enable-eplb vLLM starts (its first
    ranks hold one expert more: the ep-uneven warning)."""
    from launchcard.errors import ArgvError
    from launchcard.limits import VLLM_EPLB_RULE, eplb_uneven_refusal

    try:
        if not (cmd.get_bool("--enable-eplb") and cmd.get_bool("--enable-expert-parallel", "-ep")):
            return []
        eplb = cmd.get_json("--eplb-config")
        ep = ((cmd.get_int("--tensor-parallel-size", "-tp") or 1) * (cmd.get_int("--data-parallel-size", "-dp") or 1)
              * (cmd.get_int("--prefill-context-parallel-size", "-pcp") or 1))
    except ArgvError:
        return []  # the flag check reports the unreadable value
    redundant = eplb.get("num_redundant_experts") if isinstance(eplb, dict) else None
    refused = eplb_uneven_refusal(cfg.experts or 0, redundant if isinstance(redundant, int) else 0, ep)
    if refused is None:
        return []
    return [Finding(severity="error", code="eplb-uneven", role=role, message=f"{refused[0]} ({VLLM_EPLB_RULE})",
                    evidence=cfg.field("n_routed_experts/num_local_experts/num_experts"), fix=refused[1])]


def ep_dense_finding(cfg: ModelConfig, role: str) -> Finding | None:
    """The error when a vLLM command enables expert parallelism on a model without routed experts (vLLM refuses to
    start, :func:`launchcard.limits.dense_ep_refusal`); None on a MoE model."""
    from launchcard.limits import dense_ep_refusal

    dense = dense_ep_refusal(cfg.experts or 0, True)
    if dense is None:
        return None
    return Finding(severity="error", code="ep-dense-model", role=role, message=f"{dense[0]} ({dense[2]})",
                   evidence=cfg.field("n_routed_experts/num_local_experts/num_experts"), fix=dense[1])


def limit_rules(cfg: ModelConfig, argv: Sequence[str], role: str, env: Mapping[str, str] | None = None,
                gpu: Accelerator | None = None, version: str | None = None, heads: bool = False) -> list[Finding]:
    """The start-up refusals :mod:`launchcard.limits` knows, for one command (vLLM's wording as evidence; an
    SGLang command: :func:`sglang_split_rules` alone, ``version`` its release).

    ``heads`` adds the attention-heads and KV-heads / TP rules (plans judge them with their topology rules
    instead);
    ``gpu`` (a catalog entry) adds the rules that depend on the accelerator.
    """
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError
    from launchcard.flagspec import human_readable_int_or_auto
    from launchcard.limits import (
        ALLOW_LONG,
        length_refusal,
        max_len,
        quant_capability_refusal,
        quant_dtype_refusal,
    )

    try:
        cmd = parse_command(argv)
    except ArgvError:
        return []
    if cmd.engine == "sglang":  # SGLang's own rules, never vLLM's
        return (sglang_split_rules(cfg, argv, role, version) if heads else []) + \
            quant_override_findings(cfg, cmd, role, gpu, version) + \
            sglang_runner_findings(cfg, argv, role, gpu, version)
    out: list[Finding] = [*speculative_findings(cfg, cmd, role, version)]
    tp = cmd.try_int("--tensor-parallel-size", "-tp") or 1
    if heads:
        out += [f for f in tp_findings(cfg, tp, role) if f.severity == "error"]
        out += pp_layers_findings(cfg, cmd.try_int("--pipeline-parallel-size", "-pp") or 1, role)
        dense = ep_dense_finding(cfg, role) if cmd.get_bool("--enable-expert-parallel", "-ep") else None
        out += [dense] if dense else []
    out += eplb_findings(cfg, cmd, role)
    raw = cmd.get_str("--max-model-len")
    limit = max_len(cfg.raw, version)
    requested: int | None = None
    if raw is not None:
        try:
            requested = human_readable_int_or_auto(raw)
        except ValueError:
            requested = None
    if requested is not None and limit is not None:
        quote = length_refusal(requested, limit, env)
        if quote:
            out.append(Finding(
                severity="error", code="max-model-len-over-model", role=role,
                message=f"--max-model-len {requested:,} is above the {limit.limit:,} tokens vLLM derives from the "
                        f"config ({limit.how()}): vLLM refuses to start",
                evidence=f"{cfg.field(limit.key)}; {quote}",
                fix=f"use --max-model-len {limit.limit} or less (or set {ALLOW_LONG}=1 if the model really "
                    "handles longer inputs)"))
    out += quant_override_findings(cfg, cmd, role, gpu, version)
    # the name vLLM verifies (a ModelOpt checkpoint's quant_algo picks the method: FP8 -> modelopt), not the label
    method = (cmd.get_str("--quantization", "-q") or _checkpoint_method(cfg) or "").lower() or None
    dtype = cmd.get_str("--dtype")
    quote = quant_dtype_refusal(method, dtype)
    if quote:
        out.append(Finding(severity="error", code="quant-dtype", role=role,
                           message=f"--dtype {dtype} with quantization {method}: vLLM refuses to start",
                           evidence=quote, fix="drop --dtype (auto) or use one the method supports"))
    capability = gpu.compute_capability if gpu is not None and gpu.vendor == "NVIDIA" else None
    quote = quant_capability_refusal(method, capability)
    if quote:
        out.append(Finding(severity="error", code="quant-gpu", role=role,
                           message=f"quantization {method} needs a newer GPU (compute capability {capability} "
                                   "here): vLLM refuses to start",
                           evidence=quote, fix="use a GPU the method supports, or a checkpoint in another format"))
    out += _platform_quant(cmd.get_str("--quantization", "-q"), cfg, gpu, role)
    if requested is None or requested < 0:
        requested = limit.derived if limit is not None else None  # vLLM's default length: the derived one
    out += kv_dtype_findings(cmd, role, gpu, config=cfg, env=env)
    out += flag_rules(cmd, role, gpu, max_model_len=requested)
    out += _model_split_rules(cfg, cmd, role, env)
    return out


def startup_refusal(cfg: ModelConfig, argv: Sequence[str], gpu: Accelerator | None = None,
                    version: str | None = None) -> Finding | None:
    """vLLM's first start-up refusal of one ``vllm serve`` command (:func:`limit_rules`, the heads over TP
    included; of an SGLang command, SGLang's heads split), None when it starts: the one answer the plan search
    (``check: CODE``), ``predict`` and the web's prediction panel give."""
    return next((f for f in limit_rules(cfg, argv, "single", None, gpu, version, heads=True)
                 if f.severity == "error"), None)


def startup_warnings(cfg: ModelConfig, argv: Sequence[str], gpu: Accelerator | None = None,
                     version: str | None = None) -> list[Finding]:
    """What the engine does with ``argv`` without refusing it that `launchcard check` warns of and a prediction of
    the same command says too: vLLM serving a checkpoint's own method where --quantization names another (warning
    ``quant-flag-ignored``, :func:`quant_override_findings`)."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError

    try:
        cmd = parse_command(list(argv))
    except ArgvError:
        return []
    return [f for f in quant_override_findings(cfg, cmd, "single", gpu, version) if f.severity == "warning"]


def refuse_unstartable(cfg: ModelConfig, argv: Sequence[str], gpu: Accelerator | None = None,
                       version: str | None = None, *, where: str | None = None) -> None:
    """PredictError (exit 1: the plan failed its check) naming :func:`startup_refusal`'s rule, message, evidence
    and fix: no figure for a command vLLM refuses to start (``predict``, the web's prediction panel)."""
    _refuse(startup_refusal(cfg, argv, gpu, version), where)


def refuse_heads(cfg: ModelConfig, tp: int, engine: str, *, where: str | None = None) -> None:
    """PredictError in :func:`refuse_unstartable`'s words when ``tp`` does not divide the attention heads
    (:func:`heads_finding`): a TensorRT-LLM plan, which has no vLLM or SGLang command to read (it was the memory
    planner's line, naming predict's --tp for a trtllm-serve --tp_size)."""
    _refuse(heads_finding(cfg, tp, "single", engine), where)


def _refuse(refused: Finding | None, where: str | None) -> None:
    if refused is not None:
        from launchcard.errors import PredictError

        raise PredictError(f"[{refused.code}] {refused.message} (evidence: {refused.evidence})", where=where,
                           fix=refused.fix or "change the command as the engine's message says")


def quant_override_findings(cfg: ModelConfig, cmd: ParsedCommand, role: str, gpu: Accelerator | None,
                            version: str | None) -> list[Finding]:
    """``--quantization`` against the checkpoint's method, as the engine's ``_verify_quantization`` judges it
    (``limits._quant_verify``): its start-up refusal (error ``quant-method-mismatch``, the fix naming the methods it
    takes there), or vLLM's silent swap of the flag for the checkpoint's method (warning ``quant-flag-ignored``)."""
    from launchcard.limits import quant_platform_of, sglang_quant_override, text_config, vllm_quant_override

    requested = cmd.get_str("--quantization", "-q")
    if not requested:
        return []
    raw = text_config(cfg.raw, "quantization_config").get("quantization_config")
    platform = quant_platform_of(gpu.vendor, gpu.kind) if gpu is not None else None
    if cmd.engine == "sglang":
        got = sglang_quant_override(raw, requested, platform)
    else:
        model_type = cfg.raw.get("model_type")
        got = vllm_quant_override(_checkpoint_method(cfg), requested, model_type if isinstance(model_type, str)
                                  else None, version, platform)
    if got is None:
        return []
    where = cfg.field("quantization_config.quant_method")
    if got.refused:
        return [Finding(severity="error", code="quant-method-mismatch", role=role,
                        message=f"--quantization {got.requested} on a checkpoint quantized with {got.checkpoint}: "
                                f"{got.engine} refuses to start (the method differs from the checkpoint's)",
                        evidence=f"{where}; {got.evidence}", fix=got.fix())]
    return [Finding(severity="warning", code="quant-flag-ignored", role=role,
                    message=f"--quantization {got.requested} on a checkpoint quantized with {got.checkpoint}: "
                            f"{got.engine} serves it as {got.replaced_by}, the flag has no effect",
                    evidence=f"{where}; {got.evidence}",
                    fix=f"drop --quantization (the engine reads {got.checkpoint} from the checkpoint)")]


def _checkpoint_method(cfg: ModelConfig) -> str | None:
    """The quantization method vLLM reads from the checkpoint's ``quantization_config`` (None: unquantized)."""
    from launchcard.limits import checkpoint_quant_method, text_config

    return checkpoint_quant_method(text_config(cfg.raw, "quantization_config").get("quantization_config"))


def _platform_quant(flag: str | None, cfg: ModelConfig, gpu: Accelerator | None, role: str) -> list[Finding]:
    """The method (``--quantization``, else the checkpoint's) against the GPU's vLLM platform list."""
    from launchcard.limits import platform_quant_verdict, quant_platform_of

    method = flag or _checkpoint_method(cfg)
    if gpu is None or not method:
        return []
    verdict = platform_quant_verdict(method, quant_platform_of(gpu.vendor, gpu.kind), checkpoint=flag is None,
                                     device=gpu.id)
    ev = "the command's --quantization" if flag else cfg.field("quantization_config.quant_method")
    if verdict.refused is not None:
        r = verdict.refused
        return [Finding(severity="error", code="quant-platform", role=role, message=f"{r.message}: vLLM refuses "
                        "to start", evidence=f"{ev}; {r.evidence}", fix=r.fix)]
    if verdict.undecided:
        return [Finding(severity="info", code="quant-platform-undecided", role=role,
                        message=f"quantization {method} on {gpu.id}: cannot decide whether vLLM's platform takes it",
                        evidence=f"{ev}; {verdict.undecided}")]
    return []


def _model_split_rules(cfg: ModelConfig, cmd: ParsedCommand, role: str,
                       env: Mapping[str, str] | None) -> list[Finding]:
    """Pipeline parallel against the model class, decode context parallel against the KV heads."""
    from launchcard.limits import attention_kind, dcp_model_refusal, pp_refusal

    pp = cmd.try_int("--pipeline-parallel-size", "-pp") or 1
    archs = cfg.raw.get("architectures")
    refusals = []
    if isinstance(archs, list) and not cmd.has("--model-impl", "--runner", "--convert"):
        refusals.append(pp_refusal([str(a) for a in archs], pp))
    refusals.append(dcp_model_refusal(cfg.heads, cfg.kv_heads, attention_kind(cfg.raw, env)[0],
                                      cmd.try_int("--tensor-parallel-size", "-tp") or 1,
                                      cmd.try_int("--decode-context-parallel-size", "-dcp") or 1))
    return [Finding(severity="error", code=r.code, role=role, message=f"{r.message}: vLLM refuses to start",
                    evidence=f"{cfg.field('architectures' if r.rule == 'pp_unsupported' else 'num_key_value_heads')}"
                             f"; {r.evidence}", fix=r.fix)
            for r in refusals if r is not None]


def _device(gpu: Accelerator | None) -> tuple[str | None, str | None, str]:
    """(vLLM platform, NVIDIA compute capability, name) of a catalog entry."""
    from launchcard.limits import platform_of

    if gpu is None:
        return None, None, "the target"
    platform = platform_of(gpu.vendor, gpu.kind)
    return platform, (gpu.compute_capability or None) if platform == "cuda" else None, gpu.id


def kv_dtype_findings(cmd: ParsedCommand, role: str, gpu: Accelerator | None, *, config: ModelConfig | None,
                      env: Mapping[str, str] | None = None) -> list[Finding]:
    """``--kv-cache-dtype`` that no attention backend vLLM tries on the GPU takes (error), or why that cannot be
    decided offline (info).  Needs the GPU (platform, compute capability) and the config (MLA or not)."""
    from launchcard.limits import attention_kind, kv_dtype_verdict, kv_dtypes_accepted, own_backends

    kv = cmd.get_str("--kv-cache-dtype")
    if not kv or kv == "auto" or gpu is None:
        return []
    if config is None:
        return [Finding(severity="info", code="kv-cache-dtype-not-judged", role=role,
                        message=f"--kv-cache-dtype {kv} not judged against vLLM's attention backends: no config.json "
                                "(MLA models take other KV dtypes)", evidence="no config.json at hand",
                        fix="pass --config config.json")]
    platform, capability, name = _device(gpu)
    mla, sparse = attention_kind(config.raw, env)
    own = own_backends(config.raw)
    if own:
        return [Finding(severity="info", code="kv-cache-dtype-not-judged", role=role,
                        message=f"--kv-cache-dtype {kv} not judged: {own}", evidence=config.field("compress_ratios"))]
    if cmd.has("--attention-backend"):
        return [Finding(severity="info", code="kv-cache-dtype-not-judged", role=role,
                        message=f"--kv-cache-dtype {kv} not judged: --attention-backend picks the backend "
                                "(launchcard judges vLLM's own choice)", evidence="the command's --attention-backend")]
    verdict = kv_dtype_verdict(kv, platform=platform, capability=capability, mla=mla, sparse=sparse, device=name)
    what = (f"{name} ({platform}{f', compute capability {capability}' if capability else ''})" if platform
            else f"{name} (no vLLM platform captured for it)")
    kind = "sparse MLA" if sparse else "MLA" if mla else "standard-attention"
    if verdict.refused:
        takes = kv_dtypes_accepted(platform=platform, capability=capability, mla=mla, sparse=sparse)
        return [Finding(severity="error", code="kv-cache-dtype-refused", role=role,
                        message=f"--kv-cache-dtype {kv}: no attention backend vLLM tries on {what} takes it for this "
                                f"{kind} model: vLLM refuses to start",
                        evidence=f"{config.field('model_type')}; {verdict.refused}",
                        fix="drop --kv-cache-dtype (auto)" + (f" or use one of {', '.join(takes)}" if takes else ""))]
    if verdict.undecided:
        return [Finding(severity="info", code="kv-cache-dtype-undecided", role=role,
                        message=f"--kv-cache-dtype {kv} on {what}: cannot decide whether vLLM starts",
                        evidence=verdict.undecided)]
    return []


def flag_rules(cmd: ParsedCommand, role: str, gpu: Accelerator | None = None,
               max_model_len: int | None = None) -> list[Finding]:
    """vLLM's scheduler, parallel and dtype refusals that the flags (and the GPU) decide, no config needed.
    ``max_model_len``: the length vLLM runs with (the flag's, else the one it derives), None when unknown."""
    from launchcard.errors import ArgvError
    from launchcard.limits import Parallel, Scheduling, bfloat16_refusal, parallel_refusals, scheduler_refusals

    try:
        sched = Scheduling(max_model_len=max_model_len,
                           max_num_batched_tokens=cmd.get_int("--max-num-batched-tokens"),
                           max_num_seqs=cmd.get_int("--max-num-seqs"),
                           chunked_prefill=cmd.get_bool("--enable-chunked-prefill"),
                           long_prefill_token_threshold=cmd.get_int("--long-prefill-token-threshold"))
        eplb = cmd.get_json("--eplb-config")
        par = Parallel(tp=cmd.get_int("--tensor-parallel-size", "-tp") or 1,
                       dp=cmd.get_int("--data-parallel-size", "-dp") or 1,
                       dp_local=cmd.get_int("--data-parallel-size-local", "-dpl"),
                       pcp=cmd.get_int("--prefill-context-parallel-size", "-pcp") or 1,
                       dcp=cmd.get_int("--decode-context-parallel-size", "-dcp") or 1,
                       expert_parallel=bool(cmd.get_bool("--enable-expert-parallel", "-ep")),
                       eplb=bool(cmd.get_bool("--enable-eplb")),
                       redundant_experts=eplb.get("num_redundant_experts") if isinstance(eplb, dict) else None)
    except ArgvError:
        return []  # the flag check reports the unreadable value
    platform, capability, name = _device(gpu)
    out = [Finding(severity="error", code=r.code, role=role, message=f"{r.message}: vLLM refuses to start",
                   evidence=r.evidence, fix=r.fix)
           for r in scheduler_refusals(sched) + parallel_refusals(par, platform)]
    bf16 = bfloat16_refusal(cmd.get_str("--dtype"), capability, gpu.name if gpu is not None else "NVIDIA")
    if bf16:
        out.append(Finding(severity="error", code="bfloat16-gpu", role=role,
                           message=f"--dtype {cmd.get_str('--dtype')} on {name} (compute capability {capability}): "
                                   "vLLM refuses to start", evidence=bf16, fix="use --dtype float16"))
    return out
