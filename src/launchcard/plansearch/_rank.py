"""How a search orders its answer: plans meeting the SLO ranked (decided before undecided), the Pareto front,
one row per run; and what makes a plan's verdict undecided."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launchcard.plansearch._types import Figures, Outcome
    from launchcard.predict import ServingFacts


# the codes of the findings that make a plan's verdict undecided (its figures assume it starts and fits)
UNDECIDED = frozenset({"memory-undecided", "startup-undecided", "sglang-undecided"})


def undecided(facts: ServingFacts) -> str | None:
    """Why a plan's verdict cannot be decided (None: it can): its facts' cannot-decide findings."""
    why = [f.message for f in facts.findings if f.code in UNDECIDED]
    return "; ".join(why) if why else None


def rank_key(o: Outcome) -> tuple[float, float, int, int, int, str]:
    """Output tokens/s per GPU, then per user; among equals the fewest GPUs, then the smallest TP x PP and batch
    limit that reach it (less memory reserved, fewer processes to coordinate)."""
    f, c = o.figures, o.candidate
    assert f is not None
    return (-round(f.tok_s_per_gpu, 6), -round(f.tok_s_per_user, 6), c.gpus, c.tp * c.pp, c.max_num_seqs, c.label())


def ranked(outcomes: list[Outcome] | tuple[Outcome, ...]) -> list[Outcome]:
    """Plans meeting the SLO, best first: every decided plan before any whose verdict launchcard cannot decide
    (its figures assume it starts and fits), each group by :func:`rank_key`."""
    meets = [o for o in outcomes if o.meets]
    return sorted(meets, key=lambda o: (not o.decided, rank_key(o)))


def _front(outcomes: list[Outcome]) -> list[Outcome]:
    front: list[Outcome] = []
    best_user = -math.inf
    for o in sorted(outcomes, key=rank_key):
        f = o.figures
        assert f is not None
        if f.tok_s_per_user > best_user:
            front.append(o)
            best_user = f.tok_s_per_user
    return front


def pareto(outcomes: tuple[Outcome, ...] | list[Outcome]) -> tuple[Outcome, ...]:
    """Predicted plans no other plan beats on both output tokens/s per GPU and tokens/s per user (one per point),
    by tokens/s per GPU, highest first: the front of the decided plans, and the undecided plans of the front of
    all (those the decided front does not cover), each marked by its ``undecided``. An undecided plan never
    pushes a decided one off the front."""
    predicted = [o for o in outcomes if o.figures is not None]
    front = _front([o for o in predicted if o.decided])
    extra = [o for o in _front(predicted) if not o.decided]
    if not extra:
        return tuple(front)
    return tuple(sorted([*front, *extra], key=rank_key))


def _figures_compared() -> Callable[[Figures], tuple[object, ...]]:
    """The figures' fields that their equality compares, but the KV capacity, as one tuple: what ``replace(fig,
    kv_tokens=0)`` compared equal by, without a copy of each outcome's figures (~1,500 a cold search)."""
    from launchcard.plansearch._types import Figures

    get = attrgetter(*(f.name for f in fields(Figures) if f.compare and f.name != "kv_tokens"))
    return lambda fig: tuple(get(fig))


_compared = _figures_compared()


def run_key(o: Outcome) -> tuple[object, ...]:
    """A plan apart from its max-num-seqs, with its figures: equal keys are one run.  The KV capacity is left
    out: a larger limit leaves vLLM less KV cache (its profile run and CUDA graphs), which changes nothing in a
    run that never needed it."""
    c = o.candidate
    fig = _compared(o.figures) if o.figures is not None else None
    return (c.option, c.tp, c.pp, c.dp, c.ep, c.kv_cache_dtype, c.spec, c.spec_tokens, c.mode, c.prefill_gpus,
            c.dp_attention, c.chunk, fig)


def one_per_run(outcomes: list[Outcome]) -> tuple[Outcome, ...]:
    """Drop outcomes that repeat an earlier one's plan and figures with another max-num-seqs (a limit above what
    the run ever holds changes nothing); sorted input keeps the first, i.e. the smallest such limit."""
    seen: set[tuple[object, ...]] = set()
    out: list[Outcome] = []
    for o in outcomes:
        key = run_key(o)
        if key not in seen:
            seen.add(key)
            out.append(o)
    return tuple(out)
