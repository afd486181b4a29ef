"""Issue 24 item 7: predicted curves beside published points (kept apart, labelled) on the performance pages, and
the builder's predicted TTFT/TPOT/throughput for the current selection and workload."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
BENCHMARKS = ROOT / "tests" / "fixtures" / "sglang-benchmarks"
DSV4 = "deepseek-ai/DeepSeek-V4-Flash"
OSS = "openai/gpt-oss-120b"


def test_performance_page_draws_predicted_curves_apart_from_published_points(client: TestClient) -> None:
    import json

    import jsonschema

    perf = client.get(f"/{DSV4}/performance.json").json()
    schema = ROOT / "src" / "launchcard" / "data" / "schemas" / "web-performance.schema.json"
    jsonschema.validate(perf, json.loads(schema.read_text()))
    assert perf["published"], "the fixture has published DeepSeek-V4-Flash points"
    predicted = perf["predicted"]
    # a published point with its panel cell's command is predicted for that command (SGLang's rules)
    assert any(p["conditions"]["command"] for p in perf["published"])
    assert any("(its panel command)" in p["configuration"] for p in predicted)
    assert predicted and all(p["source"].startswith("launchcard.predict") and "not measured" in p["source"]
                             for p in predicted)
    workloads = {(p["conditions"]["input_tokens"], p["conditions"]["output_tokens"]) for p in perf["published"]}
    assert {(p["input_tokens"], p["output_tokens"]) for p in predicted} <= workloads  # beside the same workloads
    series = [s for ch in perf["interactivity"] for s in ch["series"]]
    pred = [s for s in series if s["predicted"]]
    meas = [s for s in series if not s["predicted"]]
    assert pred and meas and all(s["label"].endswith("(predicted)") for s in pred)
    assert not any(s["label"].endswith("(predicted)") for s in meas)
    # a curve: throughput per GPU rises with concurrency while speed per user falls
    one = [p for p in predicted if p["configuration"] == predicted[0]["configuration"]
           and p["input_tokens"] == predicted[0]["input_tokens"]]
    one.sort(key=lambda p: p["concurrency"])
    assert len(one) >= 3
    assert one[-1]["tokens_per_sec_per_gpu"] > one[0]["tokens_per_sec_per_gpu"]
    assert one[-1]["tokens_per_sec_per_user"] < one[0]["tokens_per_sec_per_user"]
    html = client.get(f"/{DSV4}/performance").text
    assert "(predicted)" in html
    # where a point lies outside the predictor's calibration it says so (its own domain findings), and the page
    # says each cause once, counted over the points
    assert all(isinstance(p["outside_calibration"], list) for p in predicted)
    codes = {f["code"] for p in predicted for f in p["outside_calibration"]}
    assert codes and codes <= {"domain-batch", "domain-lengths", "domain-release", "domain-gpu", "domain-platform"}
    assert len(perf["predicted_assumed"]) == len(codes)
    assert all(re.match(r"assumed \((all \d+|\d+ of \d+) predicted points\): ", a) for a in perf["predicted_assumed"])
    assert "outside the runs the predictor was calibrated on" in html


def test_builder_shows_the_prediction_for_the_selection_and_workload(client: TestClient) -> None:
    small = client.get(f"/{OSS}/predict.json", params={"hardware": "h100", "isl": 1024, "osl": 128,
                                                        "concurrency": 1}).json()
    big = client.get(f"/{OSS}/predict.json", params={"hardware": "h100", "isl": 1024, "osl": 128,
                                                      "concurrency": 64}).json()
    for d in (small, big):
        assert d["error"] is None and d["ttft_ms_mean"] > 0 and d["tpot_ms_mean"] > 0
        assert "not measured" in d["source"]
    assert small["workload"] == {"isl": 1024, "osl": 128, "concurrency": 1, "dataset": "random",
                                 "endpoint": "completions"}
    assert big["output_tok_per_s_per_gpu"] > small["output_tok_per_s_per_gpu"]
    assert big["tpot_ms_mean"] >= small["tpot_ms_mean"]
    frag = client.get(f"/{OSS}/builder", params={"hardware": "h100", "isl": 2048, "osl": 64, "concurrency": 8}).text
    assert 'id="predicted"' in frag and "predicted, not measured" in frag and "Plan verdict" in frag
    assert "2048 input / 64 output tokens per request, 8 concurrent requests" in frag
    page = client.get(f"/{OSS}", params={"hardware": "h100", "concurrency": 4}).text
    assert 'name="concurrency"' in page and 'value="4"' in page and 'id="predicted"' in page


def test_builder_predicts_the_dataset_and_endpoint_chosen_as_predict_does(client: TestClient) -> None:
    """The panel's Lengths and Endpoint fields are predict's --dataset and --endpoint: the JSON twin says them,
    the chat endpoint's measured cost and ShareGPT's drawn lengths move the figures and are named, and the HTML
    panel states the workload it predicted."""
    base = {"hardware": "h100", "isl": 1024, "osl": 128, "concurrency": 8}
    plain = client.get(f"/{OSS}/predict.json", params=base).json()
    chat = client.get(f"/{OSS}/predict.json", params={**base, "endpoint": "chat"}).json()
    share = client.get(f"/{OSS}/predict.json", params={**base, "dataset": "sharegpt"}).json()
    for d in (plain, chat, share):
        assert d["error"] is None, d["error"]
    assert chat["workload"]["endpoint"] == "chat" and share["workload"]["dataset"] == "sharegpt"
    assert chat["ttft_ms_mean"] > plain["ttft_ms_mean"]
    assert any(f["code"] == "endpoint" for f in chat["findings"])
    assert share["ttft_ms_mean"] != plain["ttft_ms_mean"] or share["tpot_ms_mean"] != plain["tpot_ms_mean"]
    frag = client.get(f"/{OSS}/builder", params={**base, "dataset": "sharegpt", "endpoint": "chat"}).text
    assert "ShareGPT lengths scaled to these means" in frag and "chat (/v1/chat/completions)" in frag
    page = client.get(f"/{OSS}", params={**base, "endpoint": "chat"}).text
    assert 'name="endpoint"' in page and '<option value="chat" selected>' in page and 'name="dataset"' in page
    assert client.get(f"/{OSS}/predict.json", params={"dataset": "lmsys"}).status_code == 422
    assert client.get(f"/{OSS}/predict.json", params={"endpoint": "responses"}).status_code == 422


def test_builder_workload_bad_input_is_refused(client: TestClient) -> None:
    assert client.get(f"/{OSS}/predict.json", params={"concurrency": 0}).status_code == 422
    assert client.get(f"/{OSS}/predict.json", params={"isl": "many"}).status_code == 422


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_panel_and_predict_json_give_one_verdict_and_one_set_of_figures(engine: str) -> None:
    """The web's panel repeated predict's chain (start-up refusal, context check, facts) and left out the plan's
    verdict: both now run predict.predict_plan, so one plan gives the same command, figures and verdict."""
    import json

    from helpers import run_cli
    from launchcard.check import corpus_config, derive_plan
    from launchcard.resolve import Choice, resolve
    from launchcard.sources.vllm_recipes import load_recipes
    from launchcard.web._predicted import plan_prediction

    work = {"isl": 1024, "osl": 128, "concurrency": 8, "dataset": "random", "endpoint": "completions"}
    load = ["--isl", "1024", "--osl", "128", "--concurrency", "8", "--json"]
    if engine == "vllm":
        repo = load_recipes(CORPUS / "vllm-recipes")
        plan = resolve(repo, Choice(model=OSS, hardware="h100"), provenance=False)
        cfg = corpus_config(OSS, CORPUS / "vllm-recipes")
        assert cfg is not None
        web = plan_prediction(plan, cfg, work, repo)
        cli = run_cli("predict", OSS, "--recipes", str(CORPUS / "vllm-recipes"), "--hardware", "h100", *load)
    else:
        cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
        web = plan_prediction(derive_plan("Qwen/Qwen3-8B", cfg, "h100", engine="sglang"), cfg, work)
        cli = run_cli("predict", "Qwen/Qwen3-8B", "--config", str(cfg), "--hardware", "h100", "--engine", "sglang",
                      *load)
    assert cli.returncode == 0 and web["error"] is None, (cli.stderr, web["error"])
    said = json.loads(cli.stdout)
    keys = ("command", "engine", "gpus", "ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s",
            "output_tok_per_s_per_gpu", "bound", "verdict")
    assert {k: web.get(k) for k in keys} == {k: said[k] for k in keys}
    assert web["verdict"]["findings"]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_performance_page_point_is_what_predict_says_for_its_plan_and_workload(engine: str) -> None:
    """A published SGLang point without a panel command was timed as a vLLM plan with SGLang's terms (vLLM's
    memory share, no SGLang defaults) and every point on a 2 x concurrency run: the page's predicted point and
    `launchcard predict --config C --gpu HW --engine E --tp N --concurrency C` now give one set of figures."""
    import json

    from helpers import run_cli
    from launchcard.web._predicted import prediction_hook

    cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    points = prediction_hook(lambda m: [{"hardware": "h100", "conditions": {
        "gpus": 2, "input_tokens": 1024, "output_tokens": 128, "concurrency": 16, "parallelism": "TP2",
        "engine": engine}}], lambda m: cfg)("Qwen/Qwen3-8B")
    page = next(p for p in points if p["concurrency"] == 16)
    res = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--engine", engine, "--tp", "2", "--isl", "1024",
                  "--osl", "128", "--concurrency", "16", "--json")
    assert res.returncode == 0, res.stderr
    said = json.loads(res.stdout)
    assert page["tokens_per_sec_per_gpu"] == pytest.approx(said["output_tok_per_s_per_gpu"], abs=0.01)
    assert page["ttft_ms"] == pytest.approx(said["ttft_ms_mean"], abs=0.01)
    assert page["tpot_ms"] == pytest.approx(said["tpot_ms_mean"], abs=0.001)


def test_the_panel_names_the_command_as_a_shell_takes_it() -> None:
    """The panel's verdict row joined the command's words with spaces: a --speculative-config JSON lost its quotes
    (predict's title and plan print it shell-quoted)."""
    import shlex

    from launchcard.web._render import Renderer

    cmd = ["vllm", "serve", "m", "--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}']
    html = Renderer().env.get_template("_predicted.html.j2").render(predicted={
        "source": "s", "workload": {"isl": 1, "osl": 2, "concurrency": 1}, "error": None, "ttft_ms_mean": 1.0,
        "ttft_ms_median": 1.0, "tpot_ms_mean": 1.0, "output_tok_per_s": 1.0, "output_tok_per_s_per_gpu": 1.0,
        "output_tok_per_s_per_user": 1.0, "gpus": 1, "bound": {"prefill": {"bound": "compute"},
                                                                "decode": {"bound": "memory"}},
        "verdict": {"label": "ok"}, "command": cmd, "findings": []})
    from html import unescape

    assert f"<code>{shlex.join(cmd)}</code>" in unescape(html)


def test_the_page_and_its_json_twin_show_the_same_predicted_points(client: TestClient) -> None:
    """One fact, every surface: each chart's predicted series in the page (its SVG description lists every point)
    holds exactly the twin's predicted points, whichever of the two was asked for first."""
    from html import unescape

    html = unescape(client.get(f"/{DSV4}/performance").text)
    perf = client.get(f"/{DSV4}/performance.json").json()
    series = [s for ch in perf["interactivity"] for s in ch["series"] if s["predicted"]]
    plotted = sorted((x, y) for s in series for x, y in s["points"])
    assert plotted and plotted == sorted((p["tokens_per_sec_per_user"], p["tokens_per_sec_per_gpu"])
                                         for p in perf["predicted"])
    for s in series:
        assert f"{s['label']}: " + ", ".join(f"{x:g} -> {y:g}" for x, y in s["points"]) in html
    assert client.get(f"/{DSV4}/performance.json").json()["predicted"] == perf["predicted"]


def test_start_up_computes_the_performance_pages_curves_in_the_background(catalog: Path) -> None:
    """`launchcard serve`'s warm-up asks for every model's predicted curves in a thread of its own, so the first
    visitor of a performance page finds them computed (or waits for the one computation in progress)."""
    import threading

    from launchcard.web import create_app

    asked: list[str] = []
    app = create_app(catalog, CORPUS / "vllm-recipes", [BENCHMARKS], predictions=lambda m: asked.append(m) or [])
    app.state.warm()
    for t in threading.enumerate():
        if t.name == "launchcard-predicted-curves":
            t.join(timeout=60)
    assert DSV4 in asked and "zai-org/GLM-5.3-Flash" in asked


def test_a_performance_page_without_a_predicted_curve_says_why(client: TestClient) -> None:
    """A model with published points and no predicted curve said "Predicted curves appear here ... once a
    predictor is attached" on a server with the predictor attached: the page and its twin now say why there is
    none (no config.json), and nothing where there is a curve."""
    import json
    from html import unescape

    import jsonschema

    schema = json.loads((ROOT / "src" / "launchcard" / "data" / "schemas" / "web-performance.schema.json").read_text())
    cases = {"zai-org/GLM-5.3-Flash": "no config.json for zai-org/GLM-5.3-Flash",
             "deepseek-ai/DeepSeek-V4-Pro": "no config.json for deepseek-ai/DeepSeek-V4-Pro",
             DSV4: None}
    for model, why in cases.items():
        twin = client.get(f"/{model}/performance.json").json()
        jsonschema.validate(twin, schema)
        assert twin["published"], model
        html = unescape(client.get(f"/{model}/performance").text)
        assert "once a predictor is attached" not in html
        if why is None:
            assert twin["predicted"] and twin["predicted_note"] is None and "No predicted curve" not in html
        else:
            assert not twin["predicted"] and why in twin["predicted_note"], twin["predicted_note"]
            assert f"No predicted curve: {twin['predicted_note']}." in " ".join(html.split())


def test_a_server_without_a_predictor_says_so_on_its_performance_pages(catalog: Path) -> None:
    from launchcard.web import create_app

    with TestClient(create_app(catalog, None, [BENCHMARKS])) as c:
        twin = c.get(f"/{DSV4}/performance.json").json()
    assert twin["predicted"] == [] and twin["predicted_note"] == "no predictor is attached to this server"


def test_the_hook_says_why_a_model_has_no_curve() -> None:
    from launchcard.web._memo import CurveMemo
    from launchcard.web._predicted import prediction_hook

    cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    point = {"hardware": "h100", "conditions": {"gpus": 1, "input_tokens": 1024, "output_tokens": 128,
                                                "concurrency": 4, "parallelism": "TP1", "engine": "vllm"}}
    no_gpus = {**point, "conditions": {**point["conditions"], "gpus": None}}
    unknown = {**point, "hardware": "no_such_gpu"}
    for pts, why in (([no_gpus], "no published point names its hardware, GPU count"),
                     ([unknown], "no published configuration could be predicted")):
        hook = prediction_hook(lambda m, pts=pts: pts, lambda m: cfg, CurveMemo(None))
        assert hook("Qwen/Qwen3-8B") == [] and why in hook.why_none("Qwen/Qwen3-8B")


def test_two_published_configurations_get_two_predicted_curves_never_one_line() -> None:
    """DeepSeek-V4-Flash's page drew 'TP4/DP4 (attention) on 4 x b200, sglang (its panel command)' as one line of
    11 points: two panel commands (DeepEP with EAGLE, MegaMoE without) shared a label, so the chart merged two
    predicted curves. Each curve now names the published configuration it stands beside."""
    from launchcard.web._memo import CurveMemo
    from launchcard.web._perf import interactivity_charts
    from launchcard.web._predicted import prediction_hook

    cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"

    def point(conf: str, cmd: list[str]) -> dict[str, object]:
        return {"hardware": "h100", "configuration": conf, "source": "s", "source_url": None,
                "conditions": {"gpus": 2, "input_tokens": 1024, "output_tokens": 128, "concurrency": 4,
                               "parallelism": "TP2", "engine": "sglang", "engine_version": "0.5.9",
                               "command": cmd},
                "results": {"tokens_per_sec_per_gpu": 100.0, "tpot_ms": 10.0}}

    published = [point("h100 x2 strategy=a", ["--model-path", "{{MODEL_NAME}}", "--tp", "2"]),
                 point("h100 x2 strategy=b", ["--model-path", "{{MODEL_NAME}}", "--tp", "2",
                                              "--max-running-requests", "2"])]
    predicted = prediction_hook(lambda m: published, lambda m: cfg, CurveMemo(None))("Qwen/Qwen3-8B")
    labels = {p["configuration"] for p in predicted}
    assert len(labels) == 2
    assert any("beside h100 x2 strategy=a · sglang 0.5.9" in lb for lb in labels)
    assert any("beside h100 x2 strategy=b · sglang 0.5.9" in lb for lb in labels)
    series = [s for ch in interactivity_charts(published, predicted) for s in ch["series"] if s["predicted"]]
    assert len(series) == 2 and all(len(s["points"]) == 4 for s in series)  # the ladder 1, 4, 16, 64 each


@pytest.mark.parametrize("gpus", [1, 8])
def test_the_panel_writes_figures_as_predict_does(gpus: int) -> None:
    """The panel wrote its figures at fixed decimals ("0.0 tok/s per user" for a real, small figure) and "(8
    GPU(s))": it writes each by predict.figure_text and counts GPUs as predict's text does."""
    from launchcard.predict import figure_text
    from launchcard.web._render import Renderer

    figures = {"ttft_ms_mean": 0.04, "ttft_ms_median": 0.03, "tpot_ms_mean": 0.004, "output_tok_per_s": 1234.56,
               "output_tok_per_s_per_gpu": 0.0123, "output_tok_per_s_per_user": 0.0004}
    html = Renderer().env.get_template("_predicted.html.j2").render(predicted={
        "source": "launchcard.predict (s)", "workload": {"isl": 1, "osl": 2, "concurrency": 1}, "error": None,
        **figures, "gpus": gpus, "bound": {"prefill": {"bound": "compute"}, "decode": {"bound": "memory"}},
        "verdict": None, "command": [], "findings": []})
    assert "0.0 " not in html and "0.00 " not in html
    for key, digits in (("ttft_ms_mean", 1), ("ttft_ms_median", 1), ("tpot_ms_mean", 2),
                        ("output_tok_per_s_per_gpu", 1), ("output_tok_per_s_per_user", 1)):
        assert figure_text(figures[key], digits) in html
    assert "1,234.6 tok/s" in html
    assert f"per GPU ({gpus} GPU{'' if gpus == 1 else 's'})" in html and "GPU(s)" not in html
    assert "((" not in html and "))" not in html  # the source's own parentheses are not nested in more


def test_the_share_link_carries_the_workload_typed(client: TestClient) -> None:
    """The share link named the selection only: opened fresh it showed the default workload's prediction, not the
    one on the page that shared it.  A workload input other than its default is in the link (defaults are not)."""
    import re
    from html import unescape

    def share(html: str) -> str:
        found = re.search(r'<a id="share" href="([^"]*)"', html)
        assert found, html[-2000:]
        return unescape(found.group(1))

    typed = {"hardware": "h100", "isl": 2048, "osl": 256, "concurrency": 64, "dataset": "sharegpt"}
    for html in (client.get(f"/{OSS}/builder", params=typed).text, client.get(f"/{OSS}", params=typed).text):
        link = share(html)
        assert link.startswith(f"/{OSS}?hardware=h100") and link.endswith("&isl=2048&concurrency=64&dataset=sharegpt")
        again = client.get(link).text
        assert "2048 input / 256 output tokens per request, 64 concurrent requests" in again
        assert "ShareGPT lengths" in again and share(again) == link
    assert share(client.get(f"/{OSS}", params={"hardware": "h100"}).text) == f"/{OSS}?hardware=h100"


def test_the_builder_of_a_checkpoint_without_a_config_says_why_in_one_line_with_the_fix(client: TestClient) -> None:
    """DeepSeek-V4-Flash's default variant serves deepseek-ai/DeepSeek-V4-Flash-0731, whose config.json the corpus
    lacks: the builder's panel and predict.json say so in one line naming the checkpoint and the fix (the CLI's
    --config for this model), the wording `launchcard predict MODEL` refuses with (check.no_config_error)."""
    from html import unescape

    res = client.get(f"/{DSV4}/predict.json")
    line = res.json()["detail"]
    assert res.status_code == 404 and "\n" not in line, (res.status_code, line)
    assert line.startswith("no config.json for deepseek-ai/DeepSeek-V4-Flash-0731 "), line
    assert f"predict it with `launchcard predict {DSV4} --config FILE`" in line, line
    html = " ".join(unescape(client.get(f"/{DSV4}/builder").text).split())
    assert f"No prediction: {line}" in html
    cli = subprocess.run([sys.executable, "-m", "launchcard.cli", "predict", DSV4, "--recipes",
                          str(CORPUS / "vllm-recipes"), "--isl", "64", "--osl", "8", "--concurrency", "1"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert cli.returncode == 2 and cli.stderr.strip() == (
        "launchcard: error: --config: no config.json for deepseek-ai/DeepSeek-V4-Flash-0731; pass --config FILE "
        "(the checkpoint's Hugging Face config.json)"), cli.stderr
