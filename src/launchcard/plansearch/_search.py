"""Search the plans a model's sources allow on N GPUs of one type; rank those that meet an SLO.

Every candidate is checked for its layout (TP against the heads, PP against the layers, TP within a node),
memory-planned by :mod:`launchcard.memory` and predicted by :mod:`launchcard.predict` (never re-implemented
here). What makes the search fast is that most of that work is shared: a memory plan depends on the
option, TP, PP, EP (and DP with EP), KV dtype, speculative decoding and, for vLLM, the batch limit (its
profile run samples ``max_num_seqs`` rows and its CUDA graphs follow it); an SGLang plan's prediction of a
closed loop is the same for every ``--max-running-requests`` at or above the clients per replica; both are
cached per process.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from launchcard.errors import NOT_STARTED, LaunchcardError
from launchcard.idmemo import IdMemo
from launchcard.plansearch import _startup
from launchcard.plansearch._candidates import candidates, count, kv_dtypes, layout, load_clients, spans_nodes
from launchcard.plansearch._candidates import model_arch as _arch
from launchcard.plansearch._options import candidate_flags, spec_index
from launchcard.plansearch._rank import one_per_run as _one_per_run
from launchcard.plansearch._rank import pareto, undecided
from launchcard.plansearch._rank import rank_key as _rank_key
from launchcard.plansearch._rank import ranked as _ranked
from launchcard.plansearch._rank import run_key as _run_key
from launchcard.plansearch._sglang import dp_attention as _sglang_dpa
from launchcard.plansearch._sglang import running as _running
from launchcard.plansearch._sglang import sglang_facts, sglang_note
from launchcard.plansearch._startup import UNBOUNDED, command_argv, refusal
from launchcard.plansearch._types import Candidate, Figures, Option, Outcome, SearchResult, SearchSpace, Slo

if TYPE_CHECKING:
    from launchcard.hardware import Accelerator
    from launchcard.memory import Settings
    from launchcard.predict import Finding, HardwareFigures, Prediction, Schedules, ServingFacts, Workload

# scale-out bandwidth a prefill GPU sends its KV cache to a decode GPU with, bytes/s: one 400 Gb/s RDMA NIC per
# GPU, as the DGX H100/H200/B200 reference designs have (ConnectX-7); stated on every disaggregated plan
KV_TRANSFER_BPS = 50e9
Progress = Callable[[int, int], None]
# a plan whose screening figures are within this factor of the SLO is predicted again on the whole run
REFINE = 1.25
REFINE_TOP = 10
CLOSEST = 5  # the closest misses an answer lists
# the plans meeting the SLO whose command a result carries (every plan of the Pareto front and the closest too)
COMMANDS_LISTED = 50


def screening(work: Workload) -> Workload:
    """The short run every candidate is first predicted on: 2 x concurrency requests (closed loop) or 3 s of
    arrivals (at least 16), unless the workload fixes its number of requests."""
    if work.num_requests is not None or work.burst:  # a burst's figures depend on its size: never shortened
        return work
    n = 2 * work.concurrency if work.concurrency is not None else max(16, round(3 * (work.rate or 1.0)))
    return replace(work, num_requests=n) if n < work.requests() else work


# (config, gpu, engine, Settings, figures) -> ServingFacts, or the reason the plan does not fit
_FACTS: dict[tuple[str, str, str, Settings, HardwareFigures | None], ServingFacts | str] = {}
_PREDICTIONS: dict[tuple[object, ...], Prediction | str] = {}
# (facts id, replicas, workload) -> the runs simulated for that plan, as (batch limit, CUDA graph limit,
# prediction): another batch limit's run may be one of them (_predict)
_RUNS: dict[tuple[int, int, Workload], list[tuple[int, int | None, Prediction]]] = {}
# facts -> their run group (by identity): plans whose facts differ only in the KV pool, the batch limit, its CUDA
# graph limit and the findings (one vLLM memory plan at each --max-num-seqs) are one group; (group, replicas,
# workload) -> the runs simulated in it, whose run a plan of the group reuses where neither its batch limits nor
# its KV pool can bind (_predict)
_GROUPS: IdMemo[ServingFacts, int] = IdMemo(UNBOUNDED)
_GROUP_IDS: dict[ServingFacts, int] = {}
_GROUP_RUNS: dict[tuple[int, int, Workload], list[tuple[int, int | None, Prediction]]] = {}
# closed-loop schedules by workload and batching limits: plans that differ only in step costs replay one
_SCHEDULES: Schedules = {}


# the most entries the per-process caches above may hold together before they are dropped (a web server or a
# sweep searches many models in one process): one cold search of 16 GPUs fills ~1,000; the whole set is dropped at
# once, between candidates, because predictions are keyed by the memory plan's identity (never outlive it)
CACHE_ENTRIES = 50_000


def clear_caches() -> None:
    """Forget cached memory plans and predictions (benchmarks measure a cold search with it)."""
    _drop_caches()
    _arch.cache_clear()


def cache_entries() -> int:
    """Entries the per-process caches hold now (bounded by ``CACHE_ENTRIES``)."""
    return (len(_FACTS) + len(_PREDICTIONS) + len(_RUNS) + sum(map(len, _SCHEDULES.values())) + _startup.entries()
            + len(_GROUPS)
            + len(_GROUP_RUNS)
            + sum(map(len, _PLANS.values())))


def _bound_caches() -> None:
    """Drop the caches once they hold more than ``CACHE_ENTRIES``; called only between candidates, where no
    memory plan is held outside ``_FACTS`` (a prediction keyed by a dropped plan's id can never be hit)."""
    if cache_entries() > CACHE_ENTRIES:
        _drop_caches()


def _drop_caches() -> None:
    _FACTS.clear()
    _PLANS.clear()
    _PREDICTIONS.clear()
    _RUNS.clear()
    _GROUPS.clear()
    _GROUP_IDS.clear()
    _GROUP_RUNS.clear()
    _SCHEDULES.clear()
    _startup.clear()
    _catalog_figures.cache_clear()
    _catalog_gpu.cache_clear()


def _facts(opt: Option, gpu: str, engine: str, s: Settings, figures: HardwareFigures | None = None,
           ) -> ServingFacts | str:
    """The plan's facts timed against ``figures`` (None: the catalog's of ``gpu``)."""
    key = (opt.config, gpu, engine, s, figures)
    hit = _FACTS.get(key)
    if hit is None:
        from launchcard.memory import STARTUP_REFUSAL, plan_memory
        from launchcard.predict import facts_from_memory_plan, facts_with, undecided_findings

        arch = _arch(opt.config)
        if figures is not None and not figures.p2p and figures.kind != "cpu" and s.gpu_p2p is None:
            s = replace(s, gpu_p2p=False)  # as predict plans it (serving_facts): no custom all-reduce buffers
        try:
            plan = plan_memory(arch, s, gpu=_catalog_gpu(gpu))
            # the planner also states vLLM's start-up refusals as problems: never SGLang's verdict
            problems = [p for p in plan.problems if engine == "vllm" or not p.startswith(STARTUP_REFUSAL)]
            if problems or (not plan.fits and engine == "vllm"):
                hit = f"{NOT_STARTED} ({problems[0]})" if problems else NOT_STARTED
            else:
                hit = facts_from_memory_plan(arch, s, plan, figures or _catalog_figures(gpu),
                                             model=opt.model_id, engine=engine)
                # what the plan cannot decide (vLLM's rules: never another engine's verdict)
                hit = facts_with(hit, findings=(*undecided_findings(plan, engine), *hit.findings))
        except LaunchcardError as exc:
            hit = f"cannot be planned ({exc.rule})"
        _FACTS[key] = hit
    return hit


@lru_cache(maxsize=64)
def _catalog_gpu(gpu: str) -> Accelerator:
    """The catalog's entry ``gpu`` names, as plan_memory would find it by name (find_gpu: hardware.find of the one
    packaged catalog): looked up once per search, not once per memory plan."""
    from launchcard.hardware import find

    return find(gpu)


@lru_cache(maxsize=64)
def _catalog_figures(gpu: str) -> HardwareFigures:
    """The catalog's figures of ``gpu`` (a frozen value: one per GPU, not one per memory plan)."""
    from launchcard.predict import HardwareFigures

    return HardwareFigures.from_accelerator(_catalog_gpu(gpu))


@lru_cache(maxsize=256)
def _base_settings(flags: tuple[str, ...], engine_version: str | None) -> Settings:
    from launchcard.memory import Settings, settings_from_argv

    return settings_from_argv(list(flags), Settings(vllm_version=engine_version))


def prefix_cache_off(space: SearchSpace, opt: Option) -> str:
    """The flag of the option's resolved command that turns its engine's prefix cache off ("" where it is on): every
    candidate of the option keeps it, and its facts say so (ServingFacts.prefix_off); the TensorRT-LLM plans searched
    have no options file, so they keep KvCacheConfig's block reuse (:func:`launchcard.predict.prefix_off`)."""
    from launchcard.predict import prefix_off

    vllm = space.engine == "vllm"
    caching = _base_settings(opt.base_flags, space.engine_version).enable_prefix_caching if vllm else None
    return prefix_off(space.engine, enable_prefix_caching=caching,
                      disable_radix_cache="--disable-radix-cache" in opt.base_flags)


# space -> {(option, TP, PP, EP group's DP, EP, KV dtype, spec, tokens): the plan's facts}: the ~8 candidates of
# one memory plan (batch limits, DP without EP) look it up by a tuple, without deriving and hashing its Settings
# again; by the space's identity (IdMemo: an id another object reuses never hits)
_PLANS: IdMemo[SearchSpace, dict[tuple[object, ...], ServingFacts | str]] = IdMemo(UNBOUNDED)


def _plan_facts(space: SearchSpace, opt: Option, c: Candidate) -> ServingFacts | str:
    """:func:`_facts` of an aggregated candidate's plan."""
    plans = _PLANS.get(space, _no_plans)
    sglang = space.engine == "sglang"
    ep_dp = _memory_dp(space, opt, c, c.dp)  # the memory plan's DP (SGLang's and vLLM's alike)
    # vLLM's batch limit sizes the sampler's profile run and the CUDA graphs, so it is part of the memory plan
    key = (opt.name, c.tp, c.pp, ep_dp, c.ep, c.kv_cache_dtype, c.spec, c.spec_tokens, c.dp_attention, c.chunk,
           None if sglang else c.max_num_seqs)
    facts = plans.get(key)
    if facts is None:
        facts = plans[key] = (sglang_facts(opt, command_argv(space, opt, c), space.gpu, space.engine_version,
                                            space.figures)
                               if sglang else
                               _facts(opt, space.gpu, space.engine, _settings(space, opt, c, c.dp), space.figures))
    if sglang and not isinstance(facts, str) and facts.gpus != c.gpus:
        # SGLang serves the command on other GPUs than the candidate counts: it turns DP attention on itself for
        # DeepSeek Sparse Attention (predict._sglang_nsa.nsa_dp_attention), so --tp-size T --dp-size D is one
        # server of T GPUs, not D replicas; predict of the command says so, and the DP-attention candidate of the
        # same TP is that server
        why = next((f.message for f in facts.findings if f.code == "sglang-nsa"), "SGLang's reading of the command")
        return f"DP attention forced ({why}: the command runs on {facts.gpus} GPUs, not {c.gpus})"
    return facts


def _no_plans(space: SearchSpace) -> dict[tuple[object, ...], ServingFacts | str]:
    return {}


def _memory_dp(space: SearchSpace, opt: Option, c: Candidate, dp: int) -> int:
    """The memory plan's DP of a candidate's ``dp`` ranks: an EP group is TP x DP, and on vLLM without EP a MoE's
    experts are TP over TP x DP as well (memory.moe_split: the plan then runs every rank's tokens through them, as
    ``predict`` does the candidate's command); SGLang's DP-attention ranks are one server's; else 1 (replicas apart;
    SGLang's --ep-size is the TP group's, one replica's; TensorRT-LLM's rule not read)."""
    if space.engine == "sglang":  # its DP-attention ranks share one server's memory plan
        return dp if c.dp_attention else 1
    return dp if c.ep or (space.engine == "vllm" and dp > 1 and _arch(opt.config).is_moe) else 1


def _settings(space: SearchSpace, opt: Option, c: Candidate, dp: int) -> Settings:
    from launchcard.memory import settings_with

    # the candidate's own command: a speculative offer's (its feature's other args: --moe-backend, --hf-overrides)
    base = _base_settings(candidate_flags(opt, c), space.engine_version)
    ep_dp = _memory_dp(space, opt, c, dp)
    return settings_with(base, tp=c.tp, pp=c.pp, dp=ep_dp, expert_parallel=c.ep, kv_cache_dtype=c.kv_cache_dtype,
                         # the candidate's batch limit, as its command states it: vLLM's profile run samples
                         # max_num_seqs rows and its CUDA graphs follow it, so a smaller limit leaves more KV cache
                         # (the memory planner's accounting, as `memory --max-num-seqs` and `predict` plan it)
                         quantization=opt.quantization or base.quantization, max_num_seqs=c.max_num_seqs,
                         max_model_len=space.max_model_len or base.max_model_len,
                         speculative_method=c.spec, num_speculative_tokens=c.spec_tokens if c.spec else 0,
                         # the user's word on the kernel that runs wins over the recipe's command, as in predict
                         mxfp4_backend=space.mxfp4_backend or base.mxfp4_backend)


def _group(facts: ServingFacts) -> int:
    """The run group of ``facts`` (see ``_GROUPS``): its facts with the KV pool, batch limits and findings left
    out, equal for every member (each member's findings are recomputed for it by :func:`predict`)."""
    return _GROUPS.get(facts, _group_of)


def _group_of(facts: ServingFacts) -> int:
    from launchcard.predict import facts_with

    key = facts_with(facts, kv_pool_tokens=0, kv_capacity_tokens=0, max_num_seqs=0, graph_tokens=None, findings=())
    return _GROUP_IDS.setdefault(key, len(_GROUP_IDS))


def _predict(facts: ServingFacts, dp: int, mns: int, work: Workload, top: int, screen: Workload | None = None,
             source: Callable[[], object] | None = None) -> Prediction | str:
    """The prediction of ``facts`` on ``dp`` replicas with batch limit ``mns``; ``top`` is the largest limit the
    search tries.  A run never holds more requests than it reached with the largest limit (``max_running``), so
    every limit from that peak up shares the largest limit's run (the same run, not an approximation:
    tests/test_predict_sim.py) when its CUDA graph limit (vLLM's default follows max_num_seqs) replays the same
    steps of that run (``Prediction.graph_span``); another limit's run is shared alike (:func:`_same_run`); only
    the others are simulated on their own.

    ``screen`` (the whole-run prediction of a plan shown, whose screening run was ``screen``): when the largest
    limit's screening run did not serve ``mns``, its whole run is not simulated only to find that out again;
    ``mns``'s own run is (the same run whenever the largest limit's would have served: the same figures).

    A run it would simulate is first looked for among the runs of its group (:func:`_group`: a vLLM plan's memory
    planned at another ``--max-num-seqs``), which ``source`` (called once, first) fills with the largest limit's:
    one whose batch limits do not bind (:func:`_same_run`) is handed to :func:`predict`, which takes it when this
    plan's KV pool holds the run's ``kv_free_from`` (no KV decision falls otherwise) and otherwise simulates; the
    findings and figures are always this plan's own."""
    from launchcard.predict import Prediction, graph_tokens_at, predict, with_limits

    clients = None
    if work.concurrency is not None:  # a closed loop never has more running than clients per replica
        clients = top = min(top, math.ceil(work.concurrency / dp))
    limit = graph_tokens_at(facts, mns)
    if mns > top and limit == graph_tokens_at(facts, top):
        mns = top  # the largest limit's run (sequence slots above the most clients never bind)
    key = (id(facts), dp, mns, work)
    hit = _PREDICTIONS.get(key)
    if hit is None:
        own = False
        if screen is not None and mns != top and (id(facts), dp, top, work) not in _PREDICTIONS:
            small = _PREDICTIONS.get((id(facts), dp, mns, screen))
            large = _PREDICTIONS.get((id(facts), dp, top, screen))
            own = small is not None and large is not None and small is not large
        if mns != top and not own:
            _predict(facts, dp, top, work, top)  # the largest limit's run first: the one most limits share
        runs = _RUNS.setdefault((id(facts), dp, work), [])
        for seats, own_limit, p in runs:
            if _same_run(p, seats, own_limit, mns, limit, clients):
                _PREDICTIONS[key] = p
                return p
        if source is not None:
            source()
        reuse = None
        group = _GROUP_RUNS.setdefault((_group(facts), dp, work), [])
        for seats, own_limit, p in group:
            if _same_run(p, seats, own_limit, mns, limit, clients) and p.run is not None and (
                    reuse is None or p.run.kv_free_from < reuse.kv_free_from):
                reuse = p.run
        f = with_limits(facts, max_num_seqs=mns, gpus=facts.tp * facts.pp * dp, replicas=dp)
        try:
            hit = predict(f, work, schedules=_SCHEDULES, reuse=reuse)
        except LaunchcardError as exc:
            hit = exc.rule
        _PREDICTIONS[key] = hit
        if isinstance(hit, Prediction):
            runs.append((mns, limit, hit))
            if hit.run is not reuse:
                group.append((mns, limit, hit))
    return hit


def _same_run(p: Prediction, seats: int, own_limit: int | None, mns: int, limit: int | None, clients: int | None
              ) -> bool:
    """Whether batch limit ``mns`` (CUDA graphs up to ``limit`` tokens) runs the same as ``p``, the run simulated
    with batch limit ``seats`` and graph limit ``own_limit`` (``clients``: the most requests a replica is sent at
    once, if bounded).  Sequence slots
    from the run's peak up never bind; those above ``seats`` neither once ``seats`` holds every client: the same
    schedule; a graph limit within the run's ``graph_span`` replays the same steps: the same step times."""
    lo, hi = p.graph_span
    return (0 < p.max_running <= mns and (mns <= seats or (clients is not None and seats >= clients))
            and (limit == own_limit or (limit is not None and lo <= limit < hi)))


def _outside(*ps: Prediction) -> tuple[Finding, ...]:
    """The predictions' findings that they stand outside the calibrated domain (``domain-*`` codes)."""
    return tuple(f for p in ps for f in p.findings if f.code.startswith("domain-"))


def _split_outside(pre: Prediction, dec: Prediction) -> tuple[Finding, ...]:
    """A prefill/decode plan's :func:`_outside`: the lengths it is judged on are the workload's, which the decode
    pool's run sends (its prompts, their outputs); the prefill pool's one-token outputs are how the split times
    TTFT, not a length the workload sends."""
    return tuple(f for f in pre.findings if f.code.startswith("domain-") and f.code != "domain-lengths") \
        + _outside(dec)


def _figures(p: Prediction, kv_tokens: int) -> Figures:
    return Figures(ttft_ms=p.ttft_ms_mean, tpot_ms=p.tpot_ms_mean, tok_s=p.output_tok_per_s,
                   tok_s_per_gpu=p.output_tok_per_s_per_gpu, tok_s_per_user=p.output_tok_per_s_per_user,
                   request_per_s=p.request_per_s,
                   bound=f"prefill {p.prefill.bound or 'none'}, decode {p.decode.bound or 'none'}",
                   outside=_outside(p), kv_tokens=kv_tokens, phases=(p.prefill, p.decode))


def _disaggregated(space: SearchSpace, opt: Option, c: Candidate, work: Workload,
                   screen: Workload | None = None) -> Outcome:
    """Prefill pool (TTFT) and decode pool (TPOT) predicted apart; the KV cache crosses the network between."""

    p_dp, d_dp = c.prefill_gpus // c.tp, c.dp
    s = _settings(space, opt, c, p_dp)
    pf_facts = _facts(opt, space.gpu, space.engine, s, space.figures)
    from launchcard.memory import settings_with

    dc_facts = _facts(opt, space.gpu, space.engine, settings_with(s, dp=_memory_dp(space, opt, c, d_dp)), space.figures)
    for f in (pf_facts, dc_facts):
        if isinstance(f, str):
            return Outcome(c, stage="memory", reason=f)
    assert not isinstance(pf_facts, str) and not isinstance(dc_facts, str)
    # the decode pool's prompts arrive with their KV transferred (simulated as a 0.99 prefix hit, below): every
    # token of it, not a prefix-cache hit at the engine's block granularity, whether or not the plan keeps a prefix
    # cache (predict._prefix)
    from launchcard.predict import facts_with

    dc_facts = facts_with(dc_facts, prefix_block=1, prefix_off="")
    top = c.max_num_seqs  # both pools' facts are planned at the candidate's own batch limit (:func:`_settings`)
    big = max(space.max_num_seqs)
    pf_work, dc_work = replace(work, osl=1), replace(work, prefix_hit=0.99)

    def source(pool: int) -> Callable[[], object] | None:
        """The largest limit's run of this pool, predicted first as its own candidate will (:func:`_predict`)."""
        if big == top or screen is not None:
            return None

        def run() -> None:
            sb = _settings(space, opt, replace(c, max_num_seqs=big), p_dp)
            sd = sb if pool == p_dp else settings_with(sb, dp=_memory_dp(space, opt, c, d_dp))
            f = _facts(opt, space.gpu, space.engine, sd, space.figures)
            if not isinstance(f, str):
                _predict(f if pool == p_dp else facts_with(f, prefix_block=1, prefix_off=""), pool, big,
                         pf_work if pool == p_dp else dc_work, big)
        return run

    pre = _predict(pf_facts, p_dp, c.max_num_seqs, pf_work, top, screen and replace(screen, osl=1), source(p_dp))
    dec = _predict(dc_facts, d_dp, c.max_num_seqs, dc_work, top, screen and replace(screen, prefix_hit=0.99),
                   source(d_dp))
    for p in (pre, dec):
        if isinstance(p, str):
            return Outcome(c, stage="workload", reason=p)
    assert not isinstance(pre, str) and not isinstance(dec, str)
    transfer_ms = work.isl * dc_facts.kv_bytes_per_token / KV_TRANSFER_BPS * 1e3
    ttft = pre.ttft_ms_mean + transfer_ms + dec.ttft_ms_mean
    tpot = dec.tpot_ms_mean
    rps = min(pre.request_per_s, dec.request_per_s)
    if work.concurrency is not None:
        rps = min(rps, work.concurrency / ((ttft + max(0, work.osl - 1) * tpot) / 1e3))
    if work.rate is not None:  # Poisson (capped or not); inf: a burst, bound by the pools alone
        rps = min(rps, work.rate)
    tok_s = rps * work.osl
    fig = Figures(ttft_ms=ttft, tpot_ms=tpot, tok_s=tok_s, tok_s_per_gpu=tok_s / c.gpus,
                  tok_s_per_user=1e3 / tpot if tpot > 0 else 0.0, request_per_s=rps,
                  bound=f"prefill pool {pre.prefill.bound or 'none'}, decode pool {dec.decode.bound or 'none'}, "
                        f"KV transfer {transfer_ms:.1f} ms", outside=_split_outside(pre, dec),
                  kv_tokens=dc_facts.kv_capacity_tokens, phases=(pre.prefill, dec.decode), kv_transfer_ms=transfer_ms)
    why = "; ".join(dict.fromkeys(w for w in (undecided(pf_facts), undecided(dc_facts)) if w)) or None
    return Outcome(c, figures=fig, undecided=why)


def evaluate(space: SearchSpace, c: Candidate, work: Workload, slo: Slo) -> Outcome:
    """One candidate's outcome: rejected (layout, check: vLLM refuses to start, memory, workload, SLO) with the
    reason, or meeting the SLO."""
    return _evaluate(space, c, work, slo)


def _evaluate(space: SearchSpace, c: Candidate, work: Workload, slo: Slo, screen: Workload | None = None) -> Outcome:
    """:func:`evaluate`; ``screen``: as :func:`_predict`'s."""
    opt = next(o for o in space.options if o.name == c.option)
    arch = _arch(opt.config)
    why = spans_nodes(c, space.gpus_per_node)
    if why is not None:
        return Outcome(c, stage="layout", reason=why)
    why = refusal(space, opt, c)  # vLLM's own order: heads over TP (config checks) before the model loads
    if why is not None:
        return Outcome(c, stage="check", reason=why)
    why = layout(c, arch, space.engine)
    if why is not None:
        return Outcome(c, stage="layout", reason=why)
    if c.mode == "disaggregated":
        out = _disaggregated(space, opt, c, work, screen)
        if out.figures is None:
            return out
        fig, why = out.figures, out.undecided
    else:
        facts = _plan_facts(space, opt, c)
        if isinstance(facts, str):
            return Outcome(c, stage="memory", reason=facts)
        p = _predict_plan(space, facts, c, work, screen)
        if isinstance(p, str):
            return Outcome(c, stage="workload", reason=p)
        fig, why = _figures(p, facts.kv_capacity_tokens), undecided(facts)
    misses = slo.misses(fig.ttft_ms, fig.tpot_ms)
    return Outcome(c, figures=fig, stage="slo" if misses else "ok", reason="; ".join(misses) or None, undecided=why)


def _predict_plan(space: SearchSpace, facts: ServingFacts, c: Candidate, work: Workload,
                  screen: Workload | None = None) -> Prediction | str:
    """:func:`_predict` of an aggregated candidate: its batch limit as its engine applies it to each replica."""
    mns = c.max_num_seqs
    if space.engine == "sglang":  # --max-running-requests as SGLang applies it to each scheduler
        mns, top = _running(facts, c, mns), _running(facts, c, max(space.max_num_seqs))
        return _predict(facts, c.dp, mns, work, top, screen)
    # a vLLM plan's facts are planned at its own batch limit (:func:`_settings`): no other limit shares them, but
    # the largest limit's run, predicted first as its own candidate will be, may be its run too (:func:`_predict`)
    big = max(space.max_num_seqs)

    def source() -> None:
        if big != mns and screen is None:
            opt = next(o for o in space.options if o.name == c.option)
            large = _plan_facts(space, opt, replace(c, max_num_seqs=big))
            if not isinstance(large, str):
                _predict(large, c.dp, big, work, big)

    return _predict(facts, c.dp, mns, work, mns, screen, source)


def _shown(outcomes: list[Outcome], slo: Slo, top: int) -> list[Outcome]:
    """The outcomes an answer shows: the best ``top`` meeting the SLO, the Pareto front, and the closest misses
    (within REFINE of the SLO, and the CLOSEST listed as the answer's closest), each once."""
    ranked = _one_per_run(_ranked(outcomes))[:top]
    near = sorted((o for o in outcomes if o.figures is not None and not o.meets
                   and slo.excess(o.figures.ttft_ms, o.figures.tpot_ms) <= REFINE),
                  key=lambda o: slo.excess(o.figures.ttft_ms, o.figures.tpot_ms) if o.figures else 0.0)[:REFINE_TOP]
    return list(dict.fromkeys([*ranked, *pareto(outcomes), *near, *_closest(outcomes, slo)]))


def _closest(outcomes: list[Outcome], slo: Slo) -> tuple[Outcome, ...]:
    """The answer's closest misses: the CLOSEST plans missing the SLO by the least, one per run."""
    return _one_per_run(sorted((o for o in outcomes if o.figures is not None and not o.meets),
                               key=lambda o: (slo.excess(o.figures.ttft_ms, o.figures.tpot_ms) if o.figures
                                              else 0.0, *_rank_key(o))))[:CLOSEST]


def _context_fits(space: SearchSpace, opt: Option, work: Workload) -> None:
    """Bad input when one request is longer than the served context: ``--max-model-len``, else the longest
    length vLLM derives from the config (the one rule :func:`launchcard.predict.check_context`, as predict)."""
    from launchcard.predict import check_context, check_generates

    check_generates(opt.config, space.engine)  # nothing generated, nothing to rank: predict's refusal
    check_context(opt.config, space.max_model_len, sum(work.longest()), space.engine_version, name=opt.model_id,
                  engine=space.engine, mean=work.isl + work.osl)


def _workload_findings(space: SearchSpace, shown: list[Outcome], work: Workload,
                       best: Outcome | None = None) -> list[str]:
    """The predictor's own words on what it took of the workload and the link for the plans shown, each once: the
    draft acceptance of speculative plans (no ``--acceptance`` given), a dataset's request lengths, the chat
    endpoint's extra cost, the interconnect rate collectives were timed at where the catalog gives none (``link``:
    a PCIe generation's x16 rate, or the memory bandwidth).  The figures of those plans rest on them, as
    ``predict`` says.  Of the ``best`` plan also predict's ``idle-replicas`` warning (replicas the load never
    reaches: counted per GPU, serving nothing), named by its label."""
    codes = {"link", "dataset-lengths"} if work.dataset is not None else {"link"}
    if work.endpoint != "completions":
        codes.add("endpoint")
    out: list[str] = []
    for o in shown:
        c = o.candidate
        want = codes | ({"acceptance"} if c.spec and work.acceptance is None else set()) | (
            {"idle-replicas"} if o is best else set())
        if not want or c.mode != "aggregated":
            continue
        opt = next(x for x in space.options if x.name == c.option)
        facts = _plan_facts(space, opt, c)
        p = _predict_plan(space, facts, c, work) if not isinstance(facts, str) else None
        for f in (p.findings if p is not None and not isinstance(p, str) else ()):
            message = f"{c.label()}: {f.message}" if f.code == "idle-replicas" else f.message
            if f.code in want and message not in out:
                out.append(message)
                # the workload's own words once: the first plan's (a DP plan counts one replica's requests)
                codes.discard(f.code)
    return out


def _untimed(space: SearchSpace, listed: list[Candidate], commands: dict[Candidate, tuple[str, ...]]) -> list[str]:
    """Predict's ``untimed-flag`` findings (``predict.untimed_vllm_flags``: flags of the command no step reads) of
    each option's first listed command, named by the option: its resolved flags, which every plan of it keeps; and
    of the first listed plan of each speculative offer with a command of its own (a recipe feature's other args,
    e.g. Qwen3-Next's --no-enable-chunked-prefill), named by option and method, where the option's did not say it."""
    if space.engine != "vllm":
        return []
    from launchcard.predict import untimed_vllm_flags

    def own(c: Candidate) -> int | None:  # the speculative offer whose own command the plan runs, if any
        opt = next(o for o in space.options if o.name == c.option)
        i = spec_index(opt, c)
        return i if i is not None and i < len(opt.spec_flags) and opt.spec_flags[i] else None

    first = {(c.option, own(c)): c for c in reversed(listed)}  # the first listed plan of each wins
    said = {key: [f.message for f in untimed_vllm_flags(commands[c])] for key, c in first.items()}
    out: list[str] = []
    for key in dict.fromkeys((c.option, own(c)) for c in listed):
        c = first[key]
        name = c.option if key[1] is None else f"{c.option} spec={c.spec}x{c.spec_tokens}"
        base = said.get((c.option, None), []) if key[1] is not None else []
        out += [f"{name}: {m}" for m in said[key] if m not in base]
    return out


def _spec_sources(space: SearchSpace, listed: list[Candidate]) -> list[str]:
    """Where the speculative config of each listed vLLM plan that runs one no recipe gives comes from (its option's
    source: the config's MTP layers, ``assumed``), once per option and method."""
    out: list[str] = []
    for c in listed:
        opt = next(o for o in space.options if o.name == c.option)
        i = spec_index(opt, c)
        if space.engine != "vllm" or i is None or i >= len(opt.spec_source) or opt.off_features is not None:
            continue
        line = f"{opt.name}: speculative decoding {c.spec} x{c.spec_tokens}: {opt.spec_source[i]}"
        if line not in out:
            out.append(line)
    return out


def _shorter_context(outcomes: list[Outcome], work: Workload, space: SearchSpace) -> str | None:
    """Advice when plans fail only because one request of the full context does not fit their KV cache while a
    shorter ``--max-model-len`` that still holds the workload would (the memory planner's own figure)."""
    if space.max_model_len is not None:
        return None
    import re

    fits = [int(m.group(1).replace(",", "")) for o in outcomes if o.stage == "memory" and o.reason
            for m in [re.search(r"largest that fits: ([\d,]+)", o.reason)] if m]
    need = sum(work.longest())  # the longest request (a range ratio widens it)
    usable = [n for n in fits if n >= need]
    if not usable:
        return None
    return (f"{len(usable)} plans do not fit one request of the model's full context, but would with a shorter "
            f"--max-model-len of at least {need} (this workload's requests) and at most what fits each (up to "
            f"{max(usable):,}, the memory planner's figure): pass --max-model-len N to search them")


def search(space: SearchSpace, work: Workload, slo: Slo, *, progress: Progress | None = None,
           top: int = REFINE_TOP) -> SearchResult:
    """Evaluate every candidate of ``space`` under ``work``; rank those meeting ``slo``; the best ``top`` of them
    (at least REFINE_TOP: the rows ``plan --top`` lists) are predicted again on the whole run with the Pareto front
    and the closest misses, every other outcome keeps its screening run's figures (``Outcome.screening_requests``).

    The cyclic garbage collector is paused for the search (and restored): a search leaves no cyclic garbage
    (tests/test_plansearch.py counts it), while the collector's passes over the ~10^5 objects it keeps alive were
    3-13% of a cold search (a full collection ~30 ms); refcounting frees everything it drops at once."""
    import gc

    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _search(space, work, slo, progress, max(top, REFINE_TOP))
    finally:
        if paused:
            gc.enable()


def _search(space: SearchSpace, work: Workload, slo: Slo, progress: Progress | None, top: int) -> SearchResult:
    space = space.validate()
    work = work.validate()
    slo.check(work)
    for opt in space.options:
        _context_fits(space, opt, work)
    start = time.perf_counter()
    clients = load_clients(work)
    total = count(space, clients) if progress else 0
    outcomes: list[Outcome] = []
    quick = screening(work)
    for i, c in enumerate(candidates(space, clients)):
        if not i % 64:
            _bound_caches()
        got = evaluate(space, c, quick, slo)
        # figures of the screening run, said on the outcome until the whole run's replace them
        outcomes.append(replace(got, screening_requests=quick.requests()) if got.figures and quick != work else got)
        if progress and (i + 1) % 16 == 0:  # often enough to move on a search of long runs (a prediction ~1 s)
            progress(i + 1, total)
    done = len(outcomes)
    refined: set[int] = set()
    while quick != work:  # what the answer shows (best, Pareto front, closest) is predicted again on the whole run
        # with the plans that were the same run as a shown one (another max-num-seqs above its peak), so they stay
        # one row (the whole run's prediction for them is mostly the same shared run, computed once); the whole
        # run's figures move plans in and out of what is shown, so until every plan shown has them
        shown = {_run_key(o) for o in _shown(outcomes, slo, top)}
        again = [i for i, o in enumerate(outcomes) if _run_key(o) in shown and i not in refined]
        if not again:
            break
        # the bar's total grows by the plans predicted again (a quarter of a cold search's time): it keeps moving
        total += len(again) if progress else 0
        for j, i in enumerate(again):
            _bound_caches()
            outcomes[i] = _evaluate(space, outcomes[i].candidate, work, slo, screen=quick)
            refined.add(i)
            if progress and (j + 1) % 8 == 0:
                progress(done + j + 1, total)
        done += len(again)
    if progress:
        progress(done, total)
    seconds = time.perf_counter() - start
    ranked = _one_per_run(_ranked(outcomes))
    closest = _closest(outcomes, slo)
    findings = []
    if sum(1 for o in outcomes if o.meets) > len(ranked):
        findings.append("plans differing only in a max-num-seqs above the most requests they ever run at once are "
                        "the same run: each is listed once, with the smallest such limit")
    if clients is not None and any(o.candidate.mode == "disaggregated" and min(
            o.candidate.prefill_gpus, o.candidate.gpus - o.candidate.prefill_gpus) // o.candidate.tp >= clients
            for o in outcomes):
        findings.append(f"prefill/decode splits whose pools both hold at least {clients} replicas serve the same run "
                        "(the other replicas get no request): each is searched once, with the smallest prefill pool")
    if any(o.candidate.mode == "disaggregated" for o in outcomes):
        findings.append(f"disaggregated plans: KV cache sent prefill -> decode at {KV_TRANSFER_BPS / 1e9:g} GB/s per "
                        "GPU (assumed: one 400 Gb/s RDMA NIC per GPU); decode pool predicted with the prompt "
                        "already in its KV cache")
    if space.engine == "sglang":
        findings.append(sglang_note(space.engine_version,
                                    any(_sglang_dpa(_arch(o.config), space.engine_version) for o in space.options)))
        findings += [f"{o.name}: speculative decoding {m} x{k} as the SGLang source runs it ({text}; {where})"
                     for o in space.options for m, k, text, where in o.sglang_spec]
    # the checkpoint's precision as predict and memory name it (an absent or unknown torch_dtype planned as bf16)
    notes = ((o.name, _arch(o.config).precision_note) for o in space.options)
    findings += [f"{name}: {note}" for name, note in notes if note]
    if space.mxfp4_backend is not None:  # --mxfp4-backend where no MXFP4 experts run: said, as predict says it
        from launchcard.memory import mxfp4_experts, settings_with
        from launchcard.predict import unused_backend_note

        for o in space.options:  # the checkpoint's format, or the variant's --quantization, as _settings plans it
            base = _base_settings(o.base_flags, space.engine_version)
            planned = settings_with(base, quantization=o.quantization or base.quantization)
            if not mxfp4_experts(_arch(o.config), planned):
                findings.append(f"{o.name}: {unused_backend_note(space.mxfp4_backend)}")
    held = [o for o in ranked if not o.decided]
    if held:
        findings.append(f"{len(held)} plan(s) meeting the SLO cannot be decided (their figures assume they start and "
                        "fit): ranked after every decided plan, each marked with why (undecided)")
    if quick != work:
        findings.append(f"every plan is first predicted on a screening run of {quick.requests()} requests; the best "
                        f"{top} meeting the SLO, the Pareto front and the closest misses are predicted again on "
                        f"the whole run of {work.requests()} (the figures shown; any other plan's figures are the "
                        "screening run's, as its screening_requests says)")
    findings += _workload_findings(space, [*ranked[:top], *pareto(outcomes)], work,
                                   ranked[0] if ranked else None)
    from launchcard.predict import plans_outside

    findings += plans_outside([o.figures.outside for o in outcomes if o.figures is not None],
                              ranked[0].figures.outside if ranked and ranked[0].figures else ())
    short = _shorter_context(outcomes, work, space)
    if short:
        findings.append(short)
    from launchcard.hardware import find

    gpu = find(space.gpu).id  # the catalog's name, as predict names it, whichever alias was typed
    if not any(kv.startswith("fp8") for kv in kv_dtypes(space)):
        findings.append(f"FP8 KV cache not tried: {gpu} has no FP8 support in the hardware catalog")
    front = pareto(outcomes)
    # the command of each plan an answer lists (in its engine's own flags), as --emit would write its flags
    listed = [o.candidate for o in (*ranked[:COMMANDS_LISTED], *front, *closest) if o.candidate.mode == "aggregated"]
    commands = {c: command_argv(space, next(x for x in space.options if x.name == c.option), c)
                for c in dict.fromkeys(listed)}
    findings += _untimed(space, listed, commands)
    findings += _spec_sources(space, listed)
    return SearchResult(model=space.model, gpu=gpu, gpus=space.gpus, slo=slo, outcomes=tuple(outcomes),
                        ranked=ranked, pareto=front, closest=closest, seconds=seconds,
                        findings=tuple(findings), commands=commands)
