"""Prefill/decode splits whose pools both hold more replicas than the load has requests at once serve the same run:
searched once (a search on 100,000 GPUs took 750 s of such twins, now under a second)."""

from __future__ import annotations

from pathlib import Path

from launchcard.plansearch import SearchSpace, Slo, candidates, checkpoint_option, evaluate, load_clients, search
from launchcard.predict import Workload

QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
MODEL = "Qwen/Qwen3-8B"


def _space(gpus: int) -> SearchSpace:
    return SearchSpace(model=MODEL, gpu="h100", gpus=gpus, gpus_per_node=8,
                       options=(checkpoint_option(MODEL, str(QWEN)),), max_num_seqs=(8,), kv_dtypes=("auto",))


def test_saturated_splits_are_twins_and_searched_once() -> None:
    space, work, slo = _space(48), Workload(512, 64, concurrency=2), Slo.parse("ttft=5000")
    every, kept = list(candidates(space)), list(candidates(space, load_clients(work)))
    skipped = [c for c in every if c not in kept]
    assert skipped and all(c.mode == "disaggregated" for c in skipped)
    for c in skipped:  # each skipped split predicts exactly what the kept split of its TP does
        twin = next(k for k in kept if k.mode == "disaggregated" and (k.tp, k.ep, k.kv_cache_dtype) == (
            c.tp, c.ep, c.kv_cache_dtype) and min(k.prefill_gpus, k.gpus - k.prefill_gpus) // k.tp >= 2)
        a, b = evaluate(space, c, work, slo), evaluate(space, twin, work, slo)
        assert a.figures is not None and b.figures is not None
        assert (a.figures.ttft_ms, a.figures.tpot_ms, a.figures.tok_s_per_gpu) == (
            b.figures.ttft_ms, b.figures.tpot_ms, b.figures.tok_s_per_gpu)
    r = search(space, work, slo)
    assert any("serve the same run" in f for f in r.findings)


def test_poisson_arrivals_keep_every_split() -> None:
    space = _space(48)
    assert load_clients(Workload(512, 64, rate=2.0)) is None
    assert list(candidates(space, None)) == list(candidates(space))
    assert load_clients(Workload(512, 64, rate=float("inf"), num_requests=40)) == 40


def test_the_best_plan_s_idle_replicas_are_said_as_predict_says_them() -> None:
    """2 clients on 48 GPUs: the best plan runs replicas no request reaches; predict of it warns `idle-replicas`,
    plan said nothing of it (its tok/s per GPU counts the idle GPUs). It is said once, naming the plan."""
    from dataclasses import replace

    space, work = _space(48), Workload(512, 64, concurrency=2)
    r = search(replace(space, disaggregation=False), work, Slo.parse("ttft=5000"))
    assert r.winner is not None and r.winner.candidate.dp > 2
    idle = [f for f in r.findings if "data-parallel replicas busy" in f]
    assert len(idle) == 1 and idle[0].startswith(f"{r.winner.candidate.label()}: 2 clients keep only 2 of the "), idle
