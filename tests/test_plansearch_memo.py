"""The plan search's speed machinery leaves every answer as it was: shared runs and replayed schedules, memos keyed
by plan shape, bounded per-process caches, the cyclic collector paused during a search (split from
test_plansearch.py, which covers what a search answers)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace

import pytest

from launchcard.idmemo import IdMemo
from launchcard.plansearch import Candidate, SearchSpace, Slo, checkpoint_option, search
from launchcard.predict import Workload
from plansearch_support import GPT_OSS, MODEL, gpt_oss_space


def test_the_per_process_caches_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived process (web server, sweep) searching again and again: the caches never hold much more than
    CACHE_ENTRIES (dropped between candidates), and a search after a drop gives the same figures."""
    from launchcard.plansearch import _search as s

    s.clear_caches()
    work, slo = Workload(1024, 128, concurrency=16), Slo.parse("tpot=50")
    first = search(gpt_oss_space(), work, slo)
    assert s.cache_entries() > 60
    monkeypatch.setattr(s, "CACHE_ENTRIES", 40)
    for isl in range(600, 1800, 200):  # new workloads: unbounded, the caches would grow by ~150 entries each
        search(gpt_oss_space(), replace(work, isl=isl), slo)
        assert s.cache_entries() <= 40 + 250, isl  # the bound plus what one stretch of 64 candidates adds
    again = search(gpt_oss_space(), work, slo)
    assert [o.figures for o in again.outcomes] == [o.figures for o in first.outcomes]


def test_shared_runs_give_every_candidate_its_own_prediction() -> None:
    """The search simulates once per batching limits and replays schedules across plans; every candidate's
    figures must still be those of its own prediction (own max-num-seqs, no memo)."""
    from launchcard.plansearch import _search as s
    from launchcard.predict import predict, with_limits

    s.clear_caches()
    space = replace(gpt_oss_space(), max_num_seqs=(8, 16, 32, 64, 256)).validate()
    slo, work = Slo.parse("ttft=1500,tpot=30"), s.screening(Workload(2048, 128, concurrency=32))
    checked = 0
    for c in s.candidates(space):
        if c.mode != "aggregated":
            continue
        out = s.evaluate(space, c, work, slo)
        if out.figures is None:
            continue
        facts = s._facts(space.options[0], space.gpu, space.engine, s._settings(space, space.options[0], c, c.dp))
        assert not isinstance(facts, str)
        own = predict(with_limits(facts, max_num_seqs=c.max_num_seqs, gpus=c.gpus, replicas=c.dp), work)
        assert (out.figures.ttft_ms, out.figures.tpot_ms, out.figures.tok_s) == (
            own.ttft_ms_mean, own.tpot_ms_mean, own.output_tok_per_s), c.label()
        checked += 1
    assert checked >= 20 and len(s._SCHEDULES) < checked / 2


def test_a_space_never_reads_another_spaces_memory_plans_when_an_id_is_reused() -> None:
    from launchcard.plansearch import _search as s
    from launchcard.plansearch import clear_caches, evaluate

    h100 = gpt_oss_space(disaggregation=False)
    h200 = replace(h100, gpu="h200")
    c = Candidate(option="checkpoint", tp=2, pp=1, dp=4, ep=False, kv_cache_dtype="auto", max_num_seqs=16)
    work, slo = Workload(1024, 128, concurrency=16), Slo.parse("tpot=100")
    clear_caches()
    alone = evaluate(h200, c, work, slo)
    evaluate(h100, c, work, slo)
    # as if h200 had the id of a space no longer alive (the identity memo's key: ids of the space and of no pin)
    s._PLANS._entries[(id(h200), id(None), None)] = s._PLANS._entries[(id(h100), id(None), None)]
    again = evaluate(h200, c, work, slo)
    assert again == alone and again.figures != evaluate(h100, c, work, slo).figures


def test_shown_plans_predicted_again_without_their_largest_limits_run_give_the_same_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-run prediction of a plan shown whose screening run was its own (not the largest limit's) simulates
    its own whole run instead of first simulating the largest limit's: the same run whenever that one would have
    served, so the same outcomes, ranking and front as sharing it."""
    from launchcard.plansearch import _search as s
    from launchcard.plansearch import clear_caches

    space, work, slo = gpt_oss_space(), Workload(2048, 256, concurrency=64), Slo.parse("ttft=3000,tpot=30")
    clear_caches()
    alone = search(space, work, slo)
    simulated_alone = len(s._PREDICTIONS)
    sharing = s._evaluate

    def always_share(*a: object, screen: object = None) -> object:
        return sharing(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(s, "_evaluate", always_share)
    clear_caches()
    shared = search(space, work, slo)
    assert any(o.candidate.max_num_seqs < 64 for o in alone.ranked)  # a limit below the largest was shown
    assert simulated_alone < len(s._PREDICTIONS)  # ... and its largest limit's whole run was not simulated
    assert alone.outcomes == shared.outcomes and alone.ranked == shared.ranked and alone.pareto == shared.pareto


@pytest.mark.parametrize("work", [Workload(2048, 256, concurrency=64), Workload(1024, 128, rate=6.0)])
def test_a_run_shared_across_batch_limits_gives_each_limit_its_own_runs_answer(
        monkeypatch: pytest.MonkeyPatch, work: Workload) -> None:
    """Batch limits share one simulated run when the run never reached the smaller one's slots and every step the
    CUDA graph limit decides lies on the same side of both limits (vLLM's default graph limit follows
    max_num_seqs): each limit's own run gives the same outcomes, to the last bit.  A vLLM plan's memory is planned
    at its own limit (its KV cache differs): the run is shared only where no KV decision falls otherwise
    (``kv_free_from``), an open loop's too, and with fewer runs simulated."""
    from launchcard.plansearch import _search as s
    from launchcard.plansearch import clear_caches
    from launchcard.predict import _predict as pr

    simulated = [0]
    simulate = pr.simulate

    def counted(*a: object, **k: object) -> object:
        simulated[0] += 1
        return simulate(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(pr, "simulate", counted)

    space = SearchSpace(model=MODEL, gpu="h100", gpus=8, gpus_per_node=8, options=(checkpoint_option(MODEL, GPT_OSS),))
    slo = Slo.parse("ttft=3000,tpot=30")
    same_run = s._same_run
    across: list[tuple[object, ...]] = []  # shared between limits with different CUDA graph limits

    def recorded(*a: object) -> bool:
        hit = same_run(*a)  # type: ignore[arg-type]
        if hit and a[2] != a[4]:
            across.append(a)
        return hit

    monkeypatch.setattr(s, "_same_run", recorded)
    clear_caches()
    shared = search(space, work, slo)
    runs_shared = simulated[0]
    monkeypatch.setattr(s, "_same_run", lambda *a: False)
    clear_caches()
    simulated[0] = 0
    alone = search(space, work, slo)
    assert across and runs_shared < simulated[0]
    assert alone.outcomes == shared.outcomes and alone.ranked == shared.ranked and alone.pareto == shared.pareto


def test_the_start_up_check_runs_once_per_plan_shape_yet_reads_the_batch_limit(monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """vLLM's start-up rules are checked once per plan shape (every batch limit of it alike), except the one rule
    that reads the batch limit: --max-num-batched-tokens below --max-num-seqs refuses that limit, and only it."""
    import launchcard.check
    from launchcard.plansearch import clear_caches

    calls: list[int] = []
    real = launchcard.check.startup_refusal  # limit_rules' first error, as predict asks it too

    def counted(*a: object, **kw: object) -> object:
        calls.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(launchcard.check, "startup_refusal", counted)
    opt = checkpoint_option(MODEL, GPT_OSS, ("vllm", "serve", MODEL, "--max-num-batched-tokens", "32"))
    space = SearchSpace(model=MODEL, gpu="h100", gpus=4, gpus_per_node=8, options=(opt,), max_num_seqs=(16, 32, 64),
                        disaggregation=False)
    clear_caches()
    r = search(space, Workload(1024, 128, concurrency=16), Slo.parse("tpot=100"))
    checked = [o for o in r.outcomes if o.stage != "layout"]
    assert {o.candidate.max_num_seqs for o in checked} == {16, 32, 64}
    refused = [o for o in checked if o.stage == "check"]
    assert refused and {o.candidate.max_num_seqs for o in refused} == {64}
    assert all(o.reason == "[max-num-batched-tokens-below-seqs] --max-num-batched-tokens 32 is below --max-num-seqs "
                           "64: vLLM refuses to start" for o in refused)
    assert len([o for o in checked if o.candidate.max_num_seqs == 64]) == len(refused)
    shapes = {replace(o.candidate, max_num_seqs=0) for o in checked}
    assert len(calls) == len(shapes) + len(refused)  # one per shape, and the limit the one rule refuses


class _NeverHit(dict):  # type: ignore[type-arg]
    """A memo that never answers."""

    def get(self, key: object, default: object = None) -> object:
        return default


class _Recompute(IdMemo[object, object]):
    """An identity memo that never answers: every value made again."""

    def get(self, obj: object, make: Callable[[object], object], extra: Hashable = None) -> object:
        return make(obj)


@pytest.mark.parametrize(("kw", "work", "slo"), [
    ({}, Workload(1024, 256, concurrency=64), "ttft=1500,tpot=30"),
    ({"engine": "sglang"}, Workload(2048, 128, concurrency=32), "tpot=40"),
    ({"gpus": 16}, Workload(2048, 256, rate=8.0), "ttft=2000,tpot=50"),
    ({}, Workload(4096, 128, concurrency=16, prefix_hit=0.5), "ttft=3000,tpot=40"),
], ids=["vllm-closed", "sglang", "poisson-16", "prefix"])
def test_the_speed_memos_leave_every_answer_as_it_was(monkeypatch: pytest.MonkeyPatch, kw: dict[str, object],
                                                      work: Workload, slo: str) -> None:
    """The step-cost memos of a run (``predict._clock._Clock.costs``, ``token_costs``), the coefficient sets read
    once (``predict._coef._SETS``), the one-client sets and the reused runs' means (``predict._predict._CLIENT_SETS``,
    ``_MEANS``) only save time: the outcomes (every figure to the last bit), the ranking, the Pareto front and the
    closest misses of a cold search are those of a search that recomputes them all."""
    from launchcard.plansearch import clear_caches
    from launchcard.predict import _clock, _coef
    from launchcard.predict import _predict as predict_module

    def answer() -> list[str]:
        clear_caches()
        r = search(gpt_oss_space(**kw), work, Slo.parse(slo))
        return ([repr(o) for o in r.outcomes] + [repr(o.candidate) for o in r.ranked]
                + [repr(o.candidate) for o in r.pareto] + [repr(o.candidate) for o in r.closest])

    fast = answer()
    real_init = _clock._Clock.__init__

    def fresh(self: _clock._Clock, *a: object) -> None:
        real_init(self, *a)  # type: ignore[arg-type]
        self.costs = _NeverHit()
        self.token_costs = _NeverHit()

    monkeypatch.setattr(_clock._Clock, "__init__", fresh)
    monkeypatch.setattr(_coef, "_SETS", _NeverHit())
    monkeypatch.setattr(predict_module, "_CLIENT_SETS", _Recompute(1))
    monkeypatch.setattr(predict_module, "_MEANS", _Recompute(1))
    assert answer() == fast
    assert len(fast) > 20


@pytest.mark.parametrize("kw", [{}, {"engine": "sglang"}, {"gpus": 16}], ids=["vllm", "sglang", "disaggregated"])
def test_a_search_leaves_no_cyclic_garbage_and_gives_the_collector_back(kw: dict[str, object]) -> None:
    """``search`` pauses the cyclic garbage collector (its passes over the search's live objects were 3-13% of a
    cold search): that is only free while a search makes no reference cycles, which this counts; the caller's
    collector is as it was afterwards, on or off."""
    import gc

    from launchcard.plansearch import clear_caches

    work, slo = Workload(1024, 256, concurrency=64), Slo.parse("ttft=1500,tpot=30")
    assert gc.isenabled()
    clear_caches()
    search(gpt_oss_space(**kw), work, slo)
    assert gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        clear_caches()
        search(gpt_oss_space(**kw), work, slo)
        assert not gc.isenabled()
        assert gc.collect() == 0  # nothing a cold search dropped was held by a cycle
    finally:
        gc.enable()


def test_a_search_runs_with_the_collector_paused_and_gives_it_back_when_it_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``search`` promises about the collector, seen from inside: off while the candidates are evaluated
    (the progress callback runs in the search), on again afterwards, also when the search raises."""
    import gc

    from launchcard.plansearch import _search as mod

    seen: list[bool] = []
    search(gpt_oss_space(), Workload(1024, 256, concurrency=64), Slo.parse("ttft=1500,tpot=30"),
           progress=lambda done, total: seen.append(gc.isenabled()))
    assert seen and not any(seen) and gc.isenabled()

    def boom(*a: object) -> None:
        raise RuntimeError("a failing search")

    monkeypatch.setattr(mod, "_search", boom)
    with pytest.raises(RuntimeError):
        search(gpt_oss_space(), Workload(1024, 256, concurrency=64), Slo.parse("ttft=1500,tpot=30"))
    assert gc.isenabled()


def test_run_key_groups_outcomes_as_their_figures_compare_but_the_kv_pool() -> None:
    """``_rank.run_key`` keys an outcome's figures by the fields their equality compares, less ``kv_tokens`` (no
    copy of each): the same classes as ``replace(figures, kv_tokens=0)`` gave."""
    from launchcard.plansearch import _rank
    from launchcard.plansearch import _search as s

    s.clear_caches()
    outs = search(replace(gpt_oss_space(), max_num_seqs=(8, 64, 256)), Workload(1024, 128, concurrency=16),
                  Slo.parse("tpot=50")).outcomes
    fig = next(o.figures for o in outs if o.figures is not None)
    variants = [replace(fig, kv_tokens=fig.kv_tokens + 1), replace(fig, outside=()), replace(fig, phases=None),
                replace(fig, ttft_ms=fig.ttft_ms * 2), replace(fig, bound="other"), replace(fig, kv_transfer_ms=1.0)]
    cases = [*outs, *(replace(outs[0], figures=v) for v in variants)]

    def old(o: object) -> tuple[object, ...]:
        k = _rank.run_key(o)  # type: ignore[arg-type]
        f = o.figures  # type: ignore[attr-defined]
        return (*k[:-1], replace(f, kv_tokens=0) if f is not None else None)

    keys, want = [_rank.run_key(o) for o in cases], [old(o) for o in cases]
    for i in range(len(cases)):
        for j in range(len(cases)):
            assert (keys[i] == keys[j]) == (want[i] == want[j]), (i, j)
            if keys[i] == keys[j]:
                assert hash(keys[i]) == hash(keys[j])
    assert len({_rank.run_key(o) for o in cases[-len(variants):]}) == 4  # kv, outside, phases alike; 3 apart
