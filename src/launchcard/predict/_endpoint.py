"""The endpoint a workload's requests go to, and what vLLM's chat endpoint costs over its completions endpoint.

``vllm bench serve`` sends ``/v1/completions`` requests unless told otherwise (``--backend`` default ``openai``,
``--endpoint`` default ``/v1/completions``: vllm/benchmarks/serve.py L880-908 in vLLM 0.11.0); ``--backend
openai-chat --endpoint /v1/chat/completions`` sends one user message instead (GPUStack's performance lab runs every
engine so).  On the chat endpoint vLLM's API server parses the messages, renders the model's chat template and
tokenizes the result before the engine sees the request, and streams bigger chunks (a role-only chunk first, then
``delta`` chunks); the client parses those chunks.  The per-request and per-chunk costs were measured on vLLM's own
server and client (the table's "chat" section: bench/measure_chat_request.py, bench/measure_host_stream.py
--chat), as CPU time at a stated host speed, like every measured host term.  vLLM 0.11.0 alone also parses the
whole chat template again on every request (vllm/entrypoints/chat_utils.py L1575-1599
``resolve_chat_template_kwargs``, called from ``apply_hf_chat_template`` L1627; 0.10.x has no such step, 0.11.1
caches it: ``_cached_resolve_chat_template_kwargs``, chat_utils.py L1535): its cost was measured on a real
Qwen3-family template and grows with the template, which the plan does not name (stated as an assumption).

SGLang's and TensorRT-LLM's API servers were not measured: on their chat endpoints only the client's part applies.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from launchcard.flagspec import release_key
from launchcard.predict._coef import Coefficients, _ref_op
from launchcard.predict._domain import engine_name
from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Finding


class ChatCost(NamedTuple):
    """What one chat request costs over a completions request, at the set's reference host speed."""

    request_ms: float = 0.0  # the API server's and the client's CPU per request (measured)
    parse_ms: float = 0.0  # vLLM 0.11.0's per-request template parse (measured; 0 for other releases)
    api_ratio: float = 1.0  # the API server's streaming cost per chunk, chat over completions
    client_ratio: float = 1.0  # the client's, alike
    parse_template: str = ""  # the template the parse was measured on (name, bytes)


def _scale(point: dict[str, Any], ref: float) -> float:
    """The factor that states a point measured at its ``host_op_us`` at the host op time ``ref``."""
    got = float(point.get("host_op_us") or 0.0)
    return ref / got if ref and got else 1.0


def _parse_releases(engine: str, release: str | None, doc: dict[str, Any]) -> bool:
    """Whether ``release`` of ``engine`` parses the chat template on every request (the table's range)."""
    span = ((doc.get("template_parse") or {}).get("releases") or {}).get(engine)
    key = release_key(release)
    if not span or key is None:
        return False
    lo, hi = release_key(span[0]), release_key(span[1])
    return lo is not None and hi is not None and lo <= key < hi


# model types whose chat vLLM renders without the jinja template (openai_harmony: serving_chat.py L146-147 and
# _make_request_with_harmony in 0.11.0): neither the measured template path nor 0.11.0's parse applies
HARMONY = ("gpt_oss",)


def chat_cost(engine: str, release: str | None, host_op_us: float = 0.0, model_type: str = "") -> ChatCost | None:
    """The recorded chat costs for ``engine`` at ``release``, each stated at :func:`_ref_op`'s host op time;
    None where the table has no "chat" section.  A model vLLM renders with harmony gets the client's and the
    chunks' parts only (its API server's path was not measured)."""
    doc = _table().get("chat")
    if not isinstance(doc, dict):
        return None
    ref = _ref_op(host_op_us)
    req = doc.get("request") or {}
    r = _scale(req, ref)
    jinja = not (engine == "vllm" and model_type in HARMONY)
    api_us = float((req.get("api_us") or {}).get(engine) or 0.0) if jinja else 0.0
    request_us = (api_us + float(req.get("client_us") or 0.0)) * r
    parse = doc.get("template_parse") or {}
    parse_ms = (float((parse.get("ms") or {}).get(engine) or 0.0) * _scale(parse, ref)
                if jinja and _parse_releases(engine, release, doc) else 0.0)
    stream, base = doc.get("stream") or {}, _completions_point(int((doc.get("stream") or {}).get("outputs") or 0))
    api_ratio = client_ratio = 1.0
    if stream and base:
        s, b = _scale(stream, ref), _scale(base, ref)
        a_chat, a_base = float((stream.get("api_us") or {}).get(engine) or 0.0), float(
            (base.get("api_us") or {}).get(engine) or 0.0)
        api_ratio = a_chat * s / (a_base * b) if a_chat and a_base else 1.0
        c_chat, c_base = float(stream.get("client_us") or 0.0), float(base.get("client_us") or 0.0)
        client_ratio = c_chat * s / (c_base * b) if c_chat and c_base else 1.0
    name = f"{parse.get('template', 'a template')} ({parse.get('bytes', '?')} bytes)"
    return ChatCost(request_us * 1e-3, parse_ms, api_ratio, client_ratio, name)


def _completions_point(outputs: int) -> dict[str, Any] | None:
    """The completions endpoint's streaming point of ``outputs`` (the table's "streaming")."""
    for p in (_table().get("streaming") or {}).get("points", ()):
        if isinstance(p, dict) and int(p.get("outputs") or 0) == outputs:
            return p
    return None


def with_endpoint(c: Coefficients, engine: str, release: str | None, endpoint: str, model_type: str = ""
                  ) -> tuple[Coefficients, Finding | None]:
    """``c`` for requests sent to ``endpoint``: on the chat endpoint the request path's measured extra CPU joins
    ``request_ms`` (so it scales with the request path's host speed like it, ``on_host``) and the streaming stages
    cost the measured chat ratios; the same per-request work is taken in turn for requests sent together at the
    start (``ingest_us``); a finding says what was added.  Completions: ``c`` unchanged."""
    if endpoint != "chat":
        return c, None
    cost = chat_cost(engine, release, c.host_op_us, model_type)
    if cost is None:
        return c, Finding("assumed", "endpoint", "chat endpoint: its extra cost over /v1/completions is not "
                                                 "recorded (data/predict_coefficients.json has no \"chat\"); "
                                                 "predicted as completions")
    st = c.stages
    stages = st._replace(api_us=st.api_us * cost.api_ratio, client_us=st.client_us * cost.client_ratio)
    # the API server runs a chat's preprocessing (template render, 0.11.0's parse) inside the request's coroutine
    # without yielding (serving_engine.py L791 in 0.11.0): requests sent together are taken in turn
    each = cost.request_ms + cost.parse_ms
    out = replace(c, request_ms=c.request_ms + each, stages=stages, ingest_us=c.ingest_us + each * 1e3)
    who = "the API server and the client" if engine == "vllm" else (
        f"the client ({engine_name(engine)}'s API server not measured)")
    if engine == "vllm" and model_type in HARMONY:
        who = (f"the client (vLLM renders {model_type} chats with openai_harmony, not the chat template: that path "
               "of its API server was not measured)")
    text = (f"chat endpoint (vllm bench serve --backend openai-chat): +{cost.request_ms:.2f} ms per request before "
            f"the first token for {who}'s extra CPU (template, messages, role chunk; measured on vLLM's own code, "
            "bench/measure_chat_request.py)")
    if cost.parse_ms:
        text += (f" + {cost.parse_ms:.1f} ms: vLLM {release} parses the chat template again on every request "
                 f"(chat_utils.py resolve_chat_template_kwargs; cached from 0.11.1), measured on {cost.parse_template}"
                 "; the model's own template is assumed of that size (parse time grows with it)")
    text += (f"; requests sent together at the start are taken in turn (the preprocessing runs in the API server's "
             f"event loop without yielding, serving_engine.py L791 in 0.11.0): each waits {each:.2f} ms per request "
             "ahead of it")
    ratios = [f"API server x{cost.api_ratio:.2f}" if engine == "vllm" and st.api_us else "",
              f"client x{cost.client_ratio:.2f}" if st.client_us else ""]
    if any(ratios):
        text += "; streaming stages per chunk: " + ", ".join(r for r in ratios if r)
    return out, Finding("assumed", "endpoint", text)

