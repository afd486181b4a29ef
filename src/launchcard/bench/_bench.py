"""`run_bench`: conditions, prompts, load, result — the library entry point."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.argv import parse_command
from launchcard.bench._metrics import hit_rate, read_cache_counters
from launchcard.bench._prompts import local_tokenizer, make_prompts, server_tokenizer
from launchcard.bench._run import Progress, assemble, httpx_send, now_utc, run_async
from launchcard.bench._types import BenchResult, RequestRecord, Workload
from launchcard.bench._wire import StreamClient
from launchcard.card import Conditions
from launchcard.errors import EndpointError

if TYPE_CHECKING:
    import httpx


def weight_hash(model_dir: Path) -> str | None:
    """sha256 over the weight files (name and bytes, sorted); None if there are none."""
    files = sorted(p for p in model_dir.glob("*") if p.suffix in (".safetensors", ".bin", ".gguf", ".pt"))
    if not files:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return "sha256:" + h.hexdigest()


def _from_argv(argv: tuple[str, ...] | None, model_dir: Path | None) -> dict[str, str | None]:
    """Quantization, speculative decoding and prefix caching, only where the
    command line (and the checkpoint's config, for quantization) says so."""
    if argv is None:
        return {"quantization": None, "speculative_decoding": None, "prefix_caching": None}
    cmd = parse_command(argv, engine="vllm")
    quant = cmd.get_str("--quantization", "-q")
    if not quant and model_dir is not None and (model_dir / "config.json").is_file():
        cfg = json.loads((model_dir / "config.json").read_text())
        qc = cfg.get("quantization_config")
        quant = (qc or {}).get("quant_method", "checkpoint") if qc else "none"
    spec = cmd.get_str("--speculative-config")
    caching = cmd.get_bool("--enable-prefix-caching")
    prefix = "engine default" if caching is None else ("on" if caching else "off")
    return {"quantization": quant or None, "speculative_decoding": spec if spec else "none",
            "prefix_caching": prefix}


def runtime_version(client: httpx.Client, endpoint: str) -> str | None:
    import httpx

    try:
        resp = client.get(f"{endpoint}/version")
        version = resp.json().get("version") if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return f"vllm {version}" if isinstance(version, str) else None


PROBE_TIMEOUT_S = 5.0  # the first request: an endpoint that is up answers /v1/models at once
META_TIMEOUT_S = 15.0  # /version and /tokenize


def probe(client: httpx.Client, endpoint: str, timeout_s: float) -> httpx.Response:
    """GET /v1/models with a short timeout; an endpoint that does not answer ends the run here."""
    import httpx

    url = f"{endpoint}/v1/models"
    try:
        return client.get(url, timeout=timeout_s)
    except httpx.TimeoutException:
        raise EndpointError(f"no answer within {timeout_s:g}s", where=url,
                            fix="check that the server is up and healthy (launchcard verify)") from None
    except httpx.HTTPError as exc:
        raise EndpointError(f"no answer ({type(exc).__name__}: {exc})", where=url,
                            fix="check the endpoint URL and that the server is running") from None


def served_model(resp: httpx.Response) -> str:
    """The first model /v1/models lists."""
    try:
        return str(resp.json()["data"][0]["id"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise EndpointError(f"cannot read the served model name (HTTP {resp.status_code}, {type(exc).__name__})",
                            where=str(resp.request.url), fix="pass --model NAME") from None


def cache_state(prefix_caching: str | None, seen: tuple[float, float] | None) -> str:
    """What the prefix cache did for this run: the prompts are distinct, and the server's counters say the rest."""
    parts = [f"prefix caching {prefix_caching}"] if prefix_caching else []
    parts.append("distinct prompts")
    if seen is None:
        parts.append("hit rate not measured (no prefix-cache counters on /metrics)")
    else:
        rate, queried = seen
        parts.append(f"server prefix-cache hits {rate:.1%} of {queried:,.0f} prompt tokens looked up (/metrics)")
    return "; ".join(parts)


def run_bench(endpoint: str, workload: Workload, *, model: str | None = None, model_dir: Path | None = None,
              model_revision: str | None = None, argv: tuple[str, ...] | None = None,
              transport: httpx.AsyncBaseTransport | None = None,
              sync_transport: httpx.BaseTransport | None = None,
              on_progress: Progress | None = None) -> BenchResult:
    """Benchmark an OpenAI-compatible endpoint under stated conditions.

    ``argv`` is the server's command line when known (from `launchcard up`);
    conditions it cannot establish stay null.
    """
    import httpx

    endpoint = endpoint.rstrip("/")
    meta_timeout = min(workload.timeout_s, META_TIMEOUT_S)
    # One metadata connection for the whole run: probe, tokenizer, and the
    # prefix-cache counters read before and after the load.
    with httpx.Client(transport=sync_transport, timeout=meta_timeout) as sync:
        return _run_bench(sync, endpoint, workload, model=model, model_dir=model_dir, model_revision=model_revision,
                          argv=argv, transport=transport, on_progress=on_progress)


def _run_bench(sync: httpx.Client, endpoint: str, workload: Workload, *, model: str | None, model_dir: Path | None,
               model_revision: str | None, argv: tuple[str, ...] | None,
               transport: httpx.AsyncBaseTransport | None, on_progress: Progress | None) -> BenchResult:
    import httpx

    models = probe(sync, endpoint, min(workload.timeout_s, PROBE_TIMEOUT_S))
    model = model or served_model(models)
    version = runtime_version(sync, endpoint)
    tokenize, how = None, "approximate: word prompts, no tokenizer of the served model was available"
    if model_dir is not None and (tokenize := local_tokenizer(model_dir)):
        how = f"exact: token ids from {model_dir / 'tokenizer.json'}"
    elif tokenize := server_tokenizer(sync, endpoint, model):
        how = "exact: token ids from the server's /tokenize"
    try:
        prompts, sizing = make_prompts(workload.num_prompts, workload.input_tokens, seed=workload.seed,
                                       tokenize=tokenize)
    except httpx.HTTPError as exc:
        raise EndpointError(f"/tokenize stopped answering ({type(exc).__name__})", where=f"{endpoint}/tokenize",
                            fix="check the server, or pass --model-dir for a local tokenizer") from None
    counters_before = read_cache_counters(sync, endpoint)
    known = _from_argv(argv, model_dir)
    started = now_utc()

    url = f"{endpoint}/v1/completions"

    async def go() -> tuple[list[list[RequestRecord]], list[float]]:
        if transport is None and endpoint.startswith("http://"):
            # The load itself goes through the lean client (see _wire.py for why).
            lean = StreamClient(endpoint, max_idle=workload.concurrency)
            try:
                return await run_async(model, prompts, workload, where=url, on_progress=on_progress,
                                       send=lambda body, on_data: lean.post_stream("/v1/completions", body, on_data))
            finally:
                await lean.aclose()
        # One connection per concurrent request, as vLLM's bench does.
        limits = httpx.Limits(max_connections=workload.concurrency, max_keepalive_connections=workload.concurrency)
        async with httpx.AsyncClient(transport=transport, timeout=workload.timeout_s, limits=limits) as client:
            return await run_async(model, prompts, workload, where=url, on_progress=on_progress,
                                   send=httpx_send(client, url, workload.timeout_s))

    runs, durations = asyncio.run(go())
    seen = hit_rate(counters_before, read_cache_counters(sync, endpoint))
    conditions = Conditions(
        model_revision=model_revision, weight_hash=weight_hash(model_dir) if model_dir else None,
        runtime_execution_revision=version,
        input_tokens=workload.input_tokens if sizing == "exact" else None,
        output_tokens=workload.output_tokens, concurrency=workload.concurrency,
        cache_state=cache_state(known["prefix_caching"], seen),
        quantization=known["quantization"], speculative_decoding=known["speculative_decoding"],
        temperature=workload.temperature, top_p=workload.top_p)
    result = assemble(endpoint, model, workload, runs, durations, sizing=sizing, sizing_note=how,
                      conditions=conditions, runtime_version=version, started_at=started)
    if sizing == "approximate" and result.summary.mean_prompt_tokens is not None:
        # What the server counted is measured, not guessed: record it.
        result = result.model_copy(update={"conditions": conditions.model_copy(
            update={"input_tokens": round(result.summary.mean_prompt_tokens)})})
    return result
