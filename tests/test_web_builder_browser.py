"""The command builder and error pages in real headless Chromium (issue 22, items 2 and 3).

One server and one browser for the module; each test opens its own page.  Each test drives the
page as a user would and checks what the user sees and what Copy puts on the clipboard.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from web_support import CHROMIUM

pytestmark = pytest.mark.browser
GLM = "zai-org/GLM-5.3-Flash"


@pytest.fixture(scope="module")
def server(browser_server: str) -> str:
    return browser_server  # conftest: one server for every browser test module


@pytest.fixture(scope="module")
def context(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
        yield ctx
        browser.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    yield p
    p.close()
    assert not errors, errors


def _copy(page: Any, button: str) -> str:
    from playwright.sync_api import expect

    page.click(button)
    expect(page.locator(button)).to_have_text("Copied")
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_multi_node_plan_shows_every_command_copyable(server: str, page: Any) -> None:
    page.goto(f"{server}/{GLM}?hardware=h100&variant=bf16&strategy=multi_node_tp&nodes=2")
    result = page.locator("#builder-result")
    assert "None" not in result.locator("h3 + .copyable, .copyable").first.inner_text()
    assert page.locator("h4.cmd-title").all_inner_texts() == ["node rank 0 (head)", "node rank 1 (worker)"]
    worker = _copy(page, "button[data-copy=cmd-2]")
    assert "--node-rank 1" in worker and "--headless" in worker and "VLLM_ENGINE_READY_TIMEOUT_S=3600" in worker
    copy_all = page.locator("button[data-copy=cmd-main]").bounding_box()
    result_box = result.bounding_box()
    assert copy_all and result_box and copy_all["y"] >= result_box["y"]  # in the builder, not floating on the page
    everything = _copy(page, "button[data-copy=cmd-main]")
    assert "# node rank 0 (head)" in everything and "# node rank 1 (worker)" in everything
    import httpx

    twin = httpx.get(f"{server}/{GLM}/resolve.json", params={"hardware": "h100", "variant": "bf16",
                                                             "strategy": "multi_node_tp", "nodes": 2}).json()
    assert twin["command"] == everything


def test_prefill_decode_plan_shows_prefill_decode_and_router(server: str, page: Any) -> None:
    page.goto(f"{server}/{GLM}?hardware=mi355x&strategy=pd_cluster")
    titles = page.locator("h4.cmd-title").all_inner_texts()
    assert titles[:2] == ["prefill", "decode"] and titles[2].startswith("router"), titles
    assert "vllm-router" in _copy(page, "button[data-copy=cmd-router]")
    assert "kv_consumer" in _copy(page, "button[data-copy=cmd-2]")


def test_speculative_decoding_turns_off_again(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}?hardware=b200")
    box = page.locator("input[name=features][value=spec_decoding]")
    expect(page.locator("#b-mode-spec_decoding")).to_be_disabled()  # a mode shows as inactive while off
    box.check()
    expect(page.locator("#cmd-main")).to_contain_text("--speculative-config")
    expect(page.locator("#b-mode-spec_decoding")).to_be_enabled()
    box.uncheck()
    expect(page.locator("#cmd-main")).not_to_contain_text("--speculative-config")
    page.wait_for_url("**hardware=b200**")
    page.reload()  # the URL the form wrote keeps it off
    expect(page.locator("input[name=features][value=spec_decoding]")).not_to_be_checked()
    expect(page.locator("#cmd-main")).not_to_contain_text("--speculative-config")


def test_command_and_flag_table_carry_the_base_environment(server: str, page: Any) -> None:
    page.goto(f"{server}/{GLM}")
    assert "VLLM_ENGINE_READY_TIMEOUT_S=3600" in _copy(page, "button[data-copy=cmd-main]")
    row = page.locator("table.flags tr.env", has_text="VLLM_ENGINE_READY_TIMEOUT_S")
    assert row.count() >= 1 and "3600" in row.first.inner_text()


def test_kv_offload_and_advanced_presets_restore_from_the_url(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}?hardware=h200&kv=simple&advanced=gpu_mem_095")
    expect(page.locator("#b-kv")).to_have_value("simple")
    expect(page.locator("input[name=advanced][value=gpu_mem_095]")).to_be_checked()
    expect(page.locator("#cmd-main")).to_contain_text("--kv-transfer-config")
    page.select_option("#b-hardware", "b200")  # the next change keeps what the URL selected
    expect(page.locator("#cmd-main")).to_contain_text("--kv-cache-dtype fp8")
    expect(page.locator("#cmd-main")).to_contain_text("--gpu-memory-utilization 0.95")
    expect(page.locator("#cmd-main")).to_contain_text("--kv-transfer-config")


def test_docker_one_liner_matches_the_emitted_script(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}")
    page.click("details#deploy > summary")
    expect(page.locator("#docker-1")).to_be_visible()
    line = _copy(page, "button[data-copy=docker-1]")
    assert '-v "${HF_HOME:-$HOME/.cache/huggingface}":/root/.cache/huggingface' in line
    assert "'~" not in line and "--privileged" not in line
    labels = [s.strip().lower() for s in page.locator("#deploy details.target > summary").all_inner_texts()]
    assert len(labels) == len(set(labels)) == 5, labels  # one Docker entry, not "Docker" and "docker"
    script = page.locator("#deploy code[id^=file-docker]").first.inner_text()
    for token in ("--ipc=host", "-e VLLM_ENGINE_READY_TIMEOUT_S=3600", "--tensor-parallel-size 8"):
        assert token in script and token in line


def test_hardware_options_all_resolve_with_distinct_labels(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}/{GLM}")
    values = page.locator("#b-hardware option").evaluate_all("os => os.map(o => o.value)")
    labels = page.locator("#b-hardware option").all_inner_texts()
    assert len(set(labels)) == len(labels), labels
    for hw in values:
        twin = httpx.get(f"{server}/{GLM}/resolve.json", params={"hardware": hw}, timeout=60)
        assert twin.status_code == 200 and twin.json()["error"] is None, (hw, twin.text)
    rtx = httpx.get(f"{server}/{GLM}/resolve.json", params={"hardware": "rtx_5090"}, timeout=60)
    assert "rtx_5090" not in values and rtx.status_code == 422 and "rtx_5090" in rtx.json()["detail"]


def test_more_commands_expand_and_share_link_is_clean(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}")
    more = page.locator("details.more").first
    more.locator(":scope > summary").click()  # its own summary (each command has a flags one too)
    expect(more.locator("pre").first).to_be_visible()
    share = page.locator("#share").get_attribute("href") or ""
    assert not share.endswith("?") and share.startswith(f"/{GLM}")


def test_errors_are_pages_with_the_closest_models(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/zai-org/glm-5.3-flash")  # letter case only: redirected
    assert page.url.endswith(f"/{GLM}")
    expect(page.locator("h1")).to_contain_text("GLM-5.3-Flash")
    response = page.goto(f"{server}/zai-org/GLM-5.3-Flsh")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Not found")
    expect(page.locator("ul.suggestions a").first).to_have_text(GLM)
    page.goto(f"{server}/hardware/H100")
    assert page.url.endswith("/hardware/h100")
    response = page.goto(f"{server}/?sort=nope")
    assert response is not None and response.status == 422
    expect(page.locator("[role=alert]")).to_contain_text("sort: use one of")
    import httpx

    assert httpx.get(f"{server}/index.json?sort=nope").json()["detail"].startswith("sort")  # twins keep JSON
    assert httpx.get(f"{server}/foo/bar.json").json() == {"detail": "no model foo/bar in this catalog"}


def test_invalid_builder_selection_is_an_inline_message(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}")
    page.evaluate("document.getElementById('b-nodes').removeAttribute('min')")
    page.fill("#b-nodes", "0")
    page.dispatch_event("#b-nodes", "change")
    alert = page.locator("#builder-result [role=alert]")
    expect(alert).to_contain_text("nodes")
    assert "{" not in alert.inner_text()  # a sentence, not FastAPI's validation JSON
    # typed into the full page's URL: the model page renders, the message in its builder panel
    response = page.goto(f"{server}/{GLM}?nodes=0")
    assert response is not None and response.status == 422
    expect(page.locator("h1")).to_contain_text("GLM-5.3-Flash")
    expect(page.locator("#builder-form")).to_be_visible()
    expect(page.locator("#builder-result [role=alert]")).to_contain_text("nodes")
    expect(page.locator("#builder-result [role=alert]")).to_contain_text("'0'")


def test_a_selection_the_resolver_refuses_is_an_inline_message(server: str, page: Any) -> None:
    """A refused selection answers 422 (the CLI's exit 2) with an HTML body: the form's fragment and the page
    both show the resolver's line, naming the query parameter, in the builder panel; never a blank result."""
    from playwright.sync_api import expect

    page.goto(f"{server}/{GLM}")
    page.evaluate("""() => { const s = document.getElementById('b-strategy');
                             s.add(new Option('bogus', 'bogus')); s.value = 'bogus'; }""")
    page.dispatch_event("#b-strategy", "change")
    alert = page.locator("#builder-result [role=alert]")
    expect(alert).to_contain_text("strategy: unknown strategy 'bogus'; choose one of:")
    response = page.goto(f"{server}/{GLM}?hardware=h9000")
    assert response is not None and response.status == 422
    expect(page.locator("#builder-form")).to_be_visible()
    expect(page.locator("#builder-result [role=alert]")).to_contain_text("hardware: unknown hardware 'h9000'")
    expect(page.locator("#builder-result [role=alert]")).to_contain_text("the form shows the default selection")


# -- item 4: phones and reading --------------------------------------------------------------------

READING = """() => {
  const de = document.documentElement;
  const small = [];
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || el.closest('details:not([open])')) continue;
    let px = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.closest('svg');  // SVG text is drawn at the size the picture is scaled to
    if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width)
      px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (px < 11) small.push(`${el.tagName} ${px.toFixed(1)}px ${el.textContent.trim().slice(0, 30)}`);
  }
  const json = [...document.querySelectorAll('pre, code')]
    .filter(e => !e.closest('details') && /^\\s*[\\[{]/.test(e.textContent) && e.textContent.length > 60)
    .map(e => e.textContent.slice(0, 40));
  return {scroll: de.scrollWidth, width: de.clientWidth, small: small.slice(0, 5), json: json.slice(0, 3)};
}"""

PAGE_TYPES = {
    "index": "/", "model": f"/{GLM}",
    "model-multinode": f"/{GLM}?hardware=h100&variant=bf16&strategy=multi_node_tp&nodes=2",
    "memory": "/openai/gpt-oss-120b", "performance": f"/{GLM}/performance", "hardware": "/hardware/b200",
    "hardware-no-profile": "/hardware/ascend_950pr_8x", "deploy": f"/{GLM}/deploy", "not-found": "/foo/bar",
}


@pytest.mark.parametrize("width", [390, 1280])
def test_every_page_type_reads_on_phones_and_desktops(server: str, context: Any, width: int) -> None:
    """No sideways scroll, no text under 11 px, no raw JSON outside a <details>; screenshots to look at."""
    import os

    from conftest import ROOT

    shots = Path(os.environ.get("LAUNCHCARD_SCREENSHOTS", ROOT / "out" / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
    problems = {}
    try:
        for name, path in PAGE_TYPES.items():
            page.goto(server + path)
            got = page.evaluate(READING)
            page.screenshot(path=str(shots / f"reading-{width}-{name}.png"), full_page=False)
            if got["scroll"] > got["width"] or got["small"] or got["json"]:
                problems[name] = got
        brand = page.locator("header .brand").bounding_box()
        assert brand is not None and brand["height"] < 40, brand  # the logo stays on one line
    finally:
        page.close()
    assert not problems, problems


def test_hardware_pages_explain_what_they_show(server: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server}/hardware/b200")
    expect(page.locator("dl.meta")).to_contain_text("GPUs per node")
    expect(page.locator("dl.meta")).not_to_contain_text("vram gb")
    expect(page.locator("main")).to_contain_text("have a planned minimum")
    page.goto(f"{server}/hardware/ascend_950pr_8x")
    expect(page.locator("[role=note]")).to_contain_text("not a profile of the recipes' taxonomy.yaml")
    expect(page.locator("footer")).not_to_contain_text("Every value links to the source line")
