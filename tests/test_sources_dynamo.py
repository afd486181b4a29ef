import json
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


def test_a_script_variable_the_env_does_not_set_is_named_in_the_notes():
    # deploy.yaml L111-L136: the script finds a cached snapshot and runs `--model "$model_path"`; the command keeps
    # the variable as written, which is no model path of its own
    x = DynamoRecipe().extract(_doc("dynamo/glm-5.3-flash/vllm/agg-h200-agentic/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    assert worker.argv[worker.argv.index("--model") + 1] == "$model_path"
    assert "unresolved $model_path: set by the worker script at run time" in (worker.notes or "")
    frontend = next(e for e in x.envs if e.role == "frontend")
    assert "unresolved" not in (frontend.notes or "")


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


# ------------------------------------------------------------ issue 20, item 7: $(VAR) from ConfigMaps, nodeAffinity


def test_configmap_references_resolve_from_the_same_file() -> None:
    x = DynamoRecipe().extract(_doc("dynamo/gpt-oss-120b/vllm/agg-h200-agentic/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    args = dict(a.split("=", 1) for a in worker.argv if a.startswith("--") and "=" in a)
    assert json.loads(args["--compilation-config"])["max_cudagraph_capture_size"] == 1024
    assert json.loads(args["--speculative-config"])["method"] == "eagle3"
    assert json.loads(args["--kv-transfer-config"])["kv_connector"] == "SimpleCPUOffloadConnector"
    assert not any("$(" in a for a in worker.argv) and "unresolved" not in worker.notes
    # the value's own line (the ConfigMap key), not the args line that holds $(SPECULATIVE_CONFIG)
    spec = next(f for f in x.facts if f.name == "num_speculative_tokens")
    assert spec.value == 3 and "num_speculative_tokens" in _doc(
        "dynamo/gpt-oss-120b/vllm/agg-h200-agentic/deploy.yaml").lines[spec.evidence.line - 1]  # type: ignore[union-attr]
    # the pod is pinned to H200 by nodeAffinity (no nodeSelector)
    assert worker.hardware == "h200" and worker.gpus == 1


def test_resolved_command_passes_the_newest_parser() -> None:
    from launchcard.flags import check_argv
    from launchcard.flagspec import shipped_index

    x = DynamoRecipe().extract(_doc("dynamo/gpt-oss-120b/vllm/agg-h200-agentic/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    newest = shipped_index()["vllm"][-1]
    bad = [f for f in check_argv(list(worker.argv), "vllm", newest) if f.severity == "error"]
    assert not [f for f in bad if f.rule == "bad-json"], bad


def test_unresolvable_references_are_kept_and_named(tmp_path: Path) -> None:
    bad = tmp_path / "deploy.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: '{\"x\": 1}'}\n---\n"
        "kind: DynamoGraphDeployment\nspec:\n  services:\n    w:\n      extraPodSpec:\n"
        "        affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:\n"
        "          [{matchExpressions: [{key: nvidia.com/gpu.product, operator: In,\n"
        "            values: [NVIDIA-H100-80GB-HBM3]}]}]}}}\n"
        "        mainContainer:\n          command: [python3, -m, dynamo.vllm]\n"
        "          args: [--model, org/m, '--compilation-config=$(A)', '--speculative-config=$(S)', "
        "'--kv-transfer-config=$(K)', '--x=$$(A)', '--y=$(NOPE)']\n"
        "          env:\n            - {name: A, valueFrom: {configMapKeyRef: {name: cm, key: a}}}\n"
        "            - {name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}\n"
        "            - {name: K, valueFrom: {configMapKeyRef: {name: elsewhere, key: k}}}\n")
    x = DynamoRecipe().extract(SourceDoc.from_file(bad, kind="dynamo", path="dynamo/x/deploy.yaml"))
    (w,) = x.envs
    assert '--compilation-config={"x": 1}' in w.argv and "--x=$(A)" in w.argv  # $$ escapes, as the kubelet does
    assert "--speculative-config=$(S)" in w.argv and "--y=$(NOPE)" in w.argv
    assert "unresolved $(S): set from secretKeyRef at deploy time" in w.notes
    assert "unresolved $(K): ConfigMap 'elsewhere' is not defined in this file" in w.notes
    assert "unresolved $(NOPE): not defined in the container's env" in w.notes
    assert w.hardware == "h100"


_ENVFROM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: engine-args
data:
  COMPILATION_CONFIG: |
    {"max_cudagraph_capture_size": 512}
  MAX_LEN: "32768"
---
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: trial
spec:
  services:
    VllmDecodeWorker:
      componentType: worker
      extraPodSpec:
        nodeSelector:
          nvidia.com/gpu.product: {product}
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0
          envFrom:
            - configMapRef:
                name: engine-args
          command: ["python3", "-m", "dynamo.vllm"]
          args: ["--model", "Qwen/Qwen3-8B", "--compilation-config=$(COMPILATION_CONFIG)",
                 "--max-model-len=$(MAX_LEN)"]
"""


def test_envfrom_configmap_and_an_exact_gpu_label(tmp_path: Path) -> None:
    """A ConfigMap given whole by envFrom is read like configMapKeyRef; the GPU label resolves exactly
    (NVIDIA-L4 is the L4; a label the catalog does not name leaves the GPU unknown, said in the notes)."""
    f = tmp_path / "deploy.yaml"
    f.write_text(_ENVFROM.replace("{product}", "NVIDIA-L4"))
    x = DynamoRecipe().extract(SourceDoc.from_file(f, kind="dynamo", path="dynamo/trial/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    args = dict(a.split("=", 1) for a in worker.argv if a.startswith("--") and "=" in a)
    assert json.loads(args["--compilation-config"]) == {"max_cudagraph_capture_size": 512}
    assert args["--max-model-len"] == "32768" and "unresolved" not in worker.notes
    assert worker.hardware == "l4"
    f.write_text(_ENVFROM.replace("{product}", "NVIDIA-H100-80GB-HBM3-Custom"))
    x = DynamoRecipe().extract(SourceDoc.from_file(f, kind="dynamo", path="dynamo/trial/deploy.yaml"))
    worker = next(e for e in x.envs if e.role == "single")
    assert worker.hardware is None and "NVIDIA-H100-80GB-HBM3-Custom" in worker.notes
