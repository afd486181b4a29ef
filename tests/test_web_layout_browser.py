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
