from pathlib import Path

import pytest

from launchcard.errors import SourceError
from launchcard.sources import SourceDoc
from launchcard.sources.dynamo import DynamoRecipe

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _doc(rel: str) -> SourceDoc:
    return SourceDoc.from_file(CORPUS / rel, kind="dynamo", path=rel)


def test_glm_h200_worker_from_bash_script():
    x = DynamoRecipe().extract(_doc("dynamo/glm-5.3-flash/vllm/agg-h200-agentic/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    assert worker.engine == "vllm" and worker.hardware == "h200" and worker.gpus == 8
    assert worker.argv[:3] == ("python3", "-m", "dynamo.vllm")
    assert worker.checkpoint == "zai-org/GLM-5.3-Flash" and worker.env["VLLM_ENGINE_READY_TIMEOUT_S"] == "3600"
    facts = {(f.name, f.value) for f in x.facts}
    assert ("num_speculative_tokens", 7) in facts and ("reasoning_parser", "glm45") in facts
    assert any(e.role == "frontend" for e in x.envs)


def test_services_form_and_readme_tables():
    x = DynamoRecipe().extract(_doc("dynamo/kimi-k2.5/trtllm/agg-round-robin/deploy.yaml"))
    worker = next(e for e in x.envs if e.engine == "trtllm")
    assert worker.gpus == 4 and worker.checkpoint == "nvidia/Kimi-K2.5-NVFP4"
    readme = DynamoRecipe().extract(_doc("dynamo/glm-5.3-flash/README.md"))
    ctx = {(f.scope, f.value) for f in readme.facts if f.name == "context_tokens"}
    assert ("Dynamo GB200 Aggregated", 128000) in ctx and ("Dynamo H200 Aggregated", 1048576) in ctx


def test_bad_manifest(tmp_path):
    bad = tmp_path / "deploy.yaml"
    bad.write_text("kind: DynamoGraphDeployment\nspec:\n  services: {}\n")
    with pytest.raises(SourceError, match="no DynamoGraphDeployment worker"):
        DynamoRecipe().extract(SourceDoc.from_file(bad, kind="dynamo", path="dynamo/x/deploy.yaml"))
