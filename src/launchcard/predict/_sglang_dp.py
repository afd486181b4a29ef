"""SGLang's DP-attention ranks as schedulers of their own, stepping together (``_sim.simulate`` with
``ServingFacts.lockstep`` g > 1 under SGLang's own admission rule).

Each DP-attention rank runs its own Scheduler: its own waiting queue, KV pool (``--max-total-tokens``' share: the
pool is per rank), running batch, chunked-prefill budget (``chunked_prefill_size // dp``) and new-token ratio; the
DP controller hands requests to the ranks in turn (``round_robin``, SGLang's default ``load_balance_method``:
0.5.6.post2 server_args.py L365, managers/data_parallel_controller.py L471-479).  Every step each rank picks its
own batch as a lone scheduler does (``get_next_batch_to_run``: a prefill batch when it can form one, else its
decode batch, retracting when that finds no KV), then the ranks exchange their batch sizes and modes
(``prepare_mlp_sync_batch``: 0.5.6.post2 managers/scheduler_dp_attn_mixin.py L105-131; a rank with no batch runs
an idle one, L163-173) and run the step's shared layers together: the step lasts as its slowest rank's
(:class:`launchcard.predict._clock._Clock` times a step of the group's totals as the busiest rank's, a prefill on
any rank takes every rank off CUDA graphs, L68-69 there and model_executor/cuda_graph_runner.py L388), and every
rank that ran its decode batch gives its requests their token(s), prefill on another rank or not.

A scheduler is idle (its new-token ratio back at the start) only when the whole group is: a rank with no batch of
its own still runs the group's step with an idle batch.
"""

from __future__ import annotations

import math
from collections import deque

from launchcard.predict._clock import _Clock, graphed
from launchcard.predict._coef import Coefficients, theta
from launchcard.predict._cost import features, step_terms, step_work
from launchcard.predict._facts import ServingFacts
from launchcard.predict._front import fold
from launchcard.predict._prefix import cached_prefix
from launchcard.predict._sched import _Cohort, _Scan
from launchcard.predict._sglang_rules import SglangBudget
from launchcard.predict._sglang_sched import sglang_prefill, sglang_retract
from launchcard.predict._types import SimResult


class _Rank:
    """One DP-attention rank's scheduler state."""

    __slots__ = ("full", "ratio", "running", "waiting")

    def __init__(self, ratio: float) -> None:
        self.waiting: list[_Cohort] = []
        self.running: list[_Cohort] = []
        self.full = False  # a refused admission still stands (none tried until a request leaves)
        self.ratio = ratio


class _Dispatch:
    """The DP controller's round robin: request i of the run goes to rank i mod g."""

    def __init__(self, ranks: list[_Rank]) -> None:
        self.ranks, self.next = ranks, 0

    def send(self, co: _Cohort) -> None:
        """Hand the cohort's requests to the ranks in turn (split where they fall on several ranks)."""
        g = len(self.ranks)
        base, extra = divmod(co.n, g)
        parts = [(self.ranks[(self.next + j) % g], base + (1 if j < extra else 0)) for j in range(g)]
        parts = [(k, m) for k, m in parts if m]
        self.next = (self.next + co.n) % g
        for k, m in parts[:-1]:
            k.waiting.append(co.split(m))
        parts[-1][0].waiting.append(co)


def simulate_ranks(f: ServingFacts, c: Coefficients, rule: SglangBudget, *, isl: int, osl: int,
                   concurrency: int | None, rate: float | None, requests: int, prefix_hit: float, tps: float,
                   seed: int, trace: bool, range_ratio: float, lengths: tuple[tuple[int, int], ...]) -> SimResult:
    """``_sim.simulate`` for a DP-attention group of ``f.lockstep`` ranks (the module docstring); ``f`` holds the
    group's limits (``lockstep_group``: every rank's together), each rank gets a g-th of them."""
    from launchcard.predict._sim import _arrival, _next_receive, arrival_times, new_requests

    g = f.lockstep
    cap = max(1, f.kv_capacity_tokens // g)
    seats_max = max(1, f.max_num_seqs // g)
    budget = max(1, f.max_num_batched_tokens // g)
    clip = rule.clip
    newest = f.spec_tokens > 0
    per_seq = 1 + f.spec_tokens
    ranks = [_Rank(rule.init) for _ in range(g)]
    send = _Dispatch(ranks).send
    clock = _Clock(f, c, tps)
    res = clock.res
    closed = concurrency is not None and rate is None
    capped = concurrency is not None and rate is not None
    limit = concurrency or 0
    gap = c.request_ms * 1e-3 if c.front_in_schedule and closed else 0.0
    reenter: deque[tuple[float, _Cohort]] = deque()
    arrivals: list[float] = arrival_times(requests, rate, seed)[::-1] if rate is not None else []
    cached = cached_prefix(isl, prefix_hit, f.prefix_block)
    need = isl - cached
    recv_n = f.recv_interval if closed and f.recv_interval > 1 else 1
    lag = f.recv_lag if closed else 0
    hold = closed and (recv_n > 1 or lag > 0)
    held: list[_Cohort] = []
    held_at: list[int] = []
    recv_count = 0
    recv_due = False
    top_prev, busy_prev = 0.0, 0
    issued = 0
    late: list[_Cohort] = []

    def in_order(m: int, j0: int) -> list[tuple[int, int, int, int]]:
        """``new_requests`` one request at a time where their lengths differ: the round robin hands them out in the
        order they are sent (new_requests groups alike lengths)."""
        if range_ratio <= 0.0 and not lengths:
            return new_requests(m, j0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block)
        return [x for j in range(j0, j0 + m)
                for x in new_requests(1, j, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block)]

    def in_flight() -> int:
        return sum(r.n for k in ranks for r in (*k.running, *k.waiting))

    if closed:
        assert concurrency is not None
        first_n = min(concurrency, requests)
        for n, nd_, ca, ol in new_requests(1, 0, isl, osl, range_ratio, prefix_hit, lengths, f.prefix_block):
            send(_Cohort(n, 0.0, nd_, ca, ol, 0.0))
        if first_n > 1:  # the rest of the opening burst reaches the engine after its first step (as _sim)
            late = [_Cohort(n, 0.0, nd_, ca, ol, first_n / 2.0)
                    for n, nd_, ca, ol in in_order(first_n - 1, 1)]
        issued = first_n
    nf = len(theta(c))
    finished = 0
    step_no = -1
    guard = 0

    while finished < requests:
        guard += 1
        if guard > 4_000_000:
            break
        t = clock.t
        while reenter and reenter[0][0] <= t:
            send(reenter.popleft()[1])
        busy_any = any(k.running for k in ranks)
        if held and (recv_due or recv_n == 1 or not busy_any):
            fwd = res.steps
            keep_c: list[_Cohort] = []
            keep_a: list[int] = []
            for co, at in zip(held, held_at, strict=True):
                if at <= fwd or not busy_any:
                    send(co)
                else:
                    keep_c.append(co)
                    keep_a.append(at)
            held, held_at = keep_c, keep_a
        if capped:
            ahead = in_flight()
            while arrivals and arrivals[-1] <= t and ahead < limit:
                a = arrivals.pop()
                if a <= top_prev or busy_prev >= limit:
                    a = t
                else:
                    busy_prev += 1
                send(_arrival(a, ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached, lengths,
                              f.prefix_block))
                issued += 1
                ahead += 1
            top_prev, busy_prev = t, ahead
        elif arrivals and arrivals[-1] <= t:
            ahead = in_flight()
            while arrivals and arrivals[-1] <= t:
                send(_arrival(arrivals.pop(), ahead, issued, isl, osl, range_ratio, prefix_hit, need, cached,
                              lengths, f.prefix_block))
                issued += 1
                ahead += 1
        if not any(k.running or k.waiting for k in ranks) and not late:
            for k in ranks:  # the whole group idle: every scheduler starts its estimate again
                k.ratio = rule.init
            if reenter:
                clock.t = reenter[0][0]
                continue
            if held:
                continue
            if not arrivals:
                break
            clock.t = arrivals[-1]
            continue
        # each rank's own batch: a prefill batch when it forms one, else its decode batch (retracting first)
        nd = n_pf = pf_tok = pf_read = retracted_n = 0
        dec_ctx = pf_pairs = 0.0
        pf_lists: list[list[_Cohort]] = []
        dec_ranks: list[tuple[_Rank, _Scan, bool]] = []
        for k in ranks:
            if not k.running and not k.waiting:
                pf_lists.append([])
                continue
            sc = _Scan(k.running)
            pf, _, k.full = sglang_prefill(sc, k.running, k.waiting, budget, seats_max, cap, k.ratio, clip, k.full)
            pf_lists.append(pf)
            if pf:
                for r in pf:
                    rn, ch, before = r.n, r.chunk, r.cached + r.done
                    pf_tok += rn * ch
                    pf_pairs += rn * ch * (before + ch / 2.0)
                    pf_read += rn * before
                    n_pf += rn
                continue
            sc, out, new_ratio = sglang_retract(sc, k.running, k.waiting, cap, tps, rule, newest)
            retracted = new_ratio is not None
            if retracted:
                assert new_ratio is not None
                k.ratio = new_ratio
            if out:
                k.full = False
                retracted_n += out
            if sc.n_dec:
                dec_ranks.append((k, sc, retracted))
                nd += sc.n_dec
                dec_ctx += sc.dec_ctx
        res.preemptions += retracted_n
        n_run = sum(r.n for k in ranks for r in k.running)
        if n_run > res.running_max:
            res.running_max = n_run
        if not pf_tok and not nd:
            if (arrivals and arrivals[-1] > t) or reenter:
                clock.t = max(t, arrivals[-1] if arrivals else reenter[0][0])
                continue
            break  # a request that can never be scheduled (KV smaller than one prompt)
        k_run = 1
        if not pf_tok:  # decode-only steps on every rank until the next event are timed together
            k_run = min(min(math.ceil(sc.left_min / tps), int((cap - sc.used) // max(1e-9, sc.n_dec * tps)))
                        for _, sc, _ in dec_ranks)
            k_run = max(1, k_run)
            if any(k.waiting and not k.full for k in ranks):  # a rank that can still admit does so next step
                k_run = 1
            if held:
                k_run = min(k_run, _next_receive(min(held_at) - res.steps, recv_n, recv_count))
            if (arrivals and arrivals[-1] > t) or reenter:
                dt0 = sum(step_terms(step_work(f, nd, dec_ctx, 0, 0.0), c, graphed(f, nd * per_seq, 0)))
                nxt = arrivals[-1] if arrivals else reenter[0][0]
                k_run = max(1, min(k_run, math.ceil((nxt - t) / max(dt0, 1e-12))))
        for k, _, retracted in dec_ranks:  # each decode batch lowers its rank's ratio, but a retracting one
            fall = k_run - 1 if retracted else k_run
            if fall:
                k.ratio = max(k.ratio - fall * rule.decay, rule.floor)
        n_wait = sum(r.n for k in ranks for r in k.waiting) + sum(r.n for r in late)
        mid_ctx = dec_ctx + nd * tps * (k_run - 1) / 2.0
        clock.step(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k_run, n_pf, n_wait)
        t = clock.t
        step_no += 1
        if recv_n > 1:
            if pf_tok:
                recv_count, recv_due = 0, True
            else:
                recv_count = (recv_count + k_run) % recv_n
                recv_due = recv_count == 0
        if late:
            for co in late:
                send(co)
            late = []
        if trace:
            w = clock.work(nd, mid_ctx, pf_tok, pf_pairs, pf_read)
            fvec = [x * k_run for x in features(w, c, clock.step_graphs)]
            for k in ranks:
                for r in (*k.running, *k.waiting):
                    _add(r, fvec, nf)
            for r in held:
                _add(r, fvec, nf)
        # advance each rank's cohorts: prefill chunks, the decode batch of a rank that ran one; retire; fold
        done: list[_Cohort] = []
        step_gen = tps * k_run
        decoding = {id(k) for k, _, _ in dec_ranks}
        for k in ranks:
            if not k.running:
                continue
            dec = id(k) in decoding
            kept: list[_Cohort] = []
            last: _Cohort | None = None
            left = False
            for r in k.running:
                ch = r.chunk
                if ch >= 0:
                    r.chunk = -1
                    r.done += ch
                    if r.done >= r.need and r.first is None:
                        r.first, r.first_at = clock.seen, step_no
                        r.fv_first = list(r.fv) if r.fv is not None else None
                        r.gen += 1.0
                elif dec and r.done >= r.need:
                    gen = r.gen + step_gen
                    r.gen = gen if gen < r.osl else float(r.osl)
                if r.gen >= r.osl:
                    done.append(r)
                    left = True
                    continue
                if (last is not None and last.done == r.done and last.gen == r.gen and last.need == r.need
                        and last.cached == r.cached and last.first == r.first and last.redo == r.redo
                        and last.osl == r.osl):
                    fold(last, r)
                    continue
                kept.append(r)
                last = r
            k.running = kept
            if left:
                k.full = False  # a request left the running batch: admissions are tried again
        for r in done:
            ro = r.osl
            clock.retire(r.n, r.arrive, r.first, r.inflight, ro)
            if trace and r.fv is not None:
                f0 = r.fv_first or r.fv
                res.ttft_fv.append(([*f0, 1e-3, r.inflight * 1e-6], r.n))
                if ro > 1:
                    res.tpot_fv.append(([*((a - b) / (ro - 1) for a, b in zip(r.fv, f0, strict=True)), 0.0, 0.0],
                                        r.n))
            finished += r.n
            if closed and issued < requests:
                m = min(r.n, requests - issued)
                ahead = in_flight()
                for n, nd_, ca, ol in in_order(m, issued):
                    if gap:
                        reenter.append((t + gap, _Cohort(n, clock.seen + gap, nd_, ca, ol, ahead)))
                        continue
                    co = _Cohort(n, clock.seen, nd_, ca, ol, ahead)
                    co.arrive_at = step_no
                    if hold:
                        held.append(co)
                        held_at.append(res.steps + lag)
                        continue
                    send(co)
                issued += m
    return clock.close(finished)


def _add(r: _Cohort, fvec: list[float], nf: int) -> None:
    if r.fv is None:
        r.fv = [0.0] * nf
    for i in range(nf):
        r.fv[i] += fvec[i]

