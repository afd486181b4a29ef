"""The verdict on the command line: resolve, emit, card; exit codes 0 / 1 / 2; the trial findings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "check"
GLM = "zai-org/GLM-5.3-Flash"
V3_ON_8_H100 = ("deepseek-ai/DeepSeek-V3", "--hardware", "h100", "--strategy", "single_node_tp")
LLAMA_ON_B200 = ("meta-llama/Llama-3.3-70B-Instruct", "--hardware", "b200")


def _resolve(recipes_dir: Path, *args: str):  # type: ignore[no-untyped-def]
    return run_cli("resolve", args[0], "--recipes", str(recipes_dir), *args[1:])


def _emit(recipes_dir: Path, *args: str):  # type: ignore[no-untyped-def]
    return run_cli("emit", args[0], "--recipes", str(recipes_dir), *args[1:])


# -- resolve ---------------------------------------------------------------------------------------------

def test_resolve_prints_the_verdict_under_the_command(recipes_dir) -> None:
    proc = _resolve(recipes_dir, GLM, "--hardware", "h100")
    assert proc.returncode == 0, proc.stderr
    command, _, verdict = proc.stdout.partition("\n\n# verdict: ok")
    assert command.startswith("VLLM_ENGINE_READY_TIMEOUT_S=3600") and verdict
    assert "# " in verdict and "memory not checked: no config.json for zai-org/GLM-5.3-Flash" in verdict


def test_resolve_exits_1_on_an_error_finding(recipes_dir) -> None:
    proc = _resolve(recipes_dir, *V3_ON_8_H100)
    assert proc.returncode == 1 and "error [vram-shortfall]" in proc.stdout
    nodes = _resolve(recipes_dir, GLM, "--hardware", "h100", "--strategy", "multi_node_tp", "--nodes", "100")
    assert nodes.returncode == 1 and "too-many-nodes" in nodes.stdout


def test_resolve_json_carries_the_verdict(recipes_dir) -> None:
    proc = _resolve(recipes_dir, *V3_ON_8_H100, "--json")
    assert proc.returncode == 1
    verdict = json.loads(proc.stdout)["verdict"]
    assert verdict["ok"] is False and verdict["exit_code"] == 1
    err = next(f for f in verdict["findings"] if f["severity"] == "error")
    assert set(err) == {"severity", "code", "role", "message", "evidence", "fix"}


def test_resolve_memory_does_not_fit_exits_1(recipes_dir) -> None:
    proc = _resolve(recipes_dir, *LLAMA_ON_B200, "--memory", "--config", str(FIXTURES / "llama-3.3-70b-config.json"))
    assert proc.returncode == 1 and "memory-does-not-fit" in proc.stdout


def test_resolve_memory_finds_the_corpus_config(recipes_dir) -> None:
    proc = _resolve(recipes_dir, "openai/gpt-oss-120b", "--hardware", "h100", "--memory", "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["memory"][0]["fits"] and any(f["code"] == "memory-fits" for f in payload["verdict"]["findings"])


# -- trial findings: bad input is exit 2 with one clear line ---------------------------------------------

def test_unknown_no_feature_is_exit_2_with_did_you_mean(recipes_dir) -> None:
    for command in ("resolve", "emit"):
        extra = ("--target", "shell") if command == "emit" else ()
        proc = run_cli(command, GLM, "--recipes", str(recipes_dir), "--no-feature", "reasoningg", *extra)
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr.count("\n") == 1 and "did you mean reasoning" in proc.stderr


def test_task_on_a_non_omni_recipe_is_exit_2(recipes_dir) -> None:
    proc = _resolve(recipes_dir, GLM, "--task", "foo")
    assert proc.returncode == 2 and "--task" in proc.stderr and "omni" in proc.stderr


def test_config_without_memory_judges_the_plan(recipes_dir) -> None:
    # issue 23: --config judges every plan command's verdict, with or without --memory
    proc = _resolve(recipes_dir, GLM, "--config", str(FIXTURES / "llama-3.3-70b-config.json"))
    assert "[memory-fits]" in proc.stdout or "[memory-does-not-fit]" in proc.stdout, proc.stdout
    proc = _resolve(recipes_dir, GLM, "--safetensors-index", str(FIXTURES / "llama-3.3-70b-config.json"))
    assert proc.returncode == 2 and "--memory" in proc.stderr and proc.stderr.count("\n") == 1


def test_bad_images_are_exit_2(recipes_dir) -> None:
    for image in ("bad image!!", "vllm/vllm-openai@sha256:abc", "vllm/vllm-openai:v0.32.0@sha256:" + "A" * 64):
        proc = _emit(recipes_dir, GLM, "--target", "docker", "--image", image)
        assert proc.returncode == 2, image
        assert proc.stderr.startswith("launchcard: error: --image:") and proc.stderr.count("\n") == 1
    good = "registry.example.com:5000/vllm/vllm-openai:v0.32.0@sha256:" + "0a" * 32
    proc = _emit(recipes_dir, GLM, "--target", "docker", "--image", good)
    assert proc.returncode == 0 and good in proc.stdout


def test_truss_header_names_the_weights_revision_option(recipes_dir) -> None:
    proc = _emit(recipes_dir, GLM, "--hardware", "h100", "--strategy", "single_node_tp", "--target", "truss")
    assert proc.returncode == 0, proc.stderr
    assert "pass --weights-revision SHA" in proc.stdout and "pass --revision" not in proc.stdout


# -- emit ------------------------------------------------------------------------------------------------

def test_emit_refuses_a_plan_with_an_error_finding(recipes_dir, tmp_path: Path) -> None:
    proc = _emit(recipes_dir, *V3_ON_8_H100, "--target", "kubernetes", "--out", str(tmp_path / "o"))
    assert proc.returncode == 1 and proc.stdout == "" and not (tmp_path / "o").exists()
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "[vram-shortfall]" in line and "evidence: models/deepseek-ai/DeepSeek-V3.yaml#L" in line
    assert "fix: use a multi-node strategy with --nodes 2" in line and "--force" in line


def test_emit_force_writes_the_findings_into_every_header(recipes_dir, tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = _emit(recipes_dir, *V3_ON_8_H100, "--target", "shell", "--force", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = (out / "launch.sh").read_text()
    header = text.split("\nset -euo pipefail", 1)[0]
    assert "# verdict: will not start or does not fit (1 error(s)" in header
    assert "# finding: error [vram-shortfall]" in header and "# finding: info [memory-not-checked]" in header


def test_emitted_resources_are_sized_to_the_plan(recipes_dir) -> None:
    k8s = _emit(recipes_dir, *LLAMA_ON_B200, "--target", "kubernetes")
    assert k8s.returncode == 0, k8s.stderr
    assert "nvidia.com/gpu: '1'" in k8s.stdout or 'nvidia.com/gpu: "1"' in k8s.stdout
    compose = _emit(recipes_dir, *LLAMA_ON_B200, "--target", "compose")
    assert "count: 1\n" in compose.stdout and "count: all" not in compose.stdout
    truss = _emit(recipes_dir, *LLAMA_ON_B200, "--target", "truss")
    assert "instance_type: B200:1" in truss.stdout
    assert "warning [idle-gpus]" in truss.stdout  # the header still says the node would idle


# -- card ------------------------------------------------------------------------------------------------

def test_card_shows_each_environments_verdict(shared_dir) -> None:
    corpus = shared_dir / "corpus"
    text = run_cli("card", GLM, "--corpus", str(corpus), "--hardware", "h100")
    assert text.returncode == 0, text.stderr
    assert "verdict: ok, with warnings" in text.stdout and "[recipe-quirk]" in text.stdout
    card = json.loads(run_cli("card", GLM, "--corpus", str(corpus), "--json").stdout)
    judged = [e for e in card["envs"] if e["argv"]]
    assert judged and all(e["verdict"]["status"] in ("ok", "warning", "error") for e in judged)
    md = run_cli("card", GLM, "--corpus", str(corpus), "--format", "md").stdout
    assert md.count("Verdict: **") == len(judged)


def test_check_min_version_that_is_no_release_is_bad_input() -> None:
    """`check --min-version abc` compared "abc" as text (below every release) and said "ok", exit 0."""
    for value in ("abc", "nightly", ""):
        proc = run_cli("check", "--min-version", value, "--", "vllm", "serve", "m")
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr == (f"launchcard: error: --min-version: not a release number ({value!r}); write e.g. "
                               "--min-version 0.10.0 (a nightly requirement is --nightly-required)\n")
    proc = run_cli("check", "--min-version", "v0.10.0", "--", "vllm", "serve", "m")
    assert proc.returncode == 0, proc.stderr
