from __future__ import annotations

import json
import shlex

from tests.conftest import GOLDEN
from tests.helpers import run_cli

GLM = "zai-org/GLM-5.3-Flash"


def test_main_job_resolves_glm_on_h100(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "vllm serve zai-org/GLM-5.3-Flash" in proc.stdout
    assert "--no-enable-flashinfer-autotune" in proc.stdout
    # off a terminal the table is plain text: the anchor is whole, on the row of its flag
    row = next(line for line in proc.stdout.splitlines() if line.startswith("--no-enable-flashinfer-autotune\t"))
    assert "models/zai-org/GLM-5.3-Flash.yaml#L139" in row.split("\t")
    assert "ascend_950pr_8x" in proc.stdout  # the inert hardware id is reported


def test_json_result_matches_reference_shape(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--json")
    plan = json.loads(proc.stdout)
    ref = plan["reference"]
    assert ref["argv"] == ["vllm", "serve", GLM, "--tensor-parallel-size", "8", "--no-enable-flashinfer-autotune",
                           "--tool-call-parser", "glm47", "--enable-auto-tool-choice", "--reasoning-parser", "glm47"]
    assert ref["env"] == {"VLLM_ENGINE_READY_TIMEOUT_S": "3600"}
    assert ref["docker_image"] == "vllm/vllm-openai:nightly"
    unit = plan["commands"][0]["units"][1]
    assert unit["flag"] == "--no-enable-flashinfer-autotune"
    assert unit["origin"]["layer"] == "hardware_override" and unit["origin"]["key"] == "hopper"
    assert unit["origin"]["evidence"]["url"].endswith("models/zai-org/GLM-5.3-Flash.yaml#L139")
    assert unit["origin"]["evidence"]["sha256"].startswith("ffcd619d")


def test_override_provenance_records_the_loser(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "b200", "--strategy", "pd_cluster",
                   "--json")
    plan = json.loads(proc.stdout)
    assert any("NVL4" not in w and "removes" in w for w in plan["warnings"])


def test_override_provenance_names_the_overridden_layer(recipes_dir):
    # Seed-OSS's default variant sets tp; the strategy's parallelism layer wins and records the variant's line.
    proc = run_cli("resolve", "ByteDance-Seed/Seed-OSS-36B-Instruct", "--recipes", str(recipes_dir), "--hardware",
                   "h200", "--json")
    plan = json.loads(proc.stdout)
    unit = next(u for u in plan["commands"][0]["units"] if u["flag"] == "--tensor-parallel-size")
    assert unit["origin"]["layer"] == "parallelism"
    assert [(o["layer"], o["key"]) for o in unit["overrides"]] == [("variant", "default")]
    # the replaced value's own line (its "8"), not the flag's
    assert unit["overrides"][0]["evidence"]["url"].endswith("Seed-OSS-36B-Instruct.yaml#L44")


def test_spec_decoding_mode(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--mode",
                   "spec_decoding=dflash", "--json")
    argv = json.loads(proc.stdout)["reference"]["argv"]
    assert argv[-2:] == ["--speculative-config",
                         '{"method":"dflash","model":"incoai/GLM-5.3-Flash-DFlash2","num_speculative_tokens":7}']


def test_multi_node_and_rendered_shell_round_trips(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--strategy",
                   "multi_node_tp", "--nodes", "2")
    assert proc.returncode == 0, proc.stderr
    assert "--node-rank 1" in proc.stdout and "--headless" in proc.stdout


def test_batch_reproduces_golden_sample(recipes_dir, tmp_path):
    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines()[:300]]
    src = tmp_path / "cases.jsonl"
    src.write_text("\n".join(json.dumps({k: c[k] for k in ("id", "model", "source_file", "kind", "inputs")})
                             for c in cases) + "\n{broken json\n"
                   + json.dumps({"id": "x", "model": "nobody/Nothing", "kind": "serve", "inputs": {}}) + "\n")
    out = tmp_path / "out.jsonl"
    proc = run_cli("resolve", "--recipes", str(recipes_dir), "--cases", str(src), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(cases) + 2
    for case, line in zip(cases, lines[:-2], strict=True):
        assert line == {"id": case["id"], "result": case["result"]}
    assert "error" in lines[-2] and "not JSON" in lines[-2]["error"]
    assert lines[-1]["id"] == "x" and "no recipe for model" in lines[-1]["error"]


def test_a_batch_case_whose_model_is_not_text_names_the_rule(recipes_dir, tmp_path):
    """qa12: `{"model": 7}` answered "cannot resolve this case (AttributeError: 'int' object has no attribute
    'lower')"."""
    src = tmp_path / "cases.jsonl"
    src.write_text(json.dumps({"id": "n", "model": 7, "inputs": {}}) + "\n"
                   + json.dumps({"id": "l", "model": ["a/b"], "inputs": {}}) + "\n")
    proc = run_cli("resolve", "--recipes", str(recipes_dir), "--cases", str(src))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["n", "l"]
    for line in lines:
        assert line["error"].startswith(f"{src}:") and "'model' must be a recipe id" in line["error"], line
        assert "Error" not in line["error"]


def test_batch_reads_unchanged_recipes_from_the_parsed_cache(recipes_dir, tmp_path, monkeypatch):
    """A second batch reads every recipe from the on-disk parsed cache (no YAML parser) and writes the same
    bytes, and the same bytes as with the cache off."""
    from launchcard import yamlread
    from launchcard.cli import _options

    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines()[:200]]
    src = tmp_path / "cases.jsonl"
    src.write_text("\n".join(json.dumps({k: c[k] for k in ("id", "model", "source_file", "kind", "inputs")})
                             for c in cases) + "\n")
    monkeypatch.setenv("LAUNCHCARD_BUILD_CACHE", str(tmp_path / "cache"))
    outs = []
    for run in range(2):
        monkeypatch.setattr(_options, "_OPENED", {})  # each run opens the checkout afresh, as a new process would
        if run:  # the second run must not parse: every document comes from the cache
            monkeypatch.setattr(yamlread, "load_yaml", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
        out = tmp_path / f"out{run}.jsonl"
        proc = run_cli("resolve", "--recipes", str(recipes_dir), "--cases", str(src), "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert [json.loads(line)["result"] for line in outs[0].splitlines()] == [c["result"] for c in cases]
    assert list((tmp_path / "cache").glob("yaml-*/*/*"))
    monkeypatch.undo()
    monkeypatch.setattr(_options, "_OPENED", {})
    monkeypatch.setenv("LAUNCHCARD_BUILD_CACHE", "off")
    proc = run_cli("resolve", "--recipes", str(recipes_dir), "--cases", str(src), "--out", str(tmp_path / "o.jsonl"))
    assert proc.returncode == 0 and (tmp_path / "o.jsonl").read_bytes() == outs[0]


def test_command_string_is_shell_safe(recipe_repo):
    from launchcard.resolve import resolve_case

    case = {"model": GLM, "kind": "serve", "inputs": {
        "variant": "default", "hardware": "b200", "strategy": "single_node_tp", "node_count": 1,
        "features": ["tool_calling", "reasoning"], "feature_modes": {}, "pd_nodes": None, "kv_offload": None,
        "kv_instances": None, "advanced": []}}
    result = resolve_case(recipe_repo, case)
    assert shlex.split(result["command"].replace("\\\n", " ")) == result["argv"]


def test_schema_prints_card_schema():
    proc = run_cli("schema")
    schema = json.loads(proc.stdout)
    assert schema["title"] == "LaunchCard"
    for field in ("hf", "checkpoints", "envs", "hardware", "evidence", "gaps", "conflicts", "facts"):
        assert field in schema["properties"]
    cond = schema["$defs"]["Conditions"]["properties"]
    assert set(cond) >= {"model_revision", "weight_hash", "runtime_execution_revision", "input_tokens",
                         "output_tokens", "concurrency", "cache_state", "quantization", "speculative_decoding",
                         "temperature", "top_p"}


def test_resolve_check_and_memory(recipes_dir, shared_dir):
    config = shared_dir / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
    proc = run_cli("resolve", "openai/gpt-oss-120b", "--recipes", str(recipes_dir), "--hardware", "h100",
                   "--check", "--memory", "--config", str(config), "--json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["check"] == []
    mem = payload["memory"][0]
    assert mem["role"] == "single" and mem["fits"] is True and mem["kv_cache_tokens"] > 0
    # the nightly-only GLM recipe on the 0.32.0 release is an error (exit 1), reported per command
    glm = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--check")
    assert glm.returncode == 1 and "check single: error" in glm.stdout and "nightly" in glm.stdout


def test_plain_resolve_judges_memory_whenever_a_config_is_known(recipes_dir, tmp_path):
    """resolve, emit and card give one verdict: with the corpus hf/ config.json the fit is planned
    without --memory (as emit does), and without one an info finding says it was not checked."""
    gpt = run_cli("resolve", "openai/gpt-oss-120b", "--recipes", str(recipes_dir), "--hardware", "h100", "--json")
    assert gpt.returncode == 0, gpt.stderr
    payload = json.loads(gpt.stdout)
    codes = [f["code"] for f in payload["verdict"]["findings"]]
    assert "memory-fits" in codes and "memory-not-planned" not in codes and "memory" not in payload
    emitted = run_cli("emit", "openai/gpt-oss-120b", "--recipes", str(recipes_dir), "--hardware", "h100",
                      "--target", "shell", "--out", str(tmp_path / "out"))
    assert emitted.returncode == 0, emitted.stderr
    header = (tmp_path / "out" / "launch.sh").read_text()
    assert "memory-fits" in header
    glm = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--json")
    assert "memory-not-checked" in [f["code"] for f in json.loads(glm.stdout)["verdict"]["findings"]]


def test_resolve_memory_needs_config(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--memory")
    assert proc.returncode == 2 and "--config" in proc.stderr


def test_plain_resolve_keeps_heavy_libraries_off_the_start_up_path(recipes_dir):
    """Start-up budget: a plain resolve imports neither pydantic nor rich (each costs ~0.2 s)."""
    import subprocess
    import sys

    code = ("import contextlib, io, sys\nfrom launchcard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            f"    main(['resolve', 'zai-org/GLM-5.3-Flash', '--recipes', {str(recipes_dir)!r}, '--hardware', 'h100'])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'rich', 'httpx', 'huggingface_hub', "
            "'fastapi', 'jinja2'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_large_batch_is_split_and_merged_in_order(recipes_dir, tmp_path, monkeypatch):
    """A batch large enough to be resolved by two processes keeps input order, bad lines included."""
    monkeypatch.setenv("LAUNCHCARD_JOBS", "2")  # split even when the machine is busy
    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines()[:2500]]
    rows = [json.dumps({k: c[k] for k in ("id", "model", "source_file", "kind", "inputs")}) for c in cases]
    rows.insert(1000, "{broken json")
    rows.insert(2000, json.dumps({"id": "x", "model": "nobody/Nothing", "kind": "serve", "inputs": {}}))
    src = tmp_path / "cases.jsonl"
    src.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    proc = run_cli("resolve", "--recipes", str(recipes_dir), "--cases", str(src), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(rows)
    assert "not JSON" in lines.pop(1000)["error"] and f"{src}:1001" in proc.stdout + out.read_text()
    assert lines.pop(1999)["id"] == "x"
    for case, line in zip(cases, lines, strict=True):
        assert line == {"id": case["id"], "result": case["result"]}


def test_explain_says_what_each_flag_does(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--hardware", "h100", "--feature", "spec_decoding",
                   "--explain")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = lines.index("argument\tvalue\twhat it does\tlayer\tsource line\tflag line\toverrides")
    rows = [line.split("\t") for line in lines[header + 1:] if line.startswith("--")]
    assert len(rows) >= 6
    for row in rows:
        assert row[2], row  # an explanation or an explicit "no description", never blank
    what = {row[0]: row[2] for row in rows}
    # the recipe's words for the selected mode (mtp), not another mode's that shares the flag
    assert what["--speculative-config"].startswith("Use the checkpoint's MTP layer")
    assert "[features.spec_decoding.modes.mtp]" in what["--speculative-config"]
    # then the chosen value, from the engine's source (the speculative method's name list), with its line
    assert "method=mtp: listed in the engine's MTPModelTypes" in what["--speculative-config"]
    assert "vllm/config/speculative.py#L" in what["--speculative-config"]
    from launchcard.flagspec import shipped_spec

    newest = shipped_spec("vllm").version  # the engine's help comes from the newest captured release
    assert what["--tensor-parallel-size"].endswith(f"[vllm {newest} --help]")


def test_a_batch_forks_a_second_process_only_while_another_core_is_idle_now(monkeypatch) -> None:
    """The runnable tasks at this instant decide, not the one-minute load average (which still counts the
    benchmark's previous tool on a machine that has just gone idle); LAUNCHCARD_JOBS overrides both."""
    import os

    from launchcard.cli import _resolve

    monkeypatch.delenv("LAUNCHCARD_JOBS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    monkeypatch.setattr(_resolve, "_running_now", lambda: 1)  # only this process runs: the other core is idle
    assert _resolve._jobs() == 2
    monkeypatch.setattr(_resolve, "_running_now", lambda: 3)
    assert _resolve._jobs() == 1
    monkeypatch.setattr(_resolve, "_running_now", lambda: None)  # no /proc: the load average decides
    assert _resolve._jobs() == 1
    monkeypatch.setenv("LAUNCHCARD_JOBS", "2")
    assert _resolve._jobs() == 2
    monkeypatch.undo()
    now = _resolve._running_now()  # the real reading counts at least this process where /proc exists
    assert now is None or now >= 1


def test_explain_help_says_what_the_tables_hold():
    """`resolve --help` describes --explain as the README and test_explain_says_what_each_flag_does do: what
    each argument and its value do, and where each came from (it said only the second half)."""
    proc = run_cli("resolve", "--help")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    start = text.index("--explain")
    explain = text[start:text.index(" --", start + 1)]
    assert "what each argument" in explain and "its value do" in explain and "came from" in explain, explain
