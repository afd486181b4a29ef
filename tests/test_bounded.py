"""`verify` and `bench` against endpoints that fail in every way a real one can
(real loopback sockets): each ends within its per-request timeout plus a few
seconds, exits 1, and says why in one line; never a traceback."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from fault_support import fault_server, refused_endpoint
from launchcard.cli import main

TIMEOUT = 3.0
SLACK = 5.0  # probe, process and thread overheads on a loaded 2-core machine
MODES = ["hang", "reset", "not_http", "post_hang", "garbage_sse", "http500", "refused"]


def _run(args: list[str], endpoint: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, float, str, str]:
    began = time.monotonic()
    rc = main([*args, "--endpoint", endpoint, "--timeout", str(TIMEOUT)])
    elapsed = time.monotonic() - began
    out, err = capsys.readouterr()
    return rc, elapsed, out, err


def _endpoint_for(mode: str):  # type: ignore[no-untyped-def]
    if mode == "refused":
        from contextlib import nullcontext

        return nullcontext(refused_endpoint())
    return fault_server(mode)


@pytest.mark.parametrize("mode", MODES)
def test_verify_is_bounded_and_exits_1(mode: str, capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    with _endpoint_for(mode) as endpoint:
        rc, elapsed, out, err = _run(["verify", "--json"], endpoint, capsys)
    assert rc == 1, (out, err)
    assert elapsed < TIMEOUT + SLACK, (mode, elapsed)
    assert "Traceback" not in out + err
    import json

    report = json.loads(out)
    fails = [c for c in report["checks"] if c["status"] == "fail"]
    assert fails and all(c["reason"] and "\n" not in c["reason"] for c in fails)
    if mode in ("hang", "reset", "not_http", "refused"):
        # Dead at the probe: nothing else waits out a timeout.
        assert fails[0]["name"] == "health"
        assert all(c["status"] == "skipped" and "stopped answering" in c["reason"]
                   for c in report["checks"][1:]), report["checks"]


@pytest.mark.parametrize("mode", MODES)
def test_bench_is_bounded_and_exits_1(mode: str, capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    args = ["bench", "--no-record", "--num-prompts", "4", "--concurrency", "2", "--warmup", "1",
            "--input-tokens", "8", "--output-tokens", "4", "--model", "tiny"]
    with _endpoint_for(mode) as endpoint:
        rc, elapsed, out, err = _run(args, endpoint, capsys)
    assert rc == 1, (out, err)
    assert elapsed < TIMEOUT + SLACK, (mode, elapsed)
    assert "Traceback" not in out + err
    if mode in ("hang", "reset", "not_http", "refused"):
        # The probe finds the endpoint dead: one line naming the URL, nothing sent.
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"launchcard: error: {endpoint}/v1/models: no answer"), err
    else:
        assert "failed 4" in out and "failure:" in out, out
    if mode == "post_hang":
        assert "timeout after 3s" in out and "the run stopped" in out


def test_cli_process_on_a_hanging_endpoint_ends_in_time_with_one_line() -> None:
    with fault_server("hang") as endpoint:
        began = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "launchcard.cli", "bench", "--endpoint", endpoint, "--timeout",
                              str(TIMEOUT), "--no-record"], check=False, capture_output=True, text=True, timeout=60)
        elapsed = time.monotonic() - began
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "no answer within 3s" in res.stderr
    assert elapsed < TIMEOUT + SLACK + 5  # plus interpreter start-up


@pytest.mark.parametrize("mode", MODES)
def test_bench_with_a_driver_is_bounded_and_never_starts_the_tool(mode: str, capsys: pytest.CaptureFixture[str],
                                                                  tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An external load generator waits hours on a stuck server (vLLM's bench: 6 h per request);
    launchcard's own probe and first completion find the fault in one --timeout instead."""
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "tool-started"
    tool = tmp_path / "tool.py"
    tool.write_text(f"open({str(marker)!r}, 'w').close()\n")
    args = ["bench", "--no-record", "--num-prompts", "4", "--concurrency", "2", "--model", "tiny",
            "--driver", "vllm", "--driver-cmd", f"{sys.executable} {tool}"]
    with _endpoint_for(mode) as endpoint:
        rc, elapsed, out, err = _run(args, endpoint, capsys)
    assert rc == 1, (out, err)
    assert elapsed < TIMEOUT + SLACK, (mode, elapsed)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("launchcard: error: ") and "Traceback" not in out + err
    if mode in ("hang", "reset", "not_http", "refused"):
        assert "/v1/models: no answer" in lines[-1], err
    else:
        assert "the first completion failed before vllm bench serve was started" in lines[-1], err
    assert not marker.exists()
