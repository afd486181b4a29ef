"""One meaning per spelling: the web builder's ``feature=`` / ``no_feature=`` are the CLI's ``--feature`` /
``--no-feature`` (add to / remove from the recipe's default features), read by the one resolver function; the
form's whole checkbox state is ``features=``.  The web's JSON twins and the CLI give the same command, and refuse
the same bad input with the same line (422 / exit 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

GLM = "zai-org/GLM-5.3-Flash"
GPT = "openai/gpt-oss-120b"  # default features: tool_calling; spec_decoding is opt-in; its config.json is in hf/


@pytest.fixture(scope="module")
def client(recipes_dir: Path) -> Iterator[TestClient]:
    from launchcard.web import create_app

    with TestClient(create_app(None, recipes_dir)) as c:  # the builder needs the recipes only
        yield c


def _cli(recipes: Path, *args: str) -> Any:
    proc = run_cli(*args, "--recipes", str(recipes), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


CASES = [  # (model, web query, CLI options): the same selection on both surfaces
    (GPT, {"hardware": "h100", "feature": "spec_decoding"}, ["--hardware", "h100", "--feature", "spec_decoding"]),
    (GLM, {"hardware": "b200", "no_feature": "reasoning"}, ["--hardware", "b200", "--no-feature", "reasoning"]),
    (GLM, {"hardware": "b200", "feature": "spec_decoding", "no_feature": "tool_calling", "mode": "spec_decoding=mtp"},
     ["--hardware", "b200", "--feature", "spec_decoding", "--no-feature", "tool_calling", "--mode",
      "spec_decoding=mtp"]),
]


@pytest.mark.parametrize(("model", "query", "options"), CASES)
def test_resolve_twin_and_cli_give_the_same_command(client: TestClient, recipes_dir: Path, model: str,
                                                    query: dict[str, str], options: list[str]) -> None:
    web = client.get(f"/{model}/resolve.json", params=query)
    assert web.status_code == 200 and web.json()["error"] is None, web.text
    cli = _cli(recipes_dir, "resolve", model, *options)
    assert [c["argv"] for c in web.json()["commands"]] == [c["argv"] for c in cli["commands"]]
    assert web.json()["resolved"]["features"] == cli["features"]


def test_feature_adds_to_the_defaults_on_both_surfaces(client: TestClient, recipes_dir: Path) -> None:
    # before: the web's feature=spec_decoding was the whole set and dropped gpt-oss's default tool parser
    web = client.get(f"/{GPT}/resolve.json", params={"hardware": "h100", "feature": "spec_decoding"}).json()
    assert web["resolved"]["features"] == ["tool_calling", "spec_decoding"]
    argv = web["commands"][0]["argv"]
    assert "--tool-call-parser" in argv and "--speculative-config" in argv
    glm = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "no_feature": "reasoning"}).json()
    assert glm["resolved"]["features"] == ["tool_calling"] and "--reasoning-parser" not in glm["command"]


def test_predict_twin_and_cli_predict_the_same_command(client: TestClient, recipes_dir: Path) -> None:
    web = client.get(f"/{GPT}/predict.json", params={"hardware": "h100", "feature": "spec_decoding",
                                                     "concurrency": "4"})
    assert web.status_code == 200 and web.json()["error"] is None, web.text
    cli = _cli(recipes_dir, "predict", GPT, "--hardware", "h100", "--feature", "spec_decoding", "--concurrency", "4")
    assert web.json()["command"] == cli["command"]
    assert "--tool-call-parser" in web.json()["command"] and "--speculative-config" in web.json()["command"]


def _cli_error(recipes: Path, *args: str) -> str:
    proc = run_cli("resolve", GLM, "--recipes", str(recipes), "--hardware", "b200", *args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (proc.returncode, proc.stderr)
    return proc.stderr.strip().removeprefix("launchcard: error: ")


@pytest.mark.parametrize(("query", "options", "web_name", "cli_name"), [
    ({"feature": "reasoning", "no_feature": "reasoning"}, ["--feature", "reasoning", "--no-feature", "reasoning"],
     "feature/no_feature", "--feature/--no-feature"),
    ({"no_feature": "spec_decoding", "mode": "spec_decoding=mtp"},
     ["--no-feature", "spec_decoding", "--mode", "spec_decoding=mtp"], "mode/no_feature", "--mode/--no-feature"),
    ({"feature": "reasonin"}, ["--feature", "reasonin"], "feature", "--feature"),
    ({"no_feature": "bogus"}, ["--no-feature", "bogus"], "no_feature", "--no-feature"),
])
def test_bad_feature_input_is_the_same_line_422_and_exit_2(client: TestClient, recipes_dir: Path,
                                                           query: dict[str, str], options: list[str], web_name: str,
                                                           cli_name: str) -> None:
    cli = _cli_error(recipes_dir, *options)
    assert cli.startswith(cli_name + ": ")
    for route in ("resolve.json", "predict.json"):
        web = client.get(f"/{GLM}/{route}", params={"hardware": "b200", **query})
        assert web.status_code == 422, web.text
        assert web.json()["detail"] == web_name + ": " + cli.removeprefix(cli_name + ": ")
    page = client.get(f"/{GLM}", params={"hardware": "b200", **query})  # the page: inline, over the default form
    assert page.status_code == 422 and "the form shows the default selection" in page.text


def test_the_forms_whole_set_travels_as_features(client: TestClient) -> None:
    none = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "features": ""}).json()
    assert none["resolved"]["features"] == [] and none["share_url"] == f"/{GLM}?hardware=b200&features="
    # an unchecked box's mode select (a page without JavaScript sends it) does not turn its feature on
    one = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "features": ["", "reasoning"],
                                                     "mode": "spec_decoding=mtp"}).json()
    assert one["resolved"]["features"] == ["reasoning"] and "--speculative-config" not in one["command"]
    html = client.get(f"/{GLM}", params={"hardware": "b200"}).text
    assert '<input type="hidden" name="features" value="">' in html
    assert 'type="checkbox" name="features" value="spec_decoding"' in html and 'name="feature"' not in html


def test_share_urls_are_canonical(client: TestClient) -> None:
    messy = client.get(f"/{GLM}/resolve.json", params=[("mode", "spec_decoding=mtp"), ("no_feature", "tool_calling"),
                                                       ("feature", "spec_decoding"), ("feature", "spec_decoding"),
                                                       ("hardware", "b200")]).json()
    assert messy["share_url"] == (f"/{GLM}?hardware=b200&feature=spec_decoding&no_feature=tool_calling"
                                  "&mode=spec_decoding%3Dmtp")


def test_an_empty_feature_from_an_old_link_is_refused_not_reread(client: TestClient) -> None:
    # the form used to send feature= (empty) plus its checked boxes as the whole set; read as additions now,
    # such a link would silently mean another plan
    got = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "feature": ["", "spec_decoding"]})
    assert got.status_code == 422 and "features=" in got.json()["detail"]
