"""One step's scheduling decisions over the running and waiting cohorts (``_sim.simulate``'s inner helpers): what
the running requests hold and need, preemption when KV runs out, and which prefill chunks a step takes.

Two admission rules (``ServingFacts.admit_by_chunk``): a waiting request starts when KV for its whole prompt is
free, the prompts of running prefills reserved whole (vLLM 0.19+ scheduler_reserve_full_isl, the default); or, as
vLLM before 0.19, when its first chunk's KV is free, KV allocated chunk by chunk.  ``to_end``
(``ServingFacts.reserve_to_end``, TensorRT-LLM's GUARANTEED_NO_EVICT): a request holds KV for its whole prompt and
its whole output from admission, so one starts only when that fits and none is ever preempted; ``to_end`` is then
the tokens of a KV block (``ServingFacts.reserve_block``), and what a request holds is its prompt and output
rounded up to whole blocks (:func:`reserved`), 0 where outputs are not reserved.
"""

from __future__ import annotations

import math
from typing import Any

# a time as steps of a recorded schedule: the end of step i (-1: time 0), or the fold (a, n_a, b, n_b) of two
_At = int | tuple[Any, int, Any, int]


def reserved(tokens: int, block: int) -> int:
    """KV tokens a request of ``tokens`` (prompt and max_tokens) holds from admission under TensorRT-LLM's
    GUARANTEED_NO_EVICT: whole blocks of ``block`` tokens (``KVCacheManager::getRemainingBlocksToCompletion``'s
    ``ceilDiv(promptLen + maxNewTokens, tokensPerBlock)``, :data:`._engine_rules.TRTLLM_TOKENS_PER_BLOCK`)."""
    return -(-tokens // block) * block


class _Cohort:
    __slots__ = ("arrive", "arrive_at", "cached", "chunk", "done", "first", "first_at", "fv", "fv_first", "gen",
                 "inflight", "n", "need", "osl", "redo")

    def __init__(self, n: int, arrive: float, need: int, cached: int, osl: int, inflight: float = 0.0) -> None:
        self.n, self.arrive, self.need, self.cached, self.osl = n, arrive, need, cached, osl
        self.inflight = inflight  # requests already in the server when these arrived
        self.done = 0  # prefill tokens computed
        self.gen = 0.0  # output tokens produced
        self.redo = 0.0  # output tokens already counted in ``need`` (a preempted request recomputes them)
        self.first: float | None = None
        self.fv: list[float] | None = None  # step features summed since arrival (calibration traces only)
        self.fv_first: list[float] | None = None  # ... up to the first token
        self.chunk = -1  # prefill tokens per request scheduled this step (-1: none)
        # the same times as steps of a recorded schedule (see _Schedule): ``arrive`` as a step index (-1: time 0)
        # or a fold (a, n_a, b, n_b) of two; ``first`` as a step index
        self.arrive_at: _At = -1
        self.first_at: int | None = None

    def split(self, m: int) -> _Cohort:
        """Take ``m`` requests out into their own cohort (same state)."""
        c = _Cohort(m, self.arrive, self.need, self.cached, self.osl, self.inflight)
        c.done, c.gen, c.first, c.redo = self.done, self.gen, self.first, self.redo
        c.arrive_at, c.first_at = self.arrive_at, self.first_at
        c.fv = list(self.fv) if self.fv is not None else None
        c.fv_first = list(self.fv_first) if self.fv_first is not None else None
        self.n -= m
        return c

    @property
    def ctx(self) -> float:
        return self.cached + self.done + self.gen - self.redo

    def end_chunk(self, ch: int, seen: float, step: int) -> None:
        """Its prefill chunk of ``ch`` tokens per request, run in the step that ended at ``seen`` (step number
        ``step``), is done: the chunk cleared, and where the prompt is whole the first token (time, step, the
        features so far) and one output token.  Both step walks (``_sim``, ``_sglang_dp``) end chunks here."""
        self.chunk = -1
        self.done += ch
        if self.done >= self.need and self.first is None:
            self.first, self.first_at = seen, step
            self.fv_first = list(self.fv) if self.fv is not None else None
            self.gen += 1.0


class _Scan:
    """One walk over the running cohorts: what a step needs of them (each sum in running order)."""

    __slots__ = ("dec", "dec_ctx", "left_min", "n_dec", "n_run", "need", "need_ratio", "pend", "used")

    def __init__(self, running: list[_Cohort], by_chunk: bool = False, to_end: int = 0) -> None:
        dec: list[_Cohort] = []
        pend: list[_Cohort] = []
        n_dec = n_run = 0
        used: float = 0
        dec_ctx: float = 0
        left_min = math.inf  # fewest output tokens a decoding cohort has left
        for r in running:
            rn, gen, redo = r.n, r.gen, r.redo
            n_run += rn
            # KV held: context + prompt still to compute (reserved whole), or only what is computed (``by_chunk``)
            # (``to_end``: the prompt and every output token to come, reserved at admission in whole blocks)
            held = (reserved(r.cached + r.need + r.osl, to_end) if to_end else
                    r.cached + (r.done if by_chunk else r.need) + gen - redo)
            used += rn * held
            if r.done >= r.need:
                dec.append(r)
                n_dec += rn
                dec_ctx += rn * (r.cached + r.done + gen - redo)
                left = r.osl - gen
                if left < left_min:
                    left_min = left
            else:
                pend.append(r)
        self.dec, self.pend, self.n_dec, self.n_run = dec, pend, n_dec, n_run
        self.used, self.dec_ctx, self.left_min = used, dec_ctx, left_min
        # SGLang's expected need of the decoding cohorts at ``need_ratio`` (``_sglang_sched.expected_need`` without
        # prefills ending), when the walk that made this scan summed it too; None: not summed
        self.need: float | None = None
        self.need_ratio = 0.0

    @classmethod
    def made(cls, dec: list[_Cohort], pend: list[_Cohort], n_dec: int, n_run: int, used: float, dec_ctx: float,
             left_min: float, need: float | None, need_ratio: float) -> _Scan:
        """A scan whose sums another walk over the same cohorts, in the same order, has made (``_sim``'s walk
        that advances a step's cohorts makes the next step's scan as it goes)."""
        sc = cls.__new__(cls)
        sc.dec, sc.pend, sc.n_dec, sc.n_run = dec, pend, n_dec, n_run
        sc.used, sc.dec_ctx, sc.left_min = used, dec_ctx, left_min
        sc.need, sc.need_ratio = need, need_ratio
        return sc



def _make_room(sc: _Scan, running: list[_Cohort], waiting: list[_Cohort], cap: int,
               tps: float, by_chunk: bool = False, to_end: int = 0, kv: list[float] | None = None
               ) -> tuple[_Scan, int]:
    """Preempt the newest requests until every decoding one has KV room for its next token(s); the running
    cohorts' figures after it, and how many were preempted (``to_end``: none, their outputs are reserved).
    ``kv[0]``: raised to the KV capacity this check needs to pass as with unlimited KV (``SimResult.kv_free_from``)."""
    n = 0
    if to_end:
        return sc, 0
    if kv is not None and sc.n_dec and sc.used + sc.n_dec * tps > kv[0]:
        kv[0] = sc.used + sc.n_dec * tps
    while sc.n_dec and sc.used + sc.n_dec * tps > cap:
        _preempt_newest(running, waiting)
        n += 1
        sc = _Scan(running, by_chunk)
    return sc, n


def _preempt_newest(running: list[_Cohort], waiting: list[_Cohort]) -> _Cohort:
    """Preempt the newest running request: it is recomputed later (what it computed and output so far, and the
    rest of its prompt), first in line. Returns it (the newest cohort itself when it was the last request)."""
    victim = running[-1]
    one = victim.split(1) if victim.n > 1 else running.pop()
    _recompute(one)
    waiting.insert(0, one)
    return one


def _recompute(one: _Cohort) -> None:
    """A request whose KV was freed: it computes again what it computed and output so far (nothing cached), and
    the rest of its prompt."""
    one.need, one.redo = math.ceil(one.ctx) + max(0, one.need - one.done), one.gen
    one.cached, one.done = 0, 0


def _chunk_room(r: _Cohort, chunk: int, room: float, running: list[_Cohort], waiting: list[_Cohort],
                gone: set[int]) -> tuple[float, int, bool]:
    """KV blocks for a running prefill's next chunk as vLLM before 0.19 allocates them (the chunk only; 0.18.1
    vllm/v1/core/sched/scheduler.py L450-493): when they do not fit, the newest request is preempted until they do,
    or until ``r`` itself is (then nothing more is scheduled this step). A decoding newest request is not
    preempted here (the simulation has scheduled its decode already): the chunk waits. Returns the room left, the
    requests preempted, and whether scheduling stops."""
    n = 0
    while chunk * r.n > room:
        victim = running[-1]
        if victim.done >= victim.need:
            return room, n, True
        freed = victim.ctx  # one request's KV: what it computed
        one = _preempt_newest(running, waiting)
        room += freed
        n += 1
        if one is victim:
            gone.add(id(victim))
            if victim is r:
                return room, n, True
    return room - chunk * r.n, n, False


def _take(head: _Cohort, m: int, waiting: list[_Cohort], running: list[_Cohort], out: list[_Cohort],
          chunk: int | None = None) -> _Cohort:
    """Start ``m`` of the queue head's requests with ``chunk`` prompt tokens this step (their whole prompt when
    None; the head itself when it holds no more), the one admission step vLLM's and SGLang's rules share."""
    co = head.split(m) if m < head.n else waiting.pop(0)
    running.append(co)
    co.chunk = co.need if chunk is None else chunk
    out.append(co)
    return co


def _prefill(sc: _Scan, running: list[_Cohort], waiting: list[_Cohort], budget: int, seats_max: int,
             cap: int, whole_up_to: int = 0, by_chunk: bool = False, reserve: float = 0.0,
             preempted: int = 0, to_end: int = 0, kv: list[float] | None = None
             ) -> tuple[list[_Cohort], int, int]:
    """Prefill chunks of one step (each cohort's ``chunk``): running requests' next chunks, then waiting
    requests (FCFS) while a sequence slot, KV room for the whole prompt and token budget remain.

    ``by_chunk`` (vLLM before 0.19): KV is held as computed (``_Scan``), a running prefill's chunk needs room for
    itself (:func:`_chunk_room`), a waiting request starts when its first chunk fits, beside ``reserve`` KV tokens
    for this step's decodes, and none starts in a step that preempted (``preempted`` so far: 0.18.1
    scheduler.py L553-554). Returns the cohorts scheduled, how many waiting requests started, and how many running
    ones were preempted here.  ``to_end``: a waiting request needs KV room for its prompt and its whole output, in
    whole blocks of ``to_end`` tokens (:func:`reserved`).
    ``kv[0]``: raised to the KV capacity each KV check here needs to fall as with unlimited KV (the KV taken
    before it, ``cap - room`` or ``used``, plus what it asks)."""
    out: list[_Cohort] = []
    admitted = 0
    budget = max(0, budget)
    room = cap - sc.used - reserve
    gone: set[int] = set()
    n_out = 0
    for r in sc.pend:
        if budget <= 0:
            break
        if by_chunk and id(r) in gone:
            continue
        chunk = min(r.need - r.done, budget // r.n if r.n > 1 else budget)
        if chunk > 0:
            if by_chunk:
                if kv is not None and cap - room + chunk * r.n > kv[0]:
                    kv[0] = cap - room + chunk * r.n
                room, n, stop = _chunk_room(r, chunk, room, running, waiting, gone)
                n_out += n
                if stop:
                    break
            r.chunk = chunk
            out.append(r)
            budget -= chunk * r.n
    if by_chunk and (preempted or n_out):
        return out, admitted, n_out
    seats = seats_max - sc.n_run
    used = sc.used
    while waiting and budget > 0 and seats > 0:
        head = waiting[0]
        per = reserved(head.need + head.cached + head.osl, to_end) if to_end else head.need + head.cached
        fit_kv = int((room if by_chunk else cap - used) // max(1, per))
        m = min(head.n, seats, budget // max(1, head.need), fit_kv)
        if kv is not None:  # KV for as many as the other limits let start, or (none) for the first chunk below
            held = cap - room if by_chunk else used
            ask = max(1, min(head.n, seats, budget // max(1, head.need))) * per
            if by_chunk and m < 1:
                ask = max(ask, head.cached + budget)
            if held + ask > kv[0]:
                kv[0] = held + ask
        if m >= 1:
            co = _take(head, m, waiting, running, out)
            admitted += m
            budget -= m * co.need
            seats -= m
            used += m * per
            room -= m * per
            continue
        first_fits = room >= head.cached + budget if by_chunk else fit_kv >= 1
        if first_fits and head.need > whole_up_to:  # one request starts with a partial chunk
            _take(head, 1, waiting, running, out, chunk=budget)
            admitted += 1
        break
    return out, admitted, n_out
