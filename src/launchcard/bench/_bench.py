"""`run_bench`: conditions, prompts, load, result — the library entry point."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard import __version__
from launchcard.argv import parse_command
from launchcard.bench import _drivers as drivers
from launchcard.bench._metrics import CacheCounters, hit_rate, read_cache_counters
from launchcard.bench._prompts import local_tokenizer, make_prompts, server_tokenizer
from launchcard.bench._run import Progress, Send, assemble, canary, httpx_send, now_utc, run_async
from launchcard.bench._types import BenchResult, LoadCpu, RequestRecord, Sizing, Workload
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


def cache_state(prefix_caching: str | None, seen: tuple[float, float] | None, *,
                prompts: str = "distinct prompts") -> str:
    """What the prefix cache did for this run: how the prompts were made, and what the server's counters say."""
    parts = [f"prefix caching {prefix_caching}"] if prefix_caching else []
    parts.append(prompts)
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
              on_progress: Progress | None = None, driver: str | None = None,
              driver_cmd: Sequence[str] | None = None) -> BenchResult:
    """Benchmark an OpenAI-compatible endpoint under stated conditions.

    ``argv`` is the server's command line when known (from `launchcard up`);
    conditions it cannot establish stay null.  ``driver`` names an external
    load generator (see ``_drivers``) to send the load instead of the built-in
    client; ``driver_cmd`` is how to start it when not on PATH.
    """
    import httpx

    endpoint = endpoint.rstrip("/")
    meta_timeout = min(workload.timeout_s, META_TIMEOUT_S)
    tool = None if driver in (None, "builtin") else drivers.driver(driver)
    # One metadata connection for the whole run: probe, tokenizer, and the
    # prefix-cache counters read before and after the load.
    with httpx.Client(transport=sync_transport, timeout=meta_timeout) as sync:
        models = probe(sync, endpoint, min(workload.timeout_s, PROBE_TIMEOUT_S))
        model = model or served_model(models)
        version = runtime_version(sync, endpoint)
        if tool is None:
            load = _builtin_load(sync, endpoint, model, workload, model_dir, transport, on_progress)
        else:
            load = _driven_load(sync, tool, driver_cmd, endpoint, model, workload, model_dir, transport)
        known = _from_argv(argv, model_dir)
        conditions = Conditions(
            model_revision=model_revision, weight_hash=weight_hash(model_dir) if model_dir else None,
            runtime_execution_revision=version,
            input_tokens=workload.input_tokens if load.sizing == "exact" else None,
            output_tokens=workload.output_tokens, concurrency=workload.concurrency,
            cache_state=cache_state(known["prefix_caching"], hit_rate(load.counters_before,
                                                                      read_cache_counters(sync, endpoint)),
                                    prompts=load.prompts),
            quantization=known["quantization"], speculative_decoding=known["speculative_decoding"],
            temperature=workload.temperature, top_p=workload.top_p, load_generator=load.generator)
    result = assemble(endpoint, model, workload, load.runs, load.durations, sizing=load.sizing,
                      sizing_note=load.note, conditions=conditions, runtime_version=version,
                      started_at=load.started, load_generator_argv=load.generator_argv,
                      load_generator_config=load.generator_config, load_generator_cpu=load.cpu)
    if load.sizing == "approximate" and result.summary.mean_prompt_tokens is not None:
        # What the server counted is measured, not guessed: record it.
        result = result.model_copy(update={"conditions": conditions.model_copy(
            update={"input_tokens": round(result.summary.mean_prompt_tokens)})})
    return result


@dataclass(frozen=True)
class _Load:
    """What sending the load produced, whichever tool sent it."""

    runs: list[list[RequestRecord]]
    durations: list[float]
    sizing: Sizing
    note: str
    started: datetime
    counters_before: CacheCounters | None
    generator: str
    generator_argv: tuple[str, ...] | None = None
    generator_config: str | None = None
    prompts: str = "distinct prompts"
    cpu: LoadCpu | None = None


def _sender(endpoint: str, workload: Workload,
            transport: httpx.AsyncBaseTransport | None) -> contextlib.AbstractAsyncContextManager[Send]:
    """How requests are sent: the lean client for plain http, httpx otherwise (https, injected transports)."""
    import httpx

    @contextlib.asynccontextmanager
    async def lean() -> AsyncIterator[Send]:
        client = StreamClient(endpoint, max_idle=workload.concurrency)
        try:
            yield lambda body, on_data: client.post_stream("/v1/completions", body, on_data)
        finally:
            await client.aclose()

    @contextlib.asynccontextmanager
    async def via_httpx() -> AsyncIterator[Send]:
        # One connection per concurrent request, as vLLM's bench does.
        limits = httpx.Limits(max_connections=workload.concurrency, max_keepalive_connections=workload.concurrency)
        async with httpx.AsyncClient(transport=transport, timeout=workload.timeout_s, limits=limits) as client:
            yield httpx_send(client, f"{endpoint}/v1/completions", workload.timeout_s)

    return lean() if transport is None and endpoint.startswith("http://") else via_httpx()


def _builtin_load(sync: httpx.Client, endpoint: str, model: str, workload: Workload, model_dir: Path | None,
                  transport: httpx.AsyncBaseTransport | None, on_progress: Progress | None) -> _Load:
    import httpx

    tok, how = None, "approximate: word prompts, no tokenizer of the served model was available"
    if model_dir is not None and (tok := local_tokenizer(model_dir)):
        how = f"exact: text prompts that encode to the requested tokens with {model_dir / 'tokenizer.json'}"
    elif tok := server_tokenizer(sync, endpoint, model):
        how = "exact: text prompts that encode to the requested tokens with the server's /tokenize"
    try:
        prompts, sizing = make_prompts(workload.num_prompts * workload.repetitions, workload.input_tokens,
                                       seed=workload.seed, tokenizer=tok)
    except httpx.HTTPError as exc:
        raise EndpointError(f"/tokenize stopped answering ({type(exc).__name__})", where=f"{endpoint}/tokenize",
                            fix="check the server, or pass --model-dir for a local tokenizer") from None
    if sizing == "approximate" and tok is not None:
        how = "approximate: some prompt texts did not encode back to exactly the requested tokens"
    before = read_cache_counters(sync, endpoint)
    started = now_utc()
    url = f"{endpoint}/v1/completions"

    async def go() -> tuple[list[list[RequestRecord]], list[float]]:
        async with _sender(endpoint, workload, transport) as send:
            sets = [prompts[i:i + workload.num_prompts] for i in range(0, len(prompts), workload.num_prompts)]
            return await run_async(model, sets, workload, where=url, on_progress=on_progress, send=send)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    runs, durations = asyncio.run(go())
    return _Load(runs=runs, durations=durations, sizing=sizing, note=how, started=started, counters_before=before,
                 generator=f"launchcard {__version__} (built-in client)",
                 cpu=_cpu(time.process_time() - cpu0, time.perf_counter() - wall0))


def _driven_load(sync: httpx.Client, tool: drivers.Driver, cmd: Sequence[str] | None, endpoint: str, model: str,
                 workload: Workload, model_dir: Path | None, transport: httpx.AsyncBaseTransport | None) -> _Load:
    """The load from an external tool, after one bounded request of launchcard's own: an endpoint that
    takes connections but never answers fails here in one --timeout, not in the tool's own (hours)."""
    url = f"{endpoint}/v1/completions"

    async def one() -> RequestRecord:
        async with _sender(endpoint, workload, transport) as send:
            return await canary(send, model, workload, where=url)

    first = asyncio.run(one())
    if not first.ok:
        raise EndpointError(f"the first completion failed before {tool.tool} was started ({first.error})",
                            where=url, fix="check the server (launchcard verify)")
    before = read_cache_counters(sync, endpoint)
    started = now_utc()
    runs: list[list[RequestRecord]] = []
    durations: list[float] = []
    argv: tuple[str, ...] = ()
    version = config = None
    cpu_s = wall_s = 0.0
    with tempfile.TemporaryDirectory(prefix="launchcard-driver-") as tmp:
        for rep in range(workload.repetitions):
            out = Path(tmp) / f"run{rep + 1}"
            out.mkdir()
            call = drivers.DriverCall(endpoint=endpoint, model=model,
                                      tokenizer=str(model_dir) if model_dir is not None else None,
                                      workload=workload, seed=workload.seed + rep, out_dir=out)
            cpu0, wall0 = _children_cpu(), time.perf_counter()
            run, argv = drivers.run_driver(tool, cmd, call)
            cpu_s += _children_cpu() - cpu0
            wall_s += time.perf_counter() - wall0
            runs.append(run.records)
            durations.append(run.duration_s)
            version, config = version or run.version, config or run.config
    prompts = {r.prompt_tokens for run in runs for r in run if r.ok and r.prompt_tokens is not None}
    exact = prompts == {workload.input_tokens}
    if exact:
        note = f"exact: {tool.tool}'s own prompts; the server counted {workload.input_tokens} tokens each"
    elif prompts:
        note = (f"approximate: {tool.tool}'s own prompts; the server counted {min(prompts)}-{max(prompts)} "
                f"tokens (special tokens included)")
    else:
        note = f"approximate: {tool.tool}'s own prompts; no request completed, so no prompt was counted"
    return _Load(runs=runs, durations=durations, sizing="exact" if exact else "approximate", note=note,
                 started=started, counters_before=before,
                 generator=f"{tool.tool} {version}" if version else tool.tool, generator_argv=argv,
                 generator_config=config, prompts=f"prompts from {tool.tool}'s synthetic dataset",
                 cpu=_cpu(cpu_s, wall_s, startup_included=True))


def _cpu(cpu_s: float, wall_s: float, *, startup_included: bool = False) -> LoadCpu | None:
    if wall_s <= 0:
        return None
    return LoadCpu(cpu_s=round(max(cpu_s, 0.0), 3), wall_s=round(wall_s, 3), startup_included=startup_included)


def _children_cpu() -> float:
    """User + system CPU of this process's finished children (the tool, once waited for)."""
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime

