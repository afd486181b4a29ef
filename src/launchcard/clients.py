"""Client calls for a launch: Python (``openai``) and ``curl``, for what the server enables.

Which calls are generated follows from the launch command itself, never from
the model's name: plain chat and streaming always; reading the separated
reasoning when a reasoning parser is on; ``tool_calls`` when automatic tool
choice and a tool parser are on; the reasoning control (effort or thinking
switch) the recipe's guide documents, sent the way the guide sends it; image
input when the model takes images.  Each call names the response field it
reads, so a test can run it against a real server and check that field.

vLLM returns the separated reasoning as ``reasoning`` (releases after 0.10) and
SGLang as ``reasoning_content``; the snippets read whichever is present.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from launchcard.prompts import CHAT_PROMPT, TOOL_PROMPT, WEATHER_TOOL

Lang = Literal["python", "curl"]

# The prompts and tool of `launchcard verify`: one definition, which the live
# tests' tiny model was trained on, so the generated calls can be executed there.
REASONING_PROMPT = CHAT_PROMPT
IMAGE_PROMPT = "Describe this image in one sentence."
TOOLS_PROMPT = TOOL_PROMPT


@dataclass(frozen=True, slots=True)
class ClientTarget:
    """Where the calls go: an OpenAI-compatible base URL (ending in ``/v1``) and the served name."""

    base_url: str
    model: str
    api_key_env: str | None = None  # read the key from this variable; None: a local server without a key


@dataclass(frozen=True, slots=True)
class ReasoningControl:
    """How a request turns reasoning up, down or off, as the recipe's guide shows it."""

    where: Literal["top-level", "chat_template_kwargs"]
    key: str  # reasoning_effort | enable_thinking | thinking ...
    value: str | bool
    evidence: str | None = None  # guide line, e.g. "models/x.yaml guide line 12"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the launch command turns on that a client can use."""

    reasoning: bool = False
    tools: bool = False
    images: bool = False
    control: ReasoningControl | None = None


@dataclass(frozen=True, slots=True)
class ClientCall:
    name: str  # chat | stream | reasoning | tools | effort | image
    lang: Lang
    title: str
    reads: str  # the response field the call prints
    code: str
    needs: tuple[str, ...] = field(default=())  # server features the call relies on


def capabilities(options: Mapping[str, str | None], *, images: bool = False,
                 control: ReasoningControl | None = None) -> Capabilities:
    """Capabilities from a command's options (flag -> value, last occurrence already applied)."""
    def on(flag: str) -> bool:
        return flag in options and str(options[flag]).lower() not in ("false", "0", "none", "")

    reasoning = bool(options.get("--reasoning-parser")) or on("--enable-reasoning")
    tools = "--enable-auto-tool-choice" in options and bool(options.get("--tool-call-parser"))
    if control is None:
        effort = options.get("--default-chat-template-kwargs.reasoning_effort")
        if effort:
            control = ReasoningControl("top-level", "reasoning_effort", "low",
                                       evidence="--default-chat-template-kwargs")
    return Capabilities(reasoning=reasoning, tools=tools, images=images, control=control if reasoning else None)


def capabilities_from_argv(argv: Sequence[str], *, images: bool = False, control: ReasoningControl | None = None,
                           engine: str | None = None) -> Capabilities:
    """Capabilities of a launch command, read through the one argv model (last occurrence wins).

    What the command enables (a reasoning parser; automatic tool choice with a tool parser; a
    reasoning-effort default) is read here only: ``launchcard verify``'s expectations come from it
    too.  ``engine`` reads bare flags (no entry point) as that engine's.
    """
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError

    cmd = parse_command(argv, engine=engine)

    def switch(flag: str) -> bool:
        try:
            return bool(cmd.get_bool(flag))
        except ArgvError:
            return False

    options: dict[str, str | None] = {}
    for flag in ("--reasoning-parser", "--tool-call-parser"):
        value = cmd.get_str(flag)
        if value:
            options[flag] = value
    if switch("--enable-auto-tool-choice"):
        options["--enable-auto-tool-choice"] = None
    try:
        kwargs = cmd.get_json("--default-chat-template-kwargs")
    except ArgvError:
        kwargs = None
    if isinstance(kwargs, dict) and kwargs.get("reasoning_effort"):
        options["--default-chat-template-kwargs.reasoning_effort"] = str(kwargs["reasoning_effort"])
    return capabilities(options, images=images, control=control)


_CTK = re.compile(r'"?chat_template_kwargs"?\s*[:=]\s*\{\s*"(\w+)"\s*:\s*("?[\w-]+"?)')
_TOP = re.compile(r'\breasoning_effort\s*(?:=\s*|"\s*:\s*)["\']([\w-]+)["\']')


def guide_control(guide: str | None, *, where: str | None = None, first_line: int = 1) -> ReasoningControl | None:
    """The reasoning control the guide's own client examples use, with its line."""
    if not guide:
        return None
    for i, line in enumerate(guide.splitlines()):
        ev = f"{where} line {first_line + i}" if where else None
        m = _CTK.search(line)
        if m and m.group(1) in ("reasoning_effort", "enable_thinking", "thinking"):
            raw = m.group(2).strip('"')
            value: str | bool = {"true": True, "false": False}.get(raw.lower(), raw)
            return ReasoningControl("chat_template_kwargs", m.group(1), value, evidence=ev)
        m = _TOP.search(line)
        if m and "chat_template_kwargs" not in line:
            return ReasoningControl("top-level", "reasoning_effort", m.group(1), evidence=ev)
    return None


def client_calls(target: ClientTarget, caps: Capabilities,
                 langs: Sequence[Lang] = ("python", "curl")) -> list[ClientCall]:
    """Every call this launch supports, in reading order, in each language."""
    user = [{"role": "user", "content": CHAT_PROMPT}]
    plans: list[tuple[str, str, str, dict[str, object], tuple[str, ...]]] = [
        ("chat", "Chat", "choices[0].message.content", {"messages": user}, ()),
        ("stream", "Streaming", "choices[0].delta.content", {"messages": user, "stream": True}, ()),
    ]
    if caps.reasoning:
        plans.append(("reasoning", "Read the separated reasoning", "choices[0].message.reasoning",
                      {"messages": [{"role": "user", "content": REASONING_PROMPT}]}, ("reasoning parser",)))
    if caps.tools:
        plans.append(("tools", "Tool calls", "choices[0].message.tool_calls",
                      {"messages": [{"role": "user", "content": TOOLS_PROMPT}], "tools": [WEATHER_TOOL]},
                      ("automatic tool choice",)))
    if caps.control is not None:
        c = caps.control
        body: dict[str, object] = {"messages": [{"role": "user", "content": REASONING_PROMPT}]}
        if c.where == "top-level":
            body[c.key] = c.value
        else:
            body["chat_template_kwargs"] = {c.key: c.value}
        plans.append(("effort", f"Reasoning control ({c.key})", "choices[0].message.content", body,
                      ("reasoning parser",)))
    if caps.images:
        plans.append(("image", "Image input", "choices[0].message.content", {"image": True}, ("image input",)))
    out: list[ClientCall] = []
    for name, title, reads, body, needs in plans:
        for lang in langs:
            code = _python(target, name, body) if lang == "python" else _curl(target, name, body)
            out.append(ClientCall(name, lang, title, reads, code, needs))
    return out


# --- Python ----------------------------------------------------------------------

def _py_header(t: ClientTarget) -> str:
    key = f'os.environ["{t.api_key_env}"],' if t.api_key_env else '"EMPTY",  # a server started without --api-key'
    return (
        "import os\n"
        "from openai import OpenAI\n\n"
        "client = OpenAI(\n"
        f"    api_key={key}\n"
        f"    base_url={json.dumps(t.base_url)},\n"
        ")\n\n"
    )


def _py_kwargs(t: ClientTarget, body: Mapping[str, object]) -> str:
    lines = [f"    model={json.dumps(t.model)},"]
    extra: dict[str, object] = {}
    for k, v in body.items():
        if k in ("messages", "tools", "stream"):
            lines.append(f"    {k}={_py_literal(v)},")
        elif k == "reasoning_effort":
            lines.append(f"    reasoning_effort={_py_literal(v)},")
        else:  # vLLM-specific request fields go through extra_body
            extra[k] = v
    if extra:
        lines.append(f"    extra_body={_py_literal(extra)},")
    return "\n".join(lines)


def _py_literal(value: object, indent: int = 4) -> str:
    """A Python literal for JSON-like data, wrapped like black would when it is long.

    JSON's true/false/null are not Python, so ``json.dumps`` alone will not do.
    """
    flat = _py_flat(value)
    if len(flat) + indent <= 100 or not isinstance(value, (Mapping, list, tuple)):
        return flat
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, Mapping):
        items = [f"{inner}{json.dumps(str(k))}: {_py_literal(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_py_literal(v, indent + 4)}," for v in value]
    return "[\n" + "\n".join(items) + f"\n{pad}]"


def _py_flat(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {_py_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py_flat(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _python(t: ClientTarget, name: str, body: Mapping[str, object]) -> str:
    head = _py_header(t)
    if name == "image":
        return head + (
            "import base64\n\n"
            "with open(\"image.jpg\", \"rb\") as f:  # any local JPEG\n"
            "    image_url = \"data:image/jpeg;base64,\" + base64.b64encode(f.read()).decode()\n\n"
            "response = client.chat.completions.create(\n"
            f"    model={json.dumps(t.model)},\n"
            "    messages=[{\"role\": \"user\", \"content\": [\n"
            f"        {{\"type\": \"text\", \"text\": {json.dumps(IMAGE_PROMPT)}}},\n"
            "        {\"type\": \"image_url\", \"image_url\": {\"url\": image_url}},\n"
            "    ]}],\n"
            ")\n"
            "print(response.choices[0].message.content)\n"
        )
    call = f"response = client.chat.completions.create(\n{_py_kwargs(t, body)}\n)\n"
    if name == "stream":
        return head + call.replace("response =", "stream =", 1) + (
            "for chunk in stream:\n"
            "    if chunk.choices and chunk.choices[0].delta.content:\n"
            "        print(chunk.choices[0].delta.content, end=\"\", flush=True)\n"
            "print()\n"
        )
    if name == "reasoning":
        return head + call + (
            "message = response.choices[0].message\n"
            "# vLLM names the field `reasoning`; SGLang and older vLLM `reasoning_content`.\n"
            "reasoning = getattr(message, \"reasoning\", None) or getattr(message, \"reasoning_content\", None)\n"
            "print(reasoning)        # chain of thought\n"
            "print(message.content)  # final answer\n"
        )
    if name == "tools":
        return head + call + "print(response.choices[0].message.tool_calls)\n"
    return head + call + "print(response.choices[0].message.content)\n"


# --- curl ------------------------------------------------------------------------

_B64 = "@@IMAGE_BASE64@@"

def _curl(t: ClientTarget, name: str, body: Mapping[str, object]) -> str:
    payload: dict[str, object] = {"model": t.model}
    if name == "image":
        payload["messages"] = [{"role": "user", "content": [
            {"type": "text", "text": IMAGE_PROMPT},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + _B64}},
        ]}]
    else:
        payload.update(body)
    data = json.dumps(payload, indent=2, ensure_ascii=False)
    # The body is single-quoted for the shell; a quote inside it is closed, escaped and reopened.
    data = data.replace("'", "'\\''")
    # The image is read by the shell at call time: close the quote around $(base64 ...). `base64 < file | tr -d`
    # is portable: GNU base64 wraps at 76 columns and only it knows -w0; macOS/BSD base64 has no -w.
    data = data.replace(_B64, "'\"$(base64 < image.jpg | tr -d '\\n')\"'")
    url = t.base_url.rstrip("/") + "/chat/completions"
    lines = [f"curl -s{'N' if name == 'stream' else ''} {url} \\", '  -H "Content-Type: application/json" \\']
    if t.api_key_env:
        lines.append(f'  -H "Authorization: Bearer ${t.api_key_env}" \\')
    lines.append(f"  -d '{data}'")
    return "\n".join(lines) + "\n"


def calls_markdown(calls: Sequence[ClientCall]) -> str:
    """The calls as Markdown sections (one per call, Python then curl)."""
    out: list[str] = []
    seen: set[str] = set()
    for c in calls:
        if c.name not in seen:
            seen.add(c.name)
            needs = f" (needs the server's {', '.join(c.needs)})" if c.needs else ""
            out.append(f"### {c.title}{needs}\n\nReads `{c.reads}`.\n")
        fence = "python" if c.lang == "python" else "bash"
        out.append(f"```{fence}\n{c.code}```\n")
    return "\n".join(out)
