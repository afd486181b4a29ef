"""A catalog built by ``ingest`` serves full pages alone (issue 22 item 5): no ``--corpus`` on the web host."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from web_support import CORPUS, ingest, serving

pytest.importorskip("fastapi")
import httpx

GLM = "zai-org/GLM-5.3-Flash"


def test_a_copied_catalog_serves_full_pages_without_the_corpus(tmp_path: Path) -> None:
    built = tmp_path / "build" / "catalog.sqlite3"
    built.parent.mkdir()
    ingest(built)
    host = tmp_path / "web-host" / "catalog.sqlite3"  # copied to a host that has no corpus
    host.parent.mkdir()
    shutil.copy(built, host)
    with serving(host, corpus=None, log=tmp_path / "serve.log") as base:
        page = httpx.get(f"{base}/{GLM}", timeout=60).text
        assert "No vLLM recipe is known" not in page and 'id="builder"' in page
        twin = httpx.get(f"{base}/{GLM}/resolve.json", params={"hardware": "b200"}, timeout=60).json()
        assert twin["error"] is None and "--kv-cache-dtype fp8" in twin["command"]
        header = httpx.get(f"{base}/{GLM}.json", timeout=60).json()["header"]
        assert header["source_revision"] == "0400c4ef554febc569d2bf0c9aa639b5c3877f9c"  # as captured
        recipe = (CORPUS / "vllm-recipes" / "models" / f"{GLM}.yaml").read_bytes()
        assert header["source_document_sha256"] == hashlib.sha256(recipe).hexdigest()
        assert httpx.get(f"{base}/{GLM}/performance.json", timeout=60).json()["published"]  # cookbook points
        assert httpx.get(f"{base}/openai/gpt-oss-120b/resolve.json", timeout=60).json()["memory"]  # hf config


def test_every_stored_document_matches_its_sha256(tmp_path: Path) -> None:
    cat = tmp_path / "catalog.sqlite3"
    ingest(cat)
    with sqlite3.connect(cat) as db:
        rows = db.execute("SELECT f.path, f.sha256, d.content FROM corpus_files f JOIN documents d USING (sha256)")
        stored = {path: (digest, bytes(content)) for path, digest, content in rows}
    glm = "vllm-recipes/models/zai-org/GLM-5.3-Flash.yaml"
    assert glm in stored and "vllm-recipes/taxonomy.yaml" in stored and "vllm-recipes/SOURCES.md" in stored
    for path, (digest, content) in stored.items():
        assert hashlib.sha256(content).hexdigest() == digest, path
        assert content == (CORPUS / path).read_bytes(), path
