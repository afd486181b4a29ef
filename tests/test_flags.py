"""Flag specs: capture helpers, typed loading, shipped specs, history by diffing specs."""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
from typing import Literal

import pydantic
import pytest

from launchcard.errors import InputError, SourceError
from launchcard.flags import derive_history
from launchcard.flags._capture import describe_parser
from launchcard.flags._capture_types import Schemas, describe_type, first_help_line, jsonable
from launchcard.flagspec import (
    SCHEMA,
    deprecated_by_help,
    shipped_index,
    shipped_spec,
    spec_from_dict,
    version_key,
)


def _optional_type(return_type):
    # same shape as vLLM's optional_type closure, so the decoder recognises it
    def _optional_type(val):
        return None if val in ("", "None") else return_type(val)

    return _optional_type


def mini_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mini")
    p.add_argument("model_tag", nargs="?")
    p.add_argument("--tensor-parallel-size", "-tp", type=int, default=1, help="Number of TP groups.\n\nMore text.")
    p.add_argument("--dtype", choices=["auto", "bfloat16", "float16"], default="auto")
    p.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--hf-overrides", type=json.loads, default=None)
    p.add_argument("--max-num-seqs", type=_optional_type(int), default=None)
    p.add_argument("--headless", action="store_true")
    return p


def test_describe_parser_captures_everything_the_checker_needs() -> None:
    body = describe_parser(mini_parser(), Schemas())
    by = {o["flags"][0]: o for o in body["options"]}
    assert body["positionals"][0]["dest"] == "model_tag" and body["positionals"][0]["nargs"] == "?"
    assert by["--tensor-parallel-size"]["flags"] == ["--tensor-parallel-size", "-tp"]
    assert by["--tensor-parallel-size"]["type"] == "int"
    assert by["--tensor-parallel-size"]["help"] == "Number of TP groups."
    assert by["--dtype"]["choices"] == ["auto", "bfloat16", "float16"]
    assert by["--enable-prefix-caching"]["action"] == "bool_pair"
    assert by["--enable-prefix-caching"]["negation"] == ["--no-enable-prefix-caching"]
    assert by["--hf-overrides"]["type"] == "json" and by["--hf-overrides"]["json"] is True
    assert by["--max-num-seqs"]["type"] == "int" and by["--max-num-seqs"]["optional"] is True
    assert by["--headless"]["action"] == "store_true" and by["--headless"]["nargs"] == 0


def test_describe_type_probes_opaque_callables() -> None:
    schemas = Schemas()
    assert describe_type(lambda s: s.lower().replace("-", "_"), schemas)["normalize"] == "lower_underscore"
    assert describe_type(lambda s: s.split(","), schemas)["type"] == "str"


@dataclasses.dataclass
class Inner:
    depth: int = 1


@dataclasses.dataclass
class Cfg:
    method: Literal["mtp", "eagle"] | None = None
    inner: Inner = dataclasses.field(default_factory=Inner)
    flags: list[str] = dataclasses.field(default_factory=list)


def test_dataclass_schema_records_fields_and_extra() -> None:
    schemas = Schemas()
    schemas.add(Cfg)
    fields = schemas.classes["Cfg"]["fields"]
    assert fields["method"]["t"] == "union"
    assert {"t": "literal", "values": ["mtp", "eagle"]} in fields["method"]["of"]
    assert fields["inner"] == {"t": "object", "class": "Inner"}
    assert fields["flags"] == {"t": "list", "items": {"t": "str"}}
    assert schemas.classes["Inner"]["fields"]["depth"] == {"t": "int"}


def test_jsonable_and_help_line_are_deterministic() -> None:
    class Thing:
        pass

    assert " at 0x" not in jsonable(Thing())
    assert jsonable({"b": 1, "a": (1, 2)}) == {"a": [1, 2], "b": 1}
    assert jsonable(float("inf")) == "inf"
    assert first_help_line("100%% sure.\n\nDetails") == "100% sure."


def test_version_key_orders_engine_versions() -> None:
    order = ["0.9.2", "0.10.0", "0.32.0rc1", "0.32.0", "0.32.0.post1", "0.33.0"]
    assert sorted([order[i] for i in (3, 0, 5, 1, 4, 2)], key=version_key) == order


def test_shipped_specs_include_vllm_032_and_load_typed() -> None:
    assert "0.32.0" in shipped_index()["vllm"]
    spec = shipped_spec("vllm", "0.32.0")
    assert spec.dialect == "vllm-flexible" and not spec.nightly
    assert "--no-enable-flashinfer-autotune" in spec.by_flag
    assert "--disable-flashinfer-autotune" not in spec.by_flag
    assert spec.by_flag["--speculative-config"].json_class is None
    assert spec.by_flag["--speculative-config"].type == "json"
    assert spec.by_flag["--attention-config"].json_class == "AttentionConfig"
    assert "glm47" in spec.registries["tool_call_parser"]
    assert "deepseek_r1" in spec.registries["reasoning_parser"]


def test_unknown_engine_or_version_is_an_input_error() -> None:
    # the library names the input (field); the CLI names the option the user typed for it
    with pytest.raises(InputError, match=r"vllm 0\.1\.0.*0\.32\.0") as bad_version:
        shipped_spec("vllm", "0.1.0")
    assert bad_version.value.field == "engine_version"
    with pytest.raises(InputError, match="nosuch") as bad_engine:
        shipped_spec("nosuch")
    assert bad_engine.value.field == "engine"


def test_bad_spec_names_where_and_rule() -> None:
    with pytest.raises(SourceError, match=r"x\.json.*not a flag spec"):
        spec_from_dict({"schema": "other"}, where="x.json")


def _spec(version: str, parser: argparse.ArgumentParser) -> object:
    body = describe_parser(parser, Schemas())
    return spec_from_dict({"schema": SCHEMA, "engine": "mini", "version": version, **body})


def test_history_derives_renames_and_removals_by_comparing_specs() -> None:
    old = mini_parser()
    old.add_argument("--disable-log-requests", action="store_true", help="Disable logging requests.")
    old.add_argument("--old-knob", type=int)
    new = argparse.ArgumentParser(prog="mini")
    new.add_argument("--tensor-parallel-size", "-tp", type=int)
    new.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction, help="Disable logging requests.")
    new.add_argument("--new-knob", type=int, dest="old_knob")
    hist = derive_history([_spec("0.2.0", new), _spec("0.1.0", old)])
    # the same help line on another field is no evidence of a rename (and --enable-x means the opposite)
    assert hist["--disable-log-requests"] == ("removed", "0.2.0", None)
    assert hist["--old-knob"] == ("renamed", "0.2.0", "--new-knob")
    assert hist["--dtype"] == ("removed", "0.2.0", None)
    assert hist["--new-knob"] == ("added", "0.2.0", None)


# ------------------------------------------------------------ start-up constraints (issue 11)


class Mode(enum.Enum):
    NONE = 0
    FULL = 1
    FULL_AND_PIECEWISE = 2


@pydantic.dataclasses.dataclass(config=pydantic.ConfigDict(extra="forbid"))
class CacheCfg:
    gpu_memory_utilization: float = pydantic.Field(default=0.9, gt=0, le=1)
    block_size: int | None = pydantic.Field(default=None, gt=0)
    mode: Mode = Mode.FULL
    kind: Literal["a", "b"] = "a"

    @pydantic.field_validator("mode", mode="before")
    @classmethod
    def _mode_from_name(cls, value: object) -> object:
        return Mode[value.upper()] if isinstance(value, str) else value


def test_schema_records_bounds_and_probes_enums_behind_validators() -> None:
    schemas = Schemas()
    schemas.add(CacheCfg)
    fields = schemas.classes["CacheCfg"]["fields"]
    assert fields["gpu_memory_utilization"] == {"t": "float", "gt": 0, "le": 1}
    assert fields["block_size"]["gt"] == 0 and fields["block_size"]["t"] == "union"
    # the validator maps names case-insensitively: found by running it, not by reading it
    assert fields["mode"] == {"t": "enum", "class": "Mode", "accepts": ["FULL", "FULL_AND_PIECEWISE", "NONE"],
                              "fold_case": True}
    assert fields["kind"] == {"t": "literal", "values": ["a", "b"]}


def test_options_record_the_config_field_they_feed() -> None:
    p = argparse.ArgumentParser(prog="mini")
    group = p.add_argument_group(title="CacheCfg")
    group.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    group.add_argument("--kind", choices=["a", "b"])
    group.add_argument("--not-a-field", type=int)
    p.add_argument("--port", type=int)
    body = describe_parser(p, Schemas(), lambda title, dest: CacheCfg if title == "CacheCfg" else None)
    by = {o["flags"][0]: o for o in body["options"]}
    assert by["--gpu-memory-utilization"]["config_field"] == "CacheCfg.gpu_memory_utilization"
    assert by["--gpu-memory-utilization"]["startup"] == {"t": "float", "gt": 0, "le": 1}
    assert by["--kind"]["config_field"] == "CacheCfg.kind" and "startup" not in by["--kind"]  # argparse choices do it
    assert "config_field" not in by["--not-a-field"] and "config_field" not in by["--port"]


def test_shipped_vllm_spec_carries_startup_constraints() -> None:
    spec = shipped_spec("vllm", "0.32.0")
    gmu = spec.by_flag["--gpu-memory-utilization"]
    assert gmu.config_field == "CacheConfig.gpu_memory_utilization" and gmu.startup == {"t": "float", "gt": 0, "le": 1}
    assert spec.by_flag["--max-num-seqs"].startup == {"t": "int", "ge": 1}
    assert spec.by_flag["--speculative-config"].config_field == "VllmConfig.speculative_config"
    assert "num_speculative_tokens" in spec.json_classes["SpeculativeConfig"]["fields"]
    assert spec.json_classes["CompilationConfig"]["fields"]["cudagraph_mode"]["t"] == "enum"


@pytest.mark.parametrize(("help_text", "expected"), [
    ("--log-config-file is deprecated and will be removed in v0.33.0.", True),
    ("Deprecated. Use --image-processor-backend=pil instead.", True),
    ("(Deprecated: use --x=auto) Enable fusion.", True),
    ("This option has been deprecated.", True),
    ("Interleave size. x has been replaced by y, and will be deprecated when PCP is fully supported.", False),
    ("Whether to allow deprecated quantization methods.", False),
    ("Use the legacy server. Replaces the deprecated --grpc-mode.", False),
    ("if a previously deprecated metric has been hidden", False),
    # the subject right before the verb: a spelling of the option (backticks, any case) or "this option"
    ("`--log-config-file`  has been now deprecated.", True),
    ("Where: log-config-file\nwas deprecated in 0.30.", True),
    ("THIS FLAG IS DEPRECATED.", True),
    ("The other --log-config-files is deprecated.", False),
    ("this option` is deprecated", False),
    ("--log-config-file is deprecatedly named", False),
])
def test_deprecation_only_from_definite_wording(help_text: str, expected: bool) -> None:
    assert deprecated_by_help(help_text, ("--log-config-file",), "log_config_file") is expected


# ------------------------------------------------------------ issue 23: one tokenisation per parser shape


_TRICKY = [
    ["vllm", "serve", "m", "-tp", "2", "--max-model-len=32k", "--enable-prefix-caching"],
    ["vllm", "serve", "m", "-tp2", "--gpu-memory-util", "0.9"],  # attached short value, abbreviation
    ["vllm", "serve", "m", "--max", "4"],  # ambiguous abbreviation: argparse stops
    ["vllm", "serve", "m", "--tensor-parallel-size"],  # missing value: argparse stops
    ["vllm", "serve", "m", "--seed", "-5", "--no-such-flag", "x", "extra"],  # negative number, unknown, positional
    ["vllm", "serve", "m", "--speculative-config", '{"method": "mtp"}', "--", "--after"],
    ["vllm", "serve", "--model", "m", "--disable-log-stats", "--no-enable-prefix-caching", "-O3"],
]


@pytest.mark.parametrize("argv", _TRICKY, ids=range(len(_TRICKY)))
def test_cut_down_parser_reads_every_word_as_the_full_parser(argv: list[str]) -> None:
    """The memoised cut-down parse equals a parse by the full parser rebuilt from the spec, in every release."""
    from launchcard.flags import _check, _tokenise
    from launchcard.flagspec import rewrite, shipped_index, shipped_spec

    for version in shipped_index()["vllm"]:
        spec = shipped_spec("vllm", version)
        _, args = _check.split_command(argv, spec)
        words = rewrite(args, spec.dialect).args
        full = _tokenise._argparser(spec)
        ns = argparse.Namespace()
        stopped = None
        try:
            _, extras = full.parse_known_args(words, ns)
        except (_tokenise._Stop, argparse.ArgumentError) as exc:
            stopped = (getattr(exc, "argument_name", None) or getattr(exc, "flag", "") or "argv",
                       getattr(exc, "message", str(exc)))
            extras = []
        got = _tokenise.parse_words(spec, words)
        assert got == _tokenise._Parsed(tuple(ns.__dict__.get("_lc_seen", ())), tuple(extras), tuple(full.expanded),
                                     stopped), version
