"""The web catalog in-process: routes, JSON twins against their schemas, security, fuzzing (the performance pages:
tests/test_web_performance.py; the catalog and client fixtures are conftest's)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from web_support import CORPUS, GLM, schema

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

REV = "0400c4ef554febc569d2bf0c9aa639b5c3877f9c"  # the revision the corpus manifest records for GLM-5.3-Flash
STATIC = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "data" / "static"


def test_index_filters_live_in_the_url_and_count_per_facet(client: TestClient) -> None:
    all_ = client.get("/index.json", params={"per_page": 200}).json()
    jsonschema.validate(all_, schema("web-index"))
    assert all_["total"] == 181
    hw = client.get("/index.json", params={"hardware": "b200", "hw_status": "verified"}).json()
    jsonschema.validate(hw, schema("web-index"))
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
    jsonschema.validate(twin, schema("recipe-page"))
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "page", GLM, "--corpus", str(CORPUS), "--revision",
                          REV, "--format", "json"], capture_output=True, text=True, timeout=300, check=False)
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
    html = client.get(f"/{GLM}", params={"hardware": "b200", "features": ["spec_decoding", "reasoning"],
                                         "mode": "spec_decoding=mtp"}).text
    assert "Sources side by side" in html and "Conflicts" in html and "#L74" in html
    assert "--speculative-config" in html and "Number of tensor parallel groups." in html
    assert "Client calls" in html and "download" in html


def test_builder_twin_and_fragment_follow_the_selection(client: TestClient) -> None:
    base = client.get(f"/{GLM}/resolve.json", params={"hardware": "h100"}).json()
    spec = client.get(f"/{GLM}/resolve.json", params={"hardware": "b200", "features": ["spec_decoding"],
                                                      "mode": "spec_decoding=mtp", "rev": REV}).json()
    assert base["error"] is None and "--no-enable-flashinfer-autotune" in base["command"]
    assert "--speculative-config" in spec["command"] and spec["resolved"]["hardware"] == "b200"
    assert "rev=" + REV in spec["share_url"]
    flag = next(f for f in spec["commands"][0]["flags"] if f["flag"] == "--speculative-config")
    assert flag["what_source"] == "recipe" and f"/blob/{REV}/" in flag["evidence_url"]
    assert flag["cited"] == "features.spec_decoding.modes.mtp" and "MTP" in flag["what"]  # the selected mode's text
    bad = client.get(f"/{GLM}/resolve.json", params={"hardware": "h9000"})  # bad input: 422, as the CLI's exit 2
    assert bad.status_code == 422 and bad.json()["detail"].startswith("hardware: unknown hardware 'h9000'")
    frag = client.get(f"/{GLM}/builder", params={"hardware": "b200"}).text
    assert "<html" not in frag and "Command" in frag
    dl = client.get(f"/{GLM}/files/shell/launch.sh", params={"hardware": "b200"})
    assert dl.status_code == 200 and "attachment" in dl.headers["content-disposition"] and "vllm serve" in dl.text


def test_hardware_and_performance_twins(client: TestClient) -> None:
    hw = client.get("/hardware/b200.json").json()
    jsonschema.validate(hw, schema("web-hardware"))
    assert GLM in hw["models"]["verified"]
    perf = client.get(f"/{GLM}/performance.json").json()
    jsonschema.validate(perf, schema("web-performance"))
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
                          str(cat), "--quiet"], capture_output=True, text=True, timeout=300, check=False)
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


@pytest.mark.parametrize("q", ["\U00052576\x99\x006\x80\U00022591", "ab\x00", "\x00q"])
def test_a_search_text_holding_nul_is_a_422_naming_q_not_a_server_error(client: TestClient, q: str) -> None:
    """The fuzz's failing case (GET /index.json?task=info&q=%F1%92%95%B6%C2%99%006%C2%80%F0%A2%96%91): the text
    reached SQLite's FTS5, which stopped at the NUL ("unterminated string"), and the store's DbError escaped the
    app; "\\x00q" took the LIKE path and listed every model. Now the store's refusal, one line naming q."""
    twin = client.get("/index.json", params={"task": "info", "q": q})
    assert twin.status_code == 422, twin.text
    detail = twin.json()["detail"]
    assert detail.startswith("q: a text search cannot hold a NUL character (U+0000)") and "\n" not in detail
    page = client.get("/", params={"q": q})
    assert page.status_code == 422 and "a text search cannot hold a NUL character" in page.text


# -- verdict and memory in the builder -------------------------------------------------------------


def test_builder_carries_the_plan_verdict_with_findings(client: TestClient) -> None:
    data = client.get(f"/{GLM}/resolve.json", params={"hardware": "h100"}).json()
    v = data["verdict"]
    assert v["status"] in ("ok", "warning", "error") and v["findings"]
    assert v["counts"]["warning"] == sum(f["severity"] == "warning" for f in v["findings"])
    for f in v["findings"]:
        assert set(f) >= {"severity", "code", "message", "evidence", "fix"} and f["evidence"]
    html = client.get(f"/{GLM}/builder", params={"hardware": "h100"}).text
    assert f'class="verdict {v["status"]}" id="verdict"' in html
    assert "memory-not-checked" in html and "evidence:" in html
    # no config.json for GLM-5.3-Flash in the corpus: no bar, and a note saying so
    assert data["memory"] == [] and "memory not checked: no config.json" in data["memory_note"]
    assert "memory not checked: no config.json" in html and "<svg" not in html


def test_memory_bar_when_the_config_is_known(client: TestClient) -> None:
    data = client.get("/openai/gpt-oss-120b/resolve.json").json()
    (mem,) = data["memory"]
    b = mem["breakdown"]
    assert mem["fits"] and b["weights_gib"] > 0 and b["kv_cache_gib"] > 0
    parts = b["weights_gib"] + b["activation_peak_gib"] + b["non_torch_gib"] + b["cuda_graph_gib"] + b["kv_cache_gib"]
    assert parts <= b["gpu_memory_gib"] + 0.01
    assert any(f["code"] == "memory-fits" for f in data["verdict"]["findings"])
    html = client.get("/openai/gpt-oss-120b").text
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "<title" in svg and "<desc" in svg and 'role="img"' in svg and "style=" not in svg
    for label in ("weights", "KV cache", "activations", "CUDA graphs", "non-torch", "free"):
        assert f">{label} " in svg, label


# -- accessibility ---------------------------------------------------------------------------------


class _Controls(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.controls: list[dict[str, str | None]] = []
        self.label_for: set[str] = set()
        self.open_labels = 0
        self.wrapped: set[int] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "label":
            self.open_labels += 1
            if a.get("for"):
                self.label_for.add(str(a["for"]))
        elif tag in ("input", "select", "textarea") and a.get("type") not in ("hidden", "submit", "button"):
            if self.open_labels:
                self.wrapped.add(len(self.controls))
            self.controls.append({**a, "tag": tag})

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.open_labels -= 1


@pytest.mark.parametrize("path", ["/", "/?hardware=b200", f"/{GLM}", "/openai/gpt-oss-120b", f"/{GLM}/performance",
                                  "/hardware/b200"])
def test_every_control_has_a_label(client: TestClient, path: str) -> None:
    p = _Controls()
    p.feed(client.get(path).text)
    assert p.controls, path
    for i, c in enumerate(p.controls):
        ok = i in p.wrapped or (c.get("id") in p.label_for) or c.get("aria-label") or c.get("aria-labelledby")
        assert ok, (path, c)


def _luminance(hex_color: str) -> float:
    h = hex_color.lstrip("#")
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _theme_vars() -> dict[str, dict[str, str]]:
    import re

    css = (STATIC / "site.css").read_text()
    blocks = {"light": re.search(r"^:root \{(.*?)\}", css, re.DOTALL | re.MULTILINE),
              "dark": re.search(r':root\[data-theme="dark"\] \{(.*?)\}', css, re.DOTALL),
              "dark (system)": re.search(r':root:not\(\[data-theme="light"\]\) \{(.*?)\}', css, re.DOTALL)}
    out = {}
    for name, m in blocks.items():
        assert m, name
        out[name] = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", m.group(1)))
    return out


def test_theme_colours_have_sufficient_contrast() -> None:
    themes = _theme_vars()
    assert themes["dark"] == themes["dark (system)"]  # the two dark blocks cannot drift apart
    pairs = [("fg", "bg"), ("muted", "bg"), ("link", "bg"), ("ok", "okbg"), ("err", "errbg"), ("warn", "warnbg"),
             ("fg", "code"), ("muted", "code"), ("link", "code")]
    low = [(theme, fg, bg, round(_contrast(v[fg], v[bg]), 2)) for theme, v in themes.items() for fg, bg in pairs
           if _contrast(v[fg], v[bg]) < 4.5]
    assert not low, low
    # chart lines and memory segments against the page: non-text contrast (WCAG 1.4.11) >= 3:1
    graphics = [k for k in themes["light"] if k[:2] == "c-" or k[1:].isdigit()]
    low = [(t, k, round(_contrast(v[k], v["bg"]), 2)) for t, v in themes.items() for k in graphics
           if _contrast(v[k], v["bg"]) < 3]
    assert not low, low


def test_benchmark_files_are_untrusted_input(catalog: Path, tmp_path: Path) -> None:
    from launchcard.web import create_app

    good, bad = tmp_path / "good" / "zai-org", tmp_path / "bad" / "zai-org"
    good.mkdir(parents=True)
    bad.mkdir(parents=True)
    (good / "glm-5.3-flash-benchmarks.jsx").write_text(
        'export const benchmarks = [{ match: { hw: "<script>alert(1)</script>", strategy: "x\\" onload=\\"y" },\n'
        '  sglang_version: "</text><script>", speed: [{ workload: { isl: 1, osl: 1, max_concurrency: 2 },\n'
        "  tokens_per_sec_per_gpu: 5 }, { workload: { isl: 1, osl: 1, max_concurrency: 4 }, "
        "tokens_per_sec_per_gpu: 9 }],"
        ' notes: "<img src=x onerror=alert(2)>" }];\n'
    )
    (bad / "glm-5.3-flash-benchmarks.jsx").write_text(
        "export const benchmarks = [\n  { match: cells.filter(x) },\n];\n"
    )
    with TestClient(create_app(catalog, CORPUS / "vllm-recipes", [tmp_path / "good"])) as c:
        res = c.get(f"/{GLM}/performance")
        assert res.status_code == 200 and "<svg" in res.text
        _assert_inert(res.text, "performance")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in res.text
        jsonschema.validate(c.get(f"/{GLM}/performance.json").json(), schema("web-performance"))
    with TestClient(create_app(catalog, CORPUS / "vllm-recipes", [tmp_path / "bad"])) as c:
        perf = c.get(f"/{GLM}/performance.json").json()
        (err,) = perf["errors"]
        assert "glm-5.3-flash-benchmarks.jsx:2" in err and "not a data value: cells" in err and "\n" not in err
        assert perf["published"] == [] and err in c.get(f"/{GLM}/performance").text.replace("&#39;", "'")


def test_model_page_shows_a_badge_per_captured_release_once_drift_is_stored(catalog: Path, tmp_path: Path) -> None:
    from launchcard.web import create_app

    cat = tmp_path / "drift.sqlite3"
    shutil.copy(catalog, cat)
    with TestClient(create_app(cat, CORPUS / "vllm-recipes")) as c:
        assert 'class="badges"' not in c.get(f"/{GLM}").text  # no drift stored yet: no badge row
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "drift", "--engine", "vllm", "--corpus", str(CORPUS),
                          "--catalog", str(cat), "--store", "--format", "json"], capture_output=True, text=True,
                         timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    with TestClient(create_app(cat, CORPUS / "vllm-recipes")) as c:
        html = c.get(f"/{GLM}").text
    assert 'class="badges"' in html and "vllm 0.34.0: ok" in html
    # GLM-5.3-Flash's recipe command needs its glm47 parsers, registered from 0.24.0 on
    assert "vllm 0.10.2: error" in html


def test_an_unheld_revision_is_refused_not_shown(client: TestClient) -> None:
    """Issue 20 item 9: ``?rev=`` names the source's revision only when the catalog or checkout holds it."""
    for path in (f"/{GLM}", f"/{GLM}.json", f"/{GLM}/resolve.json", f"/{GLM}/builder"):
        res = client.get(path, params={"rev": "deadbeef"})
        assert res.status_code == 404, path
        assert "blob/deadbeef" not in res.text and "not held" in res.text
        assert REV in res.text  # says which revision it does hold
    short = client.get(f"/{GLM}.json", params={"rev": REV[:10]}).json()  # an abbreviation of the held one
    assert short["header"]["source_revision"] == REV


@pytest.mark.parametrize(("query", "named"), [
    ({"nodes": "0"}, "nodes"), ({"hardware": "H100 x8"}, "hardware"), ({"mode": "mtp"}, "mode"),
    ({"isl": "-5"}, "isl"),
    # not finite: the web's workload numbers are integers, so inf, nan and 1e400 are refused as predict refuses them
    ({"isl": "inf"}, "isl"), ({"concurrency": "nan"}, "concurrency"), ({"osl": "1e400"}, "osl"),
    # an advanced preset the builder does not have was dropped without a word (the command and prediction
    # of the selection without it, the selection echoed with it)
    ({"advanced": "gpu_mem_096"}, "advanced")])
def test_bad_selection_in_model_page_url_renders_the_page_with_an_inline_message(
        client: TestClient, query: dict[str, str], named: str) -> None:
    """Issue 22 item 3: a bad selection typed into the model page's URL renders the model page, the message
    (parameter, rule, value) inline in the builder panel; JSON twins keep JSON errors."""
    res = client.get(f"/{GLM}", params=query)
    assert res.status_code == 422 and res.headers["content-type"].startswith("text/html")
    html = res.text
    assert 'id="builder-form"' in html and "<h1" in html  # the model page, not an error page
    panel = html[html.index('id="builder-result"'):]
    alert = panel[panel.index('role="alert"'):panel.index("</p>", panel.index('role="alert"'))]
    assert named in alert and repr(next(iter(query.values()))).strip("'") in alert, alert
    assert '"detail"' not in alert and "{" not in alert  # one line, not FastAPI's validation JSON
    twin = client.get(f"/{GLM}/predict.json", params=query)
    assert twin.status_code == 422 and twin.headers["content-type"].startswith("application/json")
    assert "detail" in twin.json()


def test_a_hardware_query_takes_any_case_as_the_cli_does(client: TestClient) -> None:
    """hardware=H100 was a 422 (lower case only) while `launchcard resolve --hardware H100` takes it: both read the
    name by launchcard.resolve.profile_id now."""
    lower = client.get("/index.json", params={"hardware": "b200"}).json()
    upper = client.get("/index.json", params={"hardware": "B200"})
    assert upper.status_code == 200 and upper.json()["total"] == lower["total"] > 0
    plain = client.get(f"/{GLM}/resolve.json", params={"hardware": "h100"})
    cased = client.get(f"/{GLM}/resolve.json", params={"hardware": "H100"})
    assert plain.status_code == cased.status_code == 200
    assert cased.json()["selection"] == plain.json()["selection"]
    assert client.get(f"/{GLM}/resolve.json", params={"hardware": "<script>"}).status_code == 422


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", "nvidia_h100"])
def test_a_hardware_query_takes_an_accelerator_name_with_spaces_as_the_cli_does(client: TestClient,
                                                                                 name: str) -> None:
    """hardware=NVIDIA H100 80GB HBM3 (what nvidia-smi prints) was a 422 ("letters, digits and _ . -") while
    `launchcard resolve --hardware 'NVIDIA H100 80GB HBM3'` takes it: the page and its JSON twin read the name by the
    CLI's one resolver now, to the same selection."""
    from tests.helpers import run_cli

    cli = run_cli("resolve", GLM, "--recipes", str(CORPUS / "vllm-recipes"), "--hardware", name, "--json")
    assert cli.returncode == 0, cli.stderr
    twin = client.get(f"/{GLM}/resolve.json", params={"hardware": name})
    assert twin.status_code == 200, twin.text
    plain, got = client.get(f"/{GLM}/resolve.json", params={"hardware": "h100"}).json(), twin.json()
    assert json.loads(cli.stdout)["hardware"] == got["resolved"]["hardware"] == plain["resolved"]["hardware"] == "h100"
    assert got["commands"] == plain["commands"] and got["error"] is None
    page = client.get(f"/{GLM}", params={"hardware": name})
    assert page.status_code == 200 and "not a valid value" not in page.text
    assert client.get(f"/{GLM}.json", params={"hardware": name}).status_code == 200
    assert client.get("/index.json", params={"hardware": name}).status_code == 200


def test_every_catalog_accelerator_name_passes_the_web_hardware_rule() -> None:
    """The web's hardware= rule takes every name and alias of the hardware catalog, spaces and parentheses
    included (the CLI's --hardware takes them all)."""
    from launchcard.hardware import catalog
    from launchcard.web._app import _HW_NAME

    names = {n for a in catalog().accelerators for n in (a.id, a.name, *a.aliases)}
    assert len(names) > 100 and [n for n in names if not _HW_NAME.match(n)] == []


def test_each_variant_offers_the_hardware_it_resolves_on_and_the_fragment_carries_it(client: TestClient) -> None:
    """The form's hardware list is the resolved variant's (nothing offered fails to resolve); a variant chosen in
    the form kept the first variant's list, so DeepSeek-V4-Flash's nvfp4 was offered on h200 and refused there
    (webqa). Each variant option names its list, and the builder's fragment carries the list of the variant it
    resolved, the resolved hardware selected, for the form to take."""
    import re

    from launchcard.resolve import resolvable_hardware
    from launchcard.sources.vllm_recipes import RecipeRepo

    dsv4 = "deepseek-ai/DeepSeek-V4-Flash"
    repo = RecipeRepo(CORPUS / "vllm-recipes")
    html = client.get(f"/{dsv4}").text
    form = html[html.index('id="b-variant"'):html.index("</select>", html.index('id="b-variant"'))]
    offered = dict(re.findall(r'<option value="([^"]+)" data-hardware="([^"]*)"', form))
    assert set(offered) == set(repo.recipe(dsv4).recipe.variants)
    for variant, ids in offered.items():
        assert ids.split() == sorted(c.profile for c in resolvable_hardware(repo, dsv4, variant)), variant
    assert "h200" not in offered["nvfp4"].split()
    frag = client.get(f"/{dsv4}/builder", params={"variant": "nvfp4"}).text
    tpl = frag[frag.index('<template id="form-options"'):frag.index("</template>")]
    assert sorted(re.findall(r'<option value="([^"]+)"', tpl)) == sorted(offered["nvfp4"].split())
    resolved = client.get(f"/{dsv4}/resolve.json", params={"variant": "nvfp4"}).json()["resolved"]["hardware"]
    assert re.search(rf'<option value="{resolved}" selected>', tpl), tpl


def test_an_unknown_size_is_refused_as_every_other_facet_value(client: TestClient) -> None:
    """size=huge showed all 181 models as if filtered (200, the value dropped without a word) while sort=,
    hw_status= and the other facets answer 422 naming the parameter and what it takes (webqa)."""
    from launchcard.store import SIZE_BUCKETS

    for path in ("/index.json", "/"):
        bad = client.get(path, params={"size": "huge"})
        assert bad.status_code == 422, (path, bad.status_code)
        line = bad.json()["detail"] if path.endswith(".json") else bad.text
        assert "size" in line and all(name in line.replace("&lt;", "<").replace("&gt;", ">")
                                      for name, _ in SIZE_BUCKETS), line
    for name, _ in SIZE_BUCKETS:
        ok = client.get("/index.json", params={"size": name})
        assert ok.status_code == 200 and ok.json()["query"]["size"] == name


@pytest.mark.parametrize("hw", ["xeon6", "ascend_950pr_8x", "mi355x"])
def test_hardware_page_links_open_the_builder_on_it_only_where_it_resolves(client: TestClient, hw: str) -> None:
    """A hardware page linked every model as /MODEL?hardware=HW: 33 of the catalog's 592 such links answered 422
    (gpt-oss-120b on xeon6, GLM-5.3-Flash on ascend_950pr_8x, a profile the taxonomy lacks...), the builder
    refusing the hardware the link chose (webqa). A model links with its builder on the profile only where the
    builder resolves there (JSON ``builder``), else to its page."""
    import re

    data = client.get(f"/hardware/{hw}.json").json()
    jsonschema.validate(data, schema("web-hardware"))
    listed = {m for ms in data["models"].values() for m in ms}
    assert set(data["builder"]) <= listed
    html = client.get(f"/hardware/{hw}").text
    links = re.findall(r'<li><a href="/([^"?]+)(\?hardware=[^"]*)?">', html)
    assert {m for m, _ in links} == listed
    assert {m for m, q in links if q} == set(data["builder"])
    for model in data["builder"]:
        assert client.get(f"/{model}/resolve.json", params={"hardware": hw}).status_code == 200, model
    for model in listed - set(data["builder"]):
        assert client.get(f"/{model}/resolve.json", params={"hardware": hw}).status_code != 200, model


