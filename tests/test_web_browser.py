"""The web catalog in real headless Chromium (Debian's, driven by Playwright) against a real server.

Scenario: open the index, filter to a hardware, open GLM-5.3-Flash, pick B200 and
speculative decoding, see the command (and verdict area) change, copy it, reload
the shared URL and get the same state, toggle dark mode.  Screenshots go to
``out/screenshots/`` (or ``$LAUNCHCARD_SCREENSHOTS``) and are looked at by people.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ROOT
from web_support import CHROMIUM

pytestmark = pytest.mark.browser
GLM = "zai-org/GLM-5.3-Flash"


@pytest.fixture(scope="module")
def server(browser_server: str) -> str:
    return browser_server  # conftest: one server for every browser test module


@pytest.fixture(scope="module")
def shots() -> Path:
    out = Path(os.environ.get("LAUNCHCARD_SCREENSHOTS", ROOT / "out" / "screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_browse_filter_build_copy_share_and_dark_mode(server: str, shots: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

        page.goto(server + "/")
        expect(page.locator("h1")).to_contain_text("Models")
        total = int(page.locator("h1 .muted").inner_text().strip("()"))
        page.select_option("#f-hardware", "b200")  # autosubmits: the filter lands in the URL
        page.wait_for_url("**hardware=b200**")
        filtered = int(page.locator("h1 .muted").inner_text().strip("()"))
        assert 0 < filtered < total
        page.screenshot(path=str(shots / "01-index-b200.png"), full_page=False)
        # the filter bar is one compact block above the table
        bar = page.locator("#filters").bounding_box()
        assert bar is not None and bar["height"] < 200, bar

        page.click(f"a[href='/{GLM}']")
        page.wait_for_url(f"**/{GLM}**")
        expect(page.locator("h1")).to_contain_text("GLM-5.3-Flash")
        before = page.locator("#cmd-main").inner_text()
        page.screenshot(path=str(shots / "04-model-light.png"), full_page=False)
        # the command sits next to the options, not below the long feature lists
        page.locator("#builder").scroll_into_view_if_needed()
        form_box, cmd_box = page.locator("#builder-form").bounding_box(), page.locator("#cmd-main").bounding_box()
        assert form_box and cmd_box and cmd_box["y"] - form_box["y"] < 500, (form_box, cmd_box)
        expect(page.locator("#verdict")).to_contain_text("Verdict")
        expect(page.locator("#memory")).to_contain_text("no config.json")

        page.select_option("#b-hardware", "b200")
        expect(page.locator("#cmd-main")).to_contain_text("--kv-cache-dtype fp8")
        page.check("input[name=features][value=spec_decoding]")
        expect(page.locator("#cmd-main")).to_contain_text("--speculative-config")
        after = page.locator("#cmd-main").inner_text()
        assert after != before
        page.wait_for_url("**features=spec_decoding**")  # the selection is in the URL (replaceState)
        assert "hardware=b200" in page.url and "rev=" in page.url
        expect(page.locator("#verdict")).to_be_visible()
        page.locator("#builder").screenshot(path=str(shots / "02-builder-b200-spec.png"))

        page.click("button[data-copy=cmd-main]")
        expect(page.locator("button[data-copy=cmd-main]")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == after

        shared = page.url
        page2 = context.new_page()
        page2.goto(shared)
        assert page2.locator("#cmd-main").inner_text() == after
        expect(page2.locator("#b-hardware")).to_have_value("b200")
        expect(page2.locator("input[name=features][value=spec_decoding]")).to_be_checked()

        expect(page2.locator("#theme")).to_have_text("Dark mode: off")
        expect(page2.locator("#theme")).to_have_attribute("aria-pressed", "false")
        page2.click("#theme")
        assert page2.evaluate("document.documentElement.getAttribute('data-theme')") == "dark"
        expect(page2.locator("#theme")).to_have_text("Dark mode: on")
        expect(page2.locator("#theme")).to_have_attribute("aria-pressed", "true")
        page2.screenshot(path=str(shots / "05-model-dark.png"), full_page=False)
        bg = page2.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg == "rgb(13, 17, 23)", bg
        page2.locator("#builder").screenshot(path=str(shots / "03-builder-dark.png"))
        page2.reload()  # the choice is remembered
        assert page2.evaluate("document.documentElement.getAttribute('data-theme')") == "dark"

        # Keyboard: the builder is operable without a mouse.
        page2.focus("#b-variant")
        page2.keyboard.press("ArrowDown")
        expect(page2.locator("#cmd-main")).to_contain_text("RedHatAI/GLM-5.3-Flash-NVFP4")
        page2.focus("#b-kv")
        focused = ""
        for _ in range(6):  # tab from the last select into the feature checkboxes
            page2.keyboard.press("Tab")
            focused = page2.evaluate("document.activeElement.name + ':' + document.activeElement.type")
            if focused == "features:checkbox":
                break
        assert focused == "features:checkbox", focused
        name = page2.evaluate("document.activeElement.value")
        box = page2.locator(f"input[name=features][value={name}]")
        was = box.is_checked()
        page2.keyboard.press("Space")
        assert box.is_checked() != was
        want = "false" if was else "true"  # the new selection lands in the URL once the result is swapped in
        page2.wait_for_function(
            f"() => new URLSearchParams(location.search).getAll('features').includes('{name}') === {want}"
        )

        # memory bar (config.json known) and the performance and hardware pages, both themes
        page3 = context.new_page()
        page3.goto(server + "/openai/gpt-oss-120b")
        expect(page3.locator("#memory svg title").first).to_contain_text("Memory of one")
        page3.locator("#builder-result").screenshot(path=str(shots / "06-memory-bar-dark.png"))
        page3.click("#theme")
        assert page3.evaluate("document.documentElement.getAttribute('data-theme')") == "light"
        page3.locator("#builder-result").screenshot(path=str(shots / "07-memory-bar-light.png"))
        page3.goto(server + f"/{GLM}/performance")
        expect(page3.locator("figure.chart svg").first).to_be_visible()
        page3.screenshot(path=str(shots / "08-performance-light.png"), full_page=True)
        page3.click("#theme")
        page3.screenshot(path=str(shots / "09-performance-dark.png"), full_page=False)
        page3.goto(server + "/hardware/b200")
        page3.screenshot(path=str(shots / "10-hardware-dark.png"), full_page=False)
        page3.click("#theme")
        page3.screenshot(path=str(shots / "11-hardware-light.png"), full_page=False)
        browser.close()
    assert not [e for e in errors if "favicon" not in e], errors
