"""web._refusal: the builder's JSON twins refuse bad input as the CLI does (422 for its exit 2, with the line it
prints, the query parameter named in place of the flag), a plan the predictor refuses is 409 (the CLI's exit 1),
and the HTML pages show the refusal inline.  Before, resolve.json / predict.json answered all of these 200 with an
``"error"`` field carrying the CLI's ``--flag:`` spelling (the mode error with no option named at all)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run_cli

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

GLM = "zai-org/GLM-5.3-Flash"
OSS = "openai/gpt-oss-120b"  # its config.json is in the corpus hf/: predicted
KIMI = "moonshotai/Kimi-K2.5"  # needs 714 GB: single_node_tp on 8 x H100 (640 GB) does not fit
QWEN = "Qwen/Qwen3.6-27B"  # resolves on rtx_pro_6000, a GPU whose catalog entry gives no FLOP/s
CONFIGS = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"


@pytest.fixture(scope="module")
def client(recipes_dir: Path) -> Iterator[TestClient]:
    from launchcard.web import create_app

    with TestClient(create_app(None, recipes_dir)) as c:
        yield c


def _cli_line(recipes: Path, command: str, model: str, *options: str, code: int = 2) -> str:
    proc = run_cli(command, model, "--recipes", str(recipes), *options)
    assert proc.returncode == code and proc.stderr.count("\n") == 1, (proc.returncode, proc.stderr)
    return proc.stderr.strip().removeprefix("launchcard: error: ")


BAD = [  # (model, query, CLI options, query parameter, flag): one bad input of each kind on both surfaces
    (GLM, {"hardware": "h9000"}, ["--hardware", "h9000"], "hardware", "--hardware"),
    (GLM, {"hardware": "rtx_5090"}, ["--hardware", "rtx_5090"], "hardware", "--hardware"),  # not for this recipe
    (GLM, {"strategy": "bogus"}, ["--strategy", "bogus"], "strategy", "--strategy"),
    (GLM, {"kv": "bogus"}, ["--kv-offload", "bogus"], "kv", "--kv-offload"),
    (GLM, {"variant": "bogus"}, ["--variant", "bogus"], "variant", "--variant"),
    (GLM, {"hardware": "b200", "mode": "spec_decoding=bogus"}, ["--hardware", "b200", "--mode", "spec_decoding=bogus"],
     "mode", "--mode"),
]


@pytest.mark.parametrize(("model", "query", "options", "param", "flag"), BAD)
def test_bad_selection_is_422_with_the_clis_line_on_every_builder_route(
        client: TestClient, recipes_dir: Path, model: str, query: dict[str, str], options: list[str], param: str,
        flag: str) -> None:
    cli = _cli_line(recipes_dir, "resolve", model, *options)
    assert cli.startswith(flag + ": ")
    web = param + ": " + cli.removeprefix(flag + ": ")
    for route in ("resolve.json", "predict.json"):
        got = client.get(f"/{model}/{route}", params=query)
        assert got.status_code == 422 and got.json() == {"detail": web}, (route, got.text)
    files = client.get(f"/{model}/files/shell/launch.sh", params=query)
    assert files.status_code == 422 and files.text.strip() == web
    # the HTML: the page over the default selection's form and the builder's fragment, the line inline
    from html import unescape

    page = client.get(f"/{model}", params=query)
    assert page.status_code == 422 and 'id="builder-form"' in page.text
    assert f"{web}; the form shows the default selection" in unescape(page.text)
    frag = client.get(f"/{model}/builder", params=query)
    assert frag.status_code == 422 and "<html" not in frag.text and web in unescape(frag.text)


def test_a_workload_longer_than_the_context_is_422_with_the_clis_line(client: TestClient, recipes_dir: Path) -> None:
    cli = _cli_line(recipes_dir, "predict", OSS, "--hardware", "h100", "--isl", "200000", "--osl", "10")
    got = client.get(f"/{OSS}/predict.json", params={"hardware": "h100", "isl": 200000, "osl": 10})
    assert got.status_code == 422 and got.json()["detail"] == "isl: " + cli.removeprefix("--isl: ")
    # the page's panel: the plan resolved, so it is shown with the prediction's refusal under it
    frag = client.get(f"/{OSS}/builder", params={"hardware": "h100", "isl": 200000, "osl": 10})
    assert frag.status_code == 200 and "No prediction: isl: the workload needs 200010 tokens" in frag.text


def test_a_gpu_without_figures_is_422_with_the_clis_line(client: TestClient, recipes_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import launchcard.check

    cfg = CONFIGS / "Qwen--Qwen3-8B_config.json"  # the corpus has no config.json for QWEN: a stand-in for both
    cli = _cli_line(recipes_dir, "predict", QWEN, "--hardware", "rtx_pro_6000", "--config", str(cfg))
    assert cli.startswith("--hardware: the hardware figures of rtx_pro_6000 give no FLOP/s")  # was --gpu:
    monkeypatch.setattr(launchcard.check, "corpus_config", lambda *_: cfg)
    got = client.get(f"/{QWEN}/predict.json", params={"hardware": "rtx_pro_6000"})
    assert got.status_code == 422 and got.json()["detail"] == "hardware: " + cli.removeprefix("--hardware: ")


def test_a_plan_the_predictor_refuses_is_409_and_a_failing_verdict_stays_a_plan(client: TestClient,
                                                                                recipes_dir: Path) -> None:
    query = {"hardware": "h100", "strategy": "single_node_tp", "concurrency": 1}
    cli = _cli_line(recipes_dir, "predict", KIMI, "--hardware", "h100", "--strategy", "single_node_tp",
                    "--concurrency", "1", code=1)
    got = client.get(f"/{KIMI}/predict.json", params=query)
    assert got.status_code == 409 and got.json() == {"detail": cli}
    assert "will not start or does not fit" in cli
    # resolve prints the plan and exits 1: the twin is the plan, 200, its verdict failing with exit_code 1
    plan = client.get(f"/{KIMI}/resolve.json", params=query)
    assert plan.status_code == 200 and plan.json()["error"] is None and plan.json()["command"]
    assert plan.json()["verdict"]["exit_code"] == 1 and plan.json()["verdict"]["status"] == "error"
    assert run_cli("resolve", KIMI, "--recipes", str(recipes_dir), "--hardware", "h100", "--strategy",
                   "single_node_tp").returncode == 1
    frag = client.get(f"/{KIMI}/builder", params=query)  # the page: the plan, and the refusal in its panel
    assert frag.status_code == 200 and "No prediction: moonshotai/Kimi-K2.5: will not start" in frag.text


def test_findings_name_selection_options_as_the_query_spells_them(client: TestClient) -> None:
    # the vram-shortfall fix said "use a multi-node strategy with --nodes 2" on the web too
    v = client.get(f"/{KIMI}/resolve.json", params={"hardware": "h100", "strategy": "single_node_tp"}).json()
    fix = next(f["fix"] for f in v["verdict"]["findings"] if f["code"] == "vram-shortfall")
    assert "with nodes=2" in fix and "--nodes" not in fix
    # a selection-replaced finding named the mode asked for as `--mode spec_decoding=dflash`
    amd = client.get(f"/{GLM}/resolve.json", params={"hardware": "mi300x", "mode": "spec_decoding=dflash"}).json()
    said = next(f["message"] for f in amd["verdict"]["findings"] if f["code"] == "selection-replaced")
    assert said.startswith("mode=spec_decoding=dflash was not honoured: ")


def test_query_spelling_rewrites_selection_options_only() -> None:
    from launchcard.web._refusal import query_spelling

    assert query_spelling("use --strategy multi_node_tep to keep x, or drop --feature x") == \
        "use strategy=multi_node_tep to keep x, or drop feature=x"
    assert query_spelling("--mode spec_decoding=dflash was not honoured; --no-feature x)") == \
        "mode=spec_decoding=dflash was not honoured; no_feature=x)"
    # a command line to run, and an engine flag, stay as written
    kept = "launchcard memory --config config.json --gpu rtx_5090 --tp N; --tensor-parallel-size 16"
    assert query_spelling(kept) == kept


def test_query_line_names_the_parameter_by_field_or_by_flag() -> None:
    from launchcard.errors import InputError, PredictError, ResolveError
    from launchcard.web._refusal import query_line, status_of

    assert query_line(ResolveError("unknown strategy 'x'", where="--strategy", fix="f")) == \
        "strategy: unknown strategy 'x'; f"
    assert query_line(InputError("no FLOP/s", field="gpu")) == "hardware: no FLOP/s"
    assert query_line(InputError("bad", field="isl", where="w.yaml:3")) == "isl w.yaml:3: bad"
    assert query_line(InputError("bad", field="engine_version")) == "bad"  # not a web input: no name
    assert status_of(InputError("bad")) == 422 and status_of(PredictError("no room")) == 409


def test_a_mistyped_query_parameter_is_one_line_in_the_json_detail_as_every_refusal(client: TestClient) -> None:
    """`predict.json?isl=abc` answered FastAPI's list of error objects in ``detail`` where every other JSON refusal
    answers the one line (qa11): now the line, the parameter and the bad value named, the list kept beside it."""
    got = client.get(f"/{OSS}/predict.json", params={"hardware": "h100", "isl": "abc"})
    body = got.json()
    assert got.status_code == 422 and isinstance(body["detail"], str) and "\n" not in body["detail"], body
    assert body["detail"].startswith("isl: ") and "'abc'" in body["detail"], body
    assert body["errors"][0]["loc"][-1] == "isl" and body["errors"][0]["input"] == "abc"
