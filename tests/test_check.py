"""launchcard check: findings per rule, on a small hand-made spec and on the shipped vLLM 0.32 spec."""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from launchcard.cli import main
from launchcard.flags import check_argv, check_with_spec, format_finding, has_errors, verdict, verdicts
from launchcard.flags._capture import describe_parser
from launchcard.flags._capture_types import Schemas
from launchcard.flagspec import SCHEMA, shipped_index, spec_from_dict

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seeds" / "launch-card.glm-5.3-flash.json.txt"


def _optional_type(return_type):
    def _optional_type(val):
        return None if val in ("", "None") else return_type(val)

    return _optional_type


@pytest.fixture(scope="module")
def mini():
    """A vLLM-shaped spec captured from a small hand-made parser."""
    p = argparse.ArgumentParser(prog="mini")
    p.add_argument("model_tag", nargs="?")
    p.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--dtype", choices=["auto", "bfloat16", "float16"], default="auto")
    p.add_argument("--enable-flashinfer-autotune", action=argparse.BooleanOptionalAction)
    p.add_argument("--hf-overrides", type=json.loads)
    p.add_argument("--attention-config", type=json.loads)
    p.add_argument("--tool-call-parser", type=_optional_type(str))
    p.add_argument("--tool-parser-plugin", default="")
    p.add_argument("--reasoning-parser", default="")
    p.add_argument("--reasoning-parser-plugin", type=_optional_type(str))
    p.add_argument("--enable-auto-tool-choice", action="store_true")
    p.add_argument("--old-flag", action="store_true", help="--old-flag is deprecated and has no effect.")
    body = describe_parser(p, Schemas())
    for o in body["options"]:
        if o["dest"] == "attention_config":
            o["json_class"] = "AttentionConfig"
    return spec_from_dict({
        "schema": SCHEMA, "engine": "vllm", "version": "0.1.0", "dialect": "vllm-flexible",
        "command_prefix": ["vllm", "serve"], **body,
        "json_classes": {"AttentionConfig": {"extra": "forbid", "model_before_validator": False, "fields": {
            "backend": {"t": "any"},
            "use_trtllm_attention": {"t": "union", "of": [{"t": "bool"}, {"t": "null"}]},
            "flash_attn_version": {"t": "literal", "values": [2, 3]},
        }}},
        "registries": {"tool_call_parser": ["hermes", "glm47"], "reasoning_parser": ["glm45", "deepseek_r1"]},
        "plugin_flags": {"tool_call_parser": "tool_parser_plugin", "reasoning_parser": "reasoning_parser_plugin"},
    })


def rules(findings) -> list[tuple[str, str, str]]:
    return [(f.severity, f.rule, f.flag) for f in findings]


def check(spec, *args: str):
    return check_with_spec(["vllm", "serve", "m", *args], spec, history={})


def test_clean_command_has_no_findings(mini) -> None:
    assert check(mini, "-tp", "8", "--dtype", "bfloat16", "--no-enable-flashinfer-autotune") == []


def test_unknown_flag_suggests_negated_spelling(mini) -> None:
    (f,) = check(mini, "--disable-flashinfer-autotune")
    assert rules([f]) == [("error", "unknown-flag", "--disable-flashinfer-autotune")]
    assert "did you mean --no-enable-flashinfer-autotune?" in f.fix
    (g,) = check(mini, "--tensor-paralel-size", "8")  # its value is not reported again
    assert g.rule == "unknown-flag" and "--tensor-parallel-size" in g.fix


def test_underscores_and_abbreviations_follow_the_engine(mini) -> None:
    assert check(mini, "--tensor_parallel_size", "2") == []
    # argparse (allow_abbrev=True, as vLLM 0.32) accepts a unique prefix: a warning naming the full flag
    (f,) = check(mini, "--tensor-par", "2")
    assert (f.severity, f.rule, f.flag, f.stage) == ("warning", "abbreviation", "--tensor-par", "argparse")
    assert "--tensor-parallel-size" in f.message and f.fix.startswith("spell it out: --tensor-parallel-size")
    assert "allow_abbrev=true" in f.evidence
    (g,) = check(mini, "--enable-flashinfer-auto")  # a bool pair, abbreviated
    assert g.rule == "abbreviation" and "--enable-flashinfer-autotune" in g.fix
    assert check(mini, "-tp=8") == []  # attached value, not an abbreviation


def test_abbreviations_are_errors_when_the_parser_disallows_them(mini) -> None:
    strict = dataclasses.replace(mini, allow_abbrev=False)
    (f,) = check(strict, "--tensor-par", "2")
    assert (f.severity, f.rule) == ("error", "unknown-flag") and "--tensor-parallel-size" in f.fix


def test_values_outside_choices_and_wrong_types(mini) -> None:
    (f,) = check(mini, "--dtype", "bf16")
    assert f.rule == "bad-choice" and "choose from: auto, bfloat16, float16" in f.fix
    (g,) = check(mini, "--port", "$PORT")
    assert g.rule == "bad-type" and "substitute the shell variable" in g.fix


def test_malformed_json_and_unknown_json_keys(mini) -> None:
    (f,) = check(mini, "--hf-overrides", "{'a': 1}")
    assert f.rule == "bad-json"
    (g,) = check(mini, "--attention-config.use_trtllm_atention", "true")
    assert g.rule == "bad-json" and "did you mean 'use_trtllm_attention'" in g.fix
    assert check(mini, "--attention_config.use_trtllm_attention", "false", "--attention-config.backend", "X") == []
    (h,) = check(mini, "--attention-config", '{"flash_attn_version": 5}')
    assert h.rule == "bad-json" and "use one of: 2, 3" in h.fix


def test_flag_given_twice_with_different_values_warns(mini) -> None:
    (f,) = check(mini, "-tp", "4", "--tensor-parallel-size", "8")
    assert (f.severity, f.rule, f.flag) == ("warning", "duplicate", "--tensor-parallel-size")
    assert check(mini, "-tp", "4", "-tp", "4") == []
    (g,) = check(mini, "--enable-flashinfer-autotune", "--no-enable-flashinfer-autotune")
    assert g.rule == "duplicate"


def test_parser_registries(mini) -> None:
    (f,) = check(mini, "--enable-auto-tool-choice", "--tool-call-parser", "glm4")
    assert (f.severity, f.rule) == ("error", "unknown-parser") and "did you mean 'glm47'" in f.fix
    assert check(mini, "--enable-auto-tool-choice", "--tool-call-parser", "mine", "--tool-parser-plugin", "p.py") == []
    (g,) = check(mini, "--reasoning-parser", "nano_v3")
    assert g.rule == "unknown-parser"
    assert check(mini, "--reasoning-parser", "nano_v3", "--reasoning-parser-plugin", "p.py") == []
    (h,) = check(mini, "--enable-auto-tool-choice")
    assert h.rule == "requires"


def test_structural_problems(mini) -> None:
    (f,) = check(mini, "--max-model-len auto".replace("max-model-len", "port"))
    assert f.rule == "one-token" and "--port auto" in f.fix
    (g,) = check(mini, "--port")
    assert g.rule == "parse" and "expected one argument" in g.message and g.fix == "give a value after --port"
    (a,) = vllm("--max-num", "8")
    assert (a.rule, a.flag) == ("parse", "--max-num") and a.fix.startswith("spell out one of: --max-num-active-seqs")
    (h,) = check(mini, "extra")
    assert h.rule == "extra-positional"
    (d,) = check(mini, "--old-flag")
    assert (d.severity, d.rule) == ("warning", "deprecated")


def test_non_server_and_wrapper_commands(mini) -> None:
    (f,) = check_with_spec(["python3", "-m", "sglang_router.launch_router", "--x"], mini, history={})
    assert f.rule == "not-a-server-command" and verdict([f]) == "n/a"
    (g,) = check_with_spec(["python3", "-m", "dynamo.vllm", "m", "--is-prefill-worker"], mini, history={})
    assert (g.severity, g.rule) == ("warning", "wrapper-flag")


def test_renamed_and_removed_flags_use_history(mini) -> None:
    history = {"--disable-log-requests": ("renamed", "0.1.0", "--enable-log-requests"),
               "--gone": ("removed", "0.1.0", None), "--future": ("added", "0.5.0", None)}
    findings = check_with_spec(["vllm", "serve", "m", "--disable-log-requests", "--gone", "--future"], mini, history)
    msgs = [format_finding(f) for f in findings]
    assert "renamed in vllm 0.1.0 [renamed-flag]; use --enable-log-requests" in msgs[0]
    assert "removed in vllm 0.1.0" in msgs[1]
    assert "only exists from vllm 0.5.0" in msgs[2]


# ------------------------------------------------------------ shipped vLLM 0.32


def _seed_vllm_argv() -> list[str]:
    if not SEED.exists():
        pytest.skip("shared seeds missing")
    card = json.loads(SEED.read_text())
    return next(e["argv"] for e in card["envs"] if e["engine"] == "vllm")


def test_seed_card_command_is_reported_with_the_fix() -> None:
    findings = check_argv(_seed_vllm_argv(), engine="vllm", version="0.32.0")
    assert [format_finding(f) for f in findings] == [
        ("error: --disable-flashinfer-autotune: not yet in vllm 0.32.0 (added in 0.33.0; accepted in 0.33.0+) "
         "[too-new-flag]; use vllm >= 0.33.0, or --no-enable-flashinfer-autotune in 0.32.0 "
         "(evidence: vllm specs 0.33.0..0.34.0: options)")
    ]


def test_current_glm_recipe_command_passes() -> None:
    argv = ["vllm", "serve", "zai-org/GLM-5.3-Flash", "--enable-expert-parallel", "--tensor-parallel-size", "8",
            "--no-enable-flashinfer-autotune", "--tool-call-parser", "glm47", "--enable-auto-tool-choice",
            "--reasoning-parser", "glm47", "--speculative-config", '{"method":"mtp","num_speculative_tokens":5}']
    assert check_argv(argv) == []
    assert verdicts(argv, "vllm")["0.32.0"] == "pass"


def test_engine_version_rules() -> None:
    argv = ["vllm", "serve", "m"]
    (f,) = check_argv(argv, min_version="0.33.0")
    assert f.rule == "engine-too-old" and "use vllm >= 0.33.0" in f.fix
    (g,) = check_argv(argv, nightly_required=True)
    assert g.rule == "needs-nightly"
    assert check_argv(argv, min_version="0.31.0") == []


def test_vllm_json_config_keys_are_checked() -> None:
    findings = check_argv(["vllm", "serve", "m", "--compilation-config", '{"use_inductor": false}'])
    assert has_errors(findings) and findings[0].rule == "bad-json" and "use_inductor" in findings[0].message


# ------------------------------------------------------------ CLI


def test_cli_check_exit_codes_and_lines(capsys) -> None:
    assert main(["check", "--engine", "vllm", "--version", "0.32.0", "--", *_seed_vllm_argv()]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("error: --disable-flashinfer-autotune:")
    assert main(["check", "--", "vllm", "serve", "m", "-tp", "2"]) == 0
    newest = shipped_index()["vllm"][-1]
    # no release given: the one default every surface takes, said first (flagspec.default_release_note)
    assert capsys.readouterr().out.splitlines() == [
        f"info: no vLLM release given: vLLM {newest}, the newest release whose flags launchcard captured",
        f"ok: vllm {newest} accepts this command"]


def test_cli_check_bad_version_is_one_line_exit_2(capsys) -> None:
    assert main(["check", "--version", "9.9.9", "--", "vllm", "serve", "m"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--version" in err[0] and "0.32.0" in err[0]


def test_checker_start_up_is_light() -> None:
    """Importing the checker and checking one command stays well under 0.5 s.

    Measured inside a fresh interpreter, so it is launchcard.flags' own cost
    (stdlib only, no engine import); the Typer CLI's own start-up comes on top.
    """
    code = (
        "import time; t = time.perf_counter(); "
        "from launchcard.flags import check_argv; check_argv(['vllm', 'serve', 'm', '-tp', '2']); "
        "print(time.perf_counter() - t); import sys; "
        "print(any(m.split('.')[0] in ('vllm', 'torch', 'pydantic', 'typer') for m in sys.modules))"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
            for _ in range(5)]
    times = [float(r.stdout.split()[0]) for r in runs]
    assert all(r.stdout.split()[1] == "False" for r in runs)  # no engine, no heavy library
    assert statistics.median(times) < 0.5, times


# ------------------------------------------------------------ issue 11: beyond argparse, on the shipped vLLM 0.32


def vllm(*args: str):
    return check_argv(["vllm", "serve", "m", *args], engine="vllm", version="0.32.0")


@pytest.mark.parametrize(("args", "flag", "field", "fix"), [
    (("--gpu-memory-utilization", "1.5"), "--gpu-memory-utilization", "CacheConfig.gpu_memory_utilization (gt=0, le=1)",
     "use a value in (0, 1]"),
    (("--gpu-memory-utilization", "0"), "--gpu-memory-utilization", "CacheConfig.gpu_memory_utilization", "(0, 1]"),
    (("--max-num-seqs", "0"), "--max-num-seqs", "SchedulerConfig.max_num_seqs (ge=1)", "use a value >= 1"),
    (("-tp", "0"), "-tp", "ParallelConfig.tensor_parallel_size (ge=1)", "use a value >= 1"),
    (("--data-parallel-rpc-port", "70000"), "--data-parallel-rpc-port", "ParallelConfig.data_parallel_rpc_port",
     "use a value in [1, 65535]"),
    (("--watermark", "1"), "--watermark", "SchedulerConfig.watermark (ge=0.0, lt=1.0)", "use a value in [0.0, 1.0)"),
])
def test_config_field_bounds_are_startup_errors(args, flag, field, fix) -> None:
    (f,) = vllm(*args)
    assert (f.severity, f.rule, f.stage, f.flag, f.value) == ("error", "out-of-range", "startup", flag, args[1])
    assert f.evidence == f"vllm 0.32.0 spec: {field}" or f.evidence.startswith(f"vllm 0.32.0 spec: {field}")
    assert fix in f.fix
    assert not has_errors([f], stage="argparse")  # the real parser accepts it; vLLM fails at start-up
    assert verdict([f]) == "fail"


def test_values_inside_the_bounds_pass() -> None:
    assert vllm("--gpu-memory-utilization", "1", "--max-num-seqs", "1", "-tp", "1", "--max-model-len", "auto",
                "--max-logprobs", "-1") == []


def test_enum_values_inside_json_configs() -> None:
    (f,) = vllm("--compilation-config", '{"cudagraph_mode": "FULL_AND_PIECEWSE"}')
    # vLLM's parser builds CompilationConfig itself, so this fails at argparse (KeyError in its validator)
    assert (f.rule, f.stage, f.flag) == ("bad-json", "argparse", "--compilation-config.cudagraph_mode")
    assert "did you mean 'FULL_AND_PIECEWISE'?" in f.fix and f.value == '"FULL_AND_PIECEWSE"'
    assert "CompilationConfig.cudagraph_mode (enum CUDAGraphMode)" in f.evidence
    assert vllm("-cc.cudagraph_mode", "full_and_piecewise") == []  # its validator folds case
    assert vllm("-cc.cudagraph_mode", "2") == []  # numbers are left to the enum
    (g,) = vllm("-cc.mode", "bogus")
    assert g.flag == "--compilation-config.mode" and "VLLM_COMPILE" in g.fix
    assert vllm("-cc.mode", "VLLM_COMPILE") == [] and vllm("-cc.mode", "3") == []


def test_choices_of_dtype_flags() -> None:
    (f,) = vllm("--kv-cache-dtype", "fp9")
    assert (f.rule, f.stage, f.value) == ("bad-choice", "argparse", "fp9") and "did you mean 'fp8'?" in f.fix
    (g,) = vllm("--dtype", "bf16")
    assert g.rule == "bad-choice" and "bfloat16" in g.fix and "option --dtype choices" in g.evidence


def test_speculative_config_keys_and_types_are_checked_at_startup() -> None:
    (f,) = vllm("--speculative-config.methd", "mtp")
    assert (f.severity, f.rule, f.stage, f.flag) == ("error", "bad-config-key", "startup", "--speculative-config.methd")
    assert f.fix == "did you mean 'method'?" and "SpeculativeConfig" in f.evidence
    (g,) = vllm("--speculative-config", '{"num_speculative_tokens": "three"}')
    assert (g.rule, g.flag, g.value) == ("bad-config-value", "--speculative-config.num_speculative_tokens", '"three"')
    assert "must be an integer" in g.message and "SpeculativeConfig.num_speculative_tokens" in g.evidence
    (h,) = vllm("--speculative-config", '{"method": "mtp", "num_speculative_tokens": 0}')
    assert h.rule == "out-of-range" and "gt=0" in h.evidence
    (m,) = vllm("--speculative-config.method", "mtpp")
    assert m.rule == "bad-config-value" and "'mtp'" in m.fix
    # vLLM turns dashes into underscores in these keys before building SpeculativeConfig
    assert vllm("--speculative-config", '{"method": "mtp", "num-speculative-tokens": 3}') == []
    assert not has_errors(vllm("--speculative-config.methd", "mtp"), stage="argparse")


def test_other_json_configs_keys_and_types() -> None:
    (f,) = vllm("--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_rol": "kv_both"}')
    assert f.rule == "bad-json" and f.fix == "did you mean 'kv_role'?"
    (g,) = vllm("--attention-config", '{"flash_attn_version": "three"}')
    assert g.rule == "bad-json" and g.flag == "--attention-config.flash_attn_version"
    # bounds of a class vLLM's parser builds itself are argparse errors (pydantic runs inside its type)
    (h,) = vllm("--attention-config", '{"tokenspeed_mla_min_split_kv": 0}')
    assert (h.rule, h.stage, h.fix) == ("bad-json", "argparse", "use a value in [1, 256]")
    (k,) = vllm("--data-parallel-backend", "foo")  # Literal field the parser does not check
    assert (k.rule, k.stage, k.value) == ("bad-config-value", "startup", "foo") and "ray, mp" in k.fix
    assert "value \"foo\" is not allowed" in k.message


def test_omni_commands_are_not_checked_rather_than_unknown() -> None:
    findings = vllm("--trust-remote-code", "--omni", "--port", "8000")
    (f,) = findings
    assert (f.severity, f.rule, f.flag) == ("info", "not-checked", "--omni")
    assert "omni entry point parser not captured" in f.message and "vllm-omni" in f.evidence
    assert verdict(findings) == "n/a" and not has_errors(findings)
    assert set(verdicts(["vllm", "serve", "m", "--omni"], "vllm").values()) == {"n/a"}
    (g,) = check_argv(["vllm-omni", "serve", "m", "--omni=true"])
    assert g.rule == "not-checked"
    # without --omni, vllm-omni's console script falls through to stock `vllm serve`
    (h,) = check_argv(["vllm-omni", "serve", "m", "--nosuch"])
    assert h.rule == "unknown-flag"


def test_a_flag_is_named_once_per_line() -> None:
    for args in (("--attention-config.use_trtllm_atention", "true"), ("--compilation-config", '{"use_inductor": 1}')):
        (f,) = vllm(*args)
        line = format_finding(f)
        assert line.count(f.flag) == 1, line


def test_deprecation_needs_definite_wording() -> None:
    assert vllm("--dcp-kv-cache-interleave-size", "2") == []  # "will be deprecated when ..." is not a deprecation
    assert vllm("--allow-deprecated-quantization") == []
    (f,) = vllm("--disable-cascade-attn")
    assert (f.severity, f.rule) == ("warning", "deprecated") and f.fix == "drop it"
    (g,) = vllm("--log-config-file", "x.json")
    assert g.fix == "use --logging-config.pylogging_config_file instead"
    assert format_finding(g).count("--log-config-file") == 2  # the flag, and the evidence's spec field
    assert g.message.startswith("is deprecated and will be removed in v0.33.0")


def test_every_finding_names_rule_evidence_and_fix() -> None:
    bad = [["--gpu-memory-utilization", "2"], ["--speculative-config.methd", "mtp"], ["--enable-prefix-cachin"],
           ["--nosuch"], ["--port", "$PORT"], ["--dtype", "x"], ["--omni"], ["-tp", "2", "-tp", "4"],
           ["--enable-auto-tool-choice"], ["--disable-cascade-attn"], ["extra"], ["--port 8000"]]
    for args in bad:
        findings = vllm(*args)
        assert findings, args
        for f in findings:
            assert f.rule and f.fix and f.evidence.startswith("vllm 0.32.0"), f
            assert f.stage in ("argparse", "startup", "recipe") and f.code == f.rule
            assert "\n" not in format_finding(f)


def test_cli_prints_startup_findings_and_fails(capsys) -> None:
    assert main(["check", "--", "vllm", "serve", "m", "--gpu-memory-utilization", "1.5"]) == 1
    (line, release) = capsys.readouterr().out.strip().splitlines()
    assert release.startswith("info: no vLLM release given")
    assert line.startswith("error: --gpu-memory-utilization: 1.5 is out of range") and "[out-of-range, startup]" in line
    assert main(["check", "--", "vllm", "serve", "m", "--omni"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("info: --omni: not checked") and out[2].startswith("not checked")


def test_cli_check_judges_an_sglang_commands_heads_over_its_attention_tp(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`check --engine sglang --config` judged no heads split (vLLM's start-up rules only): SGLang's, over the
    attention TP size of the release checked, exit 1 as `predict` and `plan` refuse the same command."""
    from tests.helpers import run_cli

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1536,
                               "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128,
                               "num_hidden_layers": 4, "intermediate_size": 4096, "vocab_size": 32000}))
    head = ["check", "--engine", "sglang", "--config", str(cfg), "--", "python3", "-m", "sglang.launch_server",
            "--model-path", "acme/q12", "--tp-size", "8"]
    bad = run_cli(*head)
    assert bad.returncode == 1 and "--tp-size 8 does not divide the 12 attention heads" in bad.stdout, bad.stdout
    assert run_cli(*head, "--attn-dp-size", "2").returncode == 0


@pytest.mark.parametrize("flags", [["--tp-size", "0"], ["--pp-size", "0"], ["--ep-size", "-1"],
                                   ["--dp-size", "-2", "--enable-dp-attention"], ["--attn-dp-size", "0"]])
@pytest.mark.parametrize("with_config", [False, True])
def test_cli_check_refuses_an_sglang_count_of_ranks_below_1_as_predict_does(tmp_path, flags: list[str],  # type: ignore[no-untyped-def]
                                                                          with_config: bool) -> None:
    """`check --engine sglang -- ... --tp-size 0` said ok (SGLang's captured parser has no range) while predict
    refuses it: one rule (launchcard.limits.rank_refusal), a failed check here, with predict's wording."""
    from tests.helpers import run_cli

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1536,
                               "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128,
                               "num_hidden_layers": 4, "intermediate_size": 4096, "vocab_size": 32000}))
    extra = ["--config", str(cfg)] if with_config else []
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "acme/q12", *flags]
    res = run_cli("check", "--engine", "sglang", *extra, "--", *cmd)
    assert res.returncode == 1, res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith("error:"))
    assert line.startswith(f"error: {flags[0]}: must be >= 1") and "engine.py L819-827" in line, line
    pred = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "64", "--osl", "8",
                   "--concurrency", "1", "--command", " ".join(cmd))
    assert pred.returncode == 2 and pred.stderr.startswith(
        f"launchcard: error: --command: {flags[0]}: must be >= 1"), pred.stderr
    assert run_cli("check", "--engine", "sglang", *extra, "--", *cmd[:5], "--tp-size", "4").returncode == 0
    # another program's command is not SGLang's: bad input naming the engine that reads it (it was exit 0, "not
    # checked"), never judged by SGLang's rules
    other = run_cli("check", "--engine", "sglang", *extra, "--", "vllm", "serve", "q", *flags)
    assert other.returncode == 2 and not other.stdout and "pass --engine vllm" in other.stderr, other.stderr


@pytest.mark.parametrize("field", ["num_attention_heads", "num_hidden_layers", "num_key_value_heads"])
def test_cli_check_refuses_a_config_size_memory_and_predict_refuse(tmp_path, field: str) -> None:  # type: ignore[no-untyped-def]
    """`check --config` said `ok` of a config with 0 attention heads (read as absent) while memory and predict refuse
    the same file: one rule, exit 2 on all three, the same words."""
    from tests.helpers import run_cli

    raw = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_hidden_layers": 4, "vocab_size": 32000, "intermediate_size": 11008}
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**raw, field: 0}))
    said = f"config field(s) {field} = 0 must be positive"
    for args in (["check", "--config", str(cfg), "--", "vllm", "serve", "q"], ["memory", "--config", str(cfg),
                 "--gpu", "h100"], ["predict", "--config", str(cfg), "--gpu", "h100", "--isl", "64", "--osl", "8",
                                    "--concurrency", "1"]):
        res = run_cli(*args)
        assert res.returncode == 2 and said in res.stderr and not res.stdout, (args[0], res.stdout, res.stderr)


def test_cli_check_says_when_the_config_cannot_judge_the_split(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`check --config {}` said `ok` as if the heads and layers had been judged."""
    from tests.helpers import run_cli

    cfg = tmp_path / "config.json"
    cfg.write_text("{}")
    res = run_cli("check", "--config", str(cfg), "--", "vllm", "serve", "q", "-tp", "3")
    assert res.returncode == 0 and "heads and layer split rules not judged" in res.stdout, res.stdout


def test_cli_check_refuses_an_sglang_moe_dense_tp_size_as_predict_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SGLang asserts --moe-dense-tp-size is 1 or left out (limits.DENSE_TP_RULE): a failed check here, bad input in
    predict, the same words."""
    from tests.helpers import run_cli

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1536,
                               "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128,
                               "num_hidden_layers": 4, "intermediate_size": 4096, "vocab_size": 32000}))
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "acme/q12", "--tp-size", "4"]
    res = run_cli("check", "--engine", "sglang", "--", *cmd, "--moe-dense-tp-size", "2")
    assert res.returncode == 1, res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith("error:"))
    assert line.startswith("error: --moe-dense-tp-size: SGLang takes only 1 or the flag left out (2)"), line
    pred = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "64", "--osl", "8",
                   "--concurrency", "1", "--command", " ".join([*cmd, "--moe-dense-tp-size", "2"]))
    assert pred.returncode == 2 and pred.stderr.startswith(
        "launchcard: error: --command: --moe-dense-tp-size: SGLang takes only 1 or the flag left out (2)"), pred.stderr
    assert run_cli("check", "--engine", "sglang", "--", *cmd, "--moe-dense-tp-size", "1").returncode == 0


def test_cli_sglang_eagle_without_a_draft_on_a_checkpoint_without_mtp_layers_is_refused_alike(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SGLang drafts with the model itself there (limits.DRAFT_SELF_RULE): a failed check, bad input in predict,
    the same words; a config with MTP layers or a named draft checkpoint is timed as before."""
    from tests.helpers import run_cli

    doc = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1536,
           "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 4,
           "intermediate_size": 4096, "vocab_size": 32000}
    cfg, mtp = tmp_path / "config.json", tmp_path / "mtp" / "config.json"
    cfg.write_text(json.dumps(doc))
    mtp.parent.mkdir()
    mtp.write_text(json.dumps({**doc, "num_nextn_predict_layers": 1}))
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "acme/q12", "--tp-size", "4",
           "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"]
    said = ("--speculative-algorithm: EAGLE without --speculative-draft-model-path on a checkpoint without MTP "
            "layers: SGLang then takes the model itself as its draft")
    res = run_cli("check", "--engine", "sglang", "--config", str(cfg), "--", *cmd)
    assert res.returncode == 1, res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith("error:"))
    assert line.startswith(f"error: {said}") and "[speculative-draft" in line and "L1767-1786" in line, line

    def predict(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli("predict", "--config", str(config), "--gpu", "h100", "--isl", "64", "--osl", "8",  # type: ignore[no-any-return]
                       "--concurrency", "1", "--command", " ".join([*cmd, *extra]))

    pred = predict(cfg)
    assert pred.returncode == 2 and pred.stderr.startswith(f"launchcard: error: --command: {said}"), pred.stderr
    assert len(pred.stderr.strip().splitlines()) == 1 and not pred.stdout
    assert predict(mtp).returncode == 0  # its MTP layer drafts (timed as MTP, as before)
    assert run_cli("check", "--engine", "sglang", "--config", str(mtp), "--", *cmd).returncode == 0
    named = ["--speculative-draft-model-path", "acme/q12-eagle"]
    assert run_cli("check", "--engine", "sglang", "--config", str(cfg), "--", *cmd, *named).returncode == 0
    assert predict(cfg, *named).returncode == 0


def test_check_refuses_the_speculative_configs_memory_and_predict_refuse() -> None:
    """vLLM's SpeculativeConfig refusals (an unknown method, a drafted method without its "model", MTP on a
    checkpoint without MTP layers) are one rule: ``memory`` / ``predict`` bad input, ``check`` an error finding in
    the same words (it said "ok: vllm accepts this command")."""
    from pathlib import Path

    from tests.helpers import run_cli

    configs = Path(__file__).parent / "fixtures" / "predict_heldout_configs"
    dense, mtp = str(configs / "Qwen--Qwen3-8B_config.json"), str(configs / "deepseek-ai--DeepSeek-R1_config.json")
    for spec, words in (('{"method": "bogus", "num_speculative_tokens": 1}', "unknown speculative method 'bogus'"),
                        ('{"method": "eagle3", "num_speculative_tokens": 1}', 'without a draft "model"'),
                        ('{"method": "mtp", "num_speculative_tokens": 1}', "drafts with the checkpoint's own MTP")):
        got = run_cli("check", "--version", "0.32.0", "--config", dense, "--", "vllm", "serve", "m",
                      "--speculative-config", spec)
        assert got.returncode == 1 and "speculative-config" in got.stdout, got.stdout
        # one error line in memory's and predict's words: the flag check's finding on the method (the captured
        # spec's literal) said the same fact again
        errors = [line for line in got.stdout.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and words in errors[0], got.stdout
        said = run_cli("memory", "--config", dense, "--gpu", "h100", "--vllm-version", "0.32.0",
                       "--speculative-config", spec)
        assert (said.returncode == 2 and words in said.stderr) or "mtp" in spec, said
    for config, spec in ((mtp, '{"method": "mtp", "num_speculative_tokens": 1}'),
                         (dense, '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'),
                         (dense, '{"method": "eagle3", "model": "org/draft", "num_speculative_tokens": 3}')):
        got = run_cli("check", "--config", config, "--", "vllm", "serve", "m", "--speculative-config", spec)
        assert "speculative-config" not in got.stdout, got.stdout
    # 0.34.0 takes any string as the method (custom_method): check at its newest captured release, memory at 0.34
    spec = '{"method": "bogus", "num_speculative_tokens": 1}'
    got = run_cli("check", "--config", dense, "--", "vllm", "serve", "m", "--speculative-config", spec)
    assert "unknown speculative method" not in got.stdout, got.stdout


def test_checks_mtp_rule_reads_the_one_mtp_layer_count() -> None:
    """check's vLLM MTP rule reads ``limits.mtp_layer_count`` (as its SGLang draft rule, predict and the memory
    planner's ``Arch.mtp_layers`` do), not a whole memory plan's Arch: a config the memory planner refuses for
    another field (it said nothing of the MTP then) is judged by its MTP layers alike."""
    from launchcard.argv import parse_command
    from launchcard.check._config import parse_config
    from launchcard.check._limits import speculative_findings
    from launchcard.limits import mtp_layer_count

    base = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 64,
            "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 128, "torch_dtype": "bfloat16"}
    spec = '{"method": "mtp", "num_speculative_tokens": 1}'
    cmd = parse_command(["vllm", "serve", "m", "--speculative-config", spec], engine="vllm")
    docs = [base, {**base, "num_nextn_predict_layers": 1}, {**base, "text_config": {"mtp_num_hidden_layers": 2}},
            {**base, "num_nextn_predict_layers": 1.0}, {**base, "num_nextn_predict_layers": True},
            {**base, "max_position_embeddings": "long"}]  # the last: memory refuses it (not an integer)
    for doc in docs:
        found = speculative_findings(parse_config(doc, "config.json"), cmd, "", "0.32.0")
        assert [f.code for f in found] == ([] if mtp_layer_count(doc) else ["speculative-config"]), doc


def test_a_flag_finding_a_start_up_rule_says_again_is_dropped_by_one_reading_of_the_table() -> None:
    """``check.said_by_limits`` is the one reading of ``SAID_BY_LIMITS`` (check's command and plan verdicts and
    ``predict --command`` drop the flag check's repeat by it): the repeat only beside its refusal, per role in a
    plan, and every one the table lists where no refusals are given (predict, whose memory planner says them)."""
    from launchcard.check import Finding, said_by_limits
    from launchcard.check._limits import without_repeated_flags

    flag, rule = "--speculative-config.method", "bad-config-value"
    assert said_by_limits(flag, rule) and said_by_limits(flag, rule, ["speculative-method"])
    assert not said_by_limits(flag, rule, ["speculative-config"]) and not said_by_limits(flag, "bad-config-key")
    repeat = [Finding(severity="error", code=f"flag-{rule}", message=f"{flag}: 'bogus' is not one of ...",
                      evidence="spec", role=r) for r in ("prefill", "decode", None)]
    refusal = Finding(severity="error", code="speculative-method", message="unknown speculative method 'bogus'",
                      evidence="vllm", role="prefill")
    assert without_repeated_flags([*repeat, refusal]) == [*repeat[1:], refusal]


def test_one_default_release_on_memory_predict_and_check() -> None:
    """No release given, memory, predict and check take one vLLM release (flagspec.default_release, the newest
    captured: check reads its flags there) and each says so; the speculative rule gated at 0.34 (any string method
    from then, custom_method) answers alike on the three: at the default 'bogus' is refused for lacking its
    "model", at a stated 0.32.0 as an unknown method (memory said the latter and check the former before)."""
    from pathlib import Path

    from launchcard.flagspec import default_release
    from tests.helpers import run_cli

    taken = default_release("vllm")
    said = f"no vLLM release given: vLLM {taken}, the newest release whose flags launchcard captured"
    dense = str(Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json")
    serve = ["vllm", "serve", "m", "--max-num-seqs", "8"]
    pred = ["predict", "--config", dense, "--gpu", "h100", "--isl", "64", "--osl", "8", "--concurrency", "1"]
    outs = (run_cli("memory", "--config", dense, "--gpu", "h100", "--max-num-seqs", "8"),
            run_cli(*pred, "--command", " ".join(serve)), run_cli("check", "--config", dense, "--", *serve))
    for out in outs:
        assert out.returncode == 0 and said in out.stdout, out
    spec = '{"method": "bogus", "num_speculative_tokens": 1}'
    for stated, words in (((), 'without a draft "model"'), (("0.32.0",), "unknown speculative method 'bogus'")):
        mem = run_cli("memory", "--config", dense, "--gpu", "h100", "--speculative-config", spec,
                      *(("--vllm-version", *stated) if stated else ()))
        got = run_cli(*pred, *(("--engine-version", *stated) if stated else ()),
                      "--command", " ".join([*serve, "--speculative-config", f"'{spec}'"]))
        chk = run_cli("check", *(("--version", *stated) if stated else ()), "--config", dense, "--", *serve,
                      "--speculative-config", spec)
        assert mem.returncode == got.returncode == 2 and chk.returncode == 1, (mem, got, chk)
        assert words in mem.stderr and words in got.stderr and words in chk.stdout, (mem, got, chk)


def test_cli_sglang_gpt_oss_triton_kernel_at_ep_above_1_is_refused_alike() -> None:
    """SGLang asserts --moe-runner-backend triton_kernel runs gpt-oss at --ep-size 1 only
    (limits.TRITON_KERNEL_EP_RULE): `check` said ok and predict timed a server that does not start."""
    from tests.helpers import run_cli

    cfg = str(Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "openai--gpt-oss-20b_config.json")
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "openai/gpt-oss-20b", "--tp-size", "2",
           "--moe-runner-backend", "triton_kernel"]
    res = run_cli("check", "--engine", "sglang", "--config", cfg, "--", *cmd, "--ep-size", "2")
    assert res.returncode == 1, res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith("error:"))
    assert line.startswith("error: --moe-runner-backend triton_kernel with --ep-size 2: SGLang asserts") and \
        "[moe-runner-ep, startup]" in line and "0.5.6.post2 L1172-1175" in line, line
    pred = run_cli("predict", "--config", cfg, "--gpu", "h100", "--isl", "64", "--osl", "8", "--concurrency", "1",
                   "--command", " ".join([*cmd, "--ep-size", "2"]))
    assert pred.returncode == 1 and "[moe-runner-ep] --moe-runner-backend triton_kernel with --ep-size 2" in \
        pred.stderr, pred.stderr
    assert run_cli("check", "--engine", "sglang", "--config", cfg, "--", *cmd).returncode == 0


def test_cli_check_sglang_reads_the_gpu_for_the_triton_kernel_rule_of_old_releases() -> None:
    """Through SGLang 0.5.4.post2 an MXFP4 gpt-oss on Blackwell takes FlashInfer MXFP4 before the assert
    (limits.TRITON_KERNEL_EP_RULE): the GPU decides; not known, not judged."""
    from tests.helpers import run_cli

    cfg = str(Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "openai--gpt-oss-20b_config.json")
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "openai/gpt-oss-20b", "--tp-size", "2",
           "--moe-runner-backend", "triton_kernel", "--ep-size", "2"]
    head = ["check", "--engine", "sglang", "--version", "0.5.4.post3", "--config", cfg]
    assert run_cli(*head, "--gpu", "h100", "--", *cmd).returncode == 1
    assert run_cli(*head, "--gpu", "b200", "--", *cmd).returncode == 0
    assert run_cli(*head, "--", *cmd).returncode == 0


@pytest.mark.parametrize(("engine", "cmd", "fix"), [
    ("vllm", ["vllm"], "launchcard check --engine vllm -- vllm serve ..."),
    ("vllm", ["vllm", "bench", "serve", "--model", "m"], "launchcard check --engine vllm -- vllm serve ..."),
    ("vllm", ["python3", "-m", "sglang_router.launch_router", "--port", "8000"], "-- vllm serve ..."),
    ("vllm", ["python3", "-m", "sglang.launch_server", "--model-path", "m"], "pass --engine sglang"),
    ("sglang", ["sglang"], "-- python3 -m sglang.launch_server ..."),
])
def test_cli_check_refuses_a_command_that_is_no_server_command(engine: str, cmd: list[str], fix: str) -> None:
    """`check -- vllm` (no server subcommand) exited 0 "not checked", so a CI gate passed a command never
    judged: bad input now (exit 2, one line naming the forms check judges and the fix); `vllm serve`, the
    api_server module and a wrapper are judged as before."""
    from tests.helpers import run_cli

    res = run_cli("check", "--engine", engine, "--", *cmd)
    assert res.returncode == 2 and not res.stdout, (res.stdout, res.stderr)
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"launchcard: error: check: {' '.join(cmd[:3])!r} is not a {engine} server command")
    assert fix in line, line
    for ok in (["vllm", "serve", "m"], ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"],
               ["python", "-m", "dynamo.vllm", "--model", "m"]):
        assert run_cli("check", "--", *ok).returncode == 0, ok
