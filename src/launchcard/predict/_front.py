"""The running list's leading decoding cohorts advanced together (``_sim.simulate``'s vLLM mixed steps).

At high concurrency with long prompts every vLLM step decodes beside a prefill chunk, so each step would give every
decoding cohort its token(s) one by one: O(running cohorts) a step.  The cohorts at the front of the running list
that decode (none of them is ever given a chunk again) all gain the same tokens each step, so they are kept at one
shared counter instead: a cohort's output tokens are its ``gen`` plus ``lag``, the tokens every front cohort gained
since the counter started; the front's sums (KV held, context, requests) are kept with ``gen`` as stored and shifted
by ``lag`` times its requests, and a heap of each cohort's last token at the counter (``osl - gen``) finds those
that end.  Only the cohorts after the front are walked step by step.

Exact, not approximate: this runs only while a step yields a whole number of tokens (no speculative decoding or a
whole acceptance), so every output count, context and KV sum is a whole number held exactly in a float, and the
sums are the ones the walk adds term by term in running order, to the last bit (tests/test_predict_sim.py compares
with tests/sim_reference.py).  Whatever edits a front cohort outside the walk (preemption, a rescan) first puts the
counter back into each cohort (:meth:`_Front.flush`).
"""

from __future__ import annotations

from heapq import heappop, heappush

from launchcard.predict._sched import _Cohort, reserved


def same_state(a: _Cohort, b: _Cohort) -> bool:
    """Cohorts of one state (the walk folds ``b`` into ``a``); their ``gen`` at the same counter."""
    return (a.done == b.done and a.gen == b.gen and a.need == b.need and a.cached == b.cached and a.first == b.first
            and a.redo == b.redo and a.osl == b.osl)


class _Front:
    """``running[:n]``: decoding cohorts whose output tokens are ``gen + lag``."""

    __slots__ = ("by_chunk", "ctx", "dead", "heap", "lag", "n", "reqs", "seq", "to_end", "used")

    def __init__(self, by_chunk: bool, to_end: int) -> None:
        self.by_chunk, self.to_end = by_chunk, to_end
        self.n = 0  # cohorts at the front
        self.lag = 0.0  # tokens each front cohort gained beyond its stored ``gen``
        self.reqs = 0  # their requests
        # KV held and context of their requests at the stored ``gen`` (whole numbers; int while no term is float)
        self.used: float = 0
        self.ctx: float = 0
        self.heap: list[tuple[float, int, _Cohort]] = []  # (osl - gen: the counter at its last token, order, cohort)
        self.dead: set[int] = set()  # ids of cohorts folded away whose heap entries stay
        self.seq = 0

    def terms(self, r: _Cohort) -> tuple[float, float]:
        """One request's KV held and context at its stored ``gen`` (``_Scan``'s terms)."""
        gen, redo = r.gen, r.redo
        held = (reserved(r.cached + r.need + r.osl, self.to_end) if self.to_end else
                r.cached + (r.done if self.by_chunk else r.need) + gen - redo)
        return held, r.cached + r.done + gen - redo

    def shift(self, reqs: int) -> float:
        """What ``lag`` adds to the KV held by ``reqs`` front requests (nothing when outputs are reserved)."""
        return 0 if self.to_end else reqs * self.lag

    def absorb(self, running: list[_Cohort]) -> None:
        """Take the decoding cohorts right after the front into it."""
        i, lag = self.n, self.lag
        while i < len(running):
            r = running[i]
            if r.done < r.need:
                break
            r.gen -= lag
            held, ctx = self.terms(r)
            self.used += r.n * held
            self.ctx += r.n * ctx
            self.reqs += r.n
            heappush(self.heap, (r.osl - r.gen, self.seq, r))
            self.seq += 1
            i += 1
        self.n = i

    def flush(self, running: list[_Cohort]) -> None:
        """Give every front cohort its tokens and empty the front (before anything edits them outside the walk)."""
        lag = self.lag
        for r in running[:self.n]:
            r.gen += lag
        self.n = self.reqs = self.seq = 0
        self.lag = 0.0
        self.used = self.ctx = 0
        self.heap.clear()
        self.dead.clear()

    def advance(self, step: float, running: list[_Cohort]) -> list[_Cohort]:
        """Give every front cohort ``step`` tokens: the cohorts that end (taken out, in running order, ``gen`` at
        their output length); cohorts that end leave their neighbours side by side, folded as the walk would when
        of one state (no other two neighbours can be: they were not, and all gained the same)."""
        self.lag += step
        lag, heap, dead = self.lag, self.heap, self.dead
        ends: list[_Cohort] = []
        while heap and heap[0][0] <= lag:
            r = heappop(heap)[2]
            if id(r) in dead:
                dead.discard(id(r))
                continue
            ends.append(r)
        if ends:
            at = sorted((running.index(r), k) for k, r in enumerate(ends))
            ends = [ends[k] for _, k in at]
            for r in ends:
                held, ctx = self.terms(r)
                self.used -= r.n * held
                self.ctx -= r.n * ctx
                self.reqs -= r.n
                r.gen = float(r.osl)
            for i, _ in reversed(at):
                del running[i]
            self.n -= len(ends)
            gaps = sorted({i - k for k, (i, _) in enumerate(at)})  # where two cohorts are newly side by side
            gone = 0
            for s in gaps:
                s -= gone
                if 0 < s < self.n and same_state(running[s - 1], running[s]):
                    fold(running[s - 1], running[s])
                    dead.add(id(running[s]))
                    del running[s]
                    self.n -= 1
                    gone += 1
        while heap and id(heap[0][2]) in dead:
            dead.discard(id(heappop(heap)[2]))
        return ends

    def left_min(self) -> float:
        """Fewest output tokens a front cohort has left (inf: none)."""
        return self.heap[0][0] - self.lag if self.heap else float("inf")


def fold(last: _Cohort, r: _Cohort) -> None:
    """Fold ``r`` into ``last`` (same state)."""
    tot = last.n + r.n
    last.arrive = (last.arrive * last.n + r.arrive * r.n) / tot
    last.arrive_at = (last.arrive_at, last.n, r.arrive_at, r.n)
    last.inflight = (last.inflight * last.n + r.inflight * r.n) / tot
    for a, b in ((last.fv, r.fv), (last.fv_first, r.fv_first)):
        if a is not None and b is not None:
            for i in range(len(a)):
                a[i] = (a[i] * last.n + b[i] * r.n) / tot
    last.n = tot
