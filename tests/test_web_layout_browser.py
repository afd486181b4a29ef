"""What the reader sees of the builder's workload inputs and the performance chart's legend, measured in headless
Chromium at a desktop and a phone width, and the builder's share link opened fresh (found by looking at
screenshots, webqa)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from web_support import CHROMIUM

pytestmark = pytest.mark.browser
GLM = "zai-org/GLM-5.3-Flash"
DSV4 = "deepseek-ai/DeepSeek-V4-Flash"


@pytest.fixture(scope="module")
def browser(browser_server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_workload_inputs_show_their_labels_and_values_whole(browser_server: str, browser: Any, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{browser_server}/{GLM}?hardware=b200")
    box = page.locator("fieldset.workload")
    # each select is wide enough for its chosen option (the Endpoint select showed "comp" for "completions")
    clipped = box.locator("select").evaluate_all("""ss => ss.filter(s => {
        const c = document.createElement('canvas').getContext('2d'); const st = getComputedStyle(s);
        c.font = st.font; const text = c.measureText(s.options[s.selectedIndex].text).width;
        return s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 16 < text;
    }).map(s => s.name)""")
    assert clipped == [], clipped
    # no label runs into the next field, and the inputs of one row start at one height
    fields = box.locator(".field").evaluate_all("""fs => fs.map(f => {
        const l = f.querySelector('label').getBoundingClientRect(), c = f.querySelector('input, select');
        return {label: l.right, field: f.getBoundingClientRect().right, top: c.getBoundingClientRect().top,
                row: Math.round(f.getBoundingClientRect().top), lines: Math.round(l.height / parseFloat(
                getComputedStyle(f.querySelector('label')).lineHeight))};
    })""")
    assert all(f["label"] <= f["field"] + 0.5 and f["lines"] == 1 for f in fields), fields
    for f in fields:
        assert all(abs(g["top"] - f["top"]) < 1 for g in fields if g["row"] == f["row"]), fields
    page.close()


def test_chart_legend_labels_stay_inside_the_chart(browser_server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{browser_server}/{DSV4}/performance")
    assert page.locator("figure.chart svg .series.predicted").count() > 0
    outside = page.locator("figure.chart svg").evaluate_all("""svgs => svgs.flatMap(s => {
        const o = s.getBoundingClientRect();  // drawn at its own size: client pixels are its units
        return [...s.querySelectorAll('text')].filter(t => {
            const b = t.getBoundingClientRect();
            return b.left < o.left - 0.5 || b.right > o.right + 0.5 || b.bottom > o.bottom + 0.5;
        }).map(t => t.textContent);
    })""")
    assert outside == [], outside
    # a predicted series' legend says so in full, the suffix that keeps it apart from published points included
    legends = page.locator("figure.chart svg .series.predicted > text").all_text_contents()
    assert legends and all(t.endswith("(predicted)") for t in legends), legends
    page.close()


def test_the_share_link_opened_fresh_shows_the_same_builder(browser_server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    def state(page: Any) -> list[str]:
        return list(page.locator("#builder-form input, #builder-form select").evaluate_all(
            "es => es.map(e => e.name + '=' + (e.type === 'checkbox' ? e.checked : e.value)"
            " + (e.disabled ? '!' : ''))"))

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{browser_server}/{GLM}?hardware=b200")
    page.uncheck("input[name=features][value=reasoning]")  # a default feature off
    expect(page.locator("#cmd-main")).not_to_contain_text("--reasoning-parser")
    page.check("input[name=features][value=spec_decoding]")  # another on
    expect(page.locator("#cmd-main")).to_contain_text("--speculative-config")
    page.fill("#b-conc", "64")
    page.locator("#b-conc").dispatch_event("change")
    expect(page.locator("#predicted")).to_contain_text("64 concurrent requests")
    share = page.locator("#share").get_attribute("href")
    fresh = browser.new_page(viewport={"width": 1280, "height": 900})
    fresh.goto(f"{browser_server}{share}")
    assert state(fresh) == state(page)
    assert fresh.locator("#cmd-main").inner_text() == page.locator("#cmd-main").inner_text()
    assert fresh.locator("#predicted").inner_text() == page.locator("#predicted").inner_text()
    page.close()
    fresh.close()


def test_choosing_a_variant_offers_its_hardware_and_resolves(browser_server: str, browser: Any) -> None:
    """Choosing nvfp4 on DeepSeek-V4-Flash's h200 default kept h200 (and every fp8-only profile) in the form and
    answered 'hardware h200 is not usable for ... nvfp4' (webqa): the hardware the new variant does not resolve on
    is dropped, the resolver picks the variant's own, and the form then offers that variant's list, as a fresh load
    of the URL does."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{browser_server}/{DSV4}")
    expect(page.locator("#b-hardware")).to_have_value("h200")
    with page.expect_response(lambda r: "/builder?" in r.url) as answer:
        page.select_option("#b-variant", "nvfp4")
    assert answer.value.status == 200
    expect(page.locator("#builder-result")).not_to_have_attribute("aria-busy", "true")
    expect(page.locator("#builder-result [role=alert]")).to_have_count(0)
    expect(page.locator("#cmd-main, #cmd-1").first).to_contain_text("nvidia/DeepSeek-V4-Flash-NVFP4")
    offered = page.locator("#b-hardware option").evaluate_all("os => os.map(o => o.value)")
    chosen = page.locator("#b-hardware").input_value()
    fresh = browser.new_page(viewport={"width": 1280, "height": 900})
    fresh.goto(page.url)
    assert "h200" not in offered and offered == fresh.locator("#b-hardware option").evaluate_all(
        "os => os.map(o => o.value)")
    assert chosen == fresh.locator("#b-hardware").input_value()
    # a hardware the new variant resolves on is kept
    with page.expect_response(lambda r: "/builder?" in r.url):
        page.select_option("#b-hardware", "b300")
    with page.expect_response(lambda r: "/builder?" in r.url):
        page.select_option("#b-variant", "fp8")
    expect(page.locator("#builder-result")).not_to_have_attribute("aria-busy", "true")
    expect(page.locator("#b-hardware")).to_have_value("b300")
    assert "h200" in page.locator("#b-hardware option").evaluate_all("os => os.map(o => o.value)")
    fresh.close()
    page.close()


def test_choosing_a_strategy_takes_its_node_count(browser_server: str, browser: Any) -> None:
    """Choosing multi_node_tp in the form kept the Nodes field's 1 and sent nodes=1: a one-node "multi-node" command
    (the socket variables over a single-node vllm serve), where the URL ?strategy=multi_node_tp resolves 2 nodes
    (webqa). A strategy chosen is resolved with its own node count, which the Nodes field then shows."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{browser_server}/openai/gpt-oss-120b?hardware=h100")
    expect(page.locator("#b-nodes")).to_have_value("1")
    for strategy, nodes in (("multi_node_tp", "2"), ("single_node_tp", "1")):
        with page.expect_response(lambda r: "/builder?" in r.url) as answer:
            page.select_option("#b-strategy", strategy)
        assert answer.value.status == 200
        expect(page.locator("#builder-result")).not_to_have_attribute("aria-busy", "true")
        expect(page.locator("#b-nodes")).to_have_value(nodes)
        text = page.locator("#builder-result .copyable").first.inner_text()
        assert ("--nnodes 2" in text) == (nodes == "2"), text
        fresh = browser.new_page(viewport={"width": 1280, "height": 900})
        fresh.goto(page.url)
        expect(fresh.locator("#b-nodes")).to_have_value(nodes)
        assert fresh.locator("#builder-result .copyable").first.inner_text() == text
        fresh.close()
    page.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_pages_do_not_shift_when_the_theme_button_appears(browser_server: str, browser: Any, width: int) -> None:
    """The theme button started display:none and app.js showed it: on a phone the header then wrapped to a second
    row and pushed the page down (layout shift 0.042 on /, /hardware/b200 and performance pages at 390 px; webqa).
    Its place is kept while hidden; without JavaScript (noscript.css) it takes none."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": 900})
    page.add_init_script("""window.__shifts = []; new PerformanceObserver(l => { for (const e of l.getEntries())
        window.__shifts.push(e.value); }).observe({type: 'layout-shift', buffered: true});""")
    page.goto(f"{browser_server}/hardware/b200")
    expect(page.locator("#theme")).to_be_visible()
    page.wait_for_timeout(500)
    assert page.evaluate("window.__shifts") == []
    page.close()
    ctx = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=False)
    bare = ctx.new_page()
    bare.goto(f"{browser_server}/hardware/b200")
    assert bare.locator("#theme").bounding_box() is None  # not displayed: no dead button, no empty row
    ctx.close()


COPY_OVER_TEXT = """cs => cs.map(c => {
    const b = c.querySelector(':scope > button.copy'), code = c.querySelector('pre code') || c.querySelector('pre');
    if (!b || !code || !b.getClientRects().length) return null;
    const bb = b.getBoundingClientRect(), range = document.createRange();
    range.selectNodeContents(code);
    const hit = [...range.getClientRects()].some(x => x.width > 0 && x.right > bb.left && x.left < bb.right
                                                    && x.bottom > bb.top && x.top < bb.bottom);
    return hit ? code.textContent.split('\\n')[0].slice(0, 50) : null;
}).filter(Boolean)"""


@pytest.mark.parametrize("width", [1280, 390])
def test_copy_buttons_cover_no_command_text(browser_server: str, browser: Any, width: int) -> None:
    """A command box's Copy button sat over the first line of every command longer than the box (the docker
    one-liners, the compose and Kubernetes files, the multi-node commands at 390 px): 4 boxes at 1280 px and 10 at
    390 px on GLM-5.3-Flash's page hid the text under the button (webqa). The button has its own row now."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    for path in (f"/{GLM}", "/openai/gpt-oss-120b?hardware=h100&strategy=multi_node_tp",
                 "/openai/gpt-oss-120b/deploy?hardware=h100"):
        page.goto(f"{browser_server}{path}")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_load_state("networkidle")
        assert page.locator(".copyable").count() > 0
        assert page.locator(".copyable").evaluate_all(COPY_OVER_TEXT) == [], path
    page.close()
