"""The web catalog's performance pages in-process (web/_perf.py): published points with their source and
conditions, the charts (throughput per GPU against speed per user, bench runs and predicted curves as their own
series), and the benchmark files' reader.  Split from tests/test_web.py; the catalog and client fixtures are
conftest's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from web_support import BENCHMARKS, CORPUS, GLM, schema

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient


def test_performance_points_keep_source_and_conditions(client: TestClient) -> None:
    perf = client.get(f"/{GLM}/performance.json").json()
    jsonschema.validate(perf, schema("web-performance"))
    pts = perf["published"]
    assert len(pts) == 10 and not perf["errors"]  # 1 + 3 + 3 + 2 speed rows, 1 accuracy-only
    ht = [p for p in pts if p["conditions"]["selection"] == {"hw": "gb300", "strategy": "high-throughput"}]
    assert [p["conditions"]["concurrency"] for p in ht] == [16, 64, 256]
    p = ht[-1]
    assert p["source_url"].startswith("https://github.com/sgl-project/sglang/blob/018de1f300fba6117aae5aaef83a56b84d573494/")
    assert p["revision"] == "018de1f300fba6117aae5aaef83a56b84d573494"
    c = p["conditions"]
    assert (c["gpus"], c["parallelism"], c["engine"], c["engine_version"]) == (4, "TP4", "sglang", "d6ab04bdf1")
    assert (c["input_tokens"], c["output_tokens"], c["speculative"], c["quantization"]) == (1024, 256, "off", "fp8")
    assert p["results"] == {"ttft_ms": 3912.74, "tpot_ms": 37.69, "tokens_per_sec_per_gpu": 6035.41,
                            "output_tokens_per_sec_per_gpu": pytest.approx(6035.41 / 5),  # x 256 / (1024 + 256)
                            "accuracy": {"gsm8k_pct": 97.5}}
    acc_only = next(p for p in pts if p["hardware"] == "h200")
    assert acc_only["results"] == {"accuracy": {"gsm8k_pct": 97.04}} and acc_only["conditions"]["concurrency"] is None
    # one chart per workload of the source, never one ranking across workloads or sources
    assert sorted((ch["input_tokens"], ch["output_tokens"]) for ch in perf["charts"]) == [(1024, 256), (8192, 1024)]
    html = client.get(f"/{GLM}/performance").text
    # two concurrency charts and, per workload, the throughput-per-GPU vs speed-per-user chart
    assert html.count("<svg") == 4 and "concurrency (requests in flight)" in html and "tokens/s per GPU" in html
    dsv4 = client.get("/deepseek-ai/DeepSeek-V4-Flash/performance.json").json()
    jsonschema.validate(dsv4, schema("web-performance"))
    assert dsv4["published"] and {p["model"] for p in dsv4["published"]} == {"deepseek-ai/DeepSeek-V4-Flash"}
    assert any("(input+output)" in (p["source_note"] or "") for p in dsv4["published"])
    assert client.get("/openai/gpt-oss-120b/performance.json").json()["published"] == []


def test_js_literal_reader_is_tolerant_but_only_reads_data() -> None:
    from launchcard.errors import SourceError
    from launchcard.sources.sglang_benchmarks import parse_js_literal

    text = """// a comment
    /* block */ export const benchmarks = [
      { match: { hw: 'b200', "q-uant": `fp4` }, n: 1_000, f: -2.5e1, ok: true, none: null, u: undefined,
        s: "a \\"quoted\\" \\u00e9 line", },
      { x: [1, 2, 3,], },
    ];
    """
    value, lines = parse_js_literal(text, name="benchmarks")
    assert value == [{"match": {"hw": "b200", "q-uant": "fp4"}, "n": 1000, "f": -25.0, "ok": True, "none": None,
                      "u": None, "s": 'a "quoted" \u00e9 line'}, {"x": [1, 2, 3]}]
    assert lines == [3, 5]
    for bad, where in (
        ("export const benchmarks = [ { a: f(1) } ];", ":1"),
        ("export const benchmarks = [\n{ a: `${x}` }]", ":2"),
        ("export const benchmarks = [ { a: 1 ", ":1"),
        ("const other = 1;", ""),
    ):
        with pytest.raises(SourceError) as err:
            parse_js_literal(bad, where="f.jsx", name="benchmarks")
        assert "\n" not in str(err.value) and f"f.jsx{where}" in str(err.value)


def test_performance_page_plots_throughput_per_gpu_against_speed_per_user(catalog: Path) -> None:
    """Issue 22 item 6: the InferenceMAX/AIConfigurator view; measured points link to their source; predicted
    points (the ``predictions`` hook) are their own series, marked predicted."""
    from launchcard.web import create_app

    def predictions(model: str) -> list[dict[str, Any]]:
        return [{"configuration": "h200 x8 TP8", "tokens_per_sec_per_user": u, "tokens_per_sec_per_gpu": g,
                 "input_tokens": 1024, "output_tokens": 256, "source": "launchcard.predict (test)",
                 "source_url": None} for u, g in ((40.0, 900.0), (90.0, 400.0))] if model == GLM else []

    with TestClient(create_app(catalog, CORPUS / "vllm-recipes", [BENCHMARKS], predictions=predictions)) as c:
        perf = c.get(f"/{GLM}/performance.json").json()
        jsonschema.validate(perf, schema("web-performance"))
        charts = perf["interactivity"]
        assert charts and all(ch["x"].startswith("tokens/s per user") for ch in charts)
        measured = [s for ch in charts for s in ch["series"] if not s["predicted"]]
        by_point = {(p["results"]["tpot_ms"], p["results"]["output_tokens_per_sec_per_gpu"]): p["source_url"]
                    for p in perf["published"] if p["results"].get("tpot_ms")}
        for s in measured:
            for (x, y), link in zip(s["points"], s["links"], strict=True):
                tpot = next(t for t, g in by_point if g == y)
                assert x == round(1000 / tpot, 2) and link == by_point[(tpot, y)] and link.startswith("https://")
        predicted = [s for ch in charts for s in ch["series"] if s["predicted"]]
        assert [s["label"] for s in predicted] == ["h200 x8 TP8 (predicted)"]
        html = c.get(f"/{GLM}/performance").text
        assert "Throughput per GPU against speed per user" in html and "series s" in html and " predicted" in html
        assert 'href="https://github.com/sgl-project/sglang/blob/' in html  # points link to their source


def _bench_facts(endpoint: str, at: str, concurrency: int, tput: float, tpot: float | None,
                 gpus: int | None) -> list[Any]:
    """The facts one ``launchcard bench`` run stores (``bench.measured_facts``' names), plus a GPU count."""
    from launchcard.card import Conditions, Evidence, Fact

    ev = Evidence(kind="endpoint", url=endpoint, fetched_at=at, revision="0.11.0")
    cond = Conditions(input_tokens=1024, output_tokens=256, concurrency=concurrency, load_generator="launchcard")
    figures: list[tuple[str, Any]] = [("bench.output_tokens_per_s", tput), ("bench.requests_per_s", 1.5)]
    if tpot is not None:
        figures.append(("bench.tpot.p50", tpot))
    if gpus is not None:
        figures.append(("bench.gpus", gpus))
    return [Fact(name=n, value=v, classification="measured", evidence=ev, conditions=cond) for n, v in figures]


def test_performance_chart_plots_bench_runs_as_their_own_series(catalog: Path, tmp_path: Path) -> None:
    """Issue 22 item 6: runs of ``launchcard bench`` (measured facts) are a series of their own on the per-GPU
    against per-user chart, each point linked to its run's row; per-user = 1000 / TPOT p50, per-GPU = output
    tokens/s / the run's GPU count; a run lacking either is listed, not plotted, with the reason."""
    from launchcard.live import record_facts
    from launchcard.web import create_app

    cat = tmp_path / "catalog.sqlite3"
    shutil.copy(catalog, cat)
    facts = [*_bench_facts("http://gpu-box:8000", "2026-12-01T10:00:00Z", 8, 4000.0, 20.0, 8),
             *_bench_facts("http://gpu-box:8000", "2026-12-01T11:00:00Z", 32, 9600.0, 40.0, 8),
             *_bench_facts("http://gpu-box:8000", "2026-12-01T12:00:00Z", 64, 12000.0, None, 8),
             *_bench_facts("http://other:8000", "2026-12-01T13:00:00Z", 8, 3000.0, 25.0, None)]
    record_facts(GLM, facts, catalog=cat, captured_by="launchcard bench")
    with TestClient(create_app(cat, CORPUS / "vllm-recipes", [BENCHMARKS])) as c:
        perf = c.get(f"/{GLM}/performance.json").json()
        jsonschema.validate(perf, schema("web-performance"))
        runs = {(r["endpoint"], r["concurrency"]): r for r in perf["measured_runs"]}
        assert len(runs) == 4
        plotted = [r for r in runs.values() if r["plotted"]]
        assert sorted((r["tokens_per_sec_per_user"], r["tokens_per_sec_per_gpu"]) for r in plotted) == [
            (25.0, 1200.0), (50.0, 500.0)]
        assert "TPOT" in runs[("http://gpu-box:8000", 64)]["reason"]
        assert runs[("http://gpu-box:8000", 64)]["tokens_per_sec_per_user"] is None
        assert "GPU count" in runs[("http://other:8000", 8)]["reason"]
        assert runs[("http://other:8000", 8)]["tokens_per_sec_per_gpu"] is None  # never a guessed count
        series = [s for ch in perf["interactivity"] for s in ch["series"] if s.get("measured")]
        assert len(series) == 1 and not series[0]["predicted"] and "measured" in series[0]["label"]
        assert series[0]["points"] == [[25.0, 1200.0], [50.0, 500.0]]
        assert all(link.startswith("#measured-") for link in series[0]["links"])
        others = [s for ch in perf["interactivity"] for s in ch["series"] if not s.get("measured")]
        assert all([25.0, 1200.0] not in s["points"] for s in others)  # kept apart from published points
        html = c.get(f"/{GLM}/performance").text
        assert "series s" in html and " measured" in html
        for link in series[0]["links"]:
            assert f'href="{link}"' in html and f'id="{link[1:]}"' in html  # each point links to its row
        assert "not plotted: no GPU count" in html and "not plotted: no median time per output token" in html


def test_a_benchmark_cells_dp_attention_reads_both_of_sglangs_forms() -> None:
    """A panel cell's `--attn-dp-size D` (SGLang 0.5.22+) is the `--dp-size D --enable-dp-attention` of older
    commands: both label DP attention (it was left out of the parallelism label)."""
    from launchcard.sources.sglang_benchmarks import Cell, _parallelism

    old = Cell(match={}, argv=("python3", "-m", "sglang.launch_server", "--tp-size", "8", "--dp-size", "8",
                               "--enable-dp-attention"))
    new = Cell(match={}, argv=("python3", "-m", "sglang.launch_server", "--tp-size", "8", "--attn-dp-size", "8"))
    assert _parallelism(old, None) == _parallelism(new, None) == (8, "TP8/DP8 (attention)", "panel cell")


def test_the_speed_chart_plots_output_tokens_per_gpu_as_its_axis_says(client: TestClient) -> None:
    """The SGLang cookbook's ``tokens_per_sec_per_gpu`` is total (input + output) tokens/s per GPU, "= output/GPU x
    (isl+osl)/osl" (deepseek-v4-benchmarks.jsx L7 at sglang 03f4c00a; GLM's gb300 low-latency cell: 1,824.66
    aggregate output tok/s on 4 GPUs, published 2280.83 = 1824.66 / 4 x 1280 / 256). The speed-per-user chart's y
    axis is output tokens/s per GPU, where predicted and measured points stand (output tok/s over GPUs); published
    points were plotted at their total, 5x (1024/256) to 9x (8192/1024) above (webqa)."""
    perf = client.get(f"/{GLM}/performance.json").json()
    jsonschema.validate(perf, schema("web-performance"))
    low = next(p for p in perf["published"] if p["results"].get("tokens_per_sec_per_gpu") == 2280.83)
    assert low["results"]["output_tokens_per_sec_per_gpu"] == pytest.approx(1824.66 / 4, abs=0.01)
    for p in perf["published"]:
        r, c = p["results"], p["conditions"]
        if "tokens_per_sec_per_gpu" in r:
            assert r["output_tokens_per_sec_per_gpu"] == pytest.approx(
                r["tokens_per_sec_per_gpu"] * c["output_tokens"] / (c["input_tokens"] + c["output_tokens"]))
    plotted = {(x, y) for ch in perf["interactivity"] for s in ch["series"] if not s["predicted"]
               for x, y in s["points"]}
    want = {(round(1000 / p["results"]["tpot_ms"], 2), p["results"]["output_tokens_per_sec_per_gpu"])
            for p in perf["published"] if p["results"].get("tpot_ms")}
    assert plotted == want
    assert all(ch["y"] == "output tokens/s per GPU" for ch in perf["interactivity"])
    assert all(ch["y"] == "total tokens/s per GPU (as published)" for ch in perf["charts"])
    html = client.get(f"/{GLM}/performance").text
    assert '<th scope="col">tok/s/GPU <span class="muted">(in + out)</span></th>' in html


def test_a_predicted_curve_takes_the_colour_of_the_published_series_it_stands_beside(client: TestClient) -> None:
    """Predicted curves took the colours after the published ones by position: DeepSeek-V4-Flash's "TP4 on 4 x b200
    ...; beside b200 x4 ... low-latency" was orange beside a blue published low-latency line, so no curve could be
    read against its pair without the legend (noted by webqa in s38, fixed now). A predicted series names the
    published series it stands beside (``beside``) and takes its colour (``colour``)."""
    import re

    perf = client.get("/deepseek-ai/DeepSeek-V4-Flash/performance.json").json()
    jsonschema.validate(perf, schema("web-performance"))
    assert perf["predicted"] and all(p.get("beside") for p in perf["predicted"])
    paired = 0
    for ch in perf["interactivity"]:
        own = {s["label"]: s["colour"] for s in ch["series"] if not s["predicted"]}
        assert sorted(own.values()) == list(range(len(own)))  # the published series keep their order's colours
        for s in ch["series"]:
            if s["predicted"] and s.get("beside") in own:
                assert s["colour"] == own[s["beside"]], s["label"]
                paired += 1
    assert paired >= 6
    html = client.get("/deepseek-ai/DeepSeek-V4-Flash/performance").text
    classes = re.findall(r'<g class="series s(\d)( predicted)?"><title>([^<]*)</title>', html)
    by_label = {label: n for n, pred, label in classes if not pred}
    pairs = [(n, label.split("; beside ")[1].removesuffix(" (predicted)")) for n, pred, label in classes
             if pred and "; beside " in label]
    assert pairs and all(by_label.get(beside.split(" / ")[0]) == n for n, beside in pairs), pairs
