"""External load generators behind `launchcard bench --driver`.

The built-in client is the default.  A driver runs one of the field's own
load generators as a subprocess against the same endpoint with the same
workload, bounds it in time, reads the per-request records from the tool's
own result file, and hands them back as `RequestRecord`s, so every figure is
computed by the same `summarize` with the same definitions as the built-in
client and lands in the same `BenchResult`, measured facts included.  The
tool, its version where it says it, and its exact command line are recorded
with the result.

Each tool is one small adapter: how a `Workload` becomes its command line,
and how its result file becomes records.  The tools are not dependencies of
launchcard (each pulls a large stack); ``--driver-cmd`` says how to start one
installed elsewhere.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from launchcard.bench._types import RequestRecord, Workload
from launchcard.errors import EndpointError, InputError

# Starting the tool (importing vllm or guidellm and a tokenizer) before the
# first request; on the 2-core test machine importing vllm alone takes ~15 s.
START_ALLOWANCE_S = 180.0


@dataclass(frozen=True)
class DriverCall:
    """What the tool is asked to do: one run of the workload (warm-up included)."""

    endpoint: str
    model: str
    tokenizer: str | None  # a local checkpoint dir or a Hub id the tool can load a tokenizer from
    workload: Workload
    seed: int
    out_dir: Path


@dataclass(frozen=True)
class DriverRun:
    """The tool's records of the measured requests and the run's wall time."""

    records: list[RequestRecord]
    duration_s: float
    version: str | None = None
    config: str | None = None  # the config file the tool was given, verbatim (guidellm's scenario)


@dataclass(frozen=True)
class Driver:
    name: str  # the --driver value
    tool: str  # what the tool calls itself
    default_cmd: tuple[str, ...]
    install: str  # how to get it, for the fix of a "not found"
    argv: Callable[[DriverCall], list[str]]  # may write the tool's input files into call.out_dir
    read: Callable[[Path], DriverRun]


# --- vllm bench serve ------------------------------------------------------------------------------------------

def _vllm_argv(c: DriverCall) -> list[str]:
    w = c.workload
    argv = ["--backend", "openai", "--base-url", c.endpoint, "--endpoint", "/v1/completions",
            "--served-model-name", c.model, "--model", c.tokenizer or c.model,
            "--dataset-name", "random", "--random-input-len", str(w.input_tokens),
            "--random-output-len", str(w.output_tokens), "--random-range-ratio", "0",
            "--num-prompts", str(w.num_prompts), "--max-concurrency", str(w.concurrency),
            "--request-rate", "inf" if math.isinf(w.request_rate) else repr(w.request_rate),
            "--ignore-eos", "--temperature", repr(w.temperature), "--top-p", repr(w.top_p),
            "--num-warmups", str(w.warmup), "--seed", str(c.seed),
            # vLLM's own wait for a ready endpoint defaults to none; launchcard probed already
            "--ready-check-timeout-sec", "0",
            "--save-result", "--save-detailed", "--result-dir", str(c.out_dir), "--result-filename", "result.json",
            "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99", "--disable-tqdm"]
    if c.tokenizer:
        argv += ["--tokenizer", c.tokenizer]
    return argv


def _vllm_read(out_dir: Path) -> DriverRun:
    data = _load_json(out_dir / "result.json")
    try:
        cols = [data[k] for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "errors")]
        duration = float(data["duration"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad_result(out_dir / "result.json", f"no per-request field {exc}") from None
    if len({len(c) for c in cols}) != 1:
        raise _bad_result(out_dir / "result.json", "per-request lists of different lengths")
    records = []
    try:
        for prompt, out, ttft, itl, latency, error in zip(*cols, strict=True):
            if error:
                records.append(RequestRecord(ok=False, error=" ".join(str(error).split())[:200]))
                continue
            records.append(RequestRecord(ok=True, prompt_tokens=prompt, output_tokens=out, ttft_s=ttft,
                                         e2e_s=latency, itl_s=tuple(itl)))
    except (ValidationError, TypeError) as exc:
        raise _bad_result(out_dir / "result.json", f"a request record of the wrong type ({_first_error(exc)})") \
            from None
    return DriverRun(records=records, duration_s=duration, version=None)


VLLM = Driver(name="vllm", tool="vllm bench serve", default_cmd=("vllm", "bench", "serve"),
              install="install vLLM (pip install vllm), or pass --driver-cmd", argv=_vllm_argv, read=_vllm_read)

# --- guidellm run ---------------------------------------------------------------------------------------------

def _guidellm_argv(c: DriverCall) -> list[str]:
    """guidellm takes its run as a scenario file (``run -c``); it is written next to its result."""
    w = c.workload
    body = {"ignore_eos": True, "temperature": w.temperature, "top_p": w.top_p}
    # guidellm's warm-up is a window of its run, not a phase before it: the
    # first ``warmup`` requests' time is cut from the measurement.
    warm = {"warmup": {"mode": "requests", "value": w.warmup}} if w.warmup else {}
    if math.isinf(w.request_rate):
        profile: dict[str, Any] = {"kind": "concurrent", "streams": w.concurrency, **warm}
    else:  # Poisson arrivals capped at the concurrency, as the built-in client and vLLM's bench do
        profile = {"kind": "poisson", "rate": w.request_rate, "max_concurrency": w.concurrency, **warm}
    spec = {
        "backend": {"kind": "openai_http", "target": c.endpoint, "model": c.model, "request_format": "/v1/completions",
                    # HTTP/1.1 like the other tools (an http:// server is not asked for h2c)
                    "extras": {"body": body}, "timeout": w.timeout_s, "http2": False},
        "profile": profile,
        "constraints": [{"kind": "max_requests", "count": w.warmup + w.num_prompts}],
        "tokenizer": {"kind": "huggingface_auto", "model": c.tokenizer or c.model},
        "data": [{"kind": "synthetic_text", "prompt_tokens": w.input_tokens, "output_tokens": w.output_tokens}],
        "seed": {"kind": "static", "value": c.seed},
        "outputs": [{"kind": "json", "path": str(c.out_dir / "result.json")}],
    }
    scenario = c.out_dir / "scenario.json"
    scenario.write_text(json.dumps({"metadata": {"name": "launchcard"}, "spec": spec}, indent=1), encoding="utf-8")
    return ["run", "-c", str(scenario), "--disable-console-interactive"]


def _guidellm_read(out_dir: Path) -> DriverRun:
    path = out_dir / "result.json"
    data = _load_json(path)
    try:
        bench = data["benchmarks"][0]
        start, end = float(bench["start_time"]), float(bench["end_time"])
        groups = {k: bench["requests"][k] or [] for k in ("successful", "errored", "incomplete")}
        version = data.get("metadata", {}).get("guidellm_version")
        records = [_guidellm_record(r, ok=(k == "successful")) for k, rows in groups.items() for r in rows
                   if _in_window(r, start, end)]
    except ValidationError as exc:
        raise _bad_result(path, f"a request record of the wrong type ({_first_error(exc)})") from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise _bad_result(path, f"no field {exc}") from None
    config = (out_dir / "scenario.json").read_text(encoding="utf-8") if (out_dir / "scenario.json").is_file() else None
    return DriverRun(records=records, duration_s=end - start, version=version if isinstance(version, str) else None,
                     config=config)


def _in_window(r: dict[str, Any], start: float, end: float) -> bool:
    """Sent inside guidellm's measured window: after its warm-up requests (the window opens when the
    first request after them is sent), before its end.  guidellm times each metric sample by its own
    event, so a warm-up request that ends inside the window adds no TTFT there; whole requests sent
    inside it are the set all its per-request latencies come from, as in vLLM's bench."""
    began = r.get("request_start_time")
    return began is not None and start <= began <= end


def _guidellm_record(r: dict[str, Any], *, ok: bool) -> RequestRecord:
    t = r["info"]["timings"]
    began, first, last = t.get("request_start"), t.get("first_token_iteration"), t.get("last_token_iteration")
    if not ok or began is None or first is None or last is None:
        error = r["info"].get("error") or ("cancelled when the run ended" if ok is False else "no tokens timed")
        return RequestRecord(ok=False, error=" ".join(str(error).split())[:200])
    # Timed as vLLM's bench times: from sending to the first and the last chunk with a token.
    # guidellm keeps no per-chunk gaps, so the ITL distribution stays unmeasured (null).
    return RequestRecord(ok=True, prompt_tokens=r.get("prompt_tokens"), output_tokens=r.get("output_tokens"),
                         ttft_s=first - began, e2e_s=last - began)


GUIDELLM = Driver(name="guidellm", tool="guidellm", default_cmd=("guidellm",),
                  install="pip install guidellm (a large stack: torch, transformers; best in a venv of its own), "
                          "or pass --driver-cmd", argv=_guidellm_argv, read=_guidellm_read)

DRIVERS: dict[str, Driver] = {d.name: d for d in (VLLM, GUIDELLM)}


# --- running one -----------------------------------------------------------------------------------------------

def driver(name: str) -> Driver:
    """The driver called ``name`` (the --driver value)."""
    if name not in DRIVERS:
        raise InputError(f"unknown load generator {name!r}", field="driver",
                         fix="use one of: builtin, " + ", ".join(DRIVERS))
    return DRIVERS[name]


def time_limit(w: Workload) -> float:
    """Start-up, then every wave of ``concurrency`` requests may take one per-request timeout."""
    waves = math.ceil((w.warmup + w.num_prompts) / w.concurrency) + 1  # + the tools' own test request
    return START_ALLOWANCE_S + waves * w.timeout_s


def run_driver(d: Driver, cmd: Sequence[str] | None, call: DriverCall) -> tuple[DriverRun, tuple[str, ...]]:
    """Run the tool once; its records and the command line that produced them.

    A tool that is not there is bad input (exit 2); one that fails, overruns
    its time or writes no readable result fails the run (EndpointError, exit 1),
    naming the last line it printed.
    """
    argv = (*(cmd or d.default_cmd), *d.argv(call))
    log = call.out_dir / "driver.log"
    limit = time_limit(call.workload)
    try:
        with open(log, "wb") as out:
            # A session of its own: on overrun the tool and anything it started go together.
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise EndpointError(f"{d.tool} did not finish within {limit:g}s (last output: {_tail(log)})",
                                    where=call.endpoint, fix="check the endpoint, or lower --num-prompts / "
                                                             "--timeout") from None
            except BaseException:
                _kill(proc)
                raise
    except FileNotFoundError:
        raise InputError(f"{d.tool} not found ({argv[0]!r})", field="driver_cmd", fix=d.install) from None
    except PermissionError:
        raise InputError(f"{argv[0]!r} cannot be run", field="driver_cmd", fix=d.install) from None
    if rc != 0:
        raise EndpointError(f"{d.tool} exited with status {rc}: {_tail(log)}", where=call.endpoint,
                            fix=f"that is the tool's own last line; check that `{shlex.join(cmd or d.default_cmd)}` "
                                f"runs against this endpoint")
    return d.read(call.out_dir), argv


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _tail(log: Path) -> str:
    """The tool's last meaningful output line, for a one-line error."""
    try:
        lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no output"
    return " ".join(lines[-1].split())[:240] if lines else "no output"


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad_result(path, "the tool wrote no result file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad_result(path, f"not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise _bad_result(path, f"a JSON {type(data).__name__}, not an object")
    return data


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}, got {err.get('input')!r}"[:160]
    return str(exc)[:160]


def _bad_result(path: Path, why: str) -> EndpointError:
    return EndpointError(f"unreadable load-generator result: {why}", where=str(path),
                         fix="check the tool's version against the ones launchcard reads (README: bench drivers)")
