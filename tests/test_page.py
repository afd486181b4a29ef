"""The recipe index page against the published seed page, and its three renderings."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from html import escape as html_escape
from pathlib import Path

import pytest

from conftest import SHARED

SEED = SHARED / "seeds" / "recipe-index-page.glm-5.3-flash.txt"
REV = "d5fc1f55cee70f4e1944f2dd4f7569cb8276ad94"
GLM = "zai-org/GLM-5.3-Flash"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchcard.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def glm_page(recipe_repo):  # type: ignore[no-untyped-def]
    from launchcard.page import page_data

    return page_data(recipe_repo, GLM, revision=REV)


def _seed_facts() -> list[dict[str, object]]:
    text = SEED.read_text(encoding="utf-8")
    block = text.split("## Attributed configuration facts", 1)[1]
    return json.loads(block.split("```json", 1)[1].split("```", 1)[0])


def _seed_conditions() -> dict[str, object]:
    text = SEED.read_text(encoding="utf-8")
    block = text.split("## Conditions", 1)[1]
    return json.loads(block.split("```json", 1)[1].split("```", 1)[0])


def test_every_seed_section_is_rendered(glm_page) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_markdown

    md = page_markdown(glm_page)
    seed = SEED.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", seed, flags=re.M)
    assert len(headings) >= 10
    for h in headings:
        assert f"## {h}" in md, h
    for label in re.findall(r"^- ([A-Z][\w ()-]+?):", seed.split("## Conditions")[0], flags=re.M):
        assert f"- {label}:" in md, label


def test_conditions_parameters_and_options_equal_the_seed(glm_page) -> None:  # type: ignore[no-untyped-def]
    seed = _seed_conditions()
    assert glm_page["conditions"] == seed["conditions"]
    assert glm_page["test_profiles"] == seed["test_profiles"]
    assert glm_page["recipe_parameters"] == seed["recipe_parameters"]
    assert glm_page["deployment_options"] == seed["deployment_options"]


def test_faq_anchors_are_derived_from_the_keys_each_answer_rests_on(glm_page) -> None:  # type: ignore[no-untyped-def]
    anchors = [qa["sources"][0].rpartition("#")[2] for qa in glm_page["faq"]]
    assert anchors == ["L74", "L20", "L106", "L77", "L204"]
    for qa in glm_page["faq"]:
        assert f"/blob/{REV}/models/zai-org/GLM-5.3-Flash.yaml" in qa["sources"][0]


def test_attributed_facts_match_the_seed_with_pinned_urls_and_sha(glm_page) -> None:  # type: ignore[no-untyped-def]
    # the seed's "Features selected by default" row is the opt-in list: ours keeps it under its own name
    # (seed_name says which seed row it is) and adds what resolve selects, as `launchcard facts` does
    ours = {f.get("seed_name", f["name"]): f for f in glm_page["facts"] if f["classification"] != "derived"}
    for fact in _seed_facts():
        mine = ours[str(fact["name"])]
        for key in ("value", "classification", "evidence_url", "source_document_sha256"):
            assert mine[key] == fact[key], (fact["name"], key)
    assert "opt_in_features" in ours["Features selected by default"]["note"]
    selected = next(f for f in glm_page["facts"] if f["classification"] == "derived")
    assert selected["name"] == "Features selected by default" and selected["value"] == ["tool_calling", "reasoning"]


def test_the_recipes_install_note_is_a_fact_and_said_where_the_artifact_is(glm_page) -> None:  # type: ignore[no-untyped-def]
    # models/zai-org/GLM-5.3-Flash.yaml#L29: the NVIDIA image the recipe's install tab asks for (the seed preset runs
    # it: "Dedicated image required until GLM-5.3-Flash support reaches a stable vLLM release"); not in the command
    url = f"https://github.com/vllm-project/recipes/blob/{REV}/models/zai-org/GLM-5.3-Flash.yaml#L29"
    row = next(f for f in glm_page["facts"] if f["name"] == "Install note (docker)")
    assert row["value"].startswith("NVIDIA: use vllm/vllm-openai:glm53-flash until support lands in the standard")
    assert row["evidence_url"] == url and row["classification"] == "recipe_declaration"
    artifact = glm_page["faq"][0]
    assert "docker install note: NVIDIA: use vllm/vllm-openai:glm53-flash" in artifact["answer"]
    assert url in artifact["sources"] and artifact["sources"][0].endswith("#L74")
    assert not any(f["name"] == "Install note (pip)" for f in glm_page["facts"])  # pip: false, no note


def test_header_pins_revision_and_names_how_it_was_learnt(glm_page, recipe_repo) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_data

    h = glm_page["header"]
    assert h["source_revision"] == REV and h["source_revision_from"] == "--revision"
    assert h["pinned_document"].endswith(f"/blob/{REV}/models/zai-org/GLM-5.3-Flash.yaml")
    assert h["hardware_topics"] == ["amd", "ascend", "nvidia"] and h["model_family"] == "GLM"
    assert glm_page["license"]["declared_spdx"] == "Apache-2.0"
    # Without --revision the corpus manifest pins it (SOURCES.md "stored commit (used)").
    h2 = page_data(recipe_repo, GLM)["header"]
    assert h2["source_revision"] == "0400c4ef554febc569d2bf0c9aa639b5c3877f9c"
    assert h2["source_revision_from"] == "corpus manifest"


def test_unknown_revision_is_said_not_hidden(tmp_path: Path, recipes_dir: Path) -> None:
    from launchcard.page import page_data
    from launchcard.sources.vllm_recipes import load_recipes

    copy = tmp_path / "recipes"
    shutil.copytree(recipes_dir, copy, ignore=shutil.ignore_patterns("SOURCES*.md"))
    page = page_data(load_recipes(copy), GLM)
    assert page["header"]["source_revision"] is None and "/blob/HEAD/" in page["header"]["pinned_document"]
    assert any("blob/HEAD" in n for n in page["notes"])


def test_editorial_is_dated_labelled_and_stays_within_the_facts(glm_page) -> None:  # type: ignore[no-untyped-def]
    ed = glm_page["editorial"]
    assert "generated" in ed["by"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", ed["date"])
    assert "zai-org/GLM-5.3-Flash (fp8)" in ed["text"] and "0.29.0" in ed["text"]


@pytest.mark.parametrize("model", ["openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V4-Flash", "Qwen/QwQ-32B"])
def test_other_recipes_render_every_section(recipe_repo, model: str) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_data, page_html, page_markdown

    page = page_data(recipe_repo, model)
    assert len(page["faq"]) == 5 and all(qa["sources"] for qa in page["faq"])
    assert page["header"]["source_revision"]  # every corpus file is in a manifest
    assert "## Attributed configuration facts" in page_markdown(page)
    assert "<h2>Editorial answer</h2>" in page_html(page)


def test_html_escapes_recipe_strings(recipe_repo) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_data, page_html

    page = page_data(recipe_repo, GLM)
    page["summary"] = '<script>alert(1)</script> {{ 7*7 }}'
    page["faq"][0]["sources"] = ["javascript:alert(1)"]
    html = page_html(page)
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html and "{{ 7*7 }}" in html


def test_cli_formats_and_json_twin(tmp_path: Path) -> None:
    corpus = str(SHARED / "corpus")
    md = _cli("page", GLM, "--corpus", corpus, "--revision", REV)
    assert md.returncode == 0, md.stderr
    assert "#L74" in md.stdout and "ffcd619ddd168d83e5517bc9fc00ca4b00e740f05cda8e6c0fc98149e672f92a" in md.stdout
    js = _cli("page", GLM, "--corpus", corpus, "--revision", REV, "--format", "json")
    data = json.loads(js.stdout)
    assert data["schema"] == "launchcard.recipe-page/v1" and data["header"]["source_revision"] == REV
    out = tmp_path / "glm.html"
    res = _cli("page", GLM, "--corpus", corpus, "--format", "html", "--out", str(out))
    assert res.returncode == 0 and out.read_text().startswith("<!doctype html>")
    bad = _cli("page", GLM, "--corpus", corpus, "--format", "pdf")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--format" in bad.stderr


# --- issue 21: the page is whole in every rendering ------------------------------------------------


@pytest.fixture(scope="module")
def glm_card():  # type: ignore[no-untyped-def]
    from launchcard.merge import build_corpus

    return build_corpus(SHARED / "corpus", models=[GLM], revision=REV).cards[GLM]


@pytest.fixture(scope="module")
def glm_corpus_page(recipe_repo, glm_card):  # type: ignore[no-untyped-def]
    from launchcard.page import page_data

    return page_data(recipe_repo, GLM, revision=REV, card=glm_card)


def test_md_and_html_set_every_source_side_by_side_with_conflicts_and_gaps(glm_corpus_page, glm_card) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_html, page_markdown

    md, html = page_markdown(glm_corpus_page), page_html(glm_corpus_page)
    assert "## Sources side by side" in md and "<h2>Sources side by side</h2>" in html
    assert "## Conflicts between sources" in md and "## Gaps" in md
    kinds = {ref.kind for ref in glm_card.evidence}
    assert {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"} <= kinds
    for ref in glm_card.evidence:
        assert ref.url and ref.url in md and ref.url in html, ref
    for env in glm_card.envs:  # every source's command, as one shell line
        assert shlex.join(env.argv) in md, env.argv
    for c in glm_card.conflicts:
        assert f"- {c.field}:" in md and f"<strong>{c.field}</strong>" in html
        for side in c.sides:
            assert side.evidence.url and side.evidence.url in md
    for g in glm_card.gaps:
        assert f"- {g.field}: {g.why}" in md
        assert f"<strong>{html_escape(g.field)}</strong>" in html


def test_html_header_has_every_seed_header_row(glm_page) -> None:  # type: ignore[no-untyped-def]
    from launchcard.page import page_html

    html = page_html(glm_page)
    for label in re.findall(r"^- ([A-Z][\w ()-]+?):", SEED.read_text(encoding="utf-8").split("## Conditions")[0],
                            flags=re.M):
        assert f"<dt>{label}</dt>" in html, label
    assert "attributed selections with per-point conditions; no cross-source ranking" in html


@pytest.mark.parametrize("model", [GLM, "openai/gpt-oss-120b", "moonshotai/Kimi-K2.5"])
def test_no_python_none_is_printed(recipe_repo, model: str) -> None:  # type: ignore[no-untyped-def]
    """Unknown reads "unknown" in prose (no git checkout here, so the commit time is unknown)."""
    from launchcard.page import page_data, page_html, page_markdown

    page = page_data(recipe_repo, model)
    assert page["header"]["source_commit_time"] is None and page["header"]["experiment_date"] is None
    for text in (page_markdown(page), page_html(page)):
        assert not re.search(r"\bNone\b", text), re.findall(r".{60}\bNone\b.{20}", text)[:3]
    assert "- Experiment date: unknown" in page_markdown(page)


def test_revision_reaches_the_embedded_card() -> None:
    js = _cli("page", GLM, "--corpus", str(SHARED / "corpus"), "--revision", REV, "--format", "json")
    assert js.returncode == 0, js.stderr
    urls = re.findall(r"https://github\.com/vllm-project/recipes/blob/([0-9a-zA-Z]+)/", js.stdout)
    assert len(urls) > 20 and set(urls) == {REV}, sorted(set(urls))
    data = json.loads(js.stdout)
    assert {c["kind"] for c in data["sources"]} >= {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"}


def test_faq_answers_carry_every_card_fact_with_its_anchor(glm_corpus_page, glm_card) -> None:  # type: ignore[no-untyped-def]
    from launchcard.facts import VOCABULARY, label
    from launchcard.page._data import FAQ_FACTS

    assert {n for names in FAQ_FACTS for n in names} == set(VOCABULARY), "every fact name has an FAQ answer"
    faq = glm_corpus_page["faq"]
    for qa, names in zip(faq, FAQ_FACTS, strict=True):
        for fact in glm_card.facts:
            if fact.name in names:
                assert label(fact.name) in qa["answer"], (qa["question"], fact.name)
                if fact.evidence is not None and fact.evidence.url:
                    assert fact.evidence.url in qa["sources"], (qa["question"], fact.evidence.url)
    special = faq[1]["answer"]
    # the seed's points: 321B vs the other source's 320B, hardware notes in full, parser check, context vs batch
    assert "321 B (vllm-recipes, provider-preset) vs 320 B (sglang-cookbook)" in special and "disagree" in special
    assert "--sparse-indexer-topk-backend aiter" in special and "--block-size 512 is required" in special
    apply = faq[2]["answer"]
    assert "resolve --check" in apply and "parsers" in apply
    assert "is a model limit" in apply and "--max-num-batched-tokens 8192" in apply
    assert any(u.endswith("#L154") for u in faq[2]["sources"])  # hardware_overrides.npu, where they are set


def test_cli_out_is_asked_before_the_card_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """qa12: `page --corpus C --out FOLDER` built the card, then said "--out PARENT: 'FOLDER' exists there as a
    folder" (emit's words for a folder of files); `--out FILE/x` "cannot create the output folder (File exists)".
    Now the one --out file rule (cli._outfile), before any work."""
    import launchcard.merge
    from helpers import run_cli

    def never(*a: object, **k: object) -> None:
        raise AssertionError("the card was built before --out was asked")

    monkeypatch.setattr(launchcard.merge, "build_corpus", never)
    corpus = str(SHARED / "corpus")
    out = run_cli("page", GLM, "--corpus", corpus, "--out", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr == f"launchcard: error: --out {tmp_path}: is a folder, not a file; name a file, e.g. --out " \
                         "results.json\n"
    blocker = tmp_path / "f"
    blocker.write_text("x")
    out = run_cli("page", GLM, "--corpus", corpus, "--out", str(blocker / "p.md"))
    assert out.returncode == 2 and "cannot create the page file" in out.stderr and out.stderr.count("\n") == 1
