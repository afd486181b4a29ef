"""The one argv model: how a launch command is read, and that every reader reads it the same way."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launchcard.argv import ParsedCommand, module_argv, parallel, parse_command, render, split_env
from launchcard.errors import ArgvError, InputError

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
REPEATED_TP = ["vllm", "serve", "openai/gpt-oss-120b", "--tensor-parallel-size", "2", "--max-model-len", "8192",
               "--tensor-parallel-size", "4"]


# --- entry points -------------------------------------------------------------

@pytest.mark.parametrize("argv, engine, entry, kind", [
    (["vllm", "serve", "m"], "vllm", ("vllm", "serve"), "serve"),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], "vllm",
     ("python3", "-m", "vllm.entrypoints.openai.api_server"), "module"),
    (["sglang", "serve", "--model-path", "m"], "sglang", ("sglang", "serve"), "serve"),
    (["/usr/bin/python", "-m", "sglang.launch_server", "--model-path", "m"], "sglang",
     ("/usr/bin/python", "-m", "sglang.launch_server"), "module"),
    (["python3", "-m", "dynamo.vllm", "--model", "m"], "vllm", ("python3", "-m", "dynamo.vllm"), "wrapper"),
    (["trtllm-serve", "--model", "m", "--tp_size", "8"], "trtllm-serve", ("trtllm-serve",), "other"),
])
def test_entry_points(argv: list[str], engine: str, entry: tuple[str, ...], kind: str) -> None:
    cmd = parse_command(["HF_HUB_OFFLINE=1", "A=x=y", *argv])
    assert (cmd.engine, cmd.entry, cmd.entry_kind) == (engine, entry, kind)
    assert cmd.env == (("HF_HUB_OFFLINE", "1"), ("A", "x=y"))
    assert cmd.model_path() == "m"


def test_bare_flags_take_the_given_engine() -> None:
    assert parse_command(["-tp", "4"], engine="vllm").get_int("--tensor-parallel-size") == 4
    assert parse_command(["-tp", "4"]).spec_version is None  # no engine: the heuristic alone


def test_split_env_keeps_the_command() -> None:
    assert split_env(["A=1", "vllm", "serve", "B=2"]) == ({"A": "1"}, ["vllm", "serve", "B=2"])


# --- vLLM's reading -----------------------------------------------------------

def test_aliases_equals_underscores_and_last_wins() -> None:
    cmd = parse_command(["vllm", "serve", "m", "-tp", "2", "--tensor_parallel_size=8", "--tensor-parallel-size", "4"])
    assert cmd.options["tensor_parallel_size"] == "4" and cmd.get_int("-tp") == 4
    assert [o.written for o in cmd.occurrences] == ["-tp", "--tensor_parallel_size", "--tensor-parallel-size"]


def test_model_flag_becomes_the_positional() -> None:
    cmd = parse_command(["vllm", "serve", "--port", "1", "--model", "org/m", "-tp", "2"])
    assert cmd.model == "org/m" and "model" not in cmd.options and cmd.get_int("--port") == 1
    module = parse_command(["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "org/m"])
    assert module.model is None and module.model_path() == "org/m"


def test_switches_pairs_and_values() -> None:
    cmd = parse_command(["vllm", "serve", "m", "--enable-prefix-caching", "--headless", "--no-enable-prefix-caching",
                         "--served-model-name", "a", "b", "--middleware", "x", "--middleware", "y", "-O3"])
    assert cmd.get_bool("--enable-prefix-caching") is False and cmd.get_bool("--no-enable-prefix-caching") is False
    assert cmd.get_bool("--headless") is True and cmd.get_bool("--enforce-eager") is None
    assert cmd.get_list("--served-model-name") == ("a", "b") and cmd.get_str("--served-model-name") == "a"
    assert cmd.options["middleware"] == ("x", "y")  # append options accumulate
    assert cmd.get_str("--optimization-level") == "3"


def test_human_readable_ints_where_vllm_takes_them() -> None:
    cmd = parse_command(["vllm", "serve", "m", "--max-model-len", "32k", "--max-num-batched-tokens", "2K"])
    assert cmd.get_int("--max-model-len") == 32_000 and cmd.get_int("--max-num-batched-tokens") == 2048
    with pytest.raises(ArgvError, match=r"argv --port: expects an integer \('8k'\)"):
        parse_command(["vllm", "serve", "m", "--port", "8k"]).get_int("--port")


def test_dotted_keys_merge_and_win_over_the_whole_object() -> None:
    cmd = parse_command(["vllm", "serve", "m", "--speculative-config.method", "mtp",
                         "--speculative-config", '{"method": "eagle", "num_speculative_tokens": 9}',
                         "--speculative_config.num_speculative_tokens=3", "--compilation-config.sizes+", "1,2"])
    # vLLM appends the merged object after every other flag, so it replaces the JSON given in between
    assert cmd.get_json("--speculative-config") == {"method": "mtp", "num_speculative_tokens": 3}
    assert cmd.get_json("-cc") == {"sizes": ["1", "2"]}
    occ = cmd.last("--speculative-config")
    assert occ is not None
    assert occ.parts == ("--speculative-config.method", "--speculative_config.num_speculative_tokens")


def test_sglang_is_plain_argparse() -> None:
    cmd = parse_command(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4",
                         "--tensor-parallel-size", "8", "--enable-dp-attention", "--dp-size", "2"])
    # --tp is argparse's abbreviation of --tp-size; --tensor-parallel-size is its alias
    assert cmd.options["tp_size"] == "8" and cmd.get_int("--tp") == 8
    assert cmd.get_bool("--enable-dp-attention") is True and cmd.get_int("--dp-size") == 2


def test_unknown_flags_follow_the_documented_rule() -> None:
    cmd = parse_command(["python", "-m", "x", "--a", "1", "--b", "--c=-1", "--no-d", "--e", "-5"])
    assert dict(cmd.options) == {"a": "1", "b": True, "c": "-1", "d": False, "e": "-5"}
    assert all(not o.known for o in cmd.occurrences)


def test_typed_accessors_name_the_flag_and_value() -> None:
    cmd = parse_command(["vllm", "serve", "m", "-tp", "four", "--gpu-memory-utilization", "lots",
                         "--speculative-config", "{oops", "--port"])
    with pytest.raises(ArgvError) as exc:
        cmd.get_int("--tensor-parallel-size")
    assert exc.value.one_line() == "argv -tp: expects an integer ('four'); give a whole number"
    assert isinstance(exc.value, InputError) and exc.value.exit_code == 2
    with pytest.raises(ArgvError, match="gpu-memory-utilization: expects a number"):
        cmd.get_float("--gpu-memory-utilization")
    with pytest.raises(ArgvError, match="speculative-config: expects JSON"):
        cmd.get_json("--speculative-config")
    with pytest.raises(ArgvError, match="--port: expects an integer \\(no value given\\)"):
        cmd.get_int("--port")
    assert cmd.try_int("-tp") is None and "--port: expects a value" in cmd.problems


# --- rendering ----------------------------------------------------------------

def test_render_is_canonical() -> None:
    cmd = parse_command(["A=1", "vllm", "serve", "m", "-tp=2", "--no-enable-prefix-caching", "--port", "1",
                         "-tp", "4", "--speculative-config.num_speculative_tokens", "3", "--served-model-name=-x"])
    assert render(cmd) == ("A=1", "vllm", "serve", "m", "--tensor-parallel-size", "4", "--no-enable-prefix-caching",
                           "--port", "1", "--served-model-name=-x", "--speculative-config",
                           '{"num_speculative_tokens": 3}')


def test_module_argv_keeps_every_other_word() -> None:
    assert module_argv(["vllm", "serve", "--port", "1", "--model=M", "-tp", "2"], "py") == (
        "py", "-m", "vllm.entrypoints.openai.api_server", "--model", "M", "--port", "1", "-tp", "2")
    assert module_argv(["vllm", "serve", "M"], "py")[-2:] == ("--model", "M")
    assert module_argv(["sglang", "serve", "--model-path", "M"], "py") == ("sglang", "serve", "--model-path", "M")


def test_parallel_layout_per_node() -> None:
    head = parse_command(["vllm", "serve", "m", "--tensor-parallel-size", "16", "--nnodes", "2"])
    dep = parse_command(["vllm", "serve", "m", "--data-parallel-size", "16", "--data-parallel-size-local", "8"])
    assert (parallel(head).world, parallel(head).per_node) == (16, 8)
    assert (parallel(dep).world, parallel(dep).per_node, parallel(dep).tp) == (16, 8, None)
    assert not parallel(parse_command(["vllm", "serve", "m"])).stated


# --- every reader reads a repeated flag as the engine does (the last one) -----

def test_memory_reads_the_last_tp() -> None:
    from launchcard.memory import settings_from_argv

    assert settings_from_argv(REPEATED_TP).tp == 4
    assert settings_from_argv(["-tp", "2", "--tensor_parallel_size", "4", "--no-enable-prefix-caching"]).tp == 4


def test_resolve_memory_plans_the_last_tp() -> None:
    from launchcard.memory import plan_for_argv

    config = CORPUS / "hf" / "openai" / "gpt-oss-120b" / "config.json"
    if not config.is_file():
        pytest.skip("corpus not found")
    assert plan_for_argv(REPEATED_TP, config, gpu="h100").gpu_count == 4


def test_card_hardware_needs_read_the_last_tp() -> None:
    from launchcard.card import EngineEnv, SourceRef
    from launchcard.check import process_gpus
    from launchcard.merge._hardware import deployments, reproduce_args, tp_rule
    from launchcard.resolve import Command

    # A recipe env's gpus is what its process holds, counted by the one counter the card builder uses
    # (check.process_gpus, since the plan-facts change); it must read the last TP, not the first or the node size.
    held, basis = process_gpus(Command(role="single", argv=tuple(REPEATED_TP), env={}), deploy_type="single",
                               node_gpus=8)
    assert (held, basis) == (4, "TP 4 x PP 1")
    env = EngineEnv(engine="vllm", hardware="h100", gpus=held, argv=tuple(REPEATED_TP),
                    checkpoint="openai/gpt-oss-120b",
                    source=SourceRef(kind="vllm-recipes", path="models/openai/gpt-oss-120b.yaml"))
    assert [d.gpus for d in deployments([env])] == [4]
    assert (tp_rule([env], None) or "").startswith("published TP 4 only")
    args = reproduce_args(env.argv, "h100", "config.json")
    assert args.count("--tp") == 1 and args[args.index("--tp") + 1] == "4"


def test_emit_requests_the_last_tp() -> None:
    from _emit_helpers import single_plan
    from launchcard.emit import emit

    plan = single_plan(REPEATED_TP, {}, model_id="openai/gpt-oss-120b")
    k8s = "".join(emit(plan, "kubernetes", card_name=None).values())
    assert 'nvidia.com/gpu: "4"' in k8s and 'nvidia.com/gpu: "2"' not in k8s
    assert "instance_type: H100:4" in "".join(emit(plan, "truss", card_name=None).values())


def test_check_keeps_the_last_value() -> None:
    from launchcard.flags import check_argv

    found = check_argv([*REPEATED_TP, "--tool-call-parser", "nonesuch", "--enable-auto-tool-choice",
                        "--tool-call-parser", "hermes"])
    assert not any(f.rule == "unknown-parser" for f in found)  # only the last parser counts
    dup = [f for f in found if f.rule == "duplicate" and f.flag == "--tensor-parallel-size"]
    assert dup and "keeps the last" in dup[0].fix
    assert parse_command(REPEATED_TP).get_int("--tensor-parallel-size") == 4


def test_up_and_live_read_the_last_value() -> None:
    from launchcard.cli._live import _served_name, _spec
    from launchcard.live import port_from_argv
    from launchcard.verify import Expect

    argv = [*REPEATED_TP, "--port", "8001", "--served-model-name", "a", "--port=8002", "--served-model-name", "b",
            "--reasoning-parser", "x"]
    assert _spec(None, argv, [], None, None).port == 8002 and port_from_argv(argv) == 8002
    assert _served_name(tuple(argv)) == "b"
    assert Expect.from_argv(argv).reasoning is True and Expect.from_argv(argv).tools is False


def test_sources_read_the_last_value() -> None:
    import hashlib

    from launchcard.sources import SourceDoc
    from launchcard.sources._base import argv_facts
    from launchcard.sources.sglang_cookbook import role_of

    raw = b"python3 -m dynamo.vllm --model m --max-model-len 4096 --reasoning-parser a --max_model_len=8192\n"
    doc = SourceDoc(kind="dynamo", path="d.yaml", sha256=hashlib.sha256(raw).hexdigest(), raw=raw)
    argv = [*raw.decode().split(), "--dyn-reasoning-parser", "b", "--speculative-config.num_speculative_tokens", "2"]
    facts = {f.name: f.value for f in argv_facts(doc, argv)}
    assert facts == {"context_tokens": 8192, "reasoning_parser": "b", "num_speculative_tokens": 2}
    twice = ["sglang", "serve", "--disaggregation-mode", "prefill", "--disaggregation-mode=decode"]
    assert role_of(twice, "") == "decode"
    cmd = parse_command(["sglang", "serve", "--model-path", "m", "--tp", "2", "--tp-size", "4"])
    assert cmd.try_int("--tp-size", "--tp", "--tensor-parallel-size") == 4


# --- properties -----------------------------------------------------------------

_WORD = st.from_regex(r"[a-z0-9][a-z0-9_./]{0,6}", fullmatch=True)
_INT = st.sampled_from(["1", "2", "4", "8", "32k", "2K"])
# (spellings, value strategy, kind); kind: 1 = one value, + = several, 0 = switch, a = append
_VLLM = [
    (("--tensor-parallel-size", "-tp", "--tensor_parallel_size"), _INT, "1"),
    (("--max-model-len", "--max_model_len"), _INT, "1"),
    (("--port",), _INT, "1"),
    (("--kv-cache-dtype",), st.sampled_from(["auto", "fp8"]), "1"),
    (("--gpu-memory-utilization",), st.sampled_from(["0.9", "0.85"]), "1"),
    (("--speculative-config", "-sc"), st.builds(lambda n: json.dumps({"num_speculative_tokens": n}),
                                                st.integers(1, 5)), "1"),
    (("--served-model-name",), st.lists(_WORD, min_size=1, max_size=3), "+"),
    (("--enable-prefix-caching", "--no-enable-prefix-caching", "--enable_prefix_caching"), st.none(), "0"),
    (("--headless", "--enforce-eager", "--no-enforce-eager"), st.none(), "0"),
    (("--middleware",), _WORD, "a"),
]
_UNKNOWN = [  # flags vLLM 0.32 does not have: read by the heuristic
    (("--some-new-flag", "--some_new_flag"), _WORD, "1"),
    (("--new-switch", "--no-new-switch"), st.none(), "0"),
    (("--no-other",), _WORD, "1"),
]


@st.composite
def _commands(draw: st.DrawFn, dotted: bool = True, unknown: bool = True) -> list[str]:
    argv = ["vllm", "serve", draw(_WORD)]
    for _ in range(draw(st.integers(0, 8))):
        spellings, values, kind = draw(st.sampled_from(_VLLM + (_UNKNOWN if unknown else [])))
        flag = draw(st.sampled_from(spellings))
        value = draw(values)
        if kind == "0":
            argv.append(flag)
        elif flag.startswith("--no-"):
            argv.append(f"{flag}={value}")  # the heuristic reads a bare unknown --no-x as a switch
        elif kind == "+":
            argv += [flag, *value]
        elif draw(st.booleans()):
            argv.append(f"{flag}={value}")
        else:
            argv += [flag, value]
    if dotted and draw(st.booleans()):
        argv += ["--speculative-config.num_speculative_tokens", str(draw(st.integers(1, 5)))]
    return argv


def _same(a: ParsedCommand, b: ParsedCommand) -> bool:
    return (a.model, a.env, a.positionals, dict(a.options)) == (b.model, b.env, b.positionals, dict(b.options))


@settings(max_examples=150, deadline=None)
@given(_commands())
def test_render_round_trips(argv: list[str]) -> None:
    cmd = parse_command(argv)
    again = parse_command(render(cmd))
    assert _same(cmd, again)
    assert render(again) == render(cmd)


@settings(max_examples=100, deadline=None)
@given(_commands(), st.sampled_from(["-tp", "--tensor-parallel-size", "--tensor_parallel_size"]),
       st.integers(1, 64), st.integers(1, 64))
def test_last_occurrence_wins(argv: list[str], spelling: str, first: int, last: int) -> None:
    cmd = parse_command([*argv[:3], spelling, str(first), *argv[3:], f"{spelling}={last}"])
    assert cmd.get_int("--tensor-parallel-size") == last


@settings(max_examples=100, deadline=None)
@given(_commands())
def test_underscores_and_dashes_are_one_flag(argv: list[str]) -> None:
    def underscored(word: str) -> str:
        if not word.startswith("--"):
            return word
        name, eq, value = word.partition("=")
        head, dot, tail = name[2:].partition(".")
        return "--" + head.replace("-", "_") + dot + tail + eq + value

    assert _same(parse_command(argv), parse_command([underscored(w) for w in argv]))


@settings(max_examples=100, deadline=None)
@given(_commands(unknown=False))
def test_agrees_with_the_engines_own_argparse(argv: list[str]) -> None:
    """The checker's argparse (rebuilt from the captured parser) records the same final values."""
    from launchcard.flags._tokenise import _argparser
    from launchcard.flagspec import rewrite, shipped_spec

    spec = shipped_spec("vllm", "0.32.0")
    ns = argparse.Namespace()
    _argparser(spec).parse_known_args(rewrite(argv[2:], spec.dialect).args, ns)
    final: dict[str, object] = {}
    for dest, option, values in ns.__dict__.get("_lc_seen", []):
        o = spec.by_dest.get(dest)
        if o is None:
            final[dest] = values
        elif o.action == "append":
            final[dest] = (*final.get(dest, ()), values)  # type: ignore[misc]
        elif o.action == "bool_pair":
            final[dest] = not str(option).startswith("--no-")
        elif o.action == "store_true" or o.nargs == 0:
            final[dest] = True
        else:
            final[dest] = tuple(values) if isinstance(values, list) else values
    cmd = parse_command(argv)
    assert final.pop("model_tag") == cmd.model
    assert final == dict(cmd.options)


def test_check_reads_the_entry_point_through_the_model() -> None:
    from launchcard.flags import split_command
    from launchcard.flagspec import shipped_spec

    vllm = shipped_spec("vllm", "0.32.0")
    assert split_command(["A=1", "/opt/venv/bin/vllm", "serve", "m", "-tp", "2"], vllm) == ("server", ["m", "-tp", "2"])
    assert split_command(["python3", "-m", "dynamo.vllm", "--x"], vllm) == ("wrapper", ["--x"])
    assert split_command(["sglang", "serve", "--tp", "2"], vllm)[0] == "other"
    assert split_command(["-tp", "2"], vllm) == ("server", ["-tp", "2"])
