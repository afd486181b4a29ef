"""The generated client calls, executed against the real vLLM server (CPU, tiny model).

Python snippets run in the server's own venv (it ships the ``openai`` client);
curl snippets run under bash.  Each must print the field it claims to read.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from launchcard.clients import ClientTarget, capabilities_from_argv, client_calls
from live_support import VLLM_PY, Live, require_live, serve_argv, start, stop

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    require_live()
    server = start(tmp_path_factory.mktemp("clients"), parsers=True)
    try:
        yield server
    finally:
        stop(server)


def _field(payload: dict[str, object], path: str) -> object:
    cur: object = payload
    for part in path.replace("[", ".").replace("]", "").split("."):
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]  # type: ignore[index]
    return cur


def test_generated_calls_read_the_fields_they_claim(live: Live, tmp_path) -> None:  # type: ignore[no-untyped-def]
    caps = capabilities_from_argv(serve_argv(8000, parsers=True))
    assert caps.reasoning and caps.tools
    calls = [c for c in client_calls(ClientTarget(f"{live.endpoint}/v1", "tiny"), caps) if c.name != "image"]
    assert {c.name for c in calls} == {"chat", "stream", "reasoning", "tools"}
    for call in calls:
        if call.lang == "python":
            res = subprocess.run([str(VLLM_PY), "-c", call.code], capture_output=True, text=True, timeout=120,
                                 cwd=tmp_path)
            assert res.returncode == 0, (call.name, res.stderr[-2000:])
            first = res.stdout.strip().splitlines()[0] if res.stdout.strip() else ""
            assert first and first != "None", (call.name, res.stdout)
            if call.name == "tools":
                assert "get_weather" in res.stdout
            continue
        res = subprocess.run(["bash", "-c", call.code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert res.returncode == 0, (call.name, res.stderr)
        if call.name == "stream":
            chunks = [json.loads(line[5:]) for line in res.stdout.splitlines()
                      if line.startswith("data:") and line.strip() != "data: [DONE]"]
            text = "".join(_field(c, "choices[0].delta").get("content") or "" for c in chunks  # type: ignore[union-attr]
                           if c.get("choices"))
            assert chunks and (text or any(_field(c, "choices[0].delta") for c in chunks if c.get("choices")))
            continue
        body = json.loads(res.stdout)
        if call.name == "reasoning":  # vLLM 0.32 names it `reasoning`; older releases `reasoning_content`
            msg = _field(body, "choices[0].message")
            assert isinstance(msg, dict) and (msg.get("reasoning") or msg.get("reasoning_content")), body
        elif call.name == "tools":
            calls_ = _field(body, call.reads)
            assert isinstance(calls_, list) and calls_[0]["function"]["name"] == "get_weather", body
        else:
            assert _field(body, call.reads), body
