"""Start-up log lines become measured facts; up/down manage a process group."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from launchcard.errors import EndpointError, InputError
from launchcard.live import (
    LaunchSpec,
    ServerState,
    alive,
    parse_startup_log,
    port_from_argv,
    start_server,
    stop_group,
    stop_server,
    with_measured,
)
from launchcard.live._process import group_members

LOG = """\
(APIServer pid=1) INFO 12-02 14:07:56 [api_utils.py:347]  version 0.32.0
(EngineCore pid=2) INFO 12-02 14:09:20 [kv_cache_utils.py:1] Available KV cache memory: 1.00 GiB
(EngineCore pid=2) INFO 12-02 14:09:20 [kv_cache_utils.py:2] CPU KV cache size: 16,384 tokens, Maximum concurrency for 512 tokens per request: 32.00x
(EngineCore pid=2) INFO 12-02 14:09:21 [core.py:3] init engine (profile, create kv cache, warmup model) took 12.34 seconds
(Worker pid=3) INFO 12-02 14:09:06 [gpu_model_runner.py:5150] Model loading took 0.0019 GiB memory and 0.213000 seconds
"""


def test_startup_lines_become_measured_facts() -> None:
    facts = {f.name: f for f in parse_startup_log(LOG, log_path="server.log")}
    kv = facts["kv_cache_tokens"]
    assert kv.value == 16384 and kv.unit == "tokens" and kv.classification == "measured"
    assert kv.evidence is not None and kv.evidence.line == 3 and kv.evidence.path == "server.log"
    assert facts["max_concurrency"].value == 32.0
    assert facts["max_concurrency"].conditions is not None and facts["max_concurrency"].conditions.input_tokens == 512
    assert facts["available_kv_cache_gib"].value == 1.0
    assert facts["engine_init_seconds"].value == 12.34
    assert facts["weights_memory_gib"].value == 0.0019
    assert facts["model_load_seconds"].value == 0.213


def test_absent_lines_give_no_fact() -> None:
    assert parse_startup_log("nothing useful here\n") == ()


def test_flags_from_argv() -> None:
    argv = ("python", "-m", "x", "--port", "8123", "--reasoning-parser=qwen3", "--enable-auto-tool-choice")
    assert port_from_argv(argv) == 8123
    assert port_from_argv(("vllm", "serve", "m")) == 8000
    with pytest.raises(InputError):
        port_from_argv(("--port", "abc"))


def test_with_measured_replaces_same_name_only() -> None:
    from launchcard.card import Fact, LaunchCard

    card = LaunchCard(
        model="m",
        facts=(
            Fact(name="kv_cache_tokens", value=1, classification="measured"),
            Fact(name="kv_cache_tokens", value=7, classification="declared"),
            Fact(name="other", value=2, classification="measured"),
        ),
    )
    out = with_measured(card, [Fact(name="kv_cache_tokens", value=5, classification="measured")])
    assert [(f.name, f.value) for f in out.facts] == [("kv_cache_tokens", 7), ("other", 2), ("kv_cache_tokens", 5)]


# A stand-in server: answers /health, forks a child (like vLLM's engine core)
# so stopping must take the whole process group.
FAKE = r"""
import http.server, os, sys, time
port = int(sys.argv[1]); delay = float(sys.argv[2])
if os.fork() == 0:
    time.sleep(3600)
print("CPU KV cache size: 1,234 tokens, Maximum concurrency for 64 tokens per request: 19.28x", flush=True)
time.sleep(delay)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _group_members(pgid: int) -> list[int]:
    return group_members(pgid) or []


@pytest.fixture()
def fake_server(tmp_path: Path) -> Path:
    path = tmp_path / "fake_server.py"
    path.write_text(FAKE)
    return path


def test_up_waits_for_health_reads_facts_and_down_kills_the_group(tmp_path: Path, fake_server: Path) -> None:
    port = _free_port()
    spec = LaunchSpec(argv=(sys.executable, str(fake_server), str(port), "0.5"), port=port, ready_timeout_s=20)
    state_path = tmp_path / "up.json"
    srv = start_server(spec, log=tmp_path / "server.log", state_path=state_path)
    assert srv.endpoint == f"http://127.0.0.1:{port}" and srv.ready_seconds is not None
    assert {f.name: f.value for f in srv.facts}["kv_cache_tokens"] == 1234
    assert ServerState.load(state_path).pid == srv.pid
    assert len(_group_members(srv.pid)) == 2  # server and its forked child
    assert stop_server(state_path, grace_s=5) is not None
    time.sleep(0.2)
    assert _group_members(srv.pid) == [] and not state_path.exists()


def test_ready_timeout_stops_the_group(tmp_path: Path, fake_server: Path) -> None:
    port = _free_port()
    spec = LaunchSpec(argv=(sys.executable, str(fake_server), str(port), "60"), port=port, ready_timeout_s=1.5)
    pids: list[int] = []
    began = time.monotonic()
    with pytest.raises(EndpointError, match=r"ready timeout of 1\.5s"):
        start_server(spec, log=tmp_path / "server.log", on_started=pids.append)
    assert time.monotonic() - began < 15
    assert _group_members(pids[0]) == []


def test_server_that_dies_fails_fast_with_log_tail(tmp_path: Path) -> None:
    spec = LaunchSpec(
        argv=(sys.executable, "-c", "print('boom: bad flag'); raise SystemExit(3)"),
        port=_free_port(),
        ready_timeout_s=30,
    )
    with pytest.raises(EndpointError, match="exited with code 3") as info:
        start_server(spec, log=tmp_path / "server.log")
    assert "boom: bad flag" in info.value.one_line()


def test_missing_command_is_one_clear_error(tmp_path: Path) -> None:
    spec = LaunchSpec(argv=("/nonexistent/vllm", "serve"), port=_free_port())
    with pytest.raises(InputError, match="cannot start the server"):
        start_server(spec, log=tmp_path / "server.log")


@pytest.fixture()
def cpu_hog() -> Iterator[None]:
    """Every core busy for the test (issue 23: a Ctrl-C lost under load): one busy-loop process per CPU,
    each bounded (it exits by itself after 120 s) and killed at the end of the test."""
    import os

    hogs = [subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() + 120\n"
                              "while time.monotonic() < end: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_in_foreground_up_leaves_no_orphans(tmp_path: Path, fake_server: Path, cpu_hog: None,
                                                   inherited: str) -> None:
    """SIGINT stops a foreground `up` and its whole server group, with every core busy.

    "ignored": `up` started the way a non-interactive shell starts a background job (SIGINT inherited as
    ignored, which Python keeps); before the fix that `up` never saw the Ctrl-C and the wait timed out.
    """
    import signal

    port = _free_port()
    state = tmp_path / "up.json"
    cmd = [
        sys.executable,
        "-m",
        "launchcard.cli",
        "up",
        "--no-record",
        "--port",
        str(port),
        "--state",
        str(state),
        "--log",
        str(tmp_path / "s.log"),
        "--",
        sys.executable,
        str(fake_server),
        str(port),
        "0.2",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=_ignore_sigint if inherited == "ignored" else None)
    deadline = time.monotonic() + 60
    while not state.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert state.exists(), proc.communicate(timeout=30)[0]
    server_pid = ServerState.load(state).pid
    assert alive(server_pid)
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:  # the failure being tested: clean up the server group before failing
            proc.kill()
            stop_group(server_pid, grace_s=2)
    assert "stopping the server" in out
    time.sleep(0.2)
    assert _group_members(server_pid) == [] and not state.exists()


def test_sigterm_while_waiting_for_health_leaves_no_orphans(tmp_path: Path, fake_server: Path) -> None:
    import signal

    port = _free_port()
    log = tmp_path / "s.log"
    cmd = [
        sys.executable,
        "-m",
        "launchcard.cli",
        "up",
        "--no-record",
        "--port",
        str(port),
        "--state",
        str(tmp_path / "up.json"),
        "--log",
        str(log),
        "--",
        sys.executable,
        str(fake_server),
        str(port),
        "60",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while (not log.exists() or "KV cache" not in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    pgids = [p for p in _all_pids() if _cmdline(p).endswith(f"{port} 60")]
    assert pgids
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    time.sleep(0.2)
    assert all(_group_members(p) == [] for p in pgids)


def _all_pids() -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def test_interrupt_between_healthy_and_the_wait_stops_like_one_during_it(tmp_path: Path, fake_server: Path) -> None:
    """A Ctrl-C that lands while `up` reports the server healthy (before it waits on it) is the same stop:
    on_stopping runs, the group and the state file are gone, and `up` returns interrupted instead of raising."""
    from launchcard.live import up

    port = _free_port()
    spec = LaunchSpec(argv=(sys.executable, str(fake_server), str(port), "0.2"), port=port, ready_timeout_s=30)
    state_path = tmp_path / "up.json"
    pids: list[int] = []
    stopping: list[bool] = []

    def ready(srv: ServerState, capture: int | None) -> None:
        pids.append(srv.pid)
        raise KeyboardInterrupt

    result = up(spec, log=tmp_path / "s.log", state_path=state_path, on_ready=ready,
                on_stopping=lambda: stopping.append(True))
    assert result.interrupted and stopping == [True]
    time.sleep(0.2)
    assert _group_members(pids[0]) == [] and not state_path.exists()


def test_a_log_path_that_cannot_be_written_is_bad_input_and_starts_nothing(tmp_path: Path) -> None:
    """`up --log FILE/x.log` was "internal error: FileExistsError" and `--log FOLDER` "IsADirectoryError"."""
    (tmp_path / "f").write_text("x")
    marker = tmp_path / "started"
    spec = LaunchSpec(argv=(sys.executable, "-c", f"open({str(marker)!r}, 'w')"), port=1, ready_timeout_s=1)
    for log, said in ((tmp_path / "f" / "up.log", "cannot write the server log"), (tmp_path, "is a folder")):
        with pytest.raises(InputError, match=said) as info:
            start_server(spec, log=log)
        assert info.value.field == "log" and info.value.where == str(log)
    time.sleep(0.2)
    assert not marker.exists()
