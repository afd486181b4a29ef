"""Round trips: every target means exactly the plan's argv and env, whatever the values hold."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _emit_helpers import (
    compose_config,
    compose_unescape,
    k8s_expand,
    load_yaml11_docs,
    load_yaml_docs,
    read_script,
    single_plan,
)
from launchcard.argv import parallel, parse_command
from launchcard.emit import emit
from launchcard.emit._common import PLACEHOLDER
from launchcard.errors import ArgvError

NASTY = list("'\"$`\\ \n\t!*?~#;&|(){}[]<>=%:,") + ["$(", "$$", "${X}", "\r", "\u2028", "\x85", "é", "💥",
                                                     "yes", "0777", "1:30", "- ", ": ", "null", "~"]
chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
values = st.lists(st.one_of(st.sampled_from(NASTY), st.text(chars, max_size=6)), max_size=6).map("".join)
env_names = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True).map(lambda s: "T_" + s)
argvs = st.lists(values, min_size=0, max_size=8).map(lambda rest: ["vllm", "serve", "org/Model-1", *rest])
envs = st.dictionaries(env_names, values, max_size=5)
PH_ARGV = ["vllm", "serve", "m", "--master-addr", "$HEAD_IP", "--x", "http://$PREFILL_NODE_1:8001/$y",
           "$HEAD_IPX", "'$HEAD_IP'"]
PH_ENV = {"NCCL_SOCKET_IFNAME": "$IFACE_NAME", "T_A": "a$IFACE_NAME$IFACE_NAME"}
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _layout_readable(argv: list[str]) -> bool:
    """Targets that size GPUs read the parallel flags; a random `-pp` with no number is no resolver plan."""
    try:
        parallel(parse_command(argv))
    except ArgvError:
        return False
    return True


@SETTINGS
@given(argvs, envs)
def test_shell_script_reads_back_exactly(argv: list[str], env: dict[str, str]) -> None:
    (text,) = emit(single_plan(argv, env), "shell").values()
    got_argv, got_env = read_script(text)
    assert got_argv == argv
    assert got_env == env


def test_shell_placeholders_read_back_literally() -> None:
    (text,) = emit(single_plan(PH_ARGV, PH_ENV), "shell").values()
    assert read_script(text) == (PH_ARGV, PH_ENV)
    assert '"$HEAD_IP"' in text and '"${HEAD_IP:?' in text  # expanded by bash, checked first


def _run_with_stub(script: str, tmp_path: Path, extra_env: dict[str, str]) -> dict:
    """Run an emitted script with a stub `vllm` that reports the argv and env it got."""
    stub = tmp_path / "vllm"
    stub.write_text("#!/usr/bin/env python3\nimport json, os, sys\n"
                    "json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, sys.stdout)\n")
    stub.chmod(0o755)
    path = tmp_path / "launch.sh"
    path.write_text(script)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "LC_ALL": "C.UTF-8", **extra_env}
    res = subprocess.run(["bash", str(path)], capture_output=True, env=env, timeout=30)
    assert res.returncode == 0, res.stderr.decode()
    return json.loads(res.stdout)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argvs, envs)
def test_bash_runs_exactly_the_argv_and_env(tmp_path_factory, argv: list[str], env: dict[str, str]) -> None:
    (text,) = emit(single_plan(argv, env), "shell").values()
    got = _run_with_stub(text, tmp_path_factory.mktemp("sh"), {})
    assert got["argv"] == argv[1:]
    for k, v in env.items():
        assert got["env"][k] == v


def test_bash_substitutes_placeholders(tmp_path: Path) -> None:
    (text,) = emit(single_plan(PH_ARGV, PH_ENV), "shell").values()
    got = _run_with_stub(text, tmp_path, {"HEAD_IP": "10.0.0.1", "PREFILL_NODE_1": "10.0.0.2", "IFACE_NAME": "ib0"})
    assert got["argv"] == ["serve", "m", "--master-addr", "10.0.0.1", "--x", "http://10.0.0.2:8001/$y",
                           "$HEAD_IPX", "'10.0.0.1'"]  # placeholders count inside any token
    assert got["env"]["NCCL_SOCKET_IFNAME"] == "ib0" and got["env"]["T_A"] == "aib0ib0"
    res = subprocess.run(["bash", "-c", text], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert res.returncode != 0 and "export IFACE_NAME first" in res.stderr


@SETTINGS
@given(argvs, envs)
def test_docker_script_reads_back_exactly(argv: list[str], env: dict[str, str]) -> None:
    (text,) = emit(single_plan(argv, env), "docker").values()
    words, exported = read_script(text)
    assert exported == {}
    image_at = words.index("vllm/vllm-openai:nightly")
    assert words[image_at - 2:image_at] == ["--entrypoint", "vllm"]
    assert words[image_at + 1:] == argv[1:]
    opts = words[:image_at - 2]
    pairs = [opts[i + 1] for i, w in enumerate(opts) if w == "-e"]
    assert "HF_TOKEN" in pairs  # passthrough: name only
    assert dict(p.partition("=")[::2] for p in pairs if p != "HF_TOKEN") == env


def _yaml_both(text: str) -> list:
    docs = load_yaml_docs(text)
    assert docs == load_yaml11_docs(text)  # same objects for YAML 1.2 and 1.1 readers
    return docs


@SETTINGS
@given(argvs, envs)
def test_compose_reads_back_exactly(argv: list[str], env: dict[str, str]) -> None:
    assume(not any(PLACEHOLDER.search(t) for t in [*argv, *env.values()]) and _layout_readable(argv))
    (text,) = emit(single_plan(argv, env), "compose").values()
    (doc,) = _yaml_both(text)
    svc = doc["services"]["vllm"]
    assert [compose_unescape(t) for t in svc["entrypoint"] + svc["command"]] == argv
    got_env = {k: compose_unescape(v) for k, v in svc["environment"].items() if v is not None}
    assert got_env == env and svc["environment"]["HF_TOKEN"] is None


def test_compose_binary_interpolates_back_to_the_plan(tmp_path: Path) -> None:
    argv = ["vllm", "serve", "m", "--a", "$HOME", "--b", "${PATH}", "--c", "$$x", "--d", "it's \"q\"\n`id`"]
    env = {"T_A": "$HOME/$(id)", "T_B": "1:30"}
    path = tmp_path / "compose.yaml"
    path.write_text(emit(single_plan(argv, env), "compose")["compose.yaml"])
    res = compose_config(path, "--format", "json")
    assert res.returncode == 0, res.stderr
    svc = json.loads(res.stdout)["services"]["vllm"]
    # `config` prints the model re-escaped for reuse as a compose file: $ as $$.
    assert [compose_unescape(t) for t in svc["entrypoint"] + svc["command"]] == argv
    assert {k: compose_unescape(v) for k, v in svc["environment"].items() if k.startswith("T_")} == env
    assert "HF_TOKEN" not in svc["environment"] or svc["environment"]["HF_TOKEN"] is None


@SETTINGS
@given(argvs, envs)
def test_kubernetes_reads_back_exactly(argv: list[str], env: dict[str, str]) -> None:
    assume(not any(PLACEHOLDER.search(t) for t in [*argv, *env.values()]) and _layout_readable(argv))
    (text,) = emit(single_plan(argv, env), "kubernetes").values()
    docs = _yaml_both(text)
    (dep,) = [d for d in docs if d["kind"] == "Deployment"]
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    assert [k8s_expand(t, {}) for t in c["command"] + c["args"]] == argv
    plain = {e["name"]: k8s_expand(e["value"], {}) for e in c["env"] if "value" in e}
    assert plain == env
    (tok,) = [e for e in c["env"] if e["name"] == "HF_TOKEN"]
    assert tok["valueFrom"]["secretKeyRef"]["name"] == "hf-token"


@SETTINGS
@given(st.lists(values, max_size=8), envs)
def test_truss_reads_back_exactly(rest: list[str], env: dict[str, str]) -> None:
    assume(not any(PLACEHOLDER.search(t) for t in [*rest, *env.values()]))
    argv = ["vllm", "serve", "org/Model-1", "--tensor-parallel-size", "8", *rest]
    assume(_layout_readable(argv))
    (text,) = emit(single_plan(argv, env), "truss").values()
    (doc,) = _yaml_both(text)
    words = shlex.split(doc["docker_server"]["start_command"])
    assert words == ["vllm", "serve", "/app/checkpoint/model", "--host", "0.0.0.0", "--port", "8000",
                     "--served-model-name", "org/Model-1", *argv[3:]]
    assert doc.get("environment_variables", {}) == env


def test_header_cannot_be_escaped() -> None:
    evil = "x\nrm -rf /\u2028y: 1\r\x85"
    for target in ("shell", "compose", "kubernetes", "truss", "docker"):
        for text in emit(single_plan(["vllm", "serve", "m"], {}), target, card_name=evil,
                         inputs={"hardware": evil}).values():
            lines = text.splitlines()
            assert not any(line.startswith("rm ") or line.startswith("y: 1") for line in lines)
            assert "\\nrm -rf /" in text
