"""verify against fake endpoints: every fault becomes a failed check with its cause."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from launchcard.errors import EndpointError
from launchcard.verify import DONE, Expect, parse_sse, run_verify

MODEL = "tiny"


def _sse(*events: object, done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def good_server(*, reasoning: bool = True, tools: bool = True, stream_body: bytes | None = None,
                models_status: int = 200) -> Callable[[httpx.Request], httpx.Response]:
    """A well-behaved vLLM look-alike; knobs turn single features off."""
    def handler(req: httpx.Request) -> httpx.Response:
        path = req.url.path
        if path == "/health":
            return httpx.Response(200)
        if path == "/v1/models":
            return httpx.Response(models_status, json={"data": [{"id": MODEL, "max_model_len": 512}]})
        body = json.loads(req.content or b"{}")
        if body.get("stream"):
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream_body or _sse(
                {"choices": [{"delta": {"content": "4"}}]}, {"choices": [{"delta": {"content": "."}}]},
                {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}))
        content = body["messages"][0]["content"]
        if isinstance(content, str) and len(content) > 2000:
            return httpx.Response(400, json={"error": {"message": "This model's maximum context length is 512 "
                                                                  "tokens. However, your prompt contains 1025"}})
        msg: dict = {"role": "assistant", "content": "2 + 2 = 4."}
        if reasoning:
            msg["reasoning_content"] = "Two plus two."
        else:
            msg["content"] = "<think>Two plus two.</think>2 + 2 = 4."
        if body.get("tools"):
            if tools:
                msg = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}
            else:
                msg = {"role": "assistant", "content": "<tool_call>{\"name\": \"get_weather\"}</tool_call>"}
        return httpx.Response(200, json={"choices": [{"message": msg, "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 9, "completion_tokens": 7}})
    return handler


def verify(handler, **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("expect", Expect(tools=True, reasoning=True))
    return run_verify("http://fake", transport=httpx.MockTransport(handler), timeout_s=5, **kw)


def by_name(report) -> dict:  # type: ignore[no-untyped-def]
    return {c.name: c for c in report.checks}


def test_all_checks_pass_on_a_good_server() -> None:
    report = verify(good_server())
    checks = by_name(report)
    assert report.ok and report.model == MODEL and report.max_model_len == 512
    assert {n for n, c in checks.items() if c.status == "pass"} == {
        "health", "models", "chat", "stream", "reasoning", "tool_calls", "too_long", "concurrent"}
    assert checks["vision"].status == "skipped" and "image input" in checks["vision"].reason
    assert "get_weather" in (checks["tool_calls"].evidence.decided_by or "")
    assert "maximum context length" in (checks["too_long"].evidence.decided_by or "")


def test_unknown_features_are_skipped_with_a_reason() -> None:
    checks = by_name(verify(good_server(), expect=Expect()))
    for name in ("reasoning", "tool_calls", "vision"):
        assert checks[name].status == "skipped" and "--expect" in checks[name].reason


def test_missing_parsers_fail_with_evidence() -> None:
    report = verify(good_server(reasoning=False, tools=False))
    checks = by_name(report)
    assert not report.ok
    assert checks["reasoning"].status == "fail" and "not separated" in checks["reasoning"].reason
    assert checks["tool_calls"].status == "fail" and "<tool_call>" in (checks["tool_calls"].evidence.decided_by or "")


def test_expect_from_argv() -> None:
    argv = ("vllm", "serve", "m", "--enable-auto-tool-choice", "--tool-call-parser", "hermes")
    assert Expect.from_argv(argv) == Expect(tools=True, reasoning=False, vision=None)
    assert Expect.from_argv(argv).merged(Expect(reasoning=True)).reasoning is True


def test_5xx_is_a_failure_with_the_status() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/chat/completions":
            return httpx.Response(503, text="engine dead")
        return good_server()(req)

    checks = by_name(verify(handler))
    assert checks["chat"].status == "fail" and checks["chat"].reason == "HTTP 503"
    assert checks["chat"].evidence.decided_by == "engine dead"
    assert checks["health"].status == "pass"


def test_connection_reset_is_a_failure_naming_the_cause() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/health":
            return httpx.Response(200)
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=req)

    report = verify(handler)
    checks = by_name(report)
    assert checks["models"].status == "fail" and "RemoteProtocolError" in checks["models"].reason
    # A server that hangs up without answering is dead: the rest are not run, and say why.
    assert checks["chat"].status == "skipped" and "stopped answering (models:" in checks["chat"].reason


def test_unknown_model_skips_the_checks_that_need_one() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/models":
            return httpx.Response(200, json={"data": []})
        return good_server()(req)

    report = verify(handler)
    checks = by_name(report)
    assert checks["models"].status == "fail" and report.model is None
    assert checks["chat"].status == "skipped" and "model unknown" in checks["chat"].reason


def test_malformed_sse_fails_the_stream_check() -> None:
    bad = b"data: {\"choices\": [{\"delta\": {\"content\": \"4\"}}]}\n\ndata: {not json\n\n"
    checks = by_name(verify(good_server(stream_body=bad)))
    assert checks["stream"].status == "fail" and "not JSON" in checks["stream"].reason


def test_stream_without_usage_or_done_fails() -> None:
    no_usage = _sse({"choices": [{"delta": {"content": "4"}}]})
    assert "usage chunk" in by_name(verify(good_server(stream_body=no_usage)))["stream"].reason
    no_done = _sse({"choices": [{"delta": {"content": "4"}}]}, {"choices": [], "usage": {"completion_tokens": 1}},
                   done=False)
    assert "[DONE]" in by_name(verify(good_server(stream_body=no_done)))["stream"].reason


def test_over_length_accepted_is_a_failure() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/v1/chat/completions" and len(req.content) > 4000:
            return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}], "usage": {}})
        return good_server()(req)

    assert "expected a 4xx" in by_name(verify(handler))["too_long"].reason


@pytest.fixture()
def hanging_endpoint() -> Iterator[str]:
    """A real socket that accepts and never answers (loopback only)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join(2)
    for c in conns:
        c.close()
    srv.close()


def test_hanging_endpoint_times_out_within_bounds(hanging_endpoint: str) -> None:
    began = time.monotonic()
    report = run_verify(hanging_endpoint, model=MODEL, expect=Expect(tools=False, reasoning=False, vision=False),
                        timeout_s=0.5)
    elapsed = time.monotonic() - began
    checks = by_name(report)
    assert checks["health"].status == "fail" and "timeout" in checks["health"].reason
    # The probe got no answer: nothing else is sent, each check says why.
    assert all(c.status == "skipped" and "stopped answering (health: no answer within 0.5s" in c.reason
               for c in report.checks[1:])
    assert elapsed < 0.5 + 5 and not report.ok


def test_parse_sse() -> None:
    lines = [": comment", "event: x", "data: {\"a\": 1}", "", "data: [DONE]"]
    assert list(parse_sse(lines)) == [{"a": 1}, DONE]
    with pytest.raises(EndpointError, match="not a 'data:' field"):
        list(parse_sse(["garbage"]))
    with pytest.raises(EndpointError, match="not a JSON object"):
        list(parse_sse(["data: [1]"]))


def test_verify_cli_json_and_exit_code(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    import launchcard.verify._run as run_mod
    from launchcard.cli import app

    real = run_mod.run_verify

    def fake(endpoint, **kw):  # type: ignore[no-untyped-def]
        return real(endpoint, transport=httpx.MockTransport(good_server(tools=False)), **{
            k: v for k, v in kw.items() if k != "transport"})

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("launchcard.verify.run_verify", fake)
    res = CliRunner().invoke(app, ["verify", "--endpoint", "http://fake", "--expect", "tools", "--json"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    assert data["ok"] is False and {c["name"]: c["status"] for c in data["checks"]}["tool_calls"] == "fail"
    from tests.helpers import run_cli

    bad = run_cli("verify", "--endpoint", "http://fake", "--expect", "teleport")
    assert bad.returncode == 2
    assert bad.stderr == "launchcard: error: --expect: unknown feature 'teleport'; use tools, reasoning or vision\n"


def test_verify_shows_the_served_model_it_was_given_or_unknown(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Trial finding: the table said model=None.  Now the served name from `up`'s
    state (or --model, or /v1/models); "unknown" only when nothing names one."""
    from datetime import UTC, datetime

    from typer.testing import CliRunner

    import launchcard.verify._run as run_mod
    from launchcard.cli import app
    from launchcard.live import ServerState

    real = run_mod.run_verify

    def models_down(req: httpx.Request) -> httpx.Response:
        return httpx.Response(500) if req.url.path == "/v1/models" else good_server()(req)

    def fake(endpoint, **kw):  # type: ignore[no-untyped-def]
        return real(endpoint, transport=httpx.MockTransport(models_down), **kw)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("launchcard.verify.run_verify", fake)
    state = tmp_path / "up.json"
    ServerState(pid=4242, endpoint="http://fake", argv=("python", "-m", "vllm.entrypoints.openai.api_server", "--model",
                                                     "/m", "--served-model-name", "tiny"), log="s.log",
                started_at=datetime.now(UTC)).save(state)
    res = CliRunner().invoke(app, ["verify", "--state", str(state)])
    assert "model=tiny" in res.output and "None" not in res.output.splitlines()[0], res.output
    res = CliRunner().invoke(app, ["verify", "--endpoint", "http://fake"])
    assert "model=unknown" in res.output and "model=None" not in res.output, res.output


def test_up_plan_options_need_a_plan(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from launchcard.cli import main

    monkeypatch.chdir(tmp_path)
    for opt in (["--nodes", "2"], ["--no-feature", "x"], ["--mode", "a=b"], ["--kv-offload", "lmcache"]):
        assert main(["up", *opt, "--", "true"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "no plan was asked for" in err and opt[0] in err
