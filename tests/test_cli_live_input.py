"""`up`, `verify` and `bench` refuse bad numbers in one line naming the option the user typed (exit 2), before any
process starts or request is sent: no internal error, no run of requests every server would refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

DEAD = "http://127.0.0.1:1"  # nothing listens: a check that passed bad input on would fail there, not exit 2


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
@pytest.mark.parametrize("command", ["verify", "bench"])
def test_verify_refuses_a_time_limit_that_is_not_a_positive_number(command: str, value: str) -> None:
    """One rule, one wording on every live command (bench took --timeout inf, and said 0 in pydantic's words)."""
    out = run_cli(command, "--endpoint", DEAD, "--timeout", value)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "internal error" not in out.stderr
    assert "--timeout" in out.stderr and "positive number of seconds" in out.stderr and not out.stdout


@pytest.mark.parametrize(("args", "flag", "words"), [
    (("--timeout", "-1"), "--timeout:", "seconds"),
    (("--temperature", "-1"), "--temperature:", "vllm/sampling_params.py"),
    (("--temperature", "nan"), "--temperature:", "finite"),
    (("--top-p", "2"), "--top-p:", "(0, 1]"),
    (("--top-p", "0"), "--top-p:", "(0, 1]"),
])
def test_bench_names_the_option_typed_and_refuses_sampling_values_vllm_refuses(
        args: tuple[str, ...], flag: str, words: str) -> None:
    out = run_cli("bench", "--endpoint", DEAD, *args)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and f"error: {flag}" in out.stderr and words in out.stderr
    assert "--timeout-s" not in out.stderr


@pytest.mark.parametrize(("args", "words"), [(("--timeout", "-5"), "positive number of seconds"),
                                             (("--timeout", "nan"), "positive number of seconds"),
                                             (("--port", "-1"), "--port")])
def test_up_refuses_a_bad_ready_timeout_or_port_before_starting_anything(tmp_path: object, args: tuple[str, ...],
                                                                         words: str) -> None:
    out = run_cli("up", "--log", f"{tmp_path}/server.log", "--state", f"{tmp_path}/up.json", *args, "--", "true")
    assert out.returncode == 2, out.stderr
    assert words in out.stderr and "starting" not in out.stderr


@pytest.mark.parametrize("command", ["verify", "bench"])
@pytest.mark.parametrize("url", ["http://127.0.0.1:99999", "http://127.0.0.1:0", "http://:8000", "http://",
                                 "http://[::1:8000"])  # urlsplit raises on the bracket: was an internal error
def test_an_endpoint_with_no_host_or_a_port_outside_1_65535_is_bad_input(command: str, url: str) -> None:
    """`verify --endpoint http://127.0.0.1:99999` was sent and reported "connection refused" (exit 1, the
    endpoint failing its check) for a URL no server can have."""
    proc = run_cli(command, "--endpoint", url, "--timeout", "1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"launchcard: error: --endpoint: not an http(s) URL with a host and a port in 1-65535 "
                           f"({url!r}); write e.g. http://127.0.0.1:8000\n")


@pytest.mark.parametrize("command", ["verify", "bench"])
def test_an_openai_base_url_is_refused_with_the_root_to_give(command: str) -> None:
    """`--endpoint http://host:8000/v1` (an OpenAI client's base_url) asked /v1/v1/models and failed every check."""
    proc = run_cli(command, "--endpoint", "http://127.0.0.1:8000/v1/", "--timeout", "1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("launchcard: error: --endpoint: 'http://127.0.0.1:8000/v1/' is the OpenAI API's base URL; "
                           "the checks add /v1/... and /health themselves; give the server's root: "
                           "http://127.0.0.1:8000\n")


def test_up_refuses_a_state_file_it_could_not_write_before_starting_anything(tmp_path: Path) -> None:
    """The state is written once the server is healthy: `up --state FILE/up.json` started the server, waited for
    it, then ended in "internal error: FileExistsError" and stopped it (a whole model load for nothing)."""
    (tmp_path / "f").write_text("x")
    state = tmp_path / "f" / "up.json"
    out = run_cli("up", "--log", f"{tmp_path}/server.log", "--state", str(state), "--", "true")
    assert out.returncode == 2 and "starting" not in out.stderr
    assert out.stderr == (f"launchcard: error: --state {state}: cannot create the state file ({tmp_path / 'f'} is "
                          "not a folder); choose a file in a writable folder\n")


def test_bench_refuses_a_model_dir_that_is_not_a_folder(tmp_path: Path) -> None:
    """`bench --model-dir /typo` ran with approximate word prompts, saying only "no tokenizer of the served model
    was available": the exact sizing asked for was dropped without naming the option."""
    (tmp_path / "f").write_text("x")
    for path, said in ((tmp_path / "nope", "does not exist"), (tmp_path / "f", "is a file")):
        proc = run_cli("bench", "--endpoint", "http://127.0.0.1:1", "--model-dir", str(path))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert proc.stderr.startswith(f"launchcard: error: Invalid value for '--model-dir': Directory '{path}' {said}")


@pytest.mark.parametrize(("text", "words"), [
    ("{}", "pid: Field required"),
    ("[1]", "(document):"),
    ('{"pid": "x", "endpoint": "http://h:1", "argv": ["vllm"], "log": "l", "started_at": "2026-01-01T00:00:00Z"}',
     "pid:"),
    # pid 1 is init: `down` would have signalled its whole process group
    ('{"pid": 1, "endpoint": "http://h:1", "argv": ["vllm"], "log": "l", "started_at": "2026-01-01T00:00:00Z"}',
     "pid: Input should be greater than 1"),
])
@pytest.mark.parametrize("command", ["down", "up"])
def test_a_state_file_that_is_not_ups_is_bad_input_naming_it(tmp_path: Path, text: str, words: str,
                                                             command: str) -> None:
    """qa12: `down --state F` (and `up` finding F) where F is JSON of another shape was an internal error (pydantic's
    multi-line ValidationError); a pid of 1 was taken and its group signalled."""
    state = tmp_path / "up.json"
    state.write_text(text)
    args = ("--state", str(state)) if command == "down" else ("--state", str(state), "--", "true")
    out = run_cli(command, *args)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if "error" in line]  # up says first what it would start
    assert len(errors) == 1 and "internal error" not in out.stderr, out.stderr
    assert f"{state}: not a `launchcard up` state file ({words}" in errors[0]
    assert state.read_text() == text  # left for the user to look at


@pytest.mark.parametrize("kind", ["missing", "folder", "not_executable"])
def test_up_refuses_a_python_it_cannot_run_naming_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         kind: str) -> None:
    """qa12: `up --python /nonexistent -- vllm serve m` said "argv[0]='/nonexistent': cannot start the server", after
    printing what it was starting: the option typed was not named."""
    monkeypatch.chdir(tmp_path)
    python = tmp_path / "py"
    if kind == "folder":
        python.mkdir()
    elif kind == "not_executable":
        python.write_text("#!/bin/sh\n")
    out = run_cli("up", "--python", str(python), "--", "vllm", "serve", "m")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"launchcard: error: --python: no such interpreter, or not executable ({python})")
    assert not (tmp_path / ".launchcard").exists()
