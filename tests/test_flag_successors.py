"""Successors of removed flags come only from the engine's own evidence (issue 20, item 1).

The held-out-style list below was read from the engines' own source and help (the quoted
warnings and docstrings of vLLM 0.10.2-0.31.0 and SGLang's captured help), not from the
table under test: every named successor must be exactly the engine's, and a flag the engine
names no successor for must be reported as such.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest

from launchcard.flags import Successor, check_argv, check_env, successor
from launchcard.flagspec import shipped_index, shipped_spec

# flag -> what the engine says to use instead (None: the engine names nothing)
VLLM_TRUTH: dict[str, str | None] = {
    # vllm/config/__init__.py (0.10.2): "Please instead use `--hf-overrides '{...}'`"
    "--rope-theta": "--hf-overrides '{\"rope_theta\": VALUE}'",
    "--rope-scaling": "--hf-overrides '{\"rope_scaling\": VALUE}'",
    # vllm/engine/arg_utils.py (0.10.2-0.12.0) warnings
    "--disable-mm-preprocessor-cache": "--mm-processor-cache-gb 0",
    "--enable-multimodal-encoder-data-parallel": "--mm-encoder-tp-mode data",
    "--cuda-graph-sizes": "--cudagraph-capture-sizes VALUE",
    # vllm/config/parallel.py (0.10.2-0.11.2): "Please use `eplb_config.window_size` instead"
    "--eplb-window-size": "--eplb-config '{\"window_size\": VALUE}'",
    "--eplb-step-interval": "--eplb-config '{\"step_interval\": VALUE}'",
    "--num-redundant-experts": "--eplb-config '{\"num_redundant_experts\": VALUE}'",
    "--eplb-log-balancedness": "--eplb-config '{\"log_balancedness\": true}'",
    # vllm/engine/arg_utils.py 0.11.2 forwards the deprecated args into StructuredOutputsConfig
    "--guided-decoding-disable-fallback": "--structured-outputs-config '{\"disable_fallback\": VALUE}'",
    "--guided-decoding-disable-any-whitespace": "--structured-outputs-config '{\"disable_any_whitespace\": VALUE}'",
    # vllm/config/model.py (0.11.2): "Please use `pooler_config` instead."
    "--override-pooler-config": "--pooler-config VALUE",
    # 0.31.0 help: "Use --logging-config.pylogging_config_file instead."
    "--log-config-file": "--logging-config '{\"pylogging_config_file\": VALUE}'",
    # removed with no successor named anywhere in the releases' source or help
    "--preemption-mode": None,
    "--disable-frontend-multiprocessing": None,
    # 0.11.2 forwards it into StructuredOutputsConfig; 0.10.2 stored it as DecodingConfig's field "backend"
    "--guided-decoding-backend": "--structured-outputs-config '{\"backend\": VALUE{auto|guidance|lm-format-enforcer|"
                                 "outlines|xgrammar}}'",
    "--swap-space": None,
    "--max-seq-len-to-capture": None,
    "--enable-lora-bias": None,
    "--scheduler-delay-factor": None,
    "--enable-mamba-fine-grained-prefix-cache": None,  # only a similar help line: no evidence
}
SGLANG_TRUTH: dict[str, str | None] = {
    "--enable-deepep-moe": "--moe-a2a-backend deepep",
    "--enable-flashinfer-cutlass-moe": "--moe-runner-backend flashinfer_cutlass",
    "--disable-fast-image-processor": "--image-processor-backend pil",
    "--grpc-mode": "--smg-grpc-mode",
    "--kt-amx-method": None,  # was "renamed" to --kt-method by an identical help line
    "--oltp-traces-endpoint": None,  # was "renamed" by name likeness
    "--torchao-config": None,
}
# what name likeness used to propose (issue 20): none of these may come back
GUESSED = {"--rope-theta": "--root-path", "--guided-decoding-backend": "--kda-decode-backend",
           "--disable-frontend-multiprocessing": "--disable-chunked-prefill",
           "--enable-multimodal-encoder-data-parallel": "--enable-expert-parallel",
           "--preemption-mode": "--performance-mode"}


@pytest.mark.parametrize(("engine", "truth"), [("vllm", VLLM_TRUTH), ("sglang", SGLANG_TRUTH)])
def test_no_wrong_successor_and_known_ones_named(engine: str, truth: dict[str, str | None]) -> None:
    wrong, named, known = [], 0, 0
    for flag, want in truth.items():
        s = successor(engine, flag)
        got = s.use if s else None
        if want is not None:
            known += 1
            named += got == want
        if got is not None and got != want:
            wrong.append((flag, got, want))
    assert wrong == []
    assert named == known


@pytest.mark.parametrize("flag", sorted(GUESSED))
def test_issue_examples_get_no_guessed_successor(flag: str) -> None:
    (f,) = [f for f in check_argv(["vllm", "serve", "m", flag, "1"], "vllm", "0.34.0") if f.flag == flag]
    assert GUESSED[flag] not in f.fix and GUESSED[flag] not in f.message
    want = VLLM_TRUTH[flag]
    if want is None:
        assert f.rule == "removed-flag" and "vLLM names no successor" in f.message and f.fix == "drop it"
        assert "last accepted in" in f.message
    else:
        assert f.rule == "renamed-flag" and f.fix == "use " + Successor(flag, "vllm", want).render("1")
        assert "vllm/" in f.evidence and "sha256" in f.evidence  # the engine's own file, quoted


def test_replacement_carries_the_given_value_in_the_new_shape() -> None:
    out = check_argv(["vllm", "serve", "m", "--rope-theta", "1000000", "--eplb-window-size=1000",
                      "--disable-mm-preprocessor-cache"], "vllm", "0.34.0")
    fixes = {f.flag: f.fix for f in out}
    assert fixes["--rope-theta"] == "use --hf-overrides '{\"rope_theta\": 1000000}'"
    assert fixes["--eplb-window-size"] == "use --eplb-config '{\"window_size\": 1000}'"
    assert fixes["--disable-mm-preprocessor-cache"] == "use --mm-processor-cache-gb 0"


def test_disable_switch_maps_to_the_negative_of_its_enable_successor() -> None:
    # "replaced with '--enable-log-requests'": --disable-x means --no-enable-x, never --enable-x
    out = check_argv(["vllm", "serve", "m", "--disable-log-requests"], "vllm", "0.32.0")
    (f,) = [f for f in out if f.flag == "--disable-log-requests"]
    assert "--enable-log-requests" not in f.fix.replace("--no-enable-log-requests", "")


def test_removed_env_successor_is_the_engines() -> None:
    spec = shipped_spec("vllm", "0.34.0")
    out = check_env({"VLLM_MM_INPUT_CACHE_GIB": "8"}, spec)
    (f,) = out
    assert f.rule == "removed-env" and f.fix == "use --mm-processor-cache-gb 8 instead"
    assert "Please use `--mm-processor-cache-gb %d` instead" in f.evidence


def test_shipped_table_records_evidence_for_every_successor() -> None:
    raw = json.loads((resources.files("launchcard") / "data" / "flags" / "successors.json").read_text())
    assert raw["generated_by"] == "scripts/engine_successors.py"
    for engine, table in raw["engines"].items():
        newest = shipped_spec(engine, shipped_index()[engine][-1])
        for flag, entry in table["flags"].items():
            if not entry.get("use"):
                continue
            ev = entry["evidence"]
            assert ev["release"] in shipped_index()[engine] and ev["text"], flag
            if ev["kind"] in ("source", "forward"):
                assert ev["file"].startswith(engine + "/") and ev["line"] and len(ev["sha256"]) == 64, flag
            head = entry["use"].split()[0]
            gone = entry["removed_in"] or newest.version
            assert head in shipped_spec(engine, gone).by_flag, (flag, head)


def test_script_reads_successors_from_engine_source(tmp_path: Path) -> None:
    """The table's builder finds a warning's replacement in a release's source, and nothing from names."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import engine_successors as es

    src = tmp_path / "vllm-9.9.9"
    (src / "vllm" / "engine").mkdir(parents=True)
    (src / ".complete").write_text("none.whl\n")
    (src / "vllm" / "engine" / "arg_utils.py").write_text(
        "def f(self):\n"
        "    logger.warning('`--disable-mm-preprocessor-cache` is deprecated '\n"
        "                   'and will be removed. Please use `--mm-processor-cache-gb 0` instead.')\n"
        "    logger.warning('--preemption-mode is gone')\n")
    rel = es.Release("vllm", "9.9.9", src)
    new = shipped_spec("vllm", "0.13.0")
    old = shipped_spec("vllm", "0.12.0")
    got = es._candidates("--disable-mm-preprocessor-cache", None, old.by_flag["--disable-mm-preprocessor-cache"],
                         new, [rel], [])
    assert [(c["use"], c["line"]) for c in got] == [("--mm-processor-cache-gb 0", 2)]
    assert es._candidates("--preemption-mode", "preemption_mode", None, new, [rel], []) == []


def test_a_replacement_per_value_names_none_as_the_successor() -> None:
    # vLLM's --task message: "Please replace this option with `--runner generate`" (or pooling), by value
    (f,) = [f for f in check_argv(["vllm", "serve", "m", "--task", "embed"], "vllm", "0.34.0") if f.flag == "--task"]
    assert f.rule == "removed-flag" and "names several replacements, none as the successor" in f.fix
    assert "--runner generate" in f.fix
    assert "Please replace this option with `--runner" in f.evidence


def test_flags_range_cli_quotes_the_evidence_or_says_none() -> None:
    from typer.testing import CliRunner

    from launchcard.cli import app

    out = CliRunner().invoke(app, ["flags", "range", "--", "--rope-theta", "--preemption-mode"]).output
    assert "successor --hf-overrides '{\"rope_theta\": VALUE}' (evidence: vllm 0.10.2 vllm/config/" in out
    assert "--preemption-mode: vllm <=0.10.2" in out and "vLLM names no successor" in out


def test_held_out_list_scores_no_wrong_successor() -> None:
    """The held-out list (tests/fixtures/successors_heldout.json: upstream PRs, release notes and messages)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import successors_heldout

    t = successors_heldout.run()["totals"]
    assert t["wrong"] == 0
    assert t["named"] == t["known"] == 21
    assert t["none_ok"] == t["none_cases"]


def test_helper_worded_deprecations_are_read_at_each_call(tmp_path: Path) -> None:
    """A deprecation written once in a helper (vLLM's ``_set_from_env_if_set``, ``deprecated_env``) is read
    with each call's own arguments, and a replacement that needs two options is kept whole or not at all."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import engine_successors as es

    src = tmp_path / "vllm-9.9.9"
    (src / "vllm" / "config").mkdir(parents=True)
    (src / ".complete").write_text("none.whl\n")
    code = (
        "class AttentionConfig:\n"
        "    def _set(self, field_name, env_var_name):\n"
        "        logger.warning_once('Using %s environment variable is deprecated. Please use '\n"
        "                            '--attention-config.%s command line argument instead.', env_var_name,\n"
        "                            field_name)\n"
        "    def __post_init__(self):\n"
        "        self._set('backend', 'VLLM_ATTENTION_BACKEND')\n"
        "def deprecated_env(env_name, removal_version, replacement, getter):\n"
        "    warnings.warn(f'{env_name} is deprecated and will be removed in {removal_version}. {replacement}')\n"
        "X = {'VLLM_MXFP4_USE_MARLIN': deprecated_env('VLLM_MXFP4_USE_MARLIN', 'v0.23',\n"
        "     'Use --moe-backend marlin or --linear-backend marlin.', None),\n"
        "     'VLLM_FLASHINFER_MOE_BACKEND': deprecated_env('VLLM_FLASHINFER_MOE_BACKEND', 'v0.23',\n"
        "     'Use --moe-backend nosuchbackend with --no-such-option 1.', None)}\n")
    (src / "vllm" / "config" / "attention.py").write_text(code)
    texts = [t for _, t, _ in es._templated(src / "vllm" / "config" / "attention.py")]
    assert any(t.startswith("Using VLLM_ATTENTION_BACKEND environment variable is deprecated") and
               "--attention-config.backend" in t for t in texts)
    rel = es.Release("vllm", "9.9.9", src)
    new = shipped_spec("vllm", "0.24.0")
    got = {c["use"] for c in es._candidates("VLLM_ATTENTION_BACKEND", None, None, new, [rel], [])}
    assert got == {"--attention-config '{\"backend\": VALUE}'"}
    got = {c["use"] for c in es._candidates("VLLM_MXFP4_USE_MARLIN", None, None, new, [rel], [])}
    assert got == {"--moe-backend marlin", "--linear-backend marlin"}  # several: none is THE successor
    assert es._candidates("VLLM_FLASHINFER_MOE_BACKEND", None, None, new, [rel], []) == []


def test_rendered_values_keep_their_shape() -> None:
    s = Successor("X", "vllm", "--profiler-config '{\"profiler\": VALUE{cuda|torch}}'")
    assert s.render("cuda") == "--profiler-config '{\"profiler\": \"cuda\"}'"
    assert s.render("1") == "--profiler-config '{\"profiler\": <cuda|torch>}'"  # not a value the field takes
    assert Successor("X", "vllm", "--attention-config '{\"use_cudnn_prefill\": BOOL}'").render("0") == \
        "--attention-config '{\"use_cudnn_prefill\": false}'"
    assert Successor("X", "vllm", "--pooler-config VALUE").render('{"a": 1}') == "--pooler-config '{\"a\": 1}'"


def test_misplaced_option_before_the_command_is_bad_input() -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "launchcard", "check", "--no-such-option", "--", "vllm", "serve", "m"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "'--no-such-option' is not an option of launchcard check" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_release_without_a_captured_registry_still_reports_a_removed_variable() -> None:
    """SGLang 0.5.23's spec carries no variable registry; 0.5.21 and 0.5.22's do not read SGLANG_CUTLASS_MOE."""
    spec = shipped_spec("sglang", "0.5.23")
    assert not spec.envs
    (f,) = check_env({"SGLANG_CUTLASS_MOE": "1"}, spec)
    assert f.rule == "removed-env" and f.fix == "use --moe-runner-backend cutlass instead"
    assert "registry was not captured" in f.message and "0.5.21..0.5.22" in f.message
    assert check_env({"SGLANG_SOMETHING_NEW": "1"}, spec) == []  # nothing to judge it by
