"""``predict``: a plan's facts and a workload in, the serving figures (and what bounds them) out."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.errors import NOT_STARTED, InputError, PredictError, SplitError
from launchcard.idmemo import IdMemo
from launchcard.predict._arrivals import length_range
from launchcard.predict._clock import Schedules
from launchcard.predict._coef import Coefficients, coefficients, light_load_ttft, on_host, seq_count, stage_seconds
from launchcard.predict._domain import domain_findings, engine_name
from launchcard.predict._endpoint import with_endpoint
from launchcard.predict._facts import (
    DEFAULT_ACCEPTANCE,
    ServingFacts,
    facts_from_memory_plan,
    facts_with,
    kv_tokens_at,
)
from launchcard.predict._figures import HardwareFigures
from launchcard.predict._prefix import prefix_finding, prefix_off_finding
from launchcard.predict._sim import simulate
from launchcard.predict._types import TERMS, Finding, Phase, Prediction, SimResult, Workload, config_name

if TYPE_CHECKING:
    from launchcard.limits import MaxLen
    from launchcard.memory import MemoryPlan, Settings
    from launchcard.predict._trtllm import TrtllmLaunch
    from launchcard.resolve import Command, ResolvedPlan


def _acceptance(f: ServingFacts, w: Workload, found: list[Finding]) -> float:
    if not f.spec_tokens:
        return 0.0
    if w.acceptance is not None:
        return w.acceptance
    m = (f.spec_method or "").lower()
    key = next((k for k in ("mtp", "eagle3", "eagle", "ngram", "suffix") if k in m), "draft")
    a = DEFAULT_ACCEPTANCE[key]
    found.append(Finding("assumed", "acceptance",
                         f"speculative decoding ({f.spec_method}, {f.spec_tokens} tokens): per-token acceptance "
                         f"{a} assumed for {key}, a round typical value, not measured for this model or traffic "
                         "(pass --acceptance A from your server's spec-decode metrics)"))
    return a


# (a coefficient set, replicas) -> the set with one client reading that many replicas' streams; (a run handed
# over for reuse) -> its means: a plan search predicts with one coefficient set and hands one simulated run to every
# plan of its group that shares it, so both are computed once, not per prediction (~700 copies of the set, ~600
# reused runs' means a cold search).  Keyed by identity, bounded (dropped whole, as the plan search's caches)
_CLIENT_SETS: IdMemo[Coefficients, Coefficients] = IdMemo(256)
_MEANS: IdMemo[SimResult, tuple[float, float, float, float]] = IdMemo(256)


def _one_client(c: Coefficients, replicas: int) -> Coefficients:
    """``c`` with its client stage reading the streams of ``replicas`` replicas (one benchmark client)."""
    return _CLIENT_SETS.get(c, lambda c: replace(c, stages=c.stages._replace(client_us=c.stages.client_us * replicas)),
                            replicas)


def _means_of(res: SimResult) -> tuple[float, float, float, float]:
    """A finished run's mean and median TTFT, mean E2E and mean TPOT (0 without any), seconds."""
    return _mean(res.ttft), _median(res.ttft), _mean(res.e2e), _mean(res.tpot) if res.tpot else 0.0


def _run_means(res: SimResult) -> tuple[float, float, float, float]:
    """:func:`_means_of` a run handed over for reuse, remembered (only those: the search keeps them anyway)."""
    return _MEANS.get(res, _means_of)


def _mean(pairs: list[tuple[float, int]]) -> float:
    if not pairs:
        return math.nan
    # the same sums as sum(c for _, c in pairs) and sum(v * c for v, c in pairs), in C (a plan search takes
    # three means of ~100 cohorts per prediction)
    vs, cs = zip(*pairs, strict=True)
    n = sum(cs)
    return sum(map(operator.mul, vs, cs)) / n if n else math.nan


def _median(pairs: list[tuple[float, int]]) -> float:
    n = sum(c for _, c in pairs)
    if not n:
        return math.nan
    acc = 0
    for v, c in sorted(pairs):
        acc += c
        if acc * 2 >= n:
            return v
    return sorted(pairs)[-1][0]


def _arrivals(w: Workload, replicas: int, per_rep: int, found: list[Finding],
              engine: str = "vllm") -> tuple[int | None, float | None]:
    """The simulation's (concurrency, rate) for one replica, each arrival pattern stated as ``vllm bench serve``
    makes it (vLLM 0.11.2 vllm/benchmarks/serve.py: get_request sends every request at once when the rate is inf,
    L197; --max-concurrency is a semaphore around the request, L654-664, and the request's TTFT clock starts
    inside it, lib/endpoint_request_func.py L183)."""
    if w.burst:  # a closed loop with as many clients as requests: all start at once, none comes back
        found.append(Finding("assumed", "arrivals",
                             f"all {w.requests()} requests sent at once (request rate inf, no --max-concurrency): "
                             "TTFT includes each one's wait in the engine's queue, the run ends with the last one"))
        if per_rep > 1:
            found.append(_opening_race(f"{per_rep} requests reach the engine together", equal_rounds=False,
                                       engine=engine))
        return per_rep, None
    conc = None
    if w.concurrency is not None:
        # a run of fewer requests than --max-concurrency has no more in flight than it has requests
        clients = min(w.concurrency, w.requests())
        conc = max(1, math.ceil(clients / replicas))
        if clients % replicas:
            found.append(Finding("assumed", "dp-split", f"{clients} clients over {replicas} replicas: "
                                                       f"{conc} per replica (the busiest one predicted)"))
    if w.closed_loop:
        if conc is not None and conc > 1:
            found.append(_opening_race(f"{conc} clients start together", equal_rounds=True, engine=engine))
        return conc, None
    rate = (w.rate or 0.0) / replicas
    if conc is not None:
        found.append(Finding("assumed", "arrivals",
                             f"Poisson arrivals at {w.rate:g} requests/s with at most {w.concurrency} in flight "
                             "(vllm bench serve --request-rate with --max-concurrency): a request finding them all "
                             "busy waits in the client and its TTFT starts when it is sent"))
    return conc, rate


def _opening_race(who: str, *, equal_rounds: bool, engine: str = "vllm") -> Finding:
    """The simulation's rule for requests sent at one instant to an idle engine, and why it is an assumption: which
    of them the engine loop sees first is decided by the OS's scheduling of the client, the API server and the
    engine core, not by the plan. The rule was seen in vLLM's iteration log only: another engine's plan is timed
    with it too, and says so."""
    again = (" and clients of equal lengths stay in step and meet it again each round" if equal_rounds else "")
    seen = ("vLLM's iteration log on the CPU server" if engine == "vllm" else
            f"seen in vLLM's iteration log on the CPU server, not measured on {engine_name(engine)}, whose loop is "
            "timed by the same rule")
    return Finding("assumed", "opening-burst",
                   f"{who}: the idle engine's first step takes the first request that reaches it and the others "
                   f"join the next step ({seen}); how many the first step takes is a "
                   "race between processes (on the CPU server, 128/32 tokens, 4 clients: 1+3, 2+2 or all 4 "
                   f"between runs, TPOT 29-48 ms, README){again}: TTFT and TPOT move with it more than throughput")


def _front_end(c: Coefficients, chat: bool = False) -> Finding:
    """What a GPU prediction's TTFT counts, and what of the API server's front end it leaves out (``chat``: the chat
    endpoint's measured extra, which ``_endpoint`` adds, is not left out)."""
    gap = light_load_ttft(c.key)
    how = ("its size at light load is not recorded for this set" if gap is None else
           f"on those runs at <= {gap[0]} clients, measured minus predicted TTFT is "
           + " / ".join(f"{x:+.0f}" if round(x) else "0" for x in gap[2]) + f" ms (quartiles of {gap[1]} runs)")
    path = ("the API server's request path (HTTP, chat template, tokenizing: ~1 us a prompt token on one CI core, "
            "bench/predict_front.py; streaming the outputs is counted apart, in the streaming stages where measured"
            + ("; the chat endpoint's measured extra over /v1/completions is added: the endpoint finding" if chat
               else "") + ")")
    runs = "(synthetic random-token prompts: InferenceX's client on /v1/completions, aiperf)"
    engine = ("TTFT = the engine's time from the request entering its queue to the first token (queueing, prefill "
              "steps with their launch costs)")
    terms = [t for t in (f"{c.request_ms:g} ms per request" if c.request_ms else "",
                         f"{c.inflight_us:g} us per request in flight" if c.inflight_us else "") if t]
    if not terms:  # the GPU fits hold them (bench/predict_accuracy.py FRONT_HELD)
        return Finding("assumed", "ttft-front-end",
                       f"{engine}, and nothing for {path}: {c.key} holds its API-server terms (request_ms, "
                       f"inflight_us) at 0, because the runs it was fitted on {runs} cannot tell that path apart "
                       f"from the engine's light-load cost; {how}")
    return Finding("assumed", "ttft-front-end",
                   f"{engine} + {' + '.join(terms)} ({c.key}'s API-server terms, fitted). {path[0].upper()}"
                   f"{path[1:]} cannot be told apart from the engine's light-load cost in the runs the set was "
                   f"fitted on {runs}; {how}")


def predict(facts: ServingFacts, workload: Workload, coef: Coefficients | None = None, *,
            schedules: Schedules | None = None, reuse: SimResult | None = None) -> Prediction:
    """Predict one plan under one workload (closed loop or Poisson), as ``vllm bench serve`` would measure it.

    Bad input raises :class:`~launchcard.errors.InputError` (exit 2); a plan that cannot serve one
    request of the workload raises :class:`~launchcard.errors.PredictError` (exit 1).

    ``reuse`` (a plan search's): the run (``Prediction.run``) of a plan that differs from this one only in its KV
    pool and in batch limits the caller has shown not to bind; it stands for this plan's own simulation when this
    plan's KV capacity is at least the run's ``kv_free_from`` (every KV decision then falls alike), and every
    finding is still this plan's own.
    """
    w = workload.validate()
    f = facts
    off_hit = w.prefix_hit if f.prefix_off else 0.0
    if off_hit:  # the plan's prefix cache is off: the engine reuses nothing (_prefix; predict_launch refuses it)
        w = replace(w, prefix_hit=0.0)
    c0 = coef or coefficients(f.hardware.kind, f.engine, f.hardware.vendor, f.hardware.arch)
    base = c0
    # the endpoint's own request path and chunks (measured; before on_host: they scale with the request path's speed)
    c0, endpoint_finding = with_endpoint(c0, f.engine, f.release, w.endpoint, f.model_type)
    hw = f.hardware
    c = on_host(c0, hw.host_op_us, hw.front_op_us, client_op_us=hw.client_op_us, request_op_us=hw.request_op_us)
    found: list[Finding] = list(f.findings)
    if endpoint_finding is not None:
        found.append(endpoint_finding)
    need = sum(w.longest())
    _check_fits(f, need)
    kv_engine = f.kv_capacity_tokens  # the engine's pool per replica, the figure plan --json gives
    if f.kv_pool_tokens:
        # the simulation charges KV linearly in context: a hybrid sliding-window model's pool is taken at the mean
        # context a running request holds (prompt + half its output)
        held = kv_tokens_at(f, w.isl + w.osl / 2.0)
        found.append(Finding("info", "kv-sliding-window",
                             f"vLLM frees sliding-window layers' KV blocks out of their {f.window}-token window "
                             "(hybrid KV cache manager, 0.10+: vllm/v1/core/single_type_kv_cache_manager.py "
                             f"SlidingWindowManager.remove_skipped_blocks): its pool of {f.kv_pool_tokens:,} tokens of "
                             f"every layer holds {held:,} tokens of requests of this workload's mean context "
                             f"({w.isl + w.osl // 2:,} tokens)"))
        f = facts_with(f, kv_capacity_tokens=held)
    kv_simulated = f.kv_capacity_tokens
    acc = _acceptance(f, w, found)
    total = w.requests()
    f, replicas = lockstep_group(f)
    # the replicas that get a request: C clients (or a burst of N) keep at most C (N) of them busy, and C clients
    # of a run of N < C requests at most N (vllm bench serve sends N prompts; its semaphore of C never waits); the
    # others serve nothing, so they add no throughput (their GPUs still count per GPU)
    clients = min(w.concurrency, total) if w.closed_loop and w.concurrency else None
    busy = min(replicas, clients) if clients else (min(replicas, total) if w.burst else replicas)
    if busy < replicas:
        found.append(Finding("warning", "idle-replicas",
                             f"{clients if clients else total} "
                             f"{'clients keep' if w.closed_loop else 'requests at once keep'} only {busy} of the "
                             f"{replicas} data-parallel replicas busy: the other {replicas - busy} serve nothing "
                             "(throughput counts the busy ones, per GPU all GPUs)"))
    replicas = busy
    if replicas > 1 and c.stages.client_us:
        # one benchmark client reads every replica's streams; each replica has its own API server (vLLM starts
        # --api-server-count = --data-parallel-size by default, vllm/entrypoints/cli/serve.py in 0.32.0)
        c = _one_client(c, replicas)
    per_rep = max(1, math.ceil(total / replicas))
    conc, rate = _arrivals(w, replicas, per_rep, found, f.engine)
    if w.num_requests is None:
        found.append(Finding("assumed", "num-requests",
                             f"{total} requests ({w.requests_rule()}; pass --num-requests)"))
    table = w.lengths(per_rep)
    if table:
        # a replica's requests are scaled to the means over its own share of the run, not the run's whole draw
        # (Workload.longest): its longest request can be longer than the one checked above
        if (longest := max(p + o for p, o in table)) > need:
            _check_fits(f, longest)
        found.append(_dataset_finding(w, per_rep, replicas))
    if w.range_ratio:
        lo, hi = length_range(w.isl, w.range_ratio)
        found.append(Finding("assumed", "range-ratio",
                             f"prompt lengths {lo}-{hi} (output alike), uniform as vllm bench serve draws them: "
                             "each request simulated with its own pair, spread evenly over both ranges (a "
                             "low-discrepancy sequence in place of the client's seeded random draw)"))
    if off_hit:
        found.append(prefix_off_finding(f.prefix_off, off_hit))
    if w.prefix_hit:
        # the share as given (0.999 was said as "100%", a share --prefix-hit refuses), and the tokens it simulates
        # by the engine's reuse granularity (_prefix)
        found.append(prefix_finding(f.engine, w.isl, w.prefix_hit, f.prefix_block, f.prefix_read))
    found.append(Finding("info", "coefficients", f"efficiency/overhead terms {c.key}: {c.fitted_on}"))
    if f.hardware.kind == "gpu":
        found.append(_front_end(base, chat=w.endpoint == "chat"))
    if c is not c0 and f.hardware.host_op_us:
        found.append(_host_speed(c0, f.hardware))
    if reuse is not None and max(1, f.kv_capacity_tokens) >= reuse.kv_free_from:
        res = reuse
    else:
        res = simulate(f, c, isl=w.isl, osl=w.osl, concurrency=conc, rate=rate, requests=per_rep,
                       prefix_hit=w.prefix_hit, acceptance=acc, schedules=schedules, range_ratio=w.range_ratio,
                       lengths=table)
    if res.requests < per_rep:
        raise PredictError(f"the scheduler could not serve every request ({res.requests} of {per_rep})",
                           field="plan", fix="give the plan more KV cache or batching room")
    # where the plan and workload leave the runs the coefficient set was fitted on (one finding per cause)
    span_i, span_o = ((min(p for p, _ in table), max(p for p, _ in table)),
                      (min(o for _, o in table), max(o for _, o in table))) if table else (
        length_range(w.isl, w.range_ratio), length_range(w.osl, w.range_ratio))
    found += domain_findings(f, span_i, span_o, res.running_max, c)
    if res.preemptions:
        found.append(Finding("warning", "preemption",
                             f"KV cache ran out {res.preemptions} times: requests "
                             + ("retracted to the end of the queue and prefilled again (SGLang: their time between "
                                "tokens includes that wait) " if f.sglang_budget is not None else
                                "preempted and recomputed ")
                             + f"({f.kv_capacity_tokens} KV tokens per replica)"))
    if conc is not None and conc > f.max_num_seqs:
        found.append(Finding("warning", "max-num-seqs", f"{conc} {'requests' if w.burst else 'clients'} per replica "
                                                        f"but max_num_seqs {f.max_num_seqs}: the rest queue"))
    if conc is not None and conc * (w.isl + w.osl) > f.kv_capacity_tokens:
        found.append(Finding("warning", "kv-capacity",
                             f"{conc} requests of {w.isl + w.osl} tokens exceed the KV pool "
                             f"({f.kv_capacity_tokens} tokens): requests queue for KV room"))
    if res.decode["streaming"] > 0.5 * sum(res.decode.values()) or res.prefill["streaming"] > 0.5 * sum(
            v for k, v in res.prefill.items() if k != "queueing"):
        found.append(_streaming_finding(c, res.running_max, replicas, f.engine))
    if f.engine == "vllm" and f.hardware.kind == "gpu" and c.seq_rise.hi:
        found.append(_engine_host_finding(f, c, res.running_max))
    span = max(res.makespan, 1e-12)
    ttft_mean, ttft_median, e2e_mean, tpot = _run_means(res) if res is reuse else _means_of(res)
    # requests of different lengths: the mean ITL weighs each by its output tokens (SimResult.decode_s); equal
    # requests: the same mean as TPOT's
    itl = res.decode_s / res.decode_tokens if (table or w.range_ratio) and res.decode_tokens else tpot
    out_rate = res.output_tokens / span * replicas
    steps = tuple(dict(s) for s in res.samples)
    return Prediction(
        ttft_ms_mean=ttft_mean * 1e3, ttft_ms_median=ttft_median * 1e3, tpot_ms_mean=tpot * 1e3,
        itl_ms_mean=itl * res.tokens_per_step * 1e3, e2e_ms_mean=e2e_mean * 1e3, output_tok_per_s=out_rate,
        output_tok_per_s_per_gpu=out_rate / max(1, f.gpus),
        output_tok_per_s_per_user=(1.0 / tpot if tpot > 0 else 0.0),
        request_per_s=res.requests / span * replicas, gpus=f.gpus,
        prefill=Phase("prefill", {k: res.prefill[k] for k in TERMS}),
        decode=Phase("decode", {k: res.decode[k] for k in TERMS if k != "queueing"} | {"queueing": 0.0}),
        mean_batch=res.batch_steps / res.decode_steps if res.decode_steps else 0.0,
        mean_step_ms=res.busy / max(1, res.steps) * 1e3, preemptions=res.preemptions,
        kv_cache_tokens=kv_engine, kv_cache_tokens_simulated=kv_simulated, findings=tuple(found),
        steps=steps, max_running=res.running_max, graph_span=res.graph_span, run=res,
    )


def _context_flag(engine: str) -> str:
    """The served context's flag by the name the plan's engine takes (SGLang's and trtllm-serve's from their
    EngineWords, the words their findings restate the planner's defaults in)."""
    if engine == "sglang":
        from launchcard.predict._sglang import sglang_terms

        return sglang_terms().context_flag
    if engine == "trtllm":
        from launchcard.predict._trtllm import trtllm_terms

        return trtllm_terms().context_flag
    return "--max-model-len"


def _check_fits(f: ServingFacts, need: int) -> None:
    """Refuse a workload one of whose requests (``need`` tokens of context) the plan cannot serve at all."""
    if need > f.max_model_len:
        flag = _context_flag(f.engine)
        raise InputError(f"the workload needs {need} tokens of context, more than the served {flag} "
                         f"{f.max_model_len}", field="isl",
                         fix=f"shorten --isl/--osl or raise {flag} (to at least {need})")
    if need > kv_tokens_at(f, need):
        raise PredictError(f"one request of {need} tokens needs more KV cache than the plan holds "
                           f"({kv_tokens_at(f, need)} tokens per replica)", field="plan",
                           fix=f"use more GPUs (--tp), {_fp8_kv_advice(f)}a shorter workload")


def _fp8_kv_advice(f: ServingFacts) -> str:
    """The FP8 KV cache advised where a request does not fit, in the engine's flag, only where the engine takes one
    on the plan's GPU ("" elsewhere).  SGLang 0.5.6.post2 accepts fp8_e4m3/fp8_e5m2 on any CUDA GPU
    (python/sglang/srt/server_args.py L2318-2322, no capability check; model_runner.py L1640-1649), but on a GPU
    without FP8 (an A100, SM80) its default attention for MLA models is Triton (server_args.py L1374-1404) whose
    kernels read the FP8 buffer as FP8 (layers/attention/triton_ops/decode_attention.py L121-125, through
    mem_cache/memory_pool.py L733-734), a type Triton refuses below SM89 (sgl-project/sglang#38291 on an A100):
    advised only on a GPU the catalog gives FP8, as fp8_e4m3, the one every default backend there takes (FA3
    turns fp8_e5m2 into Triton, server_args.py L1481-1486; TRT-LLM MLA takes fp8_e4m3 alone, L1460-1463)."""
    if f.engine != "sglang":
        return "an FP8 KV cache, or "
    from launchcard.hardware import lookup

    acc = lookup(f.hardware.id)
    return "an FP8 KV cache (--kv-cache-dtype fp8_e4m3), or " if acc is not None and acc.supports_fp8 else "or "


def _dataset_finding(w: Workload, n: int, replicas: int = 1) -> Finding:
    """What a dataset workload's per-request lengths are, where they come from, and how they were scaled; with
    several busy replicas, that each is simulated with the draw's first ``n`` (the replicas alike)."""
    from launchcard.predict._lengths import describe, scale_factors

    table = w.lengths(n)
    a, b = scale_factors(str(w.dataset), n, w.isl, w.osl)
    ps, os_ = sorted(p for p, _ in table), sorted(o for _, o in table)
    scaled = ("as counted" if a == 1.0 and b == 1.0 else
              f"scaled x{a:.2f} (prompts) and x{b:.2f} (outputs) from the pool's counts to the means "
              f"{w.isl}/{w.osl}, the shape kept")
    return Finding("assumed", "dataset-lengths",
                   f"{w.dataset}: {n} requests"
                   + (f" per replica (each of the {replicas} busy replicas simulated with the draw's first {n})"
                      if replicas > 1 else "")
                   + f" with {describe(str(w.dataset))}, {scaled}: prompts {ps[0]}-{ps[-1]} "
                   f"(median {ps[len(ps) // 2]}), outputs {os_[0]}-{os_[-1]} (median {os_[len(os_) // 2]})")


def _host_speed(c: Coefficients, hw: HardwareFigures) -> Finding:
    """How the host terms of ``c`` were scaled to this host's measured op times (on the engine's core, the API
    server's, the client's and a request's path through both, where measured; see :func:`on_host`)."""
    ref, op, fop = c.host_op_us, hw.host_op_us or c.host_op_us, hw.front_op_us

    def scale(here: float) -> str:
        r = f"{here / ref:.2f}"
        return "as fitted" if r == "1.00" else f"x{r}"

    if fop and fop != op:
        text = (f"host overhead terms {scale(op)} on the engine's core (one kernel call measured {op:.2f} us), the "
                f"API server's {scale(fop)} on its own ({fop:.2f} us), against {ref:.2f} us where {c.key} was fitted")
    else:
        text = (f"host overhead terms {scale(op)}: one kernel call measured {op:.2f} us here, {ref:.2f} us where "
                f"{c.key} was fitted")
    if hw.request_op_us:
        text += (f"; a request's path through the client and the API server {scale(hw.request_op_us)} "
                 f"({hw.request_op_us:.2f} us)")
    if hw.client_op_us:
        text += f"; the client's stage {scale(hw.client_op_us)} ({hw.client_op_us:.2f} us)"
    return Finding("info", "host-speed", text)


def _streaming_finding(c: Coefficients, running: int, replicas: int, engine: str) -> Finding:
    """Why the client's view is paced by the API server or the client, not the engine, and what that rests on
    (``c``: the set as simulated, its client stage carrying every replica's outputs)."""
    api, client = stage_seconds(c, running)
    n = max(1, running)
    outputs = (f"{running} requests' outputs" if replicas == 1 else
               f"{running * replicas} requests' outputs ({running} from each of {replicas} replicas)")
    if api >= client:
        slow, split = "the API server", "more API servers (vLLM's --api-server-count) would split it"
    else:
        slow, split = "the benchmark client", "several benchmark clients would split it"
    stages = (f"API server {api / n * 1e6:.1f} us, client" if c.stages.api_us else "client")
    measured = (f"{stages} {client / n / replicas * 1e6:.1f} us per request per step at this size, measured with "
                "vLLM's own server and vllm bench serve on a 2-core Xeon, bench/measure_host_stream.py")
    if not c.stages.api_us:
        measured += f"; no API server stage: {c.key} has none measured for {engine_name(engine)}"
    return Finding("assumed", "streaming",
                   f"{slow} sets the pace of the tokens the benchmark sees: {outputs} take it "
                   f"{max(api, client) * 1e3:.1f} ms a step, longer than the engine's step ({measured}; the serving "
                   f"host's cores are assumed as fast; {split})")


def _engine_host_finding(f: ServingFacts, c: Coefficients, running: int) -> Finding:
    """vLLM's measured host work per step at the run's largest batch (the part every step pays and the per-sequence
    part), and whether it is in series with the step."""
    n = max(1, running)
    per = c.seq_us * seq_count(c, n) * 1e-3
    ms = per + c.step_us * 1e-3
    why = f" ({f.host_overlap_rule})" if f.host_overlap_rule else ""
    how = (f"async scheduling{why} runs it beside the kernels: it costs time only where it is longer than a step"
           if f.host_overlap else f"without async scheduling{why} it is in series with every step")
    total = f"{ms:.1f} ms" if ms >= 0.1 else f"{ms * 1e3:.0f} us"
    step = f", beside {c.step_us:.0f} us every step pays" if c.step_us else ""
    return Finding("assumed", "engine-host",
                   f"the engine's host work per step (scheduler, output building, the model runner's input "
                   f"preparation) takes {total} a step at {n} request{'s' if n != 1 else ''} "
                   f"({per * 1e3 / n:.1f} us each{step}: measured on vLLM's own server, bench/measure_engine_seq.py, "
                   f"at the measuring VM's host speed; the serving host's cores are assumed as fast); {how}")


def served_command(plan: ResolvedPlan) -> Command:
    """The one server process a prediction of ``plan`` times, the same for ``predict MODEL`` and the web's
    prediction panel: the single server, a multi-node plan's head (rank 0; its workers run the same engine) or one
    instance of a KV-store plan. A prefill/decode plan (two pools joined by a KV transfer: no one server's step
    is its step) and an omni pipeline (stages vLLM-Omni places itself) have none: InputError (exit 2), never the
    figures of one of their processes on its own."""
    if plan.deploy_type == "pd_cluster":
        raise InputError(f"{plan.model_id}'s {plan.strategy} plan is prefill/decode pools joined by a KV transfer, "
                         "not one server, and is not predicted as one", where="--strategy",
                         fix="predict an aggregated --strategy, or search prefill/decode pools with launchcard plan "
                             "(--gpus spanning several nodes)")
    if plan.deploy_type == "omni":
        raise InputError(f"{plan.model_id} is an omni pipeline (stages placed by vLLM-Omni): not predicted",
                         where="--strategy", fix="predict a text model's plan")
    cmd = next((c for c in plan.commands if c.role in ("single", "head", "instance")), None)
    if cmd is None:
        raise InputError(f"{plan.model_id}'s plan has no serving process to predict", where="--strategy",
                         fix="pick another --strategy")
    return cmd


def check_generates(config: str | Path, engine: str = "vllm") -> None:
    """InputError (exit 2) when the engine serves the config's model with no generated token to time: vLLM's
    pooling models (an embedding, reranker or classifier class, :func:`launchcard.memory.pooling_architecture`).
    vLLM's registry is the evidence, so only vLLM plans are judged (SGLang's and TensorRT-LLM's are not read)."""
    from launchcard.memory import load_arch, pooling_architecture

    why = pooling_architecture(load_arch(config).architectures) if engine == "vllm" else None
    if why:
        raise InputError(f"{why}: there is no TTFT, TPOT or output token rate to predict", where="--config",
                         fix="use a text-generation checkpoint (a class vLLM runs with its generate runner)")


def shorten(limit: int, need: int, mean: int | None) -> str:
    """The fix of a workload longer than ``limit``: ``need`` is its longest request, ``mean`` --isl + --osl (None:
    lengths exact).  Where lengths vary around the means (--dataset, --random-range-ratio) the longest scales with
    them, so the means to stay under is ``limit`` x mean / need, said as an estimate (each request is rounded)."""
    if mean is None or need <= mean:
        return f"shorten --isl/--osl to at most {limit} tokens together"
    return (f"shorten --isl/--osl: lengths vary around them (--dataset, --random-range-ratio) and the longest request "
            f"is {need / mean:.2f}x --isl + --osl ({mean}), so keep them at most about {limit * mean // need} "
            "together")


def check_context(config: str | Path, served: int | None, need: int, version: str | None = None, *,
                  name: str | None = None, engine: str = "vllm", mean: int | None = None) -> None:
    """InputError (exit 2) when one request of ``need`` tokens is longer than the served context (``served``:
    the plan's --max-model-len, None = vLLM's default), with advice vLLM would take: raise --max-model-len only
    up to the length vLLM derives from the config (RoPE scaling included); its own override named as such.
    ``engine`` sglang, trtllm: the same lengths (what their facts are planned with), in that engine's terms."""
    from launchcard.limits import ALLOW_LONG, max_len
    from launchcard.memory import load_arch

    # the length fields as the memory planner read them (a nested text_config's class defaults filled in)
    ml = max_len(dict(load_arch(config).length_config), version)
    if engine == "sglang":
        if served is not None:
            limit, why = served, "--context-length"
        elif ml is not None:
            limit, why = ml.limit, f"the config: {ml.how()}"
        else:
            return
        if need > limit:
            more = (f", or a longer --max-model-len (written as --context-length, up to {ml.limit})"
                    if ml is not None and ml.limit > limit else "")
            raise InputError(f"the workload needs {need} tokens of context, more than the {limit} the SGLang plans "
                             f"serve ({why})", where="--isl",
                             fix=f"{shorten(limit, need, mean)}{more}")
        return
    if engine == "trtllm":
        _check_trtllm_context(served, need, ml, mean)
        return
    if served is not None and need > served:
        more = f" or raise --max-model-len (vLLM accepts up to {ml.limit})" if ml and ml.limit > served else ""
        raise InputError(f"the workload needs {need} tokens of context, more than --max-model-len {served}",
                         where="--isl", fix=f"{shorten(served, need, mean)}{more}")
    if served is None and ml is not None and need > ml.limit:
        raise InputError(f"the workload needs {need} tokens of context, more than the {ml.limit} vLLM accepts for "
                         f"{name or config} ({ml.how()})", where="--isl",
                         fix=f"{shorten(ml.limit, need, mean)} (vLLM's own override, "
                             f"{ALLOW_LONG}=1 with a longer --max-model-len, only if the model really handles it)")


def _check_trtllm_context(served: int | None, need: int, ml: MaxLen | None, mean: int | None = None) -> None:
    """:func:`check_context` in trtllm-serve's terms: its ``--max_seq_len`` (the options file's ``max_seq_len``).
    Without one, trtllm-serve infers the length from the config (NVIDIA/TensorRT-LLM
    tensorrt_llm/_torch/pyexecutor/model_engine.py ``_init_max_seq_len``, whose handling of a longer one differs by
    version: the earliest stored keep it, later ones cut it to the inferred length, the newest keep it only with
    TLLM_ALLOW_LONG_MAX_MODEL_LEN set, so the fix names no outcome; the length from
    _torch/models/modeling_utils.py ``infer_max_seq_len``, its own reading of max_position_embeddings and RoPE
    scaling): the plan is planned with the config's length as launchcard derives it, said as such."""
    opt = "--max_seq_len (max_seq_len in an --extra_llm_api_options file)"
    cut = ("whether trtllm-serve keeps a --max_seq_len longer than the length it infers from the config depends on "
           "its version (model_engine.py _init_max_seq_len)")
    if served is not None and need > served:
        raise InputError(f"the workload needs {need} tokens of context, more than trtllm-serve's --max_seq_len "
                         f"{served}", where="--isl",
                         fix=f"{shorten(served, need, mean)}, or raise {opt} ({cut})")
    if served is None and ml is not None and need > ml.limit:
        raise InputError(f"the workload needs {need} tokens of context, more than the model's {ml.limit} "
                         f"({ml.how()}, the length the plan is planned with; trtllm-serve without --max_seq_len "
                         "serves the length it infers from the config)", where="--isl",
                         fix=f"{shorten(ml.limit, need, mean)} ({cut})")


def check_command_context(argv: Sequence[str], config: str | Path, need: int, version: str | None = None, *,
                          name: str | None = None, mean: int | None = None) -> None:
    """:func:`check_context` of an SGLang server command: its own ``--context-length`` (else the config's length),
    in SGLang's terms; the one check ``predict`` and the web's prediction panel make of an SGLang plan."""
    from launchcard.argv import parse_command

    served = parse_command(list(argv), engine="sglang").get_int("--context-length")
    check_context(config, served, need, version, name=name, engine="sglang", mean=mean)


def serving_facts(config: str | Path, settings: Settings, *, gpu: str | None = None,
               hardware: HardwareFigures | None = None, engine: str = "vllm", model: str | None = None,
               gpu_memory_gib: float | None = None, safetensors_index: str | Path | None = None,
               trtllm: TrtllmLaunch | None = None) -> ServingFacts:
    """Memory-plan ``settings`` for the model of ``config`` on ``gpu`` and return its plan facts.

    ``trtllm``: a TensorRT-LLM launch's own settings (KV fraction, chunked prefill; None: trtllm-serve's defaults).

    ``hardware`` replaces the catalog's figures (measured ones, e.g. this machine's CPU).
    Raises PredictError (exit 1) when the plan does not fit.
    """
    from launchcard.hardware import find
    from launchcard.memory import load_arch, plan_memory

    arch = load_arch(config, safetensors_index)
    acc = find(gpu) if gpu else None
    hw = hardware or (HardwareFigures.from_accelerator(acc) if acc else None)
    if hw is None:
        raise InputError("no hardware given", field="gpu",
                         fix="pass --gpu NAME or --hardware-figures FILE")
    s = settings
    if hw.kind == "cpu" and s.device != "cpu":
        s = replace(s, device="cpu")
    if hw.kind != "cpu" and not hw.p2p and s.gpu_p2p is None:
        s = replace(s, gpu_p2p=False)  # figures without peer access (--no-gpu-p2p): no custom all-reduce buffers
    planned_s = s
    if engine == "trtllm":  # activations of a max_num_tokens step (its KV sizing dry run)
        from launchcard.predict._trtllm import ep_refusal, planned_settings, platform_refusal

        platform_refusal(acc)  # NVIDIA GPUs only: bad input before any memory plan
        refused = ep_refusal(arch, s)
        if refused:  # the server does not start: a plan that fails its check, as SGLang's --ep-size
            raise SplitError(refused[0], where="--ep_size", fix=refused[1])
        planned_s = planned_settings(s)
    plan = plan_memory(arch, planned_s, gpu=acc, gpu_memory_gib=gpu_memory_gib)
    other = _other_engine(plan, engine)
    if not plan.fits and not other:
        raise PredictError(f"the plan {NOT_STARTED}: {plan.problems[0]}", field="plan",
                           fix=(("the memory planner's nearest plan that fits: " if plan.advice[0].startswith("--")
                                 else "") + plan.advice[0] if plan.advice else "use more GPUs or a smaller model"))
    name = model or config_name(config)
    facts = facts_from_memory_plan(arch, s, plan, hw, model=name, engine=engine, trtllm=trtllm)
    # the memory plan's own defaults and inferences (context, KV dtype, memory share, batching limits, config
    # fields) bound every figure: each is an assumption of the prediction too; so is what the plan cannot decide
    # TensorRT-LLM: in its own terms (vLLM's memory share and batching defaults replaced by its own findings kv-pool,
    # max-batch-size, max-num-tokens; vLLM's length and KV dtype defaults not stated as TensorRT-LLM's)
    if engine == "trtllm":
        from launchcard.memory import assumption_as
        from launchcard.predict._trtllm import trtllm_terms

        words = trtllm_terms()
        said = [assumption_as(a.code, a.what, words) for a in plan.assumed]
    else:
        said = [a.what for a in plan.assumed]
    planned = (*(Finding("assumed", "memory-plan", w) for w in said if w is not None),
               *undecided_findings(plan, engine),
               *other)
    return facts_with(facts, findings=(*planned, *facts.findings))


def lockstep_group(f: ServingFacts) -> tuple[ServingFacts, int]:
    """The facts one scheduler runs and how many such schedulers run apart.  Replicas run apart (``f`` itself,
    ``f.replicas`` of them); SGLang's DP-attention ranks step together (``ServingFacts.lockstep``): the group's
    facts hold every rank's limits together (the simulation gives each rank its share:
    ``_sglang_dp.simulate_ranks``), its steps are timed as the busiest rank's (_clock._rank_share), and the facts
    keep their replicas for the MoE layers' tokens.  ``predict`` and the calibration's simulation
    (bench/predict_accuracy.py) both take it here."""
    g = f.lockstep
    if g <= 1:
        return f, max(1, f.replicas)
    return facts_with(f, kv_capacity_tokens=f.kv_capacity_tokens * g, max_num_seqs=f.max_num_seqs * g,
                   max_num_batched_tokens=f.max_num_batched_tokens * g,
                   graph_tokens=None if f.graph_tokens is None else f.graph_tokens * g), 1


def undecided_findings(plan: MemoryPlan, engine: str) -> tuple[Finding, ...]:
    """What a vLLM plan cannot decide offline, as assumptions its figures rest on: whether it fits (a kernel
    package the command does not show, e.g. FlashInfer's sampler: ``memory-undecided``) and whether vLLM starts
    (a KV dtype or quantization on a platform whose backends or lists were not captured: ``startup-undecided``).
    None for another engine: both are vLLM's rules (its sampler's memory, its start-up checks), never another
    engine's verdict.  ``predict`` and the plan search both state them from here."""
    if engine != "vllm":
        return ()
    return (*(Finding("assumed", "memory-undecided", w) for w in plan.undecided),
            *(Finding("assumed", "startup-undecided", w) for w in plan.startup_undecided))


def _other_engine(plan: MemoryPlan, engine: str) -> tuple[Finding, ...]:
    """For an SGLang or TensorRT-LLM plan, vLLM's start-up refusals as assumptions (the memory planner models
    vLLM: its length, parser and KV-for-one-request checks are vLLM's own, not the other engine's); empty when
    the engine is vLLM, the plan fits, or vLLM's accounting leaves no KV pool at all (no capacity to predict
    with)."""
    if engine == "vllm" or plan.fits or plan.kv_cache_tokens <= 0:
        return ()
    pool = ("TensorRT-LLM's own (finding kv-pool)" if engine == "trtllm"
            else f"vLLM's accounting ({plan.kv_cache_tokens:,} tokens)")
    return tuple(Finding("assumed", "memory-engine",
                         f"not judged for {engine}: the memory planner models vLLM, which would refuse: {p}; the KV "
                         f"capacity used is {pool}")
                 for p in plan.problems)
