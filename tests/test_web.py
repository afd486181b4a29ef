"""The web catalog in-process: routes, JSON twins against their schemas, security, fuzzing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import SHARED

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

CORPUS = SHARED / "corpus"
GLM = "zai-org/GLM-5.3-Flash"
REV = "d5fc1f55cee70f4e1944f2dd4f7569cb8276ad94"
SCHEMAS = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "data" / "schemas"


def _schema(name: str) -> dict[str, object]:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web") / "catalog.sqlite3"
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(CORPUS), "--catalog",
                          str(path), "--quiet"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return path


@pytest.fixture(scope="module")
def client(catalog: Path) -> Iterator[TestClient]:
    from launchcard.web import create_app

    with TestClient(create_app(catalog, CORPUS / "vllm-recipes")) as c:
        yield c


def test_index_filters_live_in_the_url_and_count_per_facet(client: TestClient) -> None:
    all_ = client.get("/index.json", params={"per_page": 200}).json()
    jsonschema.validate(all_, _schema("web-index"))
    assert all_["total"] == 181
    hw = client.get("/index.json", params={"hardware": "b200", "hw_status": "verified"}).json()
    jsonschema.validate(hw, _schema("web-index"))
    assert 0 < hw["total"] < all_["total"]
    assert all(m["hardware"]["b200"] == "verified" for m in hw["models"])
    # A facet's count is what choosing it would give.
    n = all_["facets"]["hardware"]["b200"]
    assert client.get("/index.json", params={"hardware": "b200"}).json()["total"] == n
    html = client.get("/", params={"hardware": "b200"}).text
    assert 'value="b200" selected' in html


def test_index_sorts_and_pages(client: TestClient) -> None:
    by_size = client.get("/index.json", params={"sort": "size", "per_page": 5}).json()["models"]
    sizes = [m["params_b"] for m in by_size]
    assert sizes == sorted(sizes, reverse=True)
    p1 = client.get("/index.json", params={"per_page": 10, "page": 1}).json()["models"]
    p2 = client.get("/index.json", params={"per_page": 10, "page": 2}).json()["models"]
    assert not {m["model"] for m in p1} & {m["model"] for m in p2}
    assert client.get("/index.json", params={"sort": "evil"}).status_code == 422


def test_model_twin_equals_the_page_command_for_the_same_revision(client: TestClient) -> None:
    twin = client.get(f"/{GLM}.json", params={"rev": REV}).json()
    jsonschema.validate(twin, _schema("recipe-page"))
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "page", GLM, "--corpus", str(CORPUS), "--revision",
                          REV, "--format", "json"], capture_output=True, text=True, timeout=300)
    cli = json.loads(res.stdout)
    volatile = ("history",)  # the catalog has captures; a corpus-built page has none
    for key in set(cli) | set(twin):
        if key in volatile:
            continue
        if key == "sources":  # same documents, same commands
            assert [(c["kind"], c["path"], len(c["envs"])) for c in twin[key]] == \
                [(c["kind"], c["path"], len(c["envs"])) for c in cli[key]]
            continue
        assert twin[key] == cli[key], key
    assert twin["history"] and twin["history"][0]["id"] >= 1


def test_model_page_shows_sources_conflicts_facts_and_builder(client: TestClient) -> None:
    html = client.get(f"/{GLM}", params={"hardware": "b200", "feature": ["spec_decoding", "reasoning"],
                                         "mode": "spec_decoding=mtp"}).text
    assert "Sources side by side" in html and "Conflicts" in html and "#L74" in html
    assert "--speculative-config" in html and "Number of tensor parallel groups." in html
    assert "Client calls" in html and "download" in html


def test_builder_twin_and_fragment_follow_the_selection(client: TestClient) -> None:
    base = client.get(f"/{GLM}/resolve.json", params={"hardware": "h100"}).json()
    spec = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "feature": ["spec_decoding"],
                                                      "mode": "spec_decoding=mtp", "rev": REV}).json()
    assert base["error"] is None and "--no-enable-flashinfer-autotune" in base["command"]
    assert "--speculative-config" in spec["command"] and spec["resolved"]["hardware"] == "b200"
    assert "rev=" + REV in spec["share_url"]
    flag = next(f for f in spec["commands"][0]["flags"] if f["flag"] == "--speculative-config")
    assert flag["what_source"] == "recipe" and f"/blob/{REV}/" in flag["evidence_url"]
    bad = client.get(f"/{GLM}/resolve.json", params={"hardware": "h9000"}).json()
    assert bad["error"] and "h9000" in bad["error"]
    frag = client.get(f"/{GLM}/builder", params={"hardware": "b200"}).text
    assert "<html" not in frag and "Command" in frag
    dl = client.get(f"/{GLM}/files/shell/launch.sh", params={"hardware": "b200"})
    assert dl.status_code == 200 and "attachment" in dl.headers["content-disposition"] and "vllm serve" in dl.text


def test_hardware_and_performance_twins(client: TestClient) -> None:
    hw = client.get("/hardware/b200.json").json()
    jsonschema.validate(hw, _schema("web-hardware"))
    assert GLM in hw["models"]["verified"]
    perf = client.get(f"/{GLM}/performance.json").json()
    jsonschema.validate(perf, _schema("web-performance"))
    assert client.get(f"/{GLM}/performance").status_code == 200
    assert client.get("/hardware/not-a-gpu").status_code == 404


@pytest.mark.parametrize("path", ["/../etc/passwd", "/zai-org/..%2F..%2Fetc", "/%2e%2e/x", "/a/b.json",
                                  "/hardware/..%2f..", "/zai-org/GLM-5.3-Flash.json?rev=../../x",
                                  "/zai-org/GLM-5.3-Flash?hardware=<script>", "/schemas/../../etc.json"])
def test_bad_ids_and_values_are_refused_not_followed(client: TestClient, path: str) -> None:
    res = client.get(path, follow_redirects=False)
    assert res.status_code in (404, 422), (path, res.status_code)


def test_every_response_carries_a_strict_csp(client: TestClient) -> None:
    for path in ("/", f"/{GLM}", "/index.json", "/nope/nope"):
        csp = client.get(path).headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "object-src 'none'" in csp
    html = client.get(f"/{GLM}").text
    assert "<script>" not in html and " onclick=" not in html and "style=" not in html


def test_published_schemas_are_served(client: TestClient) -> None:
    for name in ("web-index", "recipe-page", "web-hardware", "web-performance"):
        assert client.get(f"/schemas/{name}.json").json()["$id"]


HOSTILE = """\
meta:
  title: "<script>alert('t')</script>{{ 7*7 }}"
  provider: "<img src=x onerror=alert(1)>"
  description: "{long}"
  date_updated: 2026-01-01
  tasks: [text]
  hardware:
    h100: verified
model:
  model_id: "evil/Hostile-1B"
  architecture: "<b>dense</b>"
  parameter_count: "1B"
  context_length: 4096
features:
  reasoning:
    description: "<script>document.title='pwned'</script>"
    args: ["--reasoning-parser", "deepseek_r1"]
variants:
  default:
    precision: "bf16\\u0000"
    vram_minimum_gb: 4
    description: "javascript:alert(1)"
compatible_strategies: [single_node_tp]
guide: |
  ## Guide <script>alert(2)</script>
  [click me](javascript:alert(3)) and <iframe src="https://evil.example"></iframe>
  {{{{ config.__class__ }}}}
  {long}
"""


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def _assert_inert(html: str, where: str) -> None:
    """No element the recipe could have injected: scripts only ours, no handlers, no javascript: links."""
    parser = _Elements()
    parser.feed(html)
    for tag, attrs in parser.found:
        assert tag not in ("iframe", "img", "object", "embed", "b"), (where, tag, attrs)
        if tag == "script":
            assert attrs.get("src") == "/static/app.js", (where, attrs)
        assert not any(k.startswith("on") for k in attrs), (where, tag, attrs)
        for key in ("href", "src", "action"):
            value = (attrs.get(key) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:text")), (where, tag, attrs)


def test_hostile_recipe_is_escaped_everywhere(tmp_path: Path, recipes_dir: Path) -> None:
    from launchcard.web import create_app

    recipes = tmp_path / "recipes"
    shutil.copytree(recipes_dir, recipes)
    (recipes / "models" / "evil").mkdir()
    (recipes / "models" / "evil" / "Hostile-1B.yaml").write_text(HOSTILE.replace("{long}", "x" * 10_000))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "vllm-recipes").symlink_to(recipes)
    cat = tmp_path / "cat.sqlite3"
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(corpus), "--catalog",
                          str(cat), "--quiet"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    with TestClient(create_app(cat, recipes)) as c:
        for path in ("/evil/Hostile-1B", "/", "/evil/Hostile-1B/builder", "/hardware/h100"):
            res = c.get(path)
            assert res.status_code == 200, path
            _assert_inert(res.text, path)
        page = c.get("/evil/Hostile-1B").text
        assert "&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;{{ 7*7 }}" in page
        assert "x" * 10_000 in page  # long lines kept, not truncated into broken markup
        assert c.get("/evil/Hostile-1B.json").json()["title"].startswith("<script>")


def test_api_fuzzing_finds_no_server_error(catalog: Path) -> None:
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings

    from launchcard.web import create_app

    app = create_app(catalog, CORPUS / "vllm-recipes")
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    statuses: dict[int, int] = {}
    for op in schema.get_all_operations():
        operation = op.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case: Any) -> None:
            response = case.call()
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} {case.query} -> {response.status_code}")

        check()
    assert not failures, failures[:10]
    assert sum(statuses.values()) >= 100 and 200 in statuses, statuses
