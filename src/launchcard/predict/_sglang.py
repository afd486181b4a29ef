"""An SGLang server command read as the plan the step model predicts.

``sglang.launch_server`` fills most batching and memory limits itself, from the GPU's memory and
the parallel sizes; a prediction of an SGLang command must use *those* values, not vLLM's. The
rules are SGLang 0.5.6.post2's (the release the cookbook's benchmark pages name), each cited
where it is applied (``python/sglang/srt/...`` in the ``sglang`` wheel on PyPI); a command run
with another release is predicted under them and says so.

    plan = sglang_plan(argv, gpu_memory_gib=139.8)
    facts = sglang_serving_facts("config.json", plan, gpu="h200")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.errors import InputError, PredictError, SplitError
from launchcard.limits import (
    ATTENTION_TP_RULE,
    DENSE_TP_RULE,
    DRAFT_SELF_RULE,
    RANK_FLAGS,
    dense_tp_refusal,
    dp_attention_release,
    dp_attention_serves,
    dp_attention_split,
    draft_self_refusal,
    rank_refusal,
    sglang_ep_size,
)
from launchcard.limits import sglang_release as _release
from launchcard.predict._dsa import REQUANT_ENV
from launchcard.predict._dsa import dsa_layers as _mla_layers  # every MLA layer of a PP stage
from launchcard.predict._prefix import prefix_off, sglang_run_page
from launchcard.predict._sglang_layout import (
    DENSE_OVER_TP,
    DENSE_OVER_TP_NOTE,
    deepseek_dense,
    dp_gather_parts,
    ep_refusal,
    moe_shape,
)
from launchcard.predict._sglang_mla import absorb_copies_gib, extend_rule, kvb_flops, kvb_twice
from launchcard.predict._sglang_nsa import nsa_backends, nsa_cell_bytes, nsa_jit, nsa_kv_dtype, nsa_model, nsa_requant
from launchcard.predict._sglang_pool import (
    mem_fraction,
    no_kv_fix,
    sglang_kv_tokens,
    sglang_running_limit,
    swa_token_bytes,
)
from launchcard.predict._sglang_rules import (
    _SA,
    DEFAULT_BUDGET,
    RULES_RELEASE,
    SglangBudget,
    _memory_row,
    admission_note,
    overlap_schedule,
    receive_note,
    recv_lag,
    sglang_budget,
)
from launchcard.predict._types import Finding, config_name

if TYPE_CHECKING:
    from launchcard.argv import ParsedCommand
    from launchcard.memory import EngineWords, Settings
    from launchcard.predict._facts import ServingFacts
    from launchcard.predict._figures import HardwareFigures

MAX_PREFILL_TOKENS = 16384  # ServerArgs.max_prefill_tokens (server_args.py:291)
# --kv-cache-dtype choices of SGLang -> the memory planner's names
_KV = {"auto": "auto", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2", "bf16": "bfloat16", "bfloat16": "bfloat16",
       "fp16": "float16", "float16": "float16", "fp4_e2m1": "nvfp4"}


@dataclass(frozen=True, slots=True)
class SglangPlan:
    """What one ``sglang.launch_server`` command serves with, its defaults filled as SGLang fills them."""

    settings: Settings  # what the memory planner plans: TP/PP/DP/EP, KV dtype, quantization, spec decoding
    replicas: int  # schedulers: --dp-size (with or without DP attention)
    dp_attention: bool
    chunked_prefill_size: int  # <= 0: chunking off (a prompt is prefilled whole)
    max_prefill_tokens: int
    cuda_graph_max_bs: int  # 0: CUDA graphs off
    mem_fraction_static: float  # (weights + KV pool) / GPU memory
    max_running_requests: int | None  # None: SGLang derives it from the KV pool
    mixed_chunk: bool  # --enable-mixed-chunk: prefill chunks ride in decode batches
    spec_topk: int = 1
    spec_draft_tokens: int = 0
    findings: tuple[Finding, ...] = ()
    recv_interval: int = 1  # --scheduler-recv-interval (ServerArgs default 1, server_args.py:555)
    overlap: bool = True  # the overlap event loop (_sglang_rules.overlap_schedule)
    version: str | None = None  # the SGLang release the command runs on, as stated (None: not stated)
    # DeepSeek Sparse Attention kernels the command names: (--nsa-prefill-backend, --nsa-decode-backend), --dsa-*
    # from 0.5.15; None: SGLang's default for the GPU and cache
    dsa_backends: tuple[str | None, str | None] = (None, None)
    disable_hybrid_swa_memory: bool = False  # --disable-hybrid-swa-memory (a sliding-window hybrid's KV pool)
    # the command's environment: SGLANG_NSA_FLASHMLA_BACKEND_DECODE_COMPUTE_FP8 (default true; _dsa.REQUANT_ENV)
    nsa_fp8_compute: bool = True
    max_total_tokens: int | None = None  # --max-total-tokens: the KV pool's cap (None: the memory's whole pool)
    # the admission estimate (--schedule-conservativeness, DP attention, SGLANG_* environment; _sglang_rules)
    budget: SglangBudget = DEFAULT_BUDGET
    moe_a2a: bool = False  # --moe-a2a-backend other than none: the MoE layers dispatch and combine (no DP gather)
    # --prefill-attention-backend or --attention-backend: the backend an extend batch runs (None: SGLang's pick)
    attention_backend: str | None = None
    page_size: int | None = None  # --page-size (None: 1, or the page the attention backend forces; _prefix)
    disable_chunked_prefix_cache: bool = False  # --disable-chunked-prefix-cache (the DeepSeek extend form, _sglang_mla)
    disable_radix_cache: bool = False  # --disable-radix-cache: no prefix is reused (_prefix)
    # --ep-size (--tp-size under a --moe-a2a-backend): SGLang's MoE layers split the experts over it and each expert's
    # intermediate size over --tp-size / it (moe_shape), whatever the memory plan's split
    moe_ep: int = 1
    moe_runner_backend: str | None = None  # --moe-runner-backend (None: not given, SGLang's pick)
    piecewise_cuda_graph: bool = False  # --enable-piecewise-cuda-graph (its MoE runner rule: memory._sglang_mxfp4)

    @property
    def prefill_budget(self) -> int:
        """Prompt tokens one prefill batch takes: the chunk, and never more than max_prefill_tokens."""
        chunk = self.chunked_prefill_size if self.chunked_prefill_size > 0 else self.max_prefill_tokens
        return max(1, min(chunk, self.max_prefill_tokens))


# auto_choose_speculative_params (server_args.py:4649-4681): (steps, top-k, draft tokens) when --speculative-num-steps
# is not given, by the checkpoint's architecture
_AUTO_SPEC_314 = frozenset({"DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV2ForCausalLM",
                            "GptOssForCausalLM", "Glm4MoeForCausalLM", "BailingMoeForCausalLM",
                            "BailingMoeV2ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})


def _auto_spec(algo: str, architecture: str | None) -> tuple[int, int, int] | None:
    if algo == "STANDALONE" or architecture in _AUTO_SPEC_314:
        return 3, 1, 4
    return (5, 4, 8) if architecture else None


def _spec(cmd: ParsedCommand, found: list[Finding],
          architecture: str | None) -> tuple[str | None, int, int, int, str | None]:
    """(memory-planner method, draft tokens a step proposes, top-k, draft tokens verified, SGLang algorithm)."""
    algo = cmd.get_str("--speculative-algorithm")
    if not algo:
        return None, 0, 1, 0, None
    a = algo.upper()
    steps = cmd.get_int("--speculative-num-steps")
    topk = cmd.get_int("--speculative-eagle-topk") or 1
    draft = cmd.get_int("--speculative-num-draft-tokens")
    draft_model = cmd.get_str("--speculative-draft-model-path")
    if a == "NGRAM":
        k = draft or 0
        if not k:
            found.append(Finding("assumed", "sglang-spec", "NGRAM without --speculative-num-draft-tokens: "
                                                           "1 draft token timed (SGLang's own default not applied)"))
        return "ngram", max(1, k - 1 if k > 1 else 1), 1, k, a
    if steps is None:
        auto = _auto_spec(a, architecture)
        if auto is None:
            found.append(Finding("assumed", "sglang-spec", f"--speculative-algorithm {algo} without "
                                                           "--speculative-num-steps and the architecture unknown: 3 "
                                                           "draft steps timed"))
            steps = 3
        else:
            steps, topk, draft = auto
            found.append(Finding("assumed", "sglang-default",
                                 f"--speculative-algorithm {algo} without --speculative-num-steps: SGLang picks "
                                 f"steps {steps}, top-k {topk}, {draft} draft tokens for {architecture or a} "
                                 f"({_SA}:4649-4681)"))
    if topk > 1:
        found.append(Finding("assumed", "sglang-spec",
                             f"tree drafting (top-k {topk}, {draft} draft tokens verified) timed as a chain of "
                             f"{steps} tokens: the acceptance given is read per chain position"))
    if a in ("EAGLE", "NEXTN") and not draft_model:
        method = "mtp"  # the checkpoint's own MTP layers (NEXTN is folded into EAGLE)
    elif a == "EAGLE3":
        method = "eagle3"
    elif a == "EAGLE":
        method = "eagle"
    else:
        method = draft_model or algo.lower()
    return method, steps, topk, draft or steps + 1, a


# --max-running-requests left out with speculative decoding: SGLang resets it to 48 (0.5.6.post2
# server_args.py:1739-1743 for EAGLE/EAGLE3/STANDALONE, 1834-1838 for NGRAM; still in 0.5.12.post1,
# server_args.py:3742-3743 and 3852-3853; no such default in 0.5.15's server_args.py)
SPEC_RUNNING_CAP = 48
_CAP_LAST, _CAP_GONE = (0, 5, 12, 1), (0, 5, 15, 0)


# model-specific server defaults SGLang applies before its speculative rules (architecture -> (running requests
# when --max-running-requests is not given, KV dtype when --kv-cache-dtype is auto, where)); an architecture only
# releases with its hook can serve, so the hook applies whatever release is named
_ARCH_DEFAULTS = {
    "DeepseekV4ForCausalLM": (256, "fp8_e4m3", "apply_deepseek_v4_defaults, python/sglang/srt/arg_groups/"
                                               "deepseek_v4_hook.py:10-30 in SGLang 0.5.12.post1; same in 0.5.15"),
}


# What SGLang does per image request that no launchcard term times (read in the 0.5.6 wheel; an image's patches are
# not a predict input, and no catalog figure gives the host's hashing, pickling or loopback rates).
VISION_NOTE = (
    "the model has a vision tower: prompts are timed as text tokens; an image's preprocessing in the API server, its "
    "transfer to the scheduler and the vision encoder are not in the prediction. SGLang preprocesses a request's "
    "images inside the API server's event loop, one request at a time (0.5.6 multimodal/processors/qwen_vl.py "
    "L260-298, base_processor.py L234-281: the fast image processor on the GPU, its features then copied to the CPU), "
    "and at TP > 1 its scheduler broadcasts every request it receives, features included, to each rank over the CPU "
    "group before its next step (managers/scheduler.py L1153-1159; SGLANG_USE_CUDA_IPC_TRANSPORT=1 passes the "
    "features by CUDA IPC handles, base_processor.py L228-232, L278-281); then every rank hashes the request's "
    "image features (SHA-256 over their bytes: the pad value that keys the prefix and encoder caches) on its own "
    "scheduler thread, unless "
    "--enable-broadcast-mm-inputs-process (default off) has the first rank hash once and broadcast the result "
    "(scheduler.py L1202-1270, schedule_batch.py L244-256 and L324-332, mm_utils.py L795-840, server_args.py "
    "L582): a serial cost per image request, not measured, which in a closed loop also stalls the running decodes. "
    "The vision encoder itself runs inside the extend batch's forward on every rank, split by TP unless "
    "--mm-enable-dp-encoder (models/qwen3_vl.py L620-628, L678-690; mm_utils.py L635), with Triton attention on "
    "CUDA GPUs other than SM90's FlashAttention-3 (layers/attention/vision.py L583-611); extend batches run apart "
    "from the decodes (--enable-mixed-chunk off, server_args.py L501), so its time also holds the decodes back"
)


def sglang_plan(argv: Sequence[str], *, gpu_memory_gib: float | None, version: str | None = None,
                vision: bool = False, architecture: str | None = None, mtp_layers: int | None = None) -> SglangPlan:
    """Read an SGLang server command; fill what it leaves out as SGLang does (``gpu_memory_gib``: what the
    runtime reports for one GPU; ``vision``: the model has a vision tower, SGLang then keeps less memory static;
    ``architecture``: the checkpoint's, which picks SGLang's speculative defaults; ``mtp_layers``: the MTP layers its
    config declares, which an EAGLE launch without a draft path drafts with, None: not known).

    Raises InputError on a command that is not SGLang's or a value SGLang would refuse, SplitError (exit 1) on
    DP-attention ranks that do not divide --tp-size (SGLang's own assert, after every bad-input check)."""
    from launchcard.argv import parse_command
    from launchcard.memory import Settings

    cmd = parse_command(list(argv), engine="sglang")
    if cmd.engine != "sglang":
        raise InputError(f"not an SGLang server command ({' '.join(argv[:3])} ...)", field="command",
                         fix="pass `python -m sglang.launch_server ...` or `sglang serve ...`")
    found: list[Finding] = []
    if version and version != RULES_RELEASE:
        found.append(Finding("assumed", "sglang-release", f"SGLang {version}: its defaults are taken to be "
                                                          f"{RULES_RELEASE}'s (the rules launchcard reads)"))
    for flag in RANK_FLAGS:  # a count of GPUs or ranks: 0 was planned as 1, -2 as no DP at all (check: the same rule)
        refused = rank_refusal(flag, cmd.get_int(flag))
        if refused:
            raise InputError(refused[0], where=flag, fix=refused[1])
    dense_refused = dense_tp_refusal(cmd.get_int("--moe-dense-tp-size"))
    if dense_refused:  # SGLang asserts it (limits.DENSE_TP_RULE): the server does not start
        raise InputError(f"{dense_refused[0]} ({DENSE_TP_RULE})", where="--moe-dense-tp-size", fix=dense_refused[1])
    self_draft = draft_self_refusal(cmd.get_str("--speculative-algorithm"),
                                    cmd.get_str("--speculative-draft-model-path"),
                                    1 if mtp_layers is None else mtp_layers)
    if self_draft:  # SGLang drafts with the model itself (limits.DRAFT_SELF_RULE): nothing to time (check: the same)
        raise InputError(f"{self_draft[0]} ({DRAFT_SELF_RULE})", where="--speculative-algorithm", fix=self_draft[1])
    tp = cmd.get_int("--tp-size", default=1) or 1
    pp = cmd.get_int("--pp-size", default=1) or 1
    dp = cmd.get_int("--dp-size", default=1) or 1
    # the flag as given: the memory rule (server_args.py:861-869) reads it before _handle_data_parallelism
    # (L1563-1567) turns DP attention off at one DP rank (__post_init__ L636 before L660); 0.5.3 alike (L650-658,
    # L949-951; __post_init__ L471 before L488). At one DP rank that reserve is all the flag changes: every later
    # reader (the x0.3 conservativeness and chunk split in _handle_data_parallelism, dp_attention.py
    # initialize_dp_attention, require_mlp_sync, the scheduler, the CUDA graph runner) sees it off
    dpa_flag = bool(cmd.get_bool("--enable-dp-attention", default=False))
    dpa = dpa_flag and dp > 1
    attn_dp = cmd.get_int("--attn-dp-size")
    if attn_dp is not None and attn_dp > 1:
        # SGLang 0.5.22+ spelling of the same plan: "Use --attn-dp-size <dp-size> instead of --dp-size <dp-size>
        # --enable-dp-attention" (0.5.22 python/sglang/srt/server_args.py:416-423)
        dp, dpa, dpa_flag = attn_dp, True, True
    a2a = cmd.get_str("--moe-a2a-backend")
    ep_size = sglang_ep_size(cmd.get_int("--ep-size"), a2a, tp)  # the one reading check and memory take
    kv_raw = (cmd.get_str("--kv-cache-dtype") or "auto").lower()
    if kv_raw not in _KV:
        raise InputError(f"unknown --kv-cache-dtype {kv_raw!r} for SGLang", where="--kv-cache-dtype",
                         fix=f"use one of {', '.join(sorted(_KV))}")
    running = cmd.get_int("--max-running-requests")
    if running is not None and running < 1:
        # SGLang sizes its request pool by it and defaults only a missing value (0.5.6.post2
        # model_executor/model_runner.py L502-505, L1672, L1768 ReqToTokenPool(size=max_num_reqs)): no request runs
        raise InputError(f"--max-running-requests must be >= 1 ({running}): SGLang sizes its request pool by it "
                         "(0.5.6.post2 model_runner.py L1672, L1768), so no request would ever run",
                         where="--max-running-requests",
                         fix="pass a positive count, or leave --max-running-requests out for SGLang's default")
    hook = _ARCH_DEFAULTS.get(architecture or "")
    if hook is not None:
        if running is None:
            running = hook[0]
            found.append(Finding("assumed", "sglang-default", f"--max-running-requests not given: {running} for "
                                                              f"{architecture} ({hook[2]})"))
        if kv_raw == "auto":
            kv_raw = hook[1]
            found.append(Finding("assumed", "sglang-default", f"--kv-cache-dtype auto: {kv_raw} for {architecture} "
                                                              f"({hook[2]})"))
    method, k, topk, draft_tokens, algo = _spec(cmd, found, architecture)
    gpu_mib = gpu_memory_gib * 1024 if gpu_memory_gib else None
    chunk = cmd.get_int("--chunked-prefill-size")
    graph_bs = cmd.get_int("--cuda-graph-max-bs")
    cg_list = cmd.get_list("--cuda-graph-bs")
    if cg_list:
        graph_bs = max(int(x) for x in cg_list)
    if cmd.get_bool("--disable-cuda-graph", default=False):
        graph_bs = 0  # no graph size to assume (or name)
    if chunk is None or graph_bs is None:
        row = _memory_row(gpu_mib)
        c_def, g_def = (row[1], row[2] if tp < 4 else row[3]) if row else (4096, 160)
        what = (f"{gpu_memory_gib:g} GiB per GPU" if gpu_mib else "GPU memory unknown (SGLang's fallback)")
        if chunk is None:
            chunk = c_def
            found.append(Finding("assumed", "sglang-default", f"--chunked-prefill-size not given: {chunk}, "
                                                              f"SGLang's default for {what} ({_SA}:752-835)"))
        if graph_bs is None:
            graph_bs = g_def
            found.append(Finding("assumed", "sglang-default", f"--cuda-graph-max-bs not given: {graph_bs}, "
                                                              f"SGLang's default for {what}, TP {tp} "
                                                              f"({_SA}:752-835); larger batches run eagerly"))
    max_prefill = cmd.get_int("--max-prefill-tokens", default=MAX_PREFILL_TOKENS) or MAX_PREFILL_TOKENS
    frac = cmd.get_float("--mem-fraction-static")
    if frac is None:
        frac = mem_fraction(gpu_mib, chunk, max_prefill, graph_bs, tp, pp, dp, dpa_flag, algo, vision)
        found.append(Finding("assumed", "sglang-default",
                             f"--mem-fraction-static not given: {frac:.3f}, SGLang's rule "
                             f"(GPU memory - activations of one {max(chunk, 2048)}-token chunk - CUDA graphs) / "
                             f"GPU memory{', x the vision-tower reduction' if vision else ''} ({_SA}:848-897)"))
    if architecture == "DeepseekV32ForCausalLM":  # SGLang's NSA path (DeepSeek-V3.2: its class has index_topk)
        # forced after the memory rules: the static share above stays the command's own (_sglang_nsa)
        from launchcard.predict._sglang_nsa import nsa_dp_attention

        dp, dpa = nsa_dp_attention(_release(version), version, tp, dp, dpa, found)
    if dpa and chunk > 0:
        # _handle_data_parallelism (server_args.py:1568-1574), after the memory rules: each DP rank prefills
        # chunks of chunked_prefill_size // dp_size ("to avoid MoE kernel issues")
        chunk = max(1, chunk // dp)
        found.append(Finding("info", "sglang-dp-attention", f"DP attention: prefill chunks of {chunk} tokens per "
                                                            f"rank (chunked_prefill_size / {dp}, {_SA}:1568-1574)"))
    if vision:
        found.append(Finding("assumed", "sglang-vision", VISION_NOTE))
    if not 0 < frac < 1:
        raise InputError(f"--mem-fraction-static must be in (0, 1) ({frac})", where="--mem-fraction-static",
                         fix="pass a fraction such as 0.85")
    if running is None and algo in ("EAGLE", "EAGLE3", "STANDALONE", "NEXTN", "NGRAM"):
        rel = _release(version)
        if rel is None or rel <= _CAP_LAST:
            running = SPEC_RUNNING_CAP
            found.append(Finding("assumed", "sglang-default",
                                 f"speculative decoding without --max-running-requests: SGLang runs at most "
                                 f"{running} requests{' per DP-attention group' if dpa else ''} ({_SA}:1739-1743, "
                                 f"1834-1838; still so in 0.5.12.post1, gone in 0.5.15)"
                                 + ("" if rel else f"; release {version or 'unknown'} taken to have it")))
        elif rel < _CAP_GONE:
            running = SPEC_RUNNING_CAP
            found.append(Finding("assumed", "sglang-default",
                                 f"speculative decoding without --max-running-requests on SGLang {version}: the "
                                 f"{running}-request default of 0.5.6.post2-0.5.12.post1 assumed (0.5.15 has none)"))
    recv = cmd.get_int("--scheduler-recv-interval", default=1)
    recv = 1 if recv is None else recv
    if recv < 1:
        raise InputError(f"--scheduler-recv-interval must be >= 1 ({recv})", where="--scheduler-recv-interval",
                         fix="pass a positive number of decode steps")
    if recv > 1 and dpa:  # SchedulerRecvSkipper.__init__ asserts DP attention off (0.5.9 and 0.5.10.post1
        # scheduler_recv_skipper.py L15): the server would not start
        raise InputError(f"--scheduler-recv-interval {recv} with DP attention: SGLang's receive skipper refuses DP "
                         "attention (scheduler_recv_skipper.py, 0.5.9)", where="--scheduler-recv-interval",
                         fix="drop --scheduler-recv-interval or DP attention")
    budget = _budget(cmd, dpa)
    dp_flag = "--attn-dp-size" if attn_dp is not None and attn_dp > 1 else "--dp-size"
    uneven = dp_attention_split(tp, dp, dpa, dp_flag)
    if uneven:  # after every bad-input check: SGLang's own refusal (ATTENTION_TP_RULE), a failed check
        raise SplitError(uneven[0], where=dp_flag, fix=uneven[1])
    backend = cmd.get_str("--attention-backend") or cmd.get_str("--decode-attention-backend")
    if backend:
        found.append(Finding("info", "sglang-attention", f"attention backend {backend}: timed by the step "
                                                         "model's attention terms (no per-backend cost)"))
    if dpa:
        # DP attention: every rank runs its own batch and KV (attention weights whole on each); the MoE layers
        # span the TP group, as experts split over it (EP) or every expert split over it (TP): the same bytes
        # per GPU, planned as EP over the group
        attn_tp = tp // dp
        if architecture and not dp_attention_serves(architecture, version):
            # the one rule check judges the heads by (limits.attention_tp): this model file splits them over the
            # whole TP group, so how SGLang runs its DP-attention ranks is not read from its code: said, not guessed
            found.append(Finding("assumed", "sglang-dp-attention",
                                 f"--enable-dp-attention on {architecture}: SGLang {dp_attention_release(version)}'s "
                                 "model file for it does not read the attention TP size (its heads split over "
                                 f"--tp-size {tp}, as `launchcard check` judges them; {ATTENTION_TP_RULE}): planned "
                                 f"as the architectures that take DP attention run (attention over {attn_tp} GPUs), "
                                 "not as read from this model's code"))
        dense_tp = tp if architecture in DENSE_OVER_TP else None
        local: tuple[str, ...] = ()
        if dense_tp:
            local = deepseek_dense(cmd, version, tp, attn_tp, a2a, found)
            said = {"mlp": "dense MLPs whole (--moe-dense-tp-size 1)", "shared_experts": f"shared experts whole "
                    f"(--moe-a2a-backend {a2a})", "lm_head": f"LM head over {attn_tp} (--enable-dp-lm-head)",
                    "embed": f"embedding over {attn_tp} (0.5.9 L2531-2535)"}
            found.append(Finding("info", "sglang-dp-attention", DENSE_OVER_TP_NOTE.format(
                tp=tp, attn_tp=attn_tp, local="; here " + ", ".join(said[p] for p in local) if local else "")))
        s = Settings(tp=attn_tp, pp=pp, dp=dp, expert_parallel=True, dense_tp=dense_tp, dense_local=local,
                     moe_tp_group=ep_size < tp)
        if ep_size < tp:
            found.append(Finding("assumed", "sglang-dp-attention",
                                 f"DP attention over {dp} ranks with the MoE tensor-parallel over {tp} GPUs: planned "
                                 "as experts split over the group (same weight bytes per GPU; the exchange differs)"))
        # each rank is a Scheduler of its own (its queue, KV pool, running batch, chunk budget), fed round-robin by the
        # DP controller; every step all-gathers each rank's token count and CUDA-graph eligibility: one rank's extend
        # batch takes every rank off its graphs (can_cuda_graph = min over ranks) and all ranks wait for the slowest,
        # while a rank without a prefill runs its own decode batch (0.5.6.post2 managers/scheduler_dp_attn_mixin.py
        # L68-69, L105-131, L163-173; data_parallel_controller.py L471-479; model_executor/cuda_graph_runner.py L388)
        found.append(Finding("assumed", "sglang-dp-attention",
                             f"DP attention over {dp} ranks: simulated as {dp} schedulers stepping together, each "
                             "with its own queue, KV pool and prefill chunk budget, requests handed out in turn "
                             "(round_robin, SGLang's default); a step lasts as its slowest rank (a prefill on one "
                             "rank takes every rank's step off CUDA graphs and makes it as long: SGLang "
                             f"{RULES_RELEASE} managers/scheduler_dp_attn_mixin.py:68-69, 105-131) and a rank without "
                             "a prefill gives its decoding requests their token in it; the step is timed as the "
                             "busiest rank's from the group's totals (its share of the decode batch, rounded up, "
                             "and of the prefill requests)"))
    else:
        s = Settings(tp=tp, pp=pp, dp=1, expert_parallel=ep_size > 1)
    quant = cmd.get_str("--quantization")
    ctx = cmd.get_int("--context-length")
    if ctx is not None and ctx < 1:  # named by the command's flag (the memory planner would say --max-model-len)
        raise InputError(f"--context-length must be >= 1 ({ctx})", where="--context-length",
                         fix="pass a token count, or leave --context-length out for the model's own")
    total = cmd.get_int("--max-total-tokens")
    if total is not None and total < 1:
        # the pool is min(profiled, --max-total-tokens) and SGLang raises "Not enough memory" at <= 0 (0.5.6.post2
        # model_executor/model_runner.py L1716-1723, L1744-1745): no request would ever run
        raise InputError(f"--max-total-tokens must be >= 1 ({total}): SGLang caps its KV pool at it (0.5.6.post2 "
                         "model_runner.py L1716-1723)", where="--max-total-tokens",
                         fix="pass a positive token count, or leave --max-total-tokens out for the whole pool")
    s = replace(s, kv_cache_dtype=_KV[kv_raw], quantization=quant, max_model_len=ctx,
                max_num_seqs=running, speculative_method=method,
                num_speculative_tokens=k, enforce_eager=graph_bs == 0)
    try:
        s = s.validate()
    except InputError:
        if quant is None:
            raise
        found.append(Finding("assumed", "sglang-quantization", f"--quantization {quant}: not a method the memory "
                                                               "planner knows; the checkpoint's own format planned"))
        s = replace(s, quantization=None).validate()
    return SglangPlan(settings=s, replicas=dp, dp_attention=dpa, chunked_prefill_size=chunk,
                      max_prefill_tokens=max_prefill, cuda_graph_max_bs=graph_bs, mem_fraction_static=frac,
                      max_running_requests=running,
                      mixed_chunk=bool(cmd.get_bool("--enable-mixed-chunk", default=False)),
                      disable_hybrid_swa_memory=bool(cmd.get_bool("--disable-hybrid-swa-memory", default=False)),
                      max_total_tokens=total,
                      spec_topk=topk, spec_draft_tokens=draft_tokens if algo else 0,
                      findings=tuple(found), recv_interval=recv, version=version, budget=budget,
                      moe_a2a=bool(a2a and a2a != "none"), moe_ep=ep_size,
                      moe_runner_backend=cmd.get_str("--moe-runner-backend"),
                      piecewise_cuda_graph=bool(cmd.get_bool("--enable-piecewise-cuda-graph", default=False)),
                      attention_backend=(cmd.get_str("--prefill-attention-backend")
                                         or cmd.get_str("--attention-backend")),
                      page_size=cmd.get_int("--page-size"),
                      disable_chunked_prefix_cache=bool(cmd.get_bool("--disable-chunked-prefix-cache", default=False)),
                      disable_radix_cache=bool(cmd.get_bool("--disable-radix-cache", default=False)),
                      overlap=overlap_schedule(disabled=bool(cmd.get_bool("--disable-overlap-schedule",
                                                                           default=False)),
                                               pp=pp, spec=algo is not None,
                                               spec_v2=dict(cmd.env).get("SGLANG_ENABLE_SPEC_V2", "").lower()
                                               in ("1", "true", "yes", "on")),
                      # get_bool_env_var: "true"/"1" (any case) true, anything else false (0.5.6.post2
                      # utils/common.py L264-276)
                      nsa_fp8_compute=dict(cmd.env).get(REQUANT_ENV, "true").lower() in ("1", "true"),
                      dsa_backends=(cmd.get_str("--nsa-prefill-backend") or cmd.get_str("--dsa-prefill-backend"),
                                    cmd.get_str("--nsa-decode-backend") or cmd.get_str("--dsa-decode-backend")))


def _budget(cmd: ParsedCommand, dpa: bool) -> SglangBudget:
    """The command's admission estimate (:func:`launchcard.predict._sglang_rules.sglang_budget`); InputError on a
    value SGLang refuses (a negative --schedule-conservativeness: server_args.py L3858-3859) or cannot read."""
    cons = cmd.get_float("--schedule-conservativeness")
    cons = 1.0 if cons is None else cons
    if cons < 0:
        raise InputError(f"--schedule-conservativeness must be non-negative ({cons:g})",
                         where="--schedule-conservativeness", fix="pass 0 or more (SGLang's default 1.0)")
    env = dict(cmd.env)
    try:
        return sglang_budget(cons, dp_attention=dpa, env=env)
    except ValueError as exc:
        bad = str(exc.args[0])
        raise InputError(f"{bad}={env[bad]!r} is not a number SGLang reads", where=bad,
                         fix="give it a number, or leave it unset for SGLang's default") from None


def _config_doc(config: str | Path) -> object:
    import json

    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"not a readable config.json ({exc.__class__.__name__})", where=str(path),
                         fix="pass the model's Hugging Face config.json") from None


def sglang_model_traits(config: str | Path) -> tuple[str | None, bool]:
    """(the first listed architecture, whether there is a vision tower) of a config.json: what SGLang's defaults
    read off the checkpoint (speculative defaults; the static memory share of vision models)."""
    return _traits(_config_doc(config))


def _traits(doc: object) -> tuple[str | None, bool]:
    archs = doc.get("architectures") if isinstance(doc, dict) else None
    arch = str(archs[0]) if isinstance(archs, list) and archs else None
    return arch, isinstance(doc, dict) and isinstance(doc.get("vision_config"), dict)


def sglang_terms() -> EngineWords:
    """The planner's vLLM-worded context and KV-dtype defaults as an SGLang launch states them
    (memory.assumption_as)."""
    from launchcard.memory import EngineWords

    return EngineWords(context_flag="--context-length",
                       context_rule="; SGLang's default also comes from config.json (its --context-length help), by "
                                    "rules not compared here",
                       kv_given="--kv-cache-dtype auto:",
                       kv_default=", SGLang's \"auto\": the model data type, its --kv-cache-dtype help",
                       kv_advice="; pass --kv-cache-dtype to plan another")


def sglang_serving_facts(config: str | Path, plan: SglangPlan, *, gpu: str | None = None,
                         hardware: HardwareFigures | None = None, model: str | None = None) -> ServingFacts:
    """The step model's facts for an SGLang plan: the memory planner's weights and KV bytes, with SGLang's own
    KV pool, running-request limit, prefill budget and CUDA-graph use."""
    from launchcard.hardware import find
    from launchcard.memory import load_arch, plan_memory, sglang_mxfp4_settings
    from launchcard.predict._facts import facts_from_memory_plan, with_limits
    from launchcard.predict._figures import HardwareFigures

    arch = load_arch(config)
    acc = find(gpu) if gpu else None
    hw = hardware or (HardwareFigures.from_accelerator(acc) if acc else None)
    if hw is None or acc is None:
        raise InputError("no GPU given", field="gpu", fix="pass the GPU the command runs on")
    refused = ep_refusal(plan, arch)
    if refused:  # the server does not start: a plan that fails its check, as a TP not dividing the heads
        raise SplitError(refused[0], where="--ep-size", fix=refused[1])
    s = replace(plan.settings, max_num_batched_tokens=plan.prefill_budget)
    swa: list[Finding] = []
    nsa = nsa_model(arch.architectures, arch.index_topk)
    if nsa:  # DeepSeek Sparse Attention: SGLang's cache dtype for "auto" by compute capability (_sglang_nsa)
        kv_dtype, why = nsa_kv_dtype(s.kv_cache_dtype, hw.compute_capability)
        if why:
            s = replace(s, kv_cache_dtype=kv_dtype)
            swa.append(Finding("assumed", "sglang-nsa", why))
    # SGLang's MoE runner for MXFP4 experts, and the padding and dtype it holds them at (memory._sglang_mxfp4)
    s, said = sglang_mxfp4_settings(arch, s, _release(plan.version), hw.compute_capability, plan.moe_runner_backend,
                                    ep=plan.moe_ep, piecewise=plan.piecewise_cuda_graph)
    if said is not None:
        swa.append(Finding(*said))
    mp = plan_memory(arch, s, gpu=acc)
    name = model or config_name(config)
    facts = facts_from_memory_plan(arch, s, mp, hw, model=name, engine="sglang")
    token_bytes = swa_token_bytes(arch, plan, facts, mp.kv_bytes_per_token_per_gpu, swa)
    if nsa:  # SGLang sizes its pool by its own cell (the FP8 latent without FlashMLA's scales and bf16 RoPE part)
        from launchcard.predict._dsa import dsa_layers

        fp8 = (s.kv_cache_dtype or "").startswith("fp8")
        token_bytes = nsa_cell_bytes(arch.kv_lora_rank, arch.qk_rope_head_dim, arch.index_head_dim,
                                     1.0 if fp8 else 2.0, round(dsa_layers(arch, s.pp)))
    copies = 0.0
    if arch.kv_lora_rank and (arch.architectures or ("",))[0] in DENSE_OVER_TP:  # SGLang's DeepSeek model file
        copies = absorb_copies_gib(arch, arch.num_heads / max(1, s.tp), _mla_layers(arch, s.pp),
                                   cuda=acc.vendor == "NVIDIA")
    weights = mp.weights_gib_per_gpu + copies
    kv = sglang_kv_tokens(plan, weights, token_bytes, acc.memory_gib)
    if kv < 1:
        raise PredictError(f"SGLang keeps {plan.mem_fraction_static:.3f} of {acc.memory_gib:g} GiB static, less than "
                           f"the {weights:.1f} GiB of weights per GPU: no KV cache", field="plan",
                           fix=no_kv_fix(weights, acc.memory_gib))
    capped, profiled = "", kv
    if plan.max_total_tokens is not None and plan.max_total_tokens < kv:
        # ModelRunner: max_total_num_tokens = min(profiled, --max-total-tokens) (0.5.6.post2 model_runner.py
        # L1716-1723; a larger value is warned about and the profiled pool kept)
        kv, capped = plan.max_total_tokens, f", capped by --max-total-tokens from {kv}"
    running = sglang_running_limit(plan, kv, mp.max_model_len, profiled)
    backends = plan.dsa_backends
    if nsa:  # SGLang's DSA kernels by release, GPU and cache dtype (_sglang_nsa), the command's own kept
        backends = nsa_backends(_release(plan.version), hw.compute_capability, s.kv_cache_dtype, backends)
    if facts.dsa is not None and any(backends):  # the sparse-attention kernels SGLang runs
        from launchcard.predict._dsa import dsa_facts, dsa_layers

        own: list[Finding] = []
        dsa = dsa_facts(arch, s, "sglang", hw.compute_capability, dsa_layers(arch, s.pp), own, backends)
        if dsa is not None:
            dsa = nsa_requant(dsa, arch, s, plan.version, plan.nsa_fp8_compute, backends, kv, own)
            dsa = nsa_jit(dsa, plan.version, hw.compute_capability, own)
        facts = replace(facts, dsa=dsa, findings=(*(f for f in facts.findings if f.code not in ("dsa", "dsa-kernels")),
                                                  *own))
    if arch.kv_lora_rank and hw.kind == "gpu":  # the release line that runs kv_b_proj twice (_sglang_mla)
        twice: list[Finding] = []
        rule = extend_rule(hw.compute_capability or "", arch.architectures, plan.attention_backend, nsa,
                           plan.disable_chunked_prefix_cache)
        kvb = kvb_twice(_release(plan.version), plan.version, rule,
                        kvb_flops(arch, arch.num_heads / max(1, s.tp), _mla_layers(arch, s.pp)), twice)
        if kvb:
            facts = replace(facts, mha_kvb=kvb, mha_rule=rule, findings=(*facts.findings, *twice))
    from launchcard.memory import assumption_as

    words = sglang_terms()
    planned = [Finding("assumed", "memory-plan", w) for w in (assumption_as(a.code, a.what, words) for a in mp.assumed)
               if w is not None]
    if plan.attention_backend is None and hw.kind == "gpu":  # gpt-oss: the backend SGLang picks itself
        from launchcard.predict._attn_backend import sglang_sink_attention

        sglang_sink_attention(arch.architectures, hw.kind, hw.compute_capability or "", swa)
    notes = [*planned, *plan.findings, *swa,
             Finding("info", "sglang-limits",
                     f"SGLang plan: KV pool {kv} tokens per scheduler ({plan.mem_fraction_static:.3f} of "
                     f"{acc.memory_gib:g} GiB static, {weights:.1f} GiB weights"
                     + (f" with {copies:.1f} GiB of w_kc / w_vc, the absorbed kv_b_proj copies SGLang's DeepSeek model "
                        "file keeps (post_load_weights)" if copies else "") + f"{capped}), "
                     f"{running} running "
                     f"requests, prefill batches of at most {plan.prefill_budget} tokens, "
                     + (f"CUDA graphs up to batch {plan.cuda_graph_max_bs} (bigger decode batches run eagerly: "
                        "cuda_graph_runner.py can_run)" if plan.cuda_graph_max_bs else
                        "no CUDA graphs: every step runs eagerly"))]
    if plan.recv_interval > 1:
        notes.append(Finding("info", "sglang-receive", receive_note(plan.recv_interval, plan.overlap)))
    notes.append(Finding("info", "sglang-admission", admission_note(plan.budget)))
    if acc.kind != "gpu":  # SGLang's memory rows read (server_args.py:752-835) are the CUDA/ROCm GPUs': plan ranks
        # such a plan undecided (plansearch._rank.UNDECIDED), predict states it
        notes.insert(0, Finding(
            "assumed", "sglang-undecided",
            f"{acc.id} is a{'n' if acc.kind[0] in 'aehinoru' else ''} {acc.kind.upper()}: SGLang's memory defaults "
            "for it are not read by launchcard (planned with the GPU rows of SGLang 0.5.6.post2 "
            "server_args.py:752-835)"))
    if plan.mixed_chunk:
        notes.append(Finding("assumed", "sglang-mixed-chunk", "--enable-mixed-chunk: not modelled, prefill batches "
                                                              "timed alone (SGLang's default policy)"))
    tp, pp = plan.settings.tp, plan.settings.pp
    page, page_read = sglang_run_page(plan.page_size, plan.attention_backend,
                                      hw.compute_capability or "" if hw.kind == "gpu" else "", arch.architectures,
                                      mla=bool(arch.kv_lora_rank), nsa=nsa,
                                      eagle_topk=plan.spec_topk if plan.spec_draft_tokens else None)
    gpus = tp * pp * plan.replicas if not plan.dp_attention else tp * pp * plan.settings.dp
    return with_limits(facts, kv_capacity_tokens=kv, max_num_seqs=running, max_num_batched_tokens=plan.prefill_budget,
                       cuda_graphs=plan.cuda_graph_max_bs > 0 and hw.kind != "cpu", replicas=plan.replicas,
                       graph_tokens=plan.cuda_graph_max_bs * (1 + facts.spec_tokens), graph_rule=None,
                       gpus=gpus, recv_interval=plan.recv_interval, recv_lag=recv_lag(plan.overlap),
                       sglang_budget=plan.budget, lockstep=plan.replicas if plan.dp_attention else 1,
                       prefix_block=page, prefix_read=page_read,
                       prefix_off=prefix_off("sglang", disable_radix_cache=plan.disable_radix_cache),
                       findings=(*notes, *(x for x in facts.findings if x.code != "cuda-graphs")), release=plan.version,
                       **dp_gather_parts(plan, facts, arch.vocab_size), **moe_shape(plan, arch))


def sglang_command_facts(argv: Sequence[str], config: str | Path, gpu: str, *, hardware: HardwareFigures | None = None,
                         model: str | None = None, version: str | None = None) -> ServingFacts:
    """An SGLang server command on ``gpu`` straight to its plan facts: the checkpoint's traits, SGLang's defaults
    for the command (:func:`sglang_plan`), then :func:`sglang_serving_facts`."""
    plan = sglang_command_plan(argv, config, gpu, version)
    return sglang_serving_facts(config, plan, gpu=gpu, hardware=hardware, model=model)


def sglang_command_plan(argv: Sequence[str], config: str | Path, gpu: str, version: str | None = None) -> SglangPlan:
    """An SGLang server command read for the checkpoint of ``config`` on ``gpu`` (:func:`sglang_plan`): InputError
    on bad input, SplitError (exit 1) on DP-attention ranks SGLang refuses, before anything is planned."""
    from launchcard.hardware import find
    from launchcard.limits import mtp_layer_count

    doc = _config_doc(config)  # read once: the traits and the MTP layers
    arch, vision = _traits(doc)
    return sglang_plan(argv, gpu_memory_gib=find(gpu).memory_gib, version=version, vision=vision, architecture=arch,
                       mtp_layers=mtp_layer_count(doc))
