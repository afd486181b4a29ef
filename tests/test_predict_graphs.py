"""CUDA graph capture limits per engine and release: which steps replay a graph and which run eagerly.

The rules asserted here are the engines' own (release, file and line in ``predict/_engine_rules.py`` and
``predict/_clock.py``): vLLM captures steps up to max_cudagraph_capture_size (default min(2 x max_num_seqs, 512),
x tokens per sequence from 0.13, 1024 on compute capability 10.x from 0.28, within max_num_batched_tokens);
SGLang up to --cuda-graph-max-bs; bigger steps run eagerly and pay the eager per-layer overhead.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory, settings_from_argv
from launchcard.predict import (
    HardwareFigures,
    ServingFacts,
    Stages,
    coefficients,
    facts_from_memory_plan,
    simulate,
    with_limits,
)
from launchcard.predict._clock import graphed
from launchcard.predict._engine_rules import vllm_graph_tokens
from launchcard.predict._types import Finding

ARCH = arch_from_config(dict(LLAMA8B))
GPT_OSS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def _facts(gpu: str = "h100", engine: str = "vllm", *, argv: tuple[str, ...] = (), **kw: object) -> ServingFacts:
    s = settings_from_argv(["vllm", "serve", "m", *argv], Settings(max_model_len=16384, **kw))  # type: ignore[arg-type]
    acc = find(gpu)
    return facts_from_memory_plan(ARCH, s, plan_memory(ARCH, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def _graph_note(findings: tuple[Finding, ...]) -> str:
    return next(x.message for x in findings if x.code == "cuda-graphs")


@pytest.mark.parametrize(("version", "seqs", "budget", "per_seq", "ceiling", "want"), [
    ("0.10.2", 1024, 8192, 1, 512, 512),  # [1, 2, 4] + 8, 16, ... 512
    ("0.10.2", 100, 8192, 1, 512, 200),  # min(2 x 100, 512), a multiple of 8
    ("0.10.2", 50, 8192, 1, 512, 96),  # 2 x 50 = 100: the grid of 8 stops at 96
    ("0.11.2", 200, 8192, 1, 512, 400),  # 16 apart above 256: 256, 272, ... 400
    ("0.11.2", 1024, 300, 1, 512, 288),  # within the token budget: 288 is the last size <= 300
    ("0.12.0", 64, 8192, 4, 512, 128),  # before 0.13 speculative tokens do not widen the default
    ("0.13.0", 64, 8192, 4, 512, 512),  # from 0.13: min(64 x 4 x 2, 512)
    ("0.13.0", 40, 8192, 3, 512, 240),  # 40 x 3 x 2 = 240, already a multiple of 3
    ("0.28.0", 1024, 16384, 1, 1024, 1024),  # Blackwell's ceiling
])
def test_vllm_default_capture_ceiling_per_release(version: str, seqs: int, budget: int, per_seq: int, ceiling: int,
                                                  want: int) -> None:
    from launchcard.memory import parse_version

    assert vllm_graph_tokens(parse_version(version), seqs, budget, per_seq, ceiling=ceiling) == want


def test_vllm_facts_carry_the_release_default_and_say_where_it_comes_from() -> None:
    f = _facts(vllm_version="0.11.0", max_num_seqs=1024)
    assert (f.graph_tokens, f.graph_rule) == (512, (0, 11, 512))
    note = _graph_note(f.findings)
    assert "512 tokens" in note and "max_num_seqs 1024" in note and "run eagerly" in note
    small = _facts(vllm_version="0.11.0", max_num_seqs=64)
    assert small.graph_tokens == 128
    # compute capability 10.x: 1024 from 0.28, 512 before; Hopper stays at 512
    assert _facts("b200", vllm_version="0.28.0", max_num_seqs=1024).graph_tokens == 1024
    assert _facts("b200", vllm_version="0.27.1", max_num_seqs=1024).graph_tokens == 512
    assert _facts("h200", vllm_version="0.28.0", max_num_seqs=1024).graph_tokens == 512


def test_the_launchs_flags_override_the_default() -> None:
    assert _facts(argv=("--max-cudagraph-capture-size", "64"), vllm_version="0.13.0").graph_tokens == 64
    f = _facts(argv=("--compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8, 100]}'), vllm_version="0.13.0")
    assert f.graph_tokens == 100 and f.graph_rule is None
    assert "captured sizes [1, 2, 4, 8, 100]" in _graph_note(f.findings)
    dotted = _facts(argv=("--compilation-config.max_cudagraph_capture_size=48",), vllm_version="0.13.0")
    assert dotted.graph_tokens == 48
    # 0.10's --cuda-graph-sizes N: sizes 1, 2, 4, 8, ... up to N (20 -> 16); from 0.11.1 the list as given
    assert _facts(argv=("--cuda-graph-sizes", "20"), vllm_version="0.10.2").graph_tokens == 16
    # 0.11.0 still reads it as SchedulerConfig's (0.11.0 vllm/config/__init__.py L593-597; PR #26016 is 0.11.1's)
    assert _facts(argv=("--cuda-graph-sizes", "20"), vllm_version="0.11.0").graph_tokens == 16
    assert _facts(argv=("--cuda-graph-sizes", "20"), vllm_version="0.11.1").graph_tokens == 20
    assert _facts(argv=("--cuda-graph-sizes", "20"), vllm_version="0.11.2").graph_tokens == 20
    # graphs off without --enforce-eager
    assert not _facts(argv=("--compilation-config", '{"cudagraph_mode": "NONE"}'), vllm_version="0.13.0").cuda_graphs
    assert not _facts(argv=("-O0",), vllm_version="0.13.0").cuda_graphs
    assert _facts(argv=("-O3",), vllm_version="0.13.0").cuda_graphs


def test_a_plan_search_limit_moves_the_default_but_not_a_given_one() -> None:
    f = _facts(vllm_version="0.13.0", max_num_seqs=1024)
    g = with_limits(f, max_num_seqs=32)
    assert g.graph_tokens == 64 and "max_num_seqs 32" in _graph_note(g.findings)
    h = with_limits(f, max_num_seqs=32, max_num_batched_tokens=48)  # the copy's own budget bounds it too
    assert h.graph_tokens == 48 and "within max_num_batched_tokens 48" in _graph_note(h.findings)
    assert sum(x.code == "cuda-graphs" for x in h.findings) == 1 and h.max_num_batched_tokens == 48
    given = _facts(argv=("--max-cudagraph-capture-size", "256"), vllm_version="0.13.0", max_num_seqs=1024)
    assert with_limits(given, max_num_seqs=32).graph_tokens == 256


def test_steps_above_the_limit_run_eagerly() -> None:
    f = replace(_facts(vllm_version="0.11.0"), graph_tokens=256)
    assert graphed(f, 256, 0) and not graphed(f, 257, 0)  # decode
    assert graphed(f, 200, 100) and not graphed(f, 300, 100)  # vLLM mixed steps: the same limit
    sgl = replace(_facts(engine="sglang"), graph_tokens=8)
    assert graphed(sgl, 8, 0) and not graphed(sgl, 9, 0) and not graphed(sgl, 4, 2)
    # TensorRT-LLM: generation-only batches (tests below for its sizes)
    trt = _facts(engine="trtllm")
    assert graphed(trt, 64, 0) and not graphed(trt, 64, 8)


def test_trtllm_serve_default_graphs_only_its_captured_batch_sizes() -> None:
    """trtllm-serve keeps TorchLlmArgs' default CudaGraphConfig: max_batch_size 128, sizes 1..31, 32, 64, 128 and
    no padding, so a generation-only batch of any other size (or beyond 128) runs eagerly."""
    f = _facts(engine="trtllm", max_num_seqs=2048)
    assert f.graph_tokens == 128
    assert f.graph_sizes == frozenset([*range(1, 32), 32, 64, 128])
    assert all(graphed(f, b, 0) for b in (1, 17, 31, 32, 64, 128))
    assert not any(graphed(f, b, 0) for b in (33, 48, 63, 65, 100, 127, 129, 1000))
    note = _graph_note(f.findings)
    assert "1-31, 32, 64 or 128" in note and "no padding" in note and "eagerly" in note
    # speculative decoding: a generation step carries 1 + draft tokens per request
    spec = _facts(engine="trtllm", max_num_seqs=2048, argv=(
        "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 1, "prompt_lookup_max": 3}'))
    assert spec.spec_tokens == 1
    assert spec.graph_tokens == 256 and graphed(spec, 128, 0) and not graphed(spec, 130, 0)


def test_a_trtllm_launchs_own_graph_limit_is_padded_up_to_it() -> None:
    """A launch that gives its cuda_graph_config (the calibration runs': InferenceX's enable_padding true,
    max_batch_size $CONC) replays every generation-only batch up to it."""
    f = _facts(engine="trtllm", max_cudagraph_capture_size=512)
    assert f.graph_tokens == 512 and f.graph_sizes is None
    assert graphed(f, 100, 0) and graphed(f, 512, 0) and not graphed(f, 513, 0)
    assert "the launch's cuda_graph_config" in _graph_note(f.findings)


def test_a_trtllm_burst_of_uncaptured_batches_pays_the_eager_overhead() -> None:
    """1,000 requests at once on trtllm-serve's defaults: the decode steps of 1,000 requests run eagerly."""
    f = _facts(engine="trtllm", max_num_seqs=2048)
    c = replace(coefficients(f.hardware.kind, f.engine), stages=Stages())
    kw: dict[str, object] = {"isl": 128, "osl": 64, "concurrency": 1000, "rate": None, "requests": 1000}
    dflt = simulate(f, c, **kw)  # type: ignore[arg-type]
    padded = simulate(replace(f, graph_tokens=None, graph_sizes=None), c, **kw)  # type: ignore[arg-type]
    assert dflt.decode["overhead"] > padded.decode["overhead"] and dflt.makespan > padded.makespan
    assert dflt.graph_span == (math.inf, math.inf)  # no single limit decides its steps: never shared


def test_a_burst_beyond_the_limit_pays_the_eager_overhead_per_decode_step() -> None:
    """1,000 requests at once: decode steps of more sequences than the capture limit are eager; under it the same
    run is the same but for the eager per-layer term on those steps."""
    f = _facts(vllm_version="0.11.0", max_num_seqs=1024)
    # the engine alone (the API server's and the client's streaming stages would set the pace of this burst)
    c = replace(coefficients(f.hardware.kind, f.engine), stages=Stages())
    kw: dict[str, object] = {"isl": 128, "osl": 64, "concurrency": 1000, "rate": None, "requests": 1000}
    capped = simulate(f, c, **kw)  # type: ignore[arg-type]
    free = simulate(replace(f, graph_tokens=None), c, **kw)  # type: ignore[arg-type]
    assert capped.makespan > free.makespan
    assert capped.decode["overhead"] > free.decode["overhead"]
    slower = simulate(f, replace(c, eager_layer_us=c.eager_layer_us + 100.0), **kw)  # type: ignore[arg-type]
    assert slower.makespan > capped.makespan  # the eager steps carry the term


def test_sglang_command_limit_reaches_the_facts() -> None:
    from launchcard.predict import sglang_plan, sglang_serving_facts

    serve = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b"]
    plan = sglang_plan([*serve, "--cuda-graph-max-bs", "8"], gpu_memory_gib=find("h100").memory_gib)
    f = sglang_serving_facts(GPT_OSS, plan, gpu="h100")
    assert f.graph_tokens == 8
    assert not any(x.code == "cuda-graphs" for x in f.findings)  # the calibration default is not repeated
    dflt = sglang_serving_facts(GPT_OSS, sglang_plan(serve, gpu_memory_gib=find("h100").memory_gib), gpu="h100")
    assert dflt.graph_tokens == 256  # SGLang 0.5.6.post2 server_args.py:752-835: 80 GiB, TP 1


@pytest.mark.parametrize(("seqs", "said"), [
    (1, "batches of 1 request:"), (16, "batches of 1-16 requests:"), (32, "batches of 1-31 or 32 requests:"),
    (100, "batches of 1-31, 32 or 64 requests:"), (4096, "batches of 1-31, 32, 64 or 128 requests:")])
def test_trtllm_graph_finding_names_only_the_sizes_it_captures(seqs: int, said: str) -> None:
    """The captured sizes within --max-num-seqs, not min(128, max_num_seqs) (100 is no captured size)."""
    assert said in _graph_note(_facts(engine="trtllm", max_num_seqs=seqs).findings)


def test_sglang_extend_batches_pay_the_extend_term_and_eager_decode_batches_the_launches_only() -> None:
    """SGLang 0.5.3-0.5.9 replays its full CUDA graph only for DECODE / TARGET_VERIFY / IDLE batches of at most
    --cuda-graph-max-bs requests (0.5.6.post2 model_executor/forward_batch_info.py L156-162 is_cuda_graph,
    model_runner.py L2681-2685 _forward_raw, cuda_graph_runner.py L384 can_run); extend batches run eagerly unless
    piecewise graphs are switched on (server_args.py L530 enable_piecewise_cuda_graph False; L523
    enable_mixed_chunk False: a prefill batch carries no decode).  Every eager batch pays the launches
    (eager_layer_us per kernel group); an extend batch also its own cost (extend_layer_us) per op it launches
    (ServingFacts.extend_ops, predict._sglang_ops); a graphed decode neither."""
    from launchcard.predict._coef import theta
    from launchcard.predict._cost import features, step_terms, step_work

    f = replace(_facts(engine="sglang"), graph_tokens=8)
    base = replace(coefficients(f.hardware.kind, f.engine), eager_layer_us=0.0, extend_layer_us=0.0)
    c = replace(base, eager_layer_us=30.0, extend_layer_us=900.0)
    groups = f.layers + f.moe_layers  # a dense model: one kernel group per decoder layer
    assert f.extend_ops > groups  # ops an eager extend launches (predict._sglang_ops), several a layer
    steps = {"extend": (step_work(f, 0, 0.0, 1024, 1024 * 1025 / 2), 1024, 1024),
             "eager decode": (step_work(f, 16, 16 * 1000.0, 0, 0.0), 16, 0),
             "graphed decode": (step_work(f, 8, 8 * 1000.0, 0, 0.0), 8, 0)}
    extra = {}
    for name, (w, tokens, pf) in steps.items():
        g = graphed(f, tokens, pf)
        extra[name] = step_terms(w, c, g)[3] - step_terms(w, base, g)[3]
        # the fit's linear view of the step stays its time with both terms
        assert sum(a * b for a, b in zip(features(w, c, g), theta(c), strict=True)) == pytest.approx(
            sum(step_terms(w, c, g)))
    assert extra["extend"] == pytest.approx((30.0 * groups + 900.0 * f.extend_ops) * 1e-6)
    assert extra["eager decode"] == pytest.approx(30.0 * groups * 1e-6)
    assert extra["graphed decode"] == 0.0


@pytest.mark.parametrize(("version", "flag", "absent"), [
    ("0.10.2", "--cuda-graph-sizes", "--max-cudagraph-capture-size"), ("0.19.0", "--max-cudagraph-capture-size", None)])
def test_the_graph_finding_names_a_flag_the_release_takes(version: str, flag: str, absent: str | None) -> None:
    """On a vLLM 0.10 plan the finding advised --max-cudagraph-capture-size, which 0.10.2's parser does not have
    (its captured spec: --cuda-graph-sizes)."""
    import json
    from pathlib import Path

    from helpers import run_cli
    from launchcard.flagspec import shipped_spec

    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "h100", "--engine-version", version, "--isl", "1024",
                  "--osl", "256", "--concurrency", "4", "--json")
    assert res.returncode == 0, res.stderr
    said = next(f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "cuda-graphs")
    assert f"pass {flag}" in said and (absent is None or absent not in said), said
    spec = shipped_spec("vllm", "0.10.2" if version.startswith("0.10") else "0.19.1")
    assert flag in {n for o in spec.options for n in o.flags}
