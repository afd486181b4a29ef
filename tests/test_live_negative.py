"""The negative case on a real server: started without the tool and reasoning
parsers, `verify` must report those checks as failed, not passed or skipped.
Also checks that `down` leaves none of vLLM's processes behind."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from launchcard.live._process import group_members
from live_support import Live, cli, require_live, start, stop

pytestmark = pytest.mark.live


def _group_members(pgid: int) -> list[int]:
    return group_members(pgid) or []


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    require_live()
    server = start(tmp_path_factory.mktemp("bare"), parsers=False)
    try:
        yield server
    finally:
        if server.state.exists():
            stop(server)


def test_verify_fails_without_tool_and_reasoning_parsers(bare: Live) -> None:
    res = cli("verify", "--endpoint", bare.endpoint, "--expect", "tools", "--expect", "reasoning", "--json",
              timeout=300)
    report = json.loads(res.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert res.returncode == 1 and report["ok"] is False
    assert checks["tool_calls"]["status"] == "fail", checks["tool_calls"]
    assert checks["reasoning"]["status"] == "fail", checks["reasoning"]
    # vLLM refuses tool_choice=auto without a parser; the refusal is the evidence.
    assert "tool-call-parser" in checks["tool_calls"]["evidence"]["decided_by"]
    # The model really opened a think block; only the separation was missing.
    assert "<think>" in checks["reasoning"]["evidence"]["decided_by"]
    for name in ("health", "models", "chat", "stream", "too_long", "concurrent"):
        assert checks[name]["status"] == "pass", checks[name]


def test_plan_without_parsers_skips_those_checks_with_reason(bare: Live) -> None:
    res = cli("verify", "--endpoint", bare.endpoint, "--state", str(bare.state), "--json", timeout=300)
    checks = {c["name"]: c for c in json.loads(res.stdout)["checks"]}
    assert res.returncode == 0
    assert checks["tool_calls"]["status"] == "skipped" and "does not enable" in checks["tool_calls"]["reason"]


def test_down_stops_every_vllm_process(bare: Live) -> None:
    from launchcard.live import ServerState

    pid = ServerState.load(bare.state).pid
    assert len(_group_members(pid)) >= 2  # API server plus engine core
    res = stop(bare)
    assert res.returncode == 0 and "stopped pid" in res.stdout
    time.sleep(0.5)
    assert _group_members(pid) == [] and not bare.state.exists()
