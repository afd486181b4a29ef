"""The web catalog's model page carries every header row of the seed recipe page (issue 21), never Python None."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus"
SEED = SHARED / "seeds" / "recipe-index-page.glm-5.3-flash.txt"
GLM = "zai-org/GLM-5.3-Flash"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from launchcard.web import create_app

    catalog = tmp_path_factory.mktemp("web-header") / "catalog.sqlite3"
    res = subprocess.run([sys.executable, "-m", "launchcard.cli", "card", GLM, "--corpus", str(CORPUS), "--store",
                          "--catalog", str(catalog)], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    with TestClient(create_app(catalog, CORPUS / "vllm-recipes", [])) as c:
        yield c


def test_model_page_has_every_seed_header_row(client: TestClient) -> None:
    html = client.get(f"/{GLM}").text
    twin = client.get(f"/{GLM}.json").json()
    labels = re.findall(r"^- ([A-Z][\w ()-]+?):", SEED.read_text(encoding="utf-8").split("## Conditions")[0],
                        flags=re.M)
    for label in ("Experiment date", "Runtime topics", "Reported setup", "Performance figures"):
        assert label in labels and f"<dt>{label}</dt>" in html, label
    assert twin["header"]["performance_figures"] in html
    assert "<dt>Experiment date</dt><dd>unknown</dd>" in html and twin["header"]["experiment_date"] is None
    # the setup in words: what a source reports, else "unknown"; never an empty cell
    assert re.search(r"<dt>Reported setup</dt><dd>(unknown|[a-z ]+: )", html)
    header = html.split('<dl class="meta">', 1)[1].split("</dl>", 1)[0]
    assert "None" not in header
