"""The clock of a simulated run: when each step ends and what it spent, and when the client sees its outputs.

A step's time is the step model's (:func:`launchcard.predict._cost.step_terms` of its work).  A step that
carries prefill tokens runs outside the full CUDA graph a decode-only step replays, and so does one of more
tokens than the engine captured graphs for (:func:`graphed`): it pays the eager per-layer overhead (the launches,
``eager_layer_us``), and an extend batch its own cost on top (``extend_layer_us``: SGLang's set, per op the batch
launches: :mod:`launchcard.predict._sglang_ops`).

The client sees a step's tokens only after two more pipeline stages, each a process of its own: the API
server (output processing and one SSE chunk per request per step; vLLM V1 runs it apart from the engine core)
and the benchmark client (one asyncio process reading every stream).  Each stage spends a measured time per
request with output in the step (``Coefficients.stages``, growing with the outputs of the step as measured:
:func:`launchcard.predict._coef.stage_seconds`) and handles the steps' outputs in order (:func:`stage_end`):
when a step's outputs take a stage longer than the step, its clock falls behind the engine's and every time the
client sees (first token, last token, the run's end) comes from the last stage's clock.  The engine
does not wait for them (vLLM's output queue is unbounded).

A closed loop's schedule does not depend on the step times: a run records it (:class:`_Schedule`) and a plan
with other step costs but the same batching replays it through its own clock (:meth:`_Clock.replay`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import Any

from launchcard.predict._coef import Coefficients
from launchcard.predict._cost import (
    AttnFn,
    StepWork,
    TokenFn,
    dp_gather_fn,
    projection_s,
    split_fn,
    token_terms,
    work_fn,
)
from launchcard.predict._dsa import JIT_ALIGN, jit_warm
from launchcard.predict._facts import ServingFacts
from launchcard.predict._sched import _At
from launchcard.predict._types import TERMS, SimResult

# A step replays a captured CUDA graph when its tokens are within the engine's capture limit
# (``ServingFacts.graph_tokens``: vLLM's max_cudagraph_capture_size, SGLang's --cuda-graph-max-bs) and runs eagerly
# above it (vLLM 0.10.1 vllm/v1/worker/gpu_model_runner.py L1524-1531; SGLang 0.5.5.post3
# model_executor/cuda_graph_runner.py can_run, L422-425). vLLM V1 also runs mixed (prefill) steps within the limit as
# piecewise graphs; SGLang runs extend (prefill) batches eagerly unless its piecewise graphs are switched on
# (server_args.py enable_piecewise_cuda_graph, off by default); TensorRT-LLM replays its graphs for generation-only
# batches (cuda_graph_config), without padding only for a batch of exactly a captured size (``graph_sizes``). Facts
# without a limit (``graph_tokens`` None): decode at any size, vLLM mixed steps up to GRAPH_TOKENS (vLLM's usual
# default ceiling)
GRAPH_TOKENS = 512


def graphed(f: ServingFacts, tokens: int, prefill_tokens: int) -> bool:
    """Whether a step of ``tokens`` tokens, ``prefill_tokens`` of them prefill, replays a CUDA graph."""
    if not f.cuda_graphs:
        return False
    top = f.graph_tokens
    if top is not None and tokens > top:
        return False
    if f.graph_sizes is not None and tokens not in f.graph_sizes:
        return False
    return not prefill_tokens or (f.engine == "vllm" and tokens <= (GRAPH_TOKENS if top is None else top))



def busiest_prefill(pf_tok: int, n_pf: int, g: int, rank_budget: int) -> int:
    """Prefill tokens of the DP-attention rank that carries the most of a group step's ``pf_tok`` tokens of ``n_pf``
    requests: each rank prefills only its own requests (round-robin dispatch, 0.5.6.post2
    managers/data_parallel_controller.py L471-479), so the busiest holds ceil(n_pf / g) of them (their mean chunk
    each: the step's cohorts taken alike), never more than its own chunk budget (``rank_budget``, the per-rank
    chunked_prefill_size: schedule_policy.py L428-450) nor less than an even share.  The synced step lasts as long as
    that rank's prefill (scheduler_dp_attn_mixin.py L105-131)."""
    even = -(-pf_tok // g)
    if n_pf <= 0:
        return even
    mine = -(-pf_tok * -(-n_pf // g) // n_pf)
    return max(even, min(mine, rank_budget))


def _rank_share(token: TokenFn, attention: AttnFn, g: int,
                gather: Callable[[int, int], tuple[float, int]] | None = None) -> tuple[TokenFn, AttnFn]:
    """``token`` / ``attention`` of a step of ``g`` DP-attention ranks timed as one rank's: the busiest rank's decode
    sequences (round_robin dispatch, SGLang's load_balance_method default, 0.5.6.post2 server_args.py L365: at most
    one more than an even share) with their share of the context, and a ``g``-th of the prefill tokens, rounded up
    (the MoE layers see every rank's tokens: the step function counts ``replicas`` x a rank's).  The attention's
    prefill arguments are one rank's already (:func:`busiest_prefill`, what ``_Clock._cost`` passes).  ``gather``:
    the collectives of the group's whole step around the parts spanning the whole TP group
    (:func:`launchcard.predict._cost.dp_gather_fn`), added to the rank's."""

    def tok(nd: int, pf: int) -> StepWork:
        w = token(-(-nd // g), -(-pf // g))
        if gather is None:
            return w
        sec, calls = gather(nd, pf)
        return w._replace(comm=w.comm + sec, collectives=w.collectives + calls)

    def att(nd: int, ctx: float, pf: int, pairs: float, read: float) -> tuple[float, float]:
        mine = -(-nd // g)
        return attention(mine, ctx * mine / nd if nd else 0.0, pf, pairs, read)

    return tok, att


def stage_end(free: float, first: float, last: float, k: int, s: float) -> tuple[float, float]:
    """When a first-in first-out stage that takes ``s`` seconds per batch, free from ``free`` on, ends the first
    and the last of ``k`` batches that reach it from ``first`` to ``last`` (evenly or, from an earlier stage,
    convexly spaced): batch j ends at max(free + j s, max over i <= j of arrival_i + (j - i + 1) s), whose
    maximum over a convex arrival sequence lies at its ends."""
    if s <= 0.0:
        return max(free, first), max(free, last)
    a = max(free, first) + s
    return a, max(free + k * s, first + k * s, last + s)



# the closed-loop schedules recorded, by everything that decides them but the batch limit (_Schedule.serves)
Schedules = dict[tuple[Any, ...], list["_Schedule"]]


@dataclass(frozen=True)
class _Schedule:
    """What a closed-loop run did, step by step, without the step times: a closed loop's schedule does not
    depend on them, so a plan with other costs but the same batching replays it instead of simulating."""

    steps: tuple[tuple[int, float, int, float, int, int, int, int], ...]  # step_work inputs, k, n_pf, n_wait
    # (n, arrive, first token, finish step, inflight, output length)
    done: tuple[tuple[int, _At, int | None, int, float, int], ...]
    finished: int
    running_max: int
    # the KV capacity its KV checks needed to fall as with unlimited KV (the same checks in a replay: the same
    # schedule state); SimResult.kv_free_from where the replaying plan's pool holds it
    kv_need: float = math.inf
    # the sequence slots it was recorded with (the batch limit, at most the clients), and whether a run under
    # another limit can share it (vLLM's admission, _sched._prefill: not SGLang's, whose admission stops anew when
    # its slots are full)
    seats: int = 0
    shared: bool = False

    def serves(self, seats: int) -> bool:
        """Whether a run with ``seats`` sequence slots runs this schedule: its own limit, or (``shared``) one from
        its peak (``running_max``) up to its own, where the limit never refused what the recorded run admitted
        (every admission took at most the slots its peak left), and any from its peak up when its own never bound
        (the peak below it: no admission was ever cut to the slots left).  The KV checks then ask what they asked
        in the recorded run, or (a smaller limit, whose last admission may stop earlier) less: ``kv_need`` stays a
        capacity from which KV decides nothing."""
        if seats == self.seats:
            return True
        return self.shared and self.running_max <= seats and (seats < self.seats or self.running_max < self.seats)

    @cached_property
    def costed(self) -> tuple[list[tuple[int, float, int, float, int, int]], list[int]]:
        """The steps' distinct cost inputs (with their prefilling requests, which a DP-attention group's cost reads)
        in the order first met, and each step's index among them: a replay costs each once and looks its steps up
        by index, not by hashing their inputs again (every plan that replays this schedule does; computed once,
        with the schedule)."""
        keys: list[tuple[int, float, int, float, int, int]] = []
        seen: dict[tuple[int, float, int, float, int, int], int] = {}
        index: list[int] = []
        for nd, mid_ctx, pf_tok, pf_pairs, pf_read, _, n_pf, _ in self.steps:
            key = (nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_pf)
            i = seen.get(key)
            if i is None:
                i = seen[key] = len(keys)
                keys.append(key)
            index.append(i)
        return keys, index



class _Clock:
    """Times the steps of a run and keeps its sums: what a simulation and a replayed schedule share."""

    def __init__(self, f: ServingFacts, c: Coefficients, tps: float) -> None:
        self.f, self.c, self.graphs = f, c, f.cuda_graphs
        self.per_seq = 1 + f.spec_tokens
        self.step_graphs = self.graphs  # whether the last step timed replayed a CUDA graph
        # graphed()'s limits, read once (a step's test is two comparisons)
        top = f.graph_tokens
        self.g_top = math.inf if top is None else top
        self.g_mixed = (GRAPH_TOKENS if top is None else top) if f.engine == "vllm" else -1
        # SimResult.graph_span: the largest step within the limit and the smallest beyond it whose replay the limit
        # decides (decode-only steps; vLLM's mixed steps too); no limit (None) is not a number of tokens: no span
        self.g_lo: float = 0.0 if top is not None or not self.graphs else math.inf
        self.g_hi = math.inf
        self.g_decode = self.graphs and top is not None
        # captured sizes without padding (TensorRT-LLM's default): no limit alone decides a step, so no span either
        self.g_sizes = f.graph_sizes
        if self.g_sizes is not None:
            self.g_decode, self.g_lo = False, math.inf
        self.g_mixed_too = self.g_decode and f.engine == "vllm"
        self.work = work_fn(f)  # step_work of f
        self.token, self.attention = split_fn(f)  # its two parts (the same figures)
        # DP-attention ranks step together: a step of the group's totals is the busiest rank's (ServingFacts.lockstep,
        # _sglang_dp); in a step where some ranks prefill and the others decode each rank runs one of the two
        # attentions
        self.lockstep = f.lockstep > 1
        self.group, self.rank_budget = f.lockstep, max(1, f.max_num_batched_tokens // max(1, f.lockstep))
        if self.lockstep:
            self.token, self.attention = _rank_share(self.token, self.attention, f.lockstep, dp_gather_fn(f))
        # the busiest prefilling rank's attention projections beyond the even share the token part times (per
        # rank: only the parts after the gather run every rank's tokens), at the set's compute share
        self.proj_s = projection_s(f) / c.flops_eff if self.lockstep else 0.0
        self.attn_eff, self.flops_eff = c.attn_eff, c.flops_eff
        # step inputs -> (graphed, memory, compute, communication, overhead): a step's cost is a function of its five
        # inputs under this clock's facts and coefficients; a run meets the same step again and again (a closed
        # loop's steady state; a replayed schedule), so it is computed once (the same values: same calls)
        self.costs: dict[tuple[int, float, int, float, int, int], tuple[bool, float, float, float, float]] = {}
        # (decode sequences, prefill tokens) -> the step's terms but attention (token_terms), its MoE calls' fixed
        # latency, whether host work overlaps, graphed: a run meets far fewer token counts than steps (a decode
        # batch keeps its size while its context grows), and only attention reads the context
        self.token_costs: dict[tuple[int, int], tuple[float, float, float, float, float, float, bool, bool]] = {}
        self.t = 0.0
        self.res = SimResult([], [], [], 0.0, 0, 0.0, dict.fromkeys(TERMS, 0.0), dict.fromkeys(TERMS, 0.0), 0.0,
                             0.0, 0.0, 0, 0, tps, [], [], [])
        # per-phase term sums (memory, compute, communication, overhead, streaming), request-seconds; prefill
        # queueing
        self.p = [0.0, 0.0, 0.0, 0.0, 0.0]
        self.d = [0.0, 0.0, 0.0, 0.0, 0.0]
        # the API server's and the client's clocks: when each has handled the outputs of the last step timed
        # (``seen``: when the client has them)
        st = c.stages
        self.stages = bool(st.api_us or st.client_us)
        # stage_seconds' terms, read once (a step of every run computes it)
        self.st_api, self.st_client, self.st_lo = st.api_us, st.client_us, st.lo
        self.st_span = st.hi - st.lo if st.hi > st.lo else 0
        self.st_g_api, self.st_g_client = st.api_growth, st.client_growth
        self.api = self.seen = 0.0
        self.queue = 0.0
        self.front_s, self.inflight_s, self.ingest_s = c.request_ms * 1e-3, c.inflight_us * 1e-6, c.ingest_us * 1e-6
        # SGLang's DSA decode compiles a DeepGEMM kernel per batch size rounded up to 32 (DsaFacts.jit_s): the first
        # eager decode step at each rounded size above the start-up's ones waits for its compile; under DP attention
        # each rank compiles for its own batch (the busiest rank's share of the group's, as _rank_share times it)
        # against its own graphs (the group's facts hold every rank's together: lockstep_group)
        self.jit_s = f.dsa.jit_s if f.dsa is not None else 0.0
        self.jit_warm = jit_warm(f.graph_tokens // self.group if f.graph_tokens and self.lockstep else f.graph_tokens,
                                 self.graphs)
        self.jit_seen: set[int] = set()

    def step(self, nd: int, mid_ctx: float, pf_tok: int, pf_pairs: float, pf_read: int, k: int, n_pf: int,
             n_wait: int) -> float:
        """Time ``k`` steps alike (``nd`` decode sequences, ``pf_tok`` prefill tokens of ``n_pf`` requests); when
        the client sees their outputs."""
        return self.run(((nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait),))[-1]

    def _cost(self, nd: int, mid_ctx: float, pf_tok: int, pf_pairs: float, pf_read: int, n_pf: int,
              keep: bool = True) -> tuple[bool, float, float, float, float]:
        """(graphed, memory, compute, communication, overhead) seconds of a step (``n_pf`` requests prefilling),
        kept in ``costs`` (unless not ``keep``: a replay's steps, costed once each by :meth:`replay`)."""
        t_key = (nd, pf_tok)
        part = self.token_costs.get(t_key)
        if part is None:
            tok = nd * self.per_seq + pf_tok
            g = self.graphs and tok <= self.g_top and (not pf_tok or tok <= self.g_mixed) and (
                self.g_sizes is None or tok in self.g_sizes)
            # the graph span only widens with a step's tokens: a step met again leaves it as it is
            if self.g_decode and (not pf_tok or self.g_mixed_too):
                if tok <= self.g_top:
                    if tok > self.g_lo:
                        self.g_lo = tok
                elif tok < self.g_hi:
                    self.g_hi = tok
            w = self.token(nd, pf_tok)
            part = self.token_costs[t_key] = (*token_terms(w, self.c, g), w.moe_fixed, w.overlap, g)
        t_mem, t_comp, comm, ovh, seq, moe_fixed, overlap, g = part
        if self.lockstep and pf_tok:  # the busiest prefilling rank's attention; with decoding ranks, the slower one's
            mine = busiest_prefill(pf_tok, n_pf, self.group, self.rank_budget)
            t_comp += self.proj_s * (mine - -(-pf_tok // self.group))
            a_mem, a_flop = self.attention(0, 0.0, mine, pf_pairs * mine / pf_tok, pf_read * mine / pf_tok)
            if nd:
                d_mem, d_flop = self.attention(nd, mid_ctx, 0, 0.0, 0)
                if d_mem / self.attn_eff + d_flop / self.flops_eff > a_mem / self.attn_eff + a_flop / self.flops_eff:
                    a_mem, a_flop = d_mem, d_flop
        else:
            a_mem, a_flop = self.attention(nd, mid_ctx, pf_tok, pf_pairs, pf_read)
        # step_terms' last additions, written out (once per step costed)
        mem = t_mem + a_mem / self.attn_eff
        comp = t_comp + (a_flop + moe_fixed) / self.flops_eff
        if not overlap:
            ovh += seq
        else:  # async scheduling: the host's work of the next step (per step and per sequence, both in ``seq``)
            rest = mem + comp + comm + ovh  # runs while this one's kernels do
            ovh += seq - rest if seq > rest else 0.0
        hit = (g, mem, comp, comm, ovh)
        if keep:
            self.costs[(nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_pf)] = hit
        return hit

    def run(self, steps: Iterable[tuple[int, float, int, float, int, int, int, int]],
            hits: Iterable[tuple[bool, float, float, float, float] | None] = repeat(None)) -> list[float]:
        """:meth:`step` of each ``(nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait)`` in turn; when the
        client sees each one's outputs.  The clocks and sums sit in locals for the loop (a replayed schedule times
        ~100 steps in one call) and are written back at its end: the same operations in the same order.
        ``hits``: each step's cost already computed (:meth:`replay`), else None (looked up, or computed; an endless
        None by default, hence zip not strict)."""
        res, costs, cost, lockstep = self.res, self.costs, self._cost, self.lockstep
        samples, p, d = res.samples, self.p, self.d
        stages, st_api, st_client, st_lo, st_span = self.stages, self.st_api, self.st_client, self.st_lo, self.st_span
        st_g_api, st_g_client = self.st_g_api, self.st_g_client
        t, api, seen, queue, g = self.t, self.api, self.seen, self.queue, self.step_graphs
        n_steps, busy, batch_steps, decode_steps = res.steps, res.busy, res.batch_steps, res.decode_steps
        jit_s, jit_warm, jit_seen, per_seq = self.jit_s, self.jit_warm, self.jit_seen, self.per_seq
        group = self.group
        ends: list[float] = []
        for (nd, mid_ctx, pf_tok, pf_pairs, pf_read, k, n_pf, n_wait), hit in zip(steps, hits, strict=False):
            if hit is None:
                n_key = n_pf if lockstep else 0  # only a DP-attention group's step cost depends on its requests
                hit = costs.get((nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_key))
                if hit is None:
                    hit = cost(nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_key)
            g, mem, comp, comm, ovh = hit
            dt = mem + comp + comm + ovh
            span = dt * k
            jit = 0.0  # the first of these steps waits for a kernel compile (DsaFacts.jit_s)
            if jit_s and nd and not pf_tok and not g:
                n_rank = -(-nd // group) if group > 1 else nd  # the busiest DP rank's decodes (all: one rank)
                size = -(-n_rank * per_seq // JIT_ALIGN) * JIT_ALIGN
                if size > jit_warm and size not in jit_seen:
                    jit_seen.add(size)
                    jit = jit_s
                    span += jit
            t0 = t
            t += span
            lag = 0.0  # how much further the client's view falls behind the engine's clock over these steps
            bound = 0.0  # a stage's time per step, where it is longer than the engine's step
            if stages:
                # stage_seconds(c, outs), written out: every request with an output in the step
                outs = nd + n_pf
                u_api, u_client = st_api, st_client
                if st_span and outs > st_lo:
                    x = (outs - st_lo) / st_span
                    if not x < 1.0:  # min(1.0, x), as the builtin picks
                        x = 1.0
                    u_api, u_client = u_api * (1.0 + st_g_api * x), u_client * (1.0 + st_g_client * x)
                s_api, s_client = outs * u_api * 1e-6, outs * u_client * 1e-6
                # the API server's stage, then the client's behind it: stage_end(api, t0 + dt, t, k, s_api), then
                # stage_end(seen, a0, api, k, s_client)[1], written out (max as the builtin picks: the first of equals)
                first = t0 + dt + jit
                if s_api <= 0.0:
                    a0 = first if first > api else api
                    if t > api:
                        api = t
                else:
                    ks = k * s_api
                    a0 = (first if first > api else api) + s_api
                    top = api + ks
                    if first + ks > top:
                        top = first + ks
                    if t + s_api > top:
                        top = t + s_api
                    api = top
                if s_client <= 0.0:
                    c1 = api if api > seen else seen
                else:
                    ks = k * s_client
                    c1 = seen + ks
                    if a0 + ks > c1:
                        c1 = a0 + ks
                    if api + s_client > c1:
                        c1 = api + s_client
                # how far behind it already was; after an idle gap (the clock moved on to an arrival) not at all, so
                # the gap is not counted as the stages' latency
                behind = seen - t0
                if not behind > 0.0:
                    behind = 0.0
                lag = (c1 - t) - behind
                if not lag > 0.0:
                    lag = 0.0
                seen = c1
                bound = s_client if s_client > s_api else s_api
                if bound <= dt:
                    bound = 0.0
            else:
                seen = api = t
            n_steps += k
            busy += span
            if len(samples) < 2 and ((pf_tok and not samples) or (not pf_tok and nd and k > 1)):
                samples.append({"decode_seqs": nd, "prefill_tokens": pf_tok, "context_tokens": mid_ctx,
                                "ms": dt * 1e3, "memory_ms": mem * 1e3, "compute_ms": comp * 1e3,
                                "communication_ms": comm * 1e3, "overhead_ms": ovh * 1e3})
            if bound:  # the slowest stage sets the pace the client sees: the engine's work is hidden behind it
                sk = bound * k
                p[4] += sk * n_pf
                d[4] += sk * nd
            else:
                mk, ck, ek, ok = mem * k, comp * k, comm * k, ovh * k  # unrolled: once per step of every run
                p[0] += mk * n_pf
                p[1] += ck * n_pf
                p[2] += ek * n_pf
                p[3] += ok * n_pf
                d[0] += mk * nd
                d[1] += ck * nd
                d[2] += ek * nd
                d[3] += ok * nd
                if lag:  # the stages' latency on top of the engine's step
                    p[4] += lag * n_pf
                    d[4] += lag * nd
            if jit:
                d[3] += jit * nd
            queue += span * n_wait
            if nd:
                batch_steps += nd * k
                decode_steps += k
            ends.append(seen)
        self.t, self.api, self.seen, self.queue, self.step_graphs = t, api, seen, queue, g
        res.steps, res.busy, res.batch_steps, res.decode_steps = n_steps, busy, batch_steps, decode_steps
        return ends

    def retire(self, n: int, arrive: float, first: float | None, inflight: float, osl: int) -> None:
        """``n`` requests of ``osl`` output tokens end now (as the client sees it)."""
        self.retire_all(((n, arrive, first, inflight, osl, self.seen),))

    def retire_all(self, done: Iterable[tuple[int, float, float | None, float, int, float]]) -> None:
        """Cohorts that end, in order, each ``(n, arrive, first, inflight, osl, t)``: ``n`` requests of ``osl``
        output tokens that arrived at ``arrive`` end at ``t`` as the client sees it (``first``: their first token,
        None: at ``t``).  One loop with the sums in locals: a replayed schedule ends ~100 cohorts."""
        res = self.res
        ttft, e2e, tpot = res.ttft.append, res.e2e.append, res.tpot.append
        front_s, inflight_s, ingest_s = self.front_s, self.inflight_s, self.ingest_s
        decode_s, decode_tokens, output_tokens = res.decode_s, res.decode_tokens, res.output_tokens
        for n, arrive, first, inflight, osl, t in done:
            if first is None:
                first = t
            front = front_s + inflight_s * inflight
            if arrive <= 0.0:  # the opening burst: the API server takes its requests in turn (``ingest_us``)
                front += ingest_s * inflight
            ttft((first - arrive + front, n))
            e2e((t - arrive + front, n))
            if osl > 1:
                tpot(((t - first) / (osl - 1), n))
                decode_s += n * (t - first)
                decode_tokens += n * (osl - 1)
            output_tokens += n * osl
        res.decode_s, res.decode_tokens, res.output_tokens = decode_s, decode_tokens, output_tokens

    def close(self, finished: int) -> SimResult:
        res = self.res
        for i, name in enumerate(TERMS[:5]):
            res.prefill[name], res.decode[name] = self.p[i], self.d[i]
        res.prefill["queueing"] = self.queue
        res.makespan = self.seen
        res.requests = finished
        res.graph_span = (self.g_lo, self.g_hi)
        return res

    def replay(self, s: _Schedule) -> SimResult:
        """The run of a recorded schedule with this clock's step costs: each distinct step costed once, in the
        order the steps first meet it (the graph span and the token memo fill as a step-by-step run fills them)."""
        keys, index = s.costed
        cost = self._cost
        lockstep = self.lockstep  # as run() keys its memo: only a DP-attention group's cost reads n_pf
        hits = [cost(nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_pf if lockstep else 0, False)
                for nd, mid_ctx, pf_tok, pf_pairs, pf_read, n_pf in keys]
        ends = self.run(s.steps, [hits[i] for i in index])  # when the client sees each step's outputs
        ends.append(0.0)  # ends[-1]: the run's start, which a recorded arrival of -1 stands for (_time_at's too)
        # retire_all over the recorded form: each cohort's times read from the steps' ends
        self.retire_all((n, ends[a] if a.__class__ is int else _time_at(a, ends), None if at_first is None else
                         ends[at_first], inflight, osl, ends[end]) for n, a, at_first, end, inflight, osl in s.done)
        self.res.running_max = s.running_max
        return self.close(s.finished)


def _time_at(at: _At, ends: list[float]) -> float:
    """The time a recorded ``arrive`` stands for, computed as the run computed it (fold by fold). Folds nest on
    their left (a cohort absorbing one after another, up to one per request), so that side is walked, not
    recursed."""
    spine: list[tuple[int, _At, int]] = []
    while not isinstance(at, int):
        a, n_a, b, n_b = at
        spine.append((n_a, b, n_b))
        at = a
    v = ends[at] if at >= 0 else 0.0
    for n_a, b, n_b in reversed(spine):
        v = (v * n_a + _time_at(b, ends) * n_b) / (n_a + n_b)
    return v
