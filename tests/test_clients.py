"""Client calls generated from what the launch command enables (offline part).

The calls are executed against the real vLLM server in test_live_server.py.
"""

from __future__ import annotations

import ast
import subprocess

import pytest

from launchcard.clients import (
    Capabilities,
    ClientTarget,
    ReasoningControl,
    calls_markdown,
    capabilities,
    client_calls,
    guide_control,
)

LOCAL = ClientTarget("http://localhost:8000/v1", "tiny")
REMOTE = ClientTarget("https://model-{model_id}.api.baseten.co/environments/production/sync/v1",
                      "zai-org/GLM-5.3-Flash", "BASETEN_API_KEY")
ALL = Capabilities(reasoning=True, tools=True, images=True,
                   control=ReasoningControl("chat_template_kwargs", "enable_thinking", False))


def test_capabilities_follow_the_command_not_the_model() -> None:
    plain = capabilities({"--tensor-parallel-size": "8"})
    assert plain == Capabilities()
    caps = capabilities({"--reasoning-parser": "glm45", "--tool-call-parser": "glm47", "--enable-auto-tool-choice": None,
                         "--default-chat-template-kwargs.reasoning_effort": "high"}, images=True)
    assert caps.reasoning and caps.tools and caps.images and caps.control is not None
    # A tool parser without automatic tool choice does not make tool_calls appear on its own.
    assert not capabilities({"--tool-call-parser": "hermes"}).tools


def test_capabilities_from_argv_reads_the_last_occurrence() -> None:
    from launchcard.clients import capabilities_from_argv

    argv = ["vllm", "serve", "m", "--reasoning-parser", "qwen3", "--enable-auto-tool-choice",
            "--tool-call-parser", "hermes", "--no-enable-auto-tool-choice",
            "--default-chat-template-kwargs.reasoning_effort", "high"]
    caps = capabilities_from_argv(argv)
    assert caps.reasoning and not caps.tools and caps.control is not None


def test_only_enabled_calls_are_generated() -> None:
    names = {c.name for c in client_calls(LOCAL, Capabilities())}
    assert names == {"chat", "stream"}
    names = {c.name for c in client_calls(LOCAL, ALL)}
    assert names == {"chat", "stream", "reasoning", "tools", "effort", "image"}


@pytest.mark.parametrize("target", [LOCAL, REMOTE])
def test_every_snippet_is_valid_python_or_bash(target: ClientTarget) -> None:
    for call in client_calls(target, ALL):
        if call.lang == "python":
            ast.parse(call.code)
        else:
            assert subprocess.run(["bash", "-n", "-c", call.code]).returncode == 0, call.code


def test_remote_target_reads_the_key_from_its_variable() -> None:
    calls = client_calls(REMOTE, Capabilities())
    assert 'os.environ["BASETEN_API_KEY"]' in calls[0].code
    assert "Authorization: Bearer $BASETEN_API_KEY" in calls[1].code


def test_guide_control_reads_how_the_guide_sends_it() -> None:
    ctk = guide_control('Use extra_body={"chat_template_kwargs": {"enable_thinking": False}} to skip', where="g.yaml",
                        first_line=10)
    assert ctk == ReasoningControl("chat_template_kwargs", "enable_thinking", False, "g.yaml line 10")
    top = guide_control('client.chat.completions.create(..., reasoning_effort="low")')
    assert top is not None and top.where == "top-level" and top.value == "low"
    assert guide_control("no controls here") is None


def test_effort_goes_where_the_guide_puts_it() -> None:
    top = Capabilities(reasoning=True, control=ReasoningControl("top-level", "reasoning_effort", "low"))
    py = next(c for c in client_calls(LOCAL, top) if c.name == "effort" and c.lang == "python")
    assert 'reasoning_effort="low"' in py.code and "extra_body" not in py.code
    nested = Capabilities(reasoning=True, control=ReasoningControl("chat_template_kwargs", "reasoning_effort", "high"))
    curl = next(c for c in client_calls(LOCAL, nested) if c.name == "effort" and c.lang == "curl")
    assert '"chat_template_kwargs"' in curl.code and '"reasoning_effort": "high"' in curl.code


def test_markdown_lists_each_call_once_with_both_languages() -> None:
    md = calls_markdown(client_calls(LOCAL, ALL))
    assert md.count("### ") == 6 and md.count("```python") == 6 and md.count("```bash") == 6
