"""bench against fake endpoints: metrics, conditions, failures, bounded time."""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from launchcard.bench import (
    CacheCounters,
    RequestRecord,
    Tokenizer,
    Workload,
    cache_state,
    exact_text,
    hit_rate,
    make_prompts,
    measured_facts,
    parse_cache_counters,
    percentile,
    run_bench,
    summarize,
    weight_hash,
)

MODEL = "tiny"


def _sse_tokens(n: int, prompt_tokens: int = 8) -> bytes:
    parts = [f"data: {json.dumps({'choices': [{'text': f't{i}'}]})}\n\n" for i in range(n)]
    parts.append(
        f"data: {json.dumps({'choices': [], 'usage': {'prompt_tokens': prompt_tokens, 'completion_tokens': n}})}\n\n"
    )
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


class WordTokenizer:
    """A token per word (ids assigned as words are first seen), as the fake server's tokenizer."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []

    def encode(self, text: str) -> list[int]:
        for w in text.split():
            if w not in self.ids:
                self.ids[w] = len(self.words)
                self.words.append(w)
        return [self.ids[w] for w in text.split()]

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.words[i] for i in ids)


WORDS = WordTokenizer()


def sync_handler(req: httpx.Request) -> httpx.Response:
    if req.url.path == "/v1/models":
        return httpx.Response(200, json={"data": [{"id": MODEL, "max_model_len": 512}]})
    if req.url.path == "/version":
        return httpx.Response(200, json={"version": "0.32.0"})
    if req.url.path == "/tokenize":
        ids = WORDS.encode(json.loads(req.content)["prompt"])
        return httpx.Response(200, json={"tokens": ids, "count": len(ids)})
    if req.url.path == "/detokenize":
        return httpx.Response(200, json={"prompt": WORDS.decode(json.loads(req.content)["tokens"])})
    return httpx.Response(404)


def stream_handler(fault: str | None = None, every: int = 1):  # type: ignore[no-untyped-def]
    counter = {"n": 0}

    async def handler(req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content)
        counter["n"] += 1
        broken = fault is not None and counter["n"] % every == 0
        if broken and fault == "hang":
            await asyncio.sleep(3600)
        if broken and fault == "5xx":
            return httpx.Response(500, text="internal error")
        if broken and fault == "reset":
            raise httpx.ReadError("connection reset by peer", request=req)
        if broken and fault == "malformed":
            return httpx.Response(200, content=b'data: {"choices": [{"text": "a"}]}\n\nnonsense\n\n')
        n = body["max_tokens"]
        prompt = body["prompt"]
        assert body["ignore_eos"] is True and body["max_tokens"] == n and body["stream"] is True
        assert "min_tokens" not in body  # a per-step logits processor would skew the measurement
        assert isinstance(prompt, str)  # text, as real clients send it
        return httpx.Response(200, content=_sse_tokens(n, len(prompt.split())))

    return handler


def bench(fault: str | None = None, every: int = 1, **work):  # type: ignore[no-untyped-def]
    w = Workload(
        **{
            "input_tokens": 16,
            "output_tokens": 4,
            "num_prompts": 6,
            "concurrency": 2,
            "warmup": 1,
            "timeout_s": 1.0,
            **work,
        }
    )
    return run_bench(
        "http://fake",
        w,
        transport=httpx.MockTransport(stream_handler(fault, every)),
        sync_transport=httpx.MockTransport(sync_handler),
    )


def test_good_run_measures_everything_and_states_conditions() -> None:
    res = bench(repetitions=2)
    s = res.summary
    assert s.completed == 12 and s.failed == 0 and s.total_output_tokens == 48
    assert s.output_tokens_per_s and s.output_tokens_per_s > 0 and s.requests_per_s
    assert s.ttft_ms and s.tpot_ms and s.itl_ms and s.e2e_ms
    assert s.mean_prompt_tokens == 16  # text prompts of exactly 16 tokens, via /tokenize and /detokenize
    assert res.prompt_sizing == "exact" and "/tokenize" in res.sizing_note
    assert len(res.runs) == 2
    assert res.conditions.load_generator is not None and "built-in client" in res.conditions.load_generator
    assert res.load_generator_cpu is not None and res.load_generator_cpu.wall_s > 0
    assert not res.load_generator_cpu.startup_included  # timed around the load itself
    assert res.load_generator_argv is None and res.load_generator_config is None
    c = res.conditions
    assert c.runtime_execution_revision == "vllm 0.32.0" and c.input_tokens == 16 and c.output_tokens == 4
    assert c.concurrency == 2 and c.temperature == 0.0 and c.top_p == 1.0
    # Unknown without the server's command line or a model dir: null, not guessed.
    assert c.quantization is None and c.speculative_decoding is None and c.weight_hash is None
    assert c.model_revision is None


def test_conditions_from_argv_and_model_dir(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "config.json").write_text("{}")
    w = Workload(input_tokens=8, output_tokens=2, num_prompts=2, concurrency=1, warmup=0, timeout_s=1)
    res = run_bench(
        "http://fake",
        w,
        model_dir=tmp_path,
        argv=("vllm", "serve", "m", "--no-enable-prefix-caching"),
        transport=httpx.MockTransport(stream_handler()),
        sync_transport=httpx.MockTransport(sync_handler),
    )
    c = res.conditions
    assert c.quantization == "none" and c.speculative_decoding == "none"
    assert c.cache_state is not None and c.cache_state.startswith("prefix caching off")
    assert c.weight_hash == weight_hash(tmp_path) and c.weight_hash.startswith("sha256:")


def test_without_tokenizer_sizes_are_approximate_and_measured_from_usage() -> None:
    def no_tokenize(req: httpx.Request) -> httpx.Response:
        return httpx.Response(404) if req.url.path == "/tokenize" else sync_handler(req)

    w = Workload(input_tokens=8, output_tokens=2, num_prompts=2, concurrency=1, warmup=0, timeout_s=1)
    res = run_bench(
        "http://fake",
        w,
        transport=httpx.MockTransport(stream_handler()),
        sync_transport=httpx.MockTransport(no_tokenize),
    )
    assert res.prompt_sizing == "approximate" and "approximate" in res.sizing_note
    assert res.conditions.input_tokens == 8  # what the server reported (usage.prompt_tokens)


@pytest.mark.parametrize("fault, cause", [("5xx", "HTTP 500"), ("reset", "ReadError"), ("malformed", "malformed SSE")])
def test_faults_are_counted_and_the_run_finishes_on_time(fault: str, cause: str) -> None:
    began = time.monotonic()
    res = bench(fault, every=2, warmup=0)
    assert time.monotonic() - began < 8  # 6 requests, 2 at a time, 1 s limit each
    assert res.summary.failed == 3 and res.summary.completed == 3
    assert any(cause in e for e in res.errors), res.errors


def test_a_request_without_answer_stops_the_run() -> None:
    began = time.monotonic()
    res = bench("hang", every=2, warmup=0, num_prompts=12)
    # One timeout (1 s) ends it: requests in flight are cancelled, the rest never sent.
    assert time.monotonic() - began < 1 + 5
    s = res.summary
    assert s.completed >= 1 and s.failed == 12 - s.completed and s.completed < 6
    assert any("timeout after 1s" in e for e in res.errors), res.errors
    assert any("the run stopped after a request got no answer (timeout after 1s)" in e for e in res.errors)


def test_all_failed_means_nothing_measured() -> None:
    res = bench("5xx", warmup=0)
    s = res.summary
    assert s.completed == 0 and s.failed == 6
    assert s.output_tokens_per_s is None and s.ttft_ms is None and s.tpot_ms is None
    names = {f.name for f in measured_facts(res)}
    assert "bench.output_tokens_per_s" not in names and "bench.ttft.p50" not in names
    assert "bench.failed_requests" in names


def test_measured_facts_carry_conditions() -> None:
    res = bench()
    facts = {f.name: f for f in measured_facts(res)}
    f = facts["bench.output_tokens_per_s"]
    assert f.classification == "measured" and f.conditions == res.conditions and f.unit == "tokens/s"
    assert f.evidence is not None and f.evidence.kind == "endpoint" and f.evidence.url == "http://fake"
    assert {"bench.ttft.p50", "bench.tpot.p99", "bench.itl.p90", "bench.e2e.p50"} <= set(facts)


def test_prompts_are_distinct_text_of_exactly_the_requested_tokens() -> None:
    tok = WordTokenizer()
    prompts, sizing = make_prompts(5, 10, tokenizer=Tokenizer(tok.encode, tok.decode))
    assert sizing == "exact" and len(set(prompts)) == 5
    assert all(isinstance(p, str) and len(tok.encode(p)) == 10 for p in prompts)
    texts, sizing = make_prompts(5, 10)
    assert sizing == "approximate" and len(set(texts)) == 5 and all(len(t.split()) == 10 for t in texts)


def test_a_tokenizer_that_never_round_trips_makes_the_sizing_approximate() -> None:
    tok = WordTokenizer()
    # decode glues a marker token onto every text: no cut encodes back to 10.
    sloppy = Tokenizer(tok.encode, lambda ids: tok.decode(ids) + " <eos> <eos>" * 5)
    prompts, sizing = make_prompts(3, 10, tokenizer=sloppy)
    assert sizing == "approximate" and len(prompts) == 3


class MergingTokenizer:
    """Adjacent letters 'ab' encode as one token: a cut between them re-encodes shorter,
    as a BPE merge does at a cut inside a word."""

    def encode(self, text: str) -> list[int]:
        out, i = [], 0
        while i < len(text):
            if text.startswith("ab", i):
                out.append(0)
                i += 2
            else:
                out.append(ord(text[i]))
                i += 1
        return out

    def decode(self, ids: list[int]) -> str:
        return "".join("ab" if t == 0 else chr(t) for t in ids)


@given(st.text(alphabet="abc", min_size=20, max_size=60), st.integers(min_value=1, max_value=15))
def test_exact_text_encodes_to_exactly_n_tokens_or_is_none(text: str, n: int) -> None:
    tok = MergingTokenizer()
    ids = tok.encode(text)
    found = exact_text(ids, n, Tokenizer(tok.encode, tok.decode))
    if found is not None:
        assert len(tok.encode(found)) == n and text.startswith(found)
    elif n <= len(ids):
        # some cut of the ids always decodes to a text of exactly n tokens here
        raise AssertionError((text, n))


def test_summary_metrics() -> None:
    recs = [
        RequestRecord(ok=True, output_tokens=5, ttft_s=0.1, e2e_s=0.5, itl_s=(0.1,) * 4),
        RequestRecord(ok=False, error="x"),
    ]
    s = summarize(recs, 1.0)
    assert s.completed == 1 and s.failed == 1 and s.output_tokens_per_s == 5.0
    assert s.tpot_ms is not None and math.isclose(s.tpot_ms.p50, 100.0)


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=50))
def test_percentiles_are_ordered_and_bounded(values: list[float]) -> None:
    v = sorted(values)
    p50, p90, p99 = (percentile(v, q) for q in (50, 90, 99))
    assert v[0] <= p50 <= p90 <= p99 <= v[-1]


def test_bench_rejects_bad_workload_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from launchcard.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--endpoint", "http://127.0.0.1:9", "--request-rate", "0"]) == 2
    assert main(["bench", "--endpoint", "localhost:9"]) == 2


def test_lean_client_times_like_vllm_bench_and_reuses_connections() -> None:
    """Real socket, known timing: TTFT at the first token, latency to the last
    token (not to [DONE] 0.3 s later), tokens from usage, one kept-alive connection."""
    from fault_support import running

    w = Workload(input_tokens=8, output_tokens=2, num_prompts=3, concurrency=1, warmup=1, timeout_s=5)
    with running("timed_sse") as srv:
        res = run_bench(srv.endpoint, w, model="tiny")
        accepted = srv.accepted
    s = res.summary
    assert s.completed == 3 and s.failed == 0 and s.total_output_tokens == 6
    assert s.ttft_ms and 200 <= s.ttft_ms.p50 < 400
    assert s.e2e_ms and 300 <= s.e2e_ms.p50 < 550  # the 0.3 s before [DONE] is not latency
    assert s.tpot_ms and 100 <= s.tpot_ms.p50 < 250  # (latency - TTFT) / (2 - 1)
    # One connection for the probe client, one kept alive for all four streamed requests.
    assert accepted == 2


def test_parse_cache_counters_sums_label_sets_and_rejects_garbage() -> None:
    text = ("# HELP vllm:prefix_cache_hits_total x\n"
            'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 100.0\n'
            'vllm:prefix_cache_hits_total{engine="1",model_name="m"} 28.0\n'
            'vllm:prefix_cache_queries_total{engine="0",model_name="m"} 512.0\n'
            "vllm:prefix_cache_queries_total_created 1.7e9\n")
    assert parse_cache_counters(text) == CacheCounters(128.0, 512.0)
    assert parse_cache_counters("vllm:num_requests_running 0\n") is None
    assert parse_cache_counters("vllm:prefix_cache_hits_total nope\nvllm:prefix_cache_queries_total 1\n") is None
    assert hit_rate(CacheCounters(10, 100), CacheCounters(30, 300)) == (0.1, 200)
    assert hit_rate(CacheCounters(10, 100), CacheCounters(10, 100)) is None  # nothing looked up
    assert hit_rate(CacheCounters(10, 100), CacheCounters(5, 300)) is None  # server restarted in between
    assert hit_rate(None, CacheCounters(5, 300)) is None


def test_cache_state_is_measured_on_the_server() -> None:
    """The cache condition is what the server's counters saw during the load, not a claim."""
    reads = iter([(0.0, 0.0), (40.0, 64.0)])

    def with_metrics(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/metrics":
            hits, queries = next(reads)
            return httpx.Response(200, text=f"vllm:prefix_cache_hits_total {hits}\n"
                                            f"vllm:prefix_cache_queries_total {queries}\n")
        return sync_handler(req)

    w = Workload(input_tokens=8, output_tokens=2, num_prompts=2, concurrency=1, warmup=0, timeout_s=1)
    res = run_bench("http://fake", w, transport=httpx.MockTransport(stream_handler()),
                    sync_transport=httpx.MockTransport(with_metrics))
    assert res.conditions.cache_state == ("distinct prompts; server prefix-cache hits 62.5% of 64 prompt tokens "
                                          "looked up (/metrics)")
    # A server without the counters: said so, never "cold".
    res = run_bench("http://fake", w, transport=httpx.MockTransport(stream_handler()),
                    sync_transport=httpx.MockTransport(sync_handler))
    assert res.conditions.cache_state is not None and "not measured" in res.conditions.cache_state
    assert cache_state("off", None).startswith("prefix caching off; distinct prompts")


def test_stated_gpus_join_the_run_and_make_it_plottable_per_gpu() -> None:
    """An endpoint never says what it runs on: without --gpus there is no bench.gpus fact (the web chart keeps
    the run unplotted, naming why); with it the count is a reported fact of the same run, and the chart divides."""
    from launchcard.web._perf import measured_runs

    res = bench()
    assert "bench.gpus" not in {f.name for f in measured_facts(res)}
    unplotted = measured_runs([f.model_dump(mode="json") for f in measured_facts(res)])
    assert len(unplotted) == 1 and not unplotted[0]["plotted"] and "bench.gpus" in unplotted[0]["reason"]
    stated = res.model_copy(update={"gpus": 4})
    facts = {f.name: f for f in measured_facts(stated)}
    g = facts["bench.gpus"]
    assert g.value == 4 and g.classification == "source_reported" and g.conditions == res.conditions
    runs = measured_runs([f.model_dump(mode="json") for f in facts.values()])
    assert len(runs) == 1 and runs[0]["gpus"] == 4
    tput = facts["bench.output_tokens_per_s"].value
    assert runs[0]["tokens_per_sec_per_gpu"] == round(tput / 4, 2)
