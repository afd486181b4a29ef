"""The memory planner's memos of what does not read the batch limit (a plan search plans one model at ~8 limits):
``_limits.startup_refusals`` (every rule but the scheduler's), ``_model.account``'s notes, weights and KV layout,
``_plan._assumed``.  A changed input never hits a stale answer; every answer is the one computed afresh."""

from __future__ import annotations

from dataclasses import replace

from launchcard.memory import Settings, find_gpu, load_arch
from launchcard.memory import _limits as lim
from plansearch_support import GPT_OSS


def test_the_batch_limits_are_judged_per_call_and_the_rest_per_arch_gpu_and_settings() -> None:
    lim._RULES.clear()
    arch, h100, t4 = load_arch(GPT_OSS), find_gpu("h100"), find_gpu("t4")
    s = Settings(tp=2, kv_cache_dtype="fp8")
    fresh = lim.startup_refusals(arch, s, h100)
    assert len(lim._RULES) == 1
    # another batch limit: the same entry, and the scheduler's rule judged at this limit
    small = lim.startup_refusals(arch, replace(s, max_num_seqs=512, max_num_batched_tokens=256), h100)
    assert len(lim._RULES) == 1
    assert any("--max-num-batched-tokens 256 is below --max-num-seqs 512" in p for p in small.problems)
    assert not any("max-num-batched-tokens" in p for p in fresh.problems)
    assert lim.startup_refusals(arch, replace(s, max_num_seqs=64), h100) == fresh
    # another GPU or setting: its own entry, its own answer (MXFP4, and bfloat16, on a T4)
    on_t4 = lim.startup_refusals(arch, s, t4)
    assert len(lim._RULES) == 2 and on_t4 != fresh and on_t4.problems
    assert len(lim.startup_refusals(arch, replace(s, dtype="bfloat16"), t4).problems) == len(on_t4.problems) + 1
    # every answer is the one computed without the memo
    for g, t in ((h100, s), (t4, s), (t4, replace(s, kv_cache_dtype="auto", max_num_seqs=8))):
        lim._RULES.clear()
        want = lim.startup_refusals(arch, t, g)
        assert lim.startup_refusals(arch, t, g) == want


def test_an_arch_or_gpu_whose_id_is_reused_never_reads_the_other_ones_answer() -> None:
    lim._RULES.clear()
    arch, h100, t4 = load_arch(GPT_OSS), find_gpu("h100"), find_gpu("t4")
    s = Settings(tp=2, kv_cache_dtype="fp8")
    want = lim.startup_refusals(arch, s, t4)
    (key,) = lim._RULES._entries
    stale = ((), (("planted", "fix", "evidence"),), ("planted warning",))
    lim._RULES._entries[key] = (load_arch(GPT_OSS), t4, stale)  # as if another arch had had this one's id
    assert lim.startup_refusals(arch, s, t4) == want
    lim._RULES._entries[key] = (arch, h100, stale)  # ... or another GPU
    assert lim.startup_refusals(arch, s, t4) == want


def test_a_plans_assumptions_are_remembered_by_their_note_and_code_alone() -> None:
    """``memory._plan._assumed`` (lru_cache): each (note, code) its own answer, the one computed afresh."""
    from launchcard.memory import ASSUMED_MAX_MODEL_LEN
    from launchcard.memory import _plan as plan

    notes = ["weights dtype guessed from the name", "max_model_len not given: vLLM's default 4096",
             "host memory not given", "a plain note"]
    for note in notes:
        for code in (plan.ASSUMED, ASSUMED_MAX_MODEL_LEN):
            got = plan._assumed(note, code)
            assert got == plan._assumed.__wrapped__(note, code) and (got.what, got.code) == (note, code)
    assert [plan._assumed(n).confidence for n in notes] == ["low", "high", "medium", "medium"]


def test_the_accounting_before_the_budget_is_shared_across_batch_limits_only() -> None:
    """``_model._LAYOUTS``: one entry for every max_num_seqs of an arch, GPU and settings; each accounting equals the
    one computed with the memo empty; another KV dtype, GPU or arch object (an id reused) gets its own."""
    from launchcard.memory import _model

    arch, h100, h200 = load_arch(GPT_OSS), find_gpu("h100"), find_gpu("h200")
    s = Settings(tp=2, max_model_len=8192)
    plans = [(h100, replace(s, max_num_seqs=m)) for m in (8, 64, 1024)] + [
        (h200, replace(s, max_num_seqs=8)), (h100, replace(s, kv_cache_dtype="fp8", max_num_seqs=8))]
    fresh = []
    for g, t in plans:
        _model._LAYOUTS.clear()
        fresh.append(_model.account(arch, t, gpu=g, gpu_memory_gib=g.memory_gib))
    _model._LAYOUTS.clear()
    got = [_model.account(arch, t, gpu=g, gpu_memory_gib=g.memory_gib) for g, t in plans]
    assert got == fresh and len(_model._LAYOUTS) == 3
    assert len({a.kv_cache_tokens for a in got[:3]}) == 3  # the batch limit still moves the pool
    assert got[4].kv_bytes_per_token < got[0].kv_bytes_per_token  # the FP8 KV dtype its own layout
    (key, (_, g, lay)) = next(iter(_model._LAYOUTS._entries.items()))
    _model._LAYOUTS._entries[key] = (load_arch(GPT_OSS), g, lay._replace(weights=0.0))  # another arch had this id
    assert _model.account(arch, plans[0][1], gpu=h100, gpu_memory_gib=h100.memory_gib) == fresh[0]
