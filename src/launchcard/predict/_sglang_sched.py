"""SGLang's own admission and retraction over the simulation's cohorts (``_sim.simulate`` with
``ServingFacts.sglang_budget``; the rules, with their release, file and line, at
:class:`launchcard.predict._sglang_rules.SglangBudget`).

Admission (a prefill batch): running prefills continue first; then waiting requests, first come first served, while
a request slot is free and the request's prompt plus its whole output (clipped) is less than the KV pool left after
what the running requests hold and are expected to still need (their outputs left x the new-token ratio; a chunked
prefill counts its outputs whole with the chunk that ends its prompt, nothing with the others); each request taken
lowers what is left by its prompt and whole output.  A refusal for KV or for a slot stops admissions until a request
leaves the running batch.

Retraction (a decode batch without KV for its next tokens): the requests with the fewest output tokens (the longest
prompt among equals; with speculative decoding the newest) go to the end of the waiting queue, at least one and until
the rest fit, never the last one, to be prefilled again from scratch (prompt and outputs); the ratio becomes the
remaining requests' (outputs + retract steps) / (output lengths + 1).
"""

from __future__ import annotations

import math

from launchcard.predict._sched import _Cohort, _recompute, _Scan, _take
from launchcard.predict._sglang_rules import SglangBudget


def expected_need(running: list[_Cohort], ratio: float, clip: int, ending: frozenset[int] = frozenset()) -> float:
    """KV tokens SGLang expects the running requests to still need: decoding ones their outputs left x ``ratio``,
    prefilling ones (by ``id``) in ``ending`` (their chunk this batch ends the prompt) their outputs whole, other
    prefilling ones nothing (each clipped at ``clip``), summed in running order.

    A chunked request is outside the running batch between its chunks, and PrefillAdder.add_chunked_req counts its
    outputs only with the chunk that ends its prompt, 0 with the others, as add_one_req does with its first chunk
    (SGLang 0.5.5.post1 python/sglang/srt/managers/schedule_policy.py L449-466, L561, L650)."""
    need = 0.0
    for r in running:
        left = r.osl - r.gen
        if left > clip:  # min(left, clip), without the call (the plan search's inner loop)
            left = clip
        if r.done >= r.need:
            need += r.n * left * ratio
        elif id(r) in ending:
            need += r.n * left
    return need


def sglang_prefill(sc: _Scan, running: list[_Cohort], waiting: list[_Cohort], budget: int, seats_max: int, cap: int,
                   ratio: float, clip: int, full: bool) -> tuple[list[_Cohort], int, bool]:
    """One prefill batch (each cohort's ``chunk``): running prefills' next chunks, then waiting requests under
    SGLang's budget unless ``full`` (an earlier refusal still stands).  Returns the cohorts scheduled, how many
    waiting requests started, and whether admissions are now stopped.  A DP-attention rank runs this with its own
    queue, pool and chunk budget (:mod:`launchcard.predict._sglang_dp`)."""
    out: list[_Cohort] = []
    budget = max(0, budget)
    for r in sc.pend:
        if budget <= 0:
            break
        chunk = min(r.need - r.done, budget // r.n if r.n > 1 else budget)
        if chunk > 0:
            r.chunk = chunk
            out.append(r)
            budget -= chunk * r.n
    admitted = 0
    if full or not waiting:
        return out, admitted, full
    seats = seats_max - sc.n_run
    if seats <= 0:  # no request slot: stopped until one leaves (the loop's first check, before the KV sums)
        return out, admitted, True
    ending = frozenset(id(r) for r in out if r.done + r.chunk >= r.need)
    # the scan's own sum when it has one at this ratio and no prefill ends (the same terms in the same order)
    need = sc.need if sc.need is not None and not ending and sc.need_ratio == ratio else expected_need(
        running, ratio, clip, ending)
    room = cap - sc.used - need
    taken = 0  # KV the requests taken so far count for (whole prompt and output each): room - taken is left
    while waiting:
        if seats <= 0:  # no request slot: stopped until one leaves
            return out, admitted, True
        head = waiting[0]
        total = head.cached + head.need + min(head.osl - head.gen, clip)  # what the check asks room for
        each = head.cached + head.need + min(head.osl, clip)  # what one taken request then counts for
        if not total < room - taken:  # no KV room: stopped until a request leaves
            return out, admitted, True
        if budget <= 0:
            break
        most = min(head.n, seats, budget // max(1, head.need))
        if most >= 1:
            m = _fitting(total, room, taken, each, most)
            co = _take(head, m, waiting, running, out)
            admitted += m
            budget -= m * co.need
            seats -= m
            taken += m * each
            continue
        _take(head, 1, waiting, running, out, chunk=budget)  # one request starts with a partial chunk
        admitted += 1
        break
    return out, admitted, False


def _fitting(total: float, room: float, taken: int, each: int, most: int) -> int:
    """How many of ``most`` alike requests pass SGLang's check one after another (the k-th when ``total`` <
    ``room`` - (``taken`` + k x ``each``)), the first known to pass; every check computed as a one-by-one walk
    computes it, so the count is the walk's to the last bit."""
    m = max(1, min(most, math.ceil((room - taken - total) / each)))
    while m > 1 and not total < room - (taken + (m - 1) * each):
        m -= 1
    while m < most and total < room - (taken + m * each):
        m += 1
    return m


def _victim(dec: list[_Cohort], newest: bool) -> _Cohort:
    """The decoding cohort SGLang retracts from: the newest with speculative decoding, else the fewest output
    tokens, the longest prompt among equals, the newest among those (its sort is stable, reversed, popped from the
    end)."""
    if newest:
        return dec[-1]
    best = dec[0]
    for r in dec[1:]:
        if r.gen < best.gen or (r.gen == best.gen and _prompt(r) >= _prompt(best)):
            best = r
    return best


def _prompt(r: _Cohort) -> float:
    """The request's own prompt (SGLang's origin_input_ids): what it computes less the outputs it recomputes."""
    return r.cached + r.need - r.redo


def sglang_retract(sc: _Scan, running: list[_Cohort], waiting: list[_Cohort], cap: int, tps: float,
                   rule: SglangBudget, newest: bool) -> tuple[_Scan, int, float | None]:
    """Retract decoding requests when their next tokens find no KV; the running cohorts' figures after it, how many
    were retracted, and the new ratio (None: no retraction)."""
    if not sc.n_dec or sc.used + sc.n_dec * tps <= cap:
        return sc, 0, None
    n = 0
    while sc.n_dec > 1:
        victim = _victim(sc.dec, newest)
        one = victim.split(1) if victim.n > 1 else victim
        if one is victim:
            running.remove(victim)
        _recompute(one)
        waiting.append(one)
        n += 1
        sc = _Scan(running)
        if sc.used + sc.n_dec * tps <= cap:
            break
    gen = osl = 0.0
    for r in sc.dec:
        gen += r.n * r.gen
        osl += r.n * r.osl
    return sc, n, min(1.0, (gen + rule.retract_steps * sc.n_dec) / (osl + 1))
