"""The real huggingface_hub client, over real HTTP, against recorded responses on 127.0.0.1."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from launchcard.errors import SourceError
from launchcard.sources import SourceDoc
from launchcard.sources.hf_hub import HfConfigFile, fetch_hub

sys.path.insert(0, str(Path(__file__).parent))
from hf_replay import ReplayServer

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SEED = json.loads((CORPUS.parent / "seeds" / "launch-card.glm-5.3-flash.json.txt").read_text())


@pytest.fixture(scope="module")
def hub():
    with ReplayServer() as server:
        yield server.url


def test_model_info_matches_seed(hub):
    x = fetch_hub("zai-org/GLM-5.3-Flash", endpoint=hub)
    hf, seed = x.hf, SEED["hf"]
    assert hf.revision == seed["revision"] and hf.license == seed["license"] and hf.gated is seed["gated"]
    assert hf.params_b == seed["params_b"] and hf.weight_gib == seed["weight_gib"]
    assert hf.downloads == seed["downloads"] and list(hf.modality) == seed["modality"]
    assert hf.weight_files == 62 and hf.architecture == "Glm5NextForConditionalGeneration"
    assert x.checkpoints[0].format == "fp8"  # from quantization_config, not assumed
    assert x.doc.kind == "hf-api" and x.doc.sha256


@pytest.mark.parametrize("repo, rule", [
    ("err/http-500", "HTTP 500"), ("err/missing-sha", "no 'sha'"), ("err/no-siblings", "no 'siblings'"),
    ("nobody/nothing", "HTTP 404"),
])
def test_hub_errors_name_the_source(hub, repo, rule):
    with pytest.raises(SourceError) as err:
        fetch_hub(repo, endpoint=hub)
    assert rule in err.value.one_line() and f"/api/models/{repo}" in err.value.one_line()


def test_hf_endpoint_env_drives_the_cli(hub, tmp_path):
    env = {**os.environ, "HF_ENDPOINT": hub, "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "0",
           "LAUNCHCARD_CATALOG": str(tmp_path / "c.sqlite3")}
    out = subprocess.run([str(REPO / ".venv/bin/launchcard"), "card", "zai-org/GLM-5.3-Flash", "--corpus",
                          str(CORPUS), "--hub", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    card = json.loads(out.stdout)
    assert card["hf"]["revision"] == SEED["hf"]["revision"]
    fields = {c["field"]: c for c in card["conflicts"]}
    pins = {s["value"] for s in fields["weights_revision[zai-org/GLM-5.3-Flash]"]["sides"]}
    assert {SEED["hf"]["revision"], "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a"} <= pins


def test_corpus_config_file():
    rel = "hf/moonshotai/Kimi-K2.5/config.json"
    x = HfConfigFile().extract(SourceDoc.from_file(CORPUS / rel, kind="hf-config", path=rel))
    assert x.models == ("moonshotai/Kimi-K2.5",) and x.checkpoints[0].format == "int4"
    assert ("context_tokens", 262144) in {(f.name, f.value) for f in x.facts}
