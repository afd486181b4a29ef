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
