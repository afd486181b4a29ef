"""`launchcard facts` reproduces the attributed facts of the seed recipe index page."""

from __future__ import annotations

import json
import re

from tests.conftest import SHARED
from tests.helpers import run_cli

REV = "d5fc1f55cee70f4e1944f2dd4f7569cb8276ad94"


def _seed_blocks():
    text = (SHARED / "seeds" / "recipe-index-page.glm-5.3-flash.txt").read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, re.DOTALL)
    return json.loads(blocks[0]), json.loads(blocks[-1])


def test_facts_match_seed_page(recipes_dir):
    params, seed_facts = _seed_blocks()
    proc = run_cli("facts", "zai-org/GLM-5.3-Flash", "--recipes", str(recipes_dir), "--revision", REV, "--json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    # the page's "Features selected by default" row is the opt-in list; launchcard keeps it under its own
    # name (seed_name says which page row it is) and shows what resolve selects under that label instead
    by_name = {f.get("seed_name", f["name"]): f for f in got["facts"] if f["classification"] == "recipe_declaration"}
    for fact in seed_facts:
        mine = by_name[fact["name"]]
        assert mine["value"] == fact["value"], fact["name"]
        assert mine["evidence_url"] == fact["evidence_url"], fact["name"]
        assert mine["source_document_sha256"] == fact["source_document_sha256"]
        assert mine["classification"] == fact["classification"] == "recipe_declaration"
    assert got["recipe_parameters"] == params["recipe_parameters"]
    assert got["deployment_options"] == params["deployment_options"]


def test_facts_without_revision_take_the_manifest_commit(recipes_dir):
    # no --revision, no git checkout: the corpus's SOURCES.md names the commit this file was taken at
    got = json.loads(run_cli("facts", "zai-org/GLM-5.3-Flash", "--recipes", str(recipes_dir), "--json").stdout)
    assert got["source"]["revision"] == "0400c4ef554febc569d2bf0c9aa639b5c3877f9c"
    assert "/blob/0400c4ef554febc569d2bf0c9aa639b5c3877f9c/models/zai-org/GLM-5.3-Flash.yaml" in got["source"]["url"]
    assert got["source"]["sha256"].startswith("ffcd619d")


def test_facts_without_any_revision_leave_it_null(recipes_dir, tmp_path):
    import shutil

    copy = tmp_path / "recipes"
    shutil.copytree(recipes_dir, copy, ignore=shutil.ignore_patterns("SOURCES*.md"))
    got = json.loads(run_cli("facts", "zai-org/GLM-5.3-Flash", "--recipes", str(copy), "--json").stdout)
    assert got["source"]["revision"] is None
    assert "/blob/HEAD/" in got["source"]["url"]


def test_facts_plain_output(recipes_dir):
    proc = run_cli("facts", "openai/gpt-oss-120b", "--recipes", str(recipes_dir))
    assert proc.returncode == 0, proc.stderr
    assert "Architecture" in proc.stdout
