"""The checks of `launchcard verify`, one function each.

Every check sends one kind of request and decides from one part of the answer;
it records both, so a reader can see why it passed or failed.  Network faults
(timeouts, resets, 5xx, malformed streams) become a failed check naming the
cause, never an exception out of `run_verify`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

from launchcard.errors import EndpointError
from launchcard.prompts import CHAT_PROMPT, TOOL_PROMPT, WEATHER_TOOL
from launchcard.verify._sse import DONE, parse_sse
from launchcard.verify._types import CheckEvidence, CheckResult, Expect

_CUT = 240
# A 1x1 PNG: enough to prove the server accepts image input.
_PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
          "hKmMIQAAAABJRU5ErkJggg==")


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _CUT else text[:_CUT] + "…"


class _Failed(Exception):
    """A check failed for a reason worth one line; carries its evidence.

    ``dead``: the endpoint gave no answer at all (timeout, refused or reset
    connection), so the checks after this one are not run.
    """

    def __init__(self, reason: str, status: int | None = None, decided_by: str | None = None,
                 *, dead: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.status, self.decided_by, self.dead = reason, status, decided_by, dead


@dataclass
class Ctx:
    client: httpx.Client
    endpoint: str
    timeout_s: float
    expect: Expect
    model: str | None = None
    max_model_len: int | None = None
    notes: dict[str, str] = field(default_factory=dict)
    dead: str | None = None  # set by the first check that got no answer

    def url(self, path: str) -> str:
        return f"{self.endpoint}{path}"

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                timeout_s: float | None = None) -> httpx.Response:
        limit = timeout_s or self.timeout_s
        try:
            return self.client.request(method, self.url(path), json=body, timeout=limit)
        except httpx.TimeoutException:
            raise _Failed(f"no answer within {limit:g}s (timeout)", dead=True) from None
        except httpx.HTTPError as exc:
            raise _Failed(f"connection failed: {type(exc).__name__}: {exc}", dead=_no_answer(exc)) from None

    def chat(self, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        body = {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": 96, **extra}
        resp = self.request("POST", "/v1/chat/completions", body)
        return _json_ok(resp)


def _no_answer(exc: httpx.HTTPError) -> bool:
    """Refused, reset, or closed before any answer: nothing more will come."""
    return isinstance(exc, (httpx.TimeoutException, httpx.ConnectError, httpx.RemoteProtocolError,
                            httpx.ReadError, httpx.WriteError))


def _json_ok(resp: httpx.Response) -> dict[str, Any]:
    if resp.status_code != 200:
        raise _Failed(f"HTTP {resp.status_code}", resp.status_code, _cut(resp.text))
    try:
        data = resp.json()
    except ValueError:
        raise _Failed("answer is not JSON", resp.status_code, _cut(resp.text)) from None
    if not isinstance(data, dict):
        raise _Failed("answer is not a JSON object", resp.status_code, _cut(resp.text))
    return data


def _message(data: dict[str, Any]) -> dict[str, Any]:
    try:
        msg = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise _Failed("no choices[0].message in the answer", 200, _cut(data)) from None
    return msg if isinstance(msg, dict) else {}


def _reasoning(msg: dict[str, Any]) -> str | None:
    # vLLM has used both names for the separated reasoning text.
    return msg.get("reasoning_content") or msg.get("reasoning")


# --- the checks -------------------------------------------------------------

PROBE_TIMEOUT_S = 5.0  # /health of a server that is up answers at once


def check_health(ctx: Ctx) -> CheckEvidence:
    # The probe: a short limit, so a dead endpoint is known in seconds.
    resp = ctx.request("GET", "/health", timeout_s=min(ctx.timeout_s, PROBE_TIMEOUT_S))
    if resp.status_code != 200:
        raise _Failed(f"HTTP {resp.status_code}", resp.status_code, _cut(resp.text))
    return CheckEvidence(request="GET /health", status=200, decided_by="status 200")


def check_models(ctx: Ctx) -> CheckEvidence:
    data = _json_ok(ctx.request("GET", "/v1/models"))
    listed = data.get("data")
    rows: list[Any] = listed if isinstance(listed, list) else []
    ids = [r.get("id") for r in rows if isinstance(r, dict)]
    if not ids:
        raise _Failed("/v1/models lists no model", 200, _cut(data))
    wanted = ctx.model or ids[0]
    row = next((r for r in rows if isinstance(r, dict) and r.get("id") == wanted), None)
    if row is None:
        raise _Failed(f"served name {wanted!r} not listed", 200, f"ids: {ids}")
    ctx.model = wanted
    mml = row.get("max_model_len")
    if not isinstance(mml, int):
        raise _Failed(f"{wanted!r} is listed without max_model_len", 200, _cut(row))
    ctx.max_model_len = mml
    return CheckEvidence(request="GET /v1/models", status=200, decided_by=f"id={wanted!r} max_model_len={mml}")


def check_chat(ctx: Ctx) -> CheckEvidence:
    data = ctx.chat([{"role": "user", "content": CHAT_PROMPT}])
    msg = _message(data)
    text = msg.get("content") or _reasoning(msg)
    usage = data.get("usage") or {}
    if not text:
        raise _Failed("empty answer", 200, _cut(msg))
    if not usage.get("completion_tokens"):
        raise _Failed("no usage.completion_tokens", 200, _cut(data))
    return CheckEvidence(request=f"POST /v1/chat/completions {CHAT_PROMPT!r}", status=200,
                         decided_by=f"content={_cut(text)!r} completion_tokens={usage['completion_tokens']}")


def check_stream(ctx: Ctx) -> CheckEvidence:
    body = {"model": ctx.model, "messages": [{"role": "user", "content": CHAT_PROMPT}], "temperature": 0,
            "max_tokens": 96, "stream": True, "stream_options": {"include_usage": True}}
    deltas, usage, done, after_done = 0, None, False, 0
    try:
        with ctx.client.stream("POST", ctx.url("/v1/chat/completions"), json=body, timeout=ctx.timeout_s) as resp:
            if resp.status_code != 200:
                resp.read()
                raise _Failed(f"HTTP {resp.status_code}", resp.status_code, _cut(resp.text))
            for event in parse_sse(resp.iter_lines(), where="POST /v1/chat/completions (stream)"):
                if event is DONE:
                    done = True
                    continue
                if done:
                    after_done += 1
                assert isinstance(event, dict)
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content") or _reasoning(delta):
                        deltas += 1
                if event.get("usage"):
                    usage = event["usage"]
    except httpx.TimeoutException:
        raise _Failed(f"stream stalled past {ctx.timeout_s:g}s (timeout)", dead=True) from None
    except httpx.HTTPError as exc:
        raise _Failed(f"stream broke: {type(exc).__name__}: {exc}", dead=_no_answer(exc)) from None
    except EndpointError as exc:
        raise _Failed(exc.rule, 200) from None
    if deltas == 0:
        raise _Failed("no content deltas in the stream", 200)
    if not usage or not usage.get("completion_tokens"):
        raise _Failed("no usage chunk although stream_options.include_usage was set", 200,
                      f"{deltas} deltas, [DONE]={done}")
    if not done or after_done:
        raise _Failed("stream did not end with data: [DONE]", 200, f"{deltas} deltas, usage={usage}")
    return CheckEvidence(request="POST /v1/chat/completions stream=true include_usage=true", status=200,
                         decided_by=f"{deltas} deltas, usage.completion_tokens={usage['completion_tokens']}, "
                                    "[DONE] last")


def check_reasoning(ctx: Ctx) -> CheckEvidence:
    msg = _message(ctx.chat([{"role": "user", "content": CHAT_PROMPT}]))
    reasoning, content = _reasoning(msg), msg.get("content") or ""
    seen = f"reasoning={_cut(reasoning or '')!r} content={_cut(content)!r}"
    if not reasoning:
        raise _Failed("no reasoning_content: the reasoning was not separated from the content", 200, seen)
    if "<think>" in content or "</think>" in content:
        raise _Failed("think tags left in content", 200, seen)
    return CheckEvidence(request=f"POST /v1/chat/completions {CHAT_PROMPT!r}", status=200, decided_by=seen)


def check_tool_calls(ctx: Ctx) -> CheckEvidence:
    msg = _message(ctx.chat([{"role": "user", "content": TOOL_PROMPT}], tools=[WEATHER_TOOL], tool_choice="auto"))
    calls = msg.get("tool_calls") or []
    if not calls:
        raise _Failed("no tool_calls in the answer", 200, f"content={_cut(msg.get('content') or '')!r}")
    fn = (calls[0] or {}).get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "")
    except ValueError:
        raise _Failed("tool call arguments are not JSON", 200, _cut(fn)) from None
    if fn.get("name") != "get_weather" or not isinstance(args, dict):
        raise _Failed("tool call is not get_weather with an object of arguments", 200, _cut(fn))
    return CheckEvidence(
        request=f"POST /v1/chat/completions tools=[get_weather] {TOOL_PROMPT!r}",
        status=200,
        decided_by=f"tool_calls[0]={fn.get('name')}({fn.get('arguments')})",
    )


def check_vision(ctx: Ctx) -> CheckEvidence:
    content = [
        {"type": "text", "text": "Describe the image in one word."},
        {"type": "image_url", "image_url": {"url": _PIXEL}},
    ]
    msg = _message(ctx.chat([{"role": "user", "content": content}], max_tokens=16))
    return CheckEvidence(
        request="POST /v1/chat/completions with a 1x1 PNG image_url",
        status=200,
        decided_by=f"content={_cut(msg.get('content') or '')!r}",
    )


def check_too_long(ctx: Ctx) -> CheckEvidence:
    assert ctx.max_model_len is not None
    # Two words per allowed token: more tokens than max_model_len for any tokenizer.
    prompt = " ".join(["hello world"] * ctx.max_model_len)
    body = {"model": ctx.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 8}
    resp = ctx.request("POST", "/v1/chat/completions", body)
    text = resp.text
    if not 400 <= resp.status_code < 500:
        raise _Failed(
            f"expected a 4xx for a prompt over max_model_len={ctx.max_model_len}, got HTTP {resp.status_code}",
            resp.status_code,
            _cut(text),
        )
    words = ("context length", "maximum", "too long", "max_model_len", "input tokens", "exceed")
    if not any(w in text.lower() for w in words):
        raise _Failed("4xx without a message about the length", resp.status_code, _cut(text))
    return CheckEvidence(
        request=f"POST /v1/chat/completions with {2 * ctx.max_model_len} words",
        status=resp.status_code,
        decided_by=_cut(text),
    )


def check_concurrent(ctx: Ctx, n: int = 4) -> CheckEvidence:
    def one(i: int) -> str:
        msg = _message(ctx.chat([{"role": "user", "content": "Say hello."}], max_tokens=24))
        return msg.get("content") or _reasoning(msg) or ""

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(one, i) for i in range(n)]
        answers, errors = [], []
        for fut in futures:
            try:
                answers.append(fut.result())
            except _Failed as exc:
                errors.append(exc)
    if errors:
        raise _Failed(
            f"{len(errors)} of {n} concurrent requests failed: {errors[0].reason}", dead=all(e.dead for e in errors)
        )
    if not all(answers):
        raise _Failed(f"{answers.count('')} of {n} concurrent answers were empty")
    return CheckEvidence(request=f"{n} x POST /v1/chat/completions at once", status=200, decided_by=f"{n}/{n} answered")


CheckFn = Callable[[Ctx], CheckEvidence]

_REQUESTS = {
    "health": "GET /health",
    "models": "GET /v1/models",
    "chat": f"POST /v1/chat/completions {CHAT_PROMPT!r}",
    "stream": "POST /v1/chat/completions stream=true include_usage=true",
    "reasoning": f"POST /v1/chat/completions {CHAT_PROMPT!r}",
    "tool_calls": f"POST /v1/chat/completions tools=[get_weather] {TOOL_PROMPT!r}",
    "vision": "POST /v1/chat/completions with a 1x1 PNG image_url",
    "too_long": "POST /v1/chat/completions with a prompt over max_model_len",
    "concurrent": "4 x POST /v1/chat/completions at once",
}


def plan_checks(ctx: Ctx) -> list[tuple[str, CheckFn, Callable[[Ctx], str | None]]]:
    """(name, check, why-skip) in order; why-skip returns None to run it."""
    e = ctx.expect

    def needs_model(c: Ctx) -> str | None:
        return None if c.model else "served model unknown (/v1/models failed and no --model given)"

    def feature(flag: bool | None, what: str) -> Callable[[Ctx], str | None]:
        def why(c: Ctx) -> str | None:
            if flag is None:
                return f"not known whether the plan enables {what} (pass --expect)"
            if not flag:
                return f"the plan does not enable {what}"
            return needs_model(c)

        return why

    return [
        ("health", check_health, lambda c: None),
        ("models", check_models, lambda c: None),
        ("chat", check_chat, needs_model),
        ("stream", check_stream, needs_model),
        ("reasoning", check_reasoning, feature(e.reasoning, "a reasoning parser")),
        ("tool_calls", check_tool_calls, feature(e.tools, "a tool-call parser")),
        ("vision", check_vision, feature(e.vision, "image input (multimodal model)")),
        (
            "too_long",
            check_too_long,
            lambda c: needs_model(c) or (None if c.max_model_len else "max_model_len unknown (/v1/models failed)"),
        ),
        ("concurrent", check_concurrent, needs_model),
    ]


def run_check(name: str, fn: CheckFn, why_skip: Callable[[Ctx], str | None], ctx: Ctx) -> CheckResult:
    """Run one check.  After a check that got no answer at all, the rest are
    skipped naming it: every further request would only wait out its timeout."""
    if ctx.dead is not None:
        return CheckResult(name=name, status="skipped", reason=f"not run: the endpoint stopped answering ({ctx.dead})")
    skip = why_skip(ctx)
    if skip:
        return CheckResult(name=name, status="skipped", reason=skip)
    began = time.monotonic()
    try:
        ev = fn(ctx)
    except _Failed as exc:
        if exc.dead:
            ctx.dead = f"{name}: {exc.reason}"
        return CheckResult(
            name=name,
            status="fail",
            reason=exc.reason,
            seconds=round(time.monotonic() - began, 3),
            evidence=CheckEvidence(request=_REQUESTS.get(name, name), status=exc.status, decided_by=exc.decided_by),
        )
    return CheckResult(name=name, status="pass", reason="ok", evidence=ev, seconds=round(time.monotonic() - began, 3))
