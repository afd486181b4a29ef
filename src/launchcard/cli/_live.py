"""``launchcard up | down | verify | bench``: run a plan locally and prove it."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    CatalogOpt,
    ConfigOpt,
    EngineOpt,
    GpusPerNodeOpt,
    HardwareOpt,
    JsonOpt,
    KvOpt,
    MaxModelLenOpt,
    ModeOpt,
    NodesOpt,
    NoFeatureOpt,
    RecipesOpt,
    StrategyOpt,
    VariantOpt,
    parse_pairs,
)
from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.bench import BenchResult, Workload
    from launchcard.card import Fact
    from launchcard.live import LaunchSpec, ServerState
    from launchcard.resolve import ResolvedPlan
    from launchcard.verify import VerifyReport

StateOpt = Annotated[Path | None, typer.Option("--state", help="State file of `launchcard up` "
                                                  "(default .launchcard/up.json).")]
EndpointOpt = Annotated[str | None, typer.Option("--endpoint", help="Base URL, e.g. http://127.0.0.1:8000 "
                                                    "(default: the server `launchcard up` started).")]
ResolveOpt = Annotated[str | None, typer.Option("--resolve", help="Recipe id to resolve into the plan.")]
FeatureOpt = Annotated[list[str] | None, typer.Option("--feature", help="Plan feature to turn on (repeatable).")]
NoRecordOpt = Annotated[bool, typer.Option("--no-record", help="Do not store measured facts in the catalog.")]
CardOpt = Annotated[str | None, typer.Option("--card", help="Model id of the card that receives the facts "
                                                "(default: the plan's checkpoint or the served model).")]


def _plan(resolve: str | None, recipes: Path | None, variant: str | None, hardware: str | None,
          strategy: str | None, feature: list[str] | None, nodes: int | None = None,
          no_feature: list[str] | None = None, mode: list[str] | None = None,
          kv_offload: str | None = None, config: str | None = None, engine: str = "vllm",
          max_model_len: int | None = None, gpus_per_node: int | None = None) -> ResolvedPlan | None:
    """The plan ``--resolve`` asks for: a recipe's, or one derived from the model's config.json (no recipe)."""
    if resolve is None:
        for given, opt in ((variant, "--variant"), (hardware, "--hardware"), (strategy, "--strategy"),
                           (nodes, "--nodes"), (feature, "--feature"), (no_feature, "--no-feature"),
                           (mode, "--mode"), (kv_offload, "--kv-offload"), (config, "--config"),
                           (max_model_len, "--max-model-len"), (engine != "vllm", "--engine"),
                           (gpus_per_node, "--gpus-per-node")):
            if given:
                raise InputError(f"{opt} is a plan option but no plan was asked for", where=opt,
                                 fix="add --resolve MODEL, or drop the option")
        return None
    from launchcard.cli._options import PlanOptions, plan_and_config

    plan, _ = plan_and_config(PlanOptions.from_cli(resolve, recipes, variant=variant, hardware=hardware,
                                                   strategy=strategy, nodes=nodes, feature=feature,
                                                   no_feature=no_feature, mode=mode, kv_offload=kv_offload),
                              config, engine=engine, max_model_len=max_model_len, gpus_per_node=gpus_per_node)
    return plan


def _module_argv(argv: tuple[str, ...], python: str | None) -> tuple[str, ...]:
    """``vllm serve M ...`` as ``PYTHON -m vllm.entrypoints.openai.api_server --model M ...``."""
    from launchcard.argv import module_argv

    return argv if python is None else module_argv(argv, python)


def _seconds(value: float | None, option: str, example: str) -> None:
    """Bad input unless a time limit is a positive, finite number of seconds (0 or nan would wait for nothing or
    fail inside the HTTP client; a negative limit is no limit)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(f"a time limit must be a positive number of seconds ({value:g})", where=option,
                         fix=f"pass e.g. {option} {example}")


# bench's Workload fields -> the option that sets each and how to give a value it takes
_BENCH_FIELDS = {
    "timeout_s": ("--timeout", "pass a positive number of seconds, e.g. --timeout 120"),
    # vLLM's SamplingParams refuses these at request time (0.32.0 vllm/sampling_params.py L653-676: "temperature
    # must be non-negative", "top_p must be in (0, 1]"): refused here before any request is sent
    "temperature": ("--temperature", "pass a finite temperature >= 0, e.g. --temperature 0 (vLLM's SamplingParams "
                                     "refuses a negative one: 0.32.0 vllm/sampling_params.py L659-664)"),
    "top_p": ("--top-p", "pass a top-p in (0, 1], e.g. --top-p 1 (vLLM's SamplingParams refuses others: 0.32.0 "
                         "vllm/sampling_params.py L671-676)"),
}


def _spec(plan: ResolvedPlan | None, argv: list[str], env: list[str], timeout: float | None,
          python: str | None, port: int | None = None) -> LaunchSpec:
    from launchcard.live import DEFAULT_READY_TIMEOUT_S, LaunchSpec, port_from_argv

    extra = parse_pairs(env, flag="--env", shape="KEY=VALUE", example="A=1", empty_value=True)
    if plan is not None and argv:
        raise InputError("both a plan (--resolve) and a command after -- were given", where="launchcard up",
                         fix="pass one of them")
    if plan is not None:
        if len(plan.commands) != 1:
            raise InputError(f"the plan has {len(plan.commands)} processes ({plan.deploy_type})",
                             where="--resolve", fix="`up` starts single-process plans; emit the others instead")
        cmd = plan.commands[0]
        return LaunchSpec(argv=_module_argv(cmd.argv, python), env={**cmd.env_str, **extra}, port=cmd.port,
                          ready_timeout_s=timeout or plan.ready_timeout_s or DEFAULT_READY_TIMEOUT_S)
    if not argv:
        raise InputError("nothing to launch", where="launchcard up",
                         fix="pass --resolve MODEL with plan options, or `-- COMMAND ARGS...`")
    args = _module_argv(tuple(argv), python)
    ready = timeout or _env_timeout(extra) or DEFAULT_READY_TIMEOUT_S
    return LaunchSpec(argv=args, env=extra, port=port or port_from_argv(args), ready_timeout_s=ready)


def _env_timeout(env: dict[str, str]) -> float | None:
    raw = env.get("VLLM_ENGINE_READY_TIMEOUT_S")
    return float(raw) if raw and raw.replace(".", "", 1).isdigit() else None


def _served_name(argv: tuple[str, ...]) -> str | None:
    from launchcard.argv import parse_command

    cmd = parse_command(argv)
    return cmd.get_str("--served-model-name") or cmd.model_path()


def _record(card: str | None, facts: list[Fact], catalog: Path | str | None, by: str) -> int | None:
    if not card or not facts:
        return None
    from launchcard.live import record_facts

    return record_facts(card, facts, catalog=catalog, captured_by=by)


def _print_facts(facts: tuple[Fact, ...] | list[Fact]) -> None:
    for f in facts:
        where = f":{f.evidence.line}" if f.evidence and f.evidence.line else ""
        typer.echo(f"  {f.name} = {f.value} {f.unit or ''}  (measured, log{where})")


@app.command(context_settings={"allow_interspersed_args": False})
def up(
    argv: Annotated[list[str] | None, typer.Argument(help="Command to run, after `--`.")] = None,
    resolve: ResolveOpt = None, recipes: RecipesOpt = None, variant: VariantOpt = None,
    hardware: HardwareOpt = None, strategy: StrategyOpt = None, nodes: NodesOpt = None, feature: FeatureOpt = None,
    no_feature: NoFeatureOpt = None, mode: ModeOpt = None, kv_offload: KvOpt = None,
    env: Annotated[list[str] | None, typer.Option("--env", help="Extra KEY=VALUE for the server.")] = None,
    python: Annotated[str | None, typer.Option("--python", help="Run `vllm serve` as PYTHON -m "
                                                  "vllm.entrypoints.openai.api_server.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Ready timeout in seconds (default: the "
                                                     "plan's VLLM_ENGINE_READY_TIMEOUT_S, else 600).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="Port to poll when the command has "
                                                "no --port (default: its --port, else 8000).")] = None,
    log: Annotated[Path, typer.Option("--log", help="Server log file.")] = Path(".launchcard/server.log"),
    state: StateOpt = None,
    detach: Annotated[bool, typer.Option("--detach", help="Return once healthy; stop later with `down`.")] = False,
    catalog: CatalogOpt = None, no_record: NoRecordOpt = False, card: CardOpt = None,
    config: ConfigOpt = None, engine: EngineOpt = "vllm", max_model_len: MaxModelLenOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
) -> None:
    """Start a resolved command locally, wait for /health, record its start-up facts."""
    from launchcard.cli._outfile import check_out_file
    from launchcard.live import DEFAULT_STATE
    from launchcard.live import up as run_up

    _seconds(timeout, "--timeout", "600")
    if python is not None and shutil.which(python) is None:  # said of the option typed, not of the argv it makes
        raise InputError(f"no such interpreter, or not executable ({python})", where="--python",
                         fix="give the Python of the environment vLLM is installed in, e.g. .venv/bin/python")
    plan = _plan(resolve, recipes, variant, hardware, strategy, feature, nodes, no_feature, mode, kv_offload,
                 config, engine, max_model_len, gpus_per_node)
    spec = _spec(plan, list(argv or []), list(env or []), timeout, python, port)
    state_path = state or DEFAULT_STATE
    # written once the server is healthy: a path that cannot be written would stop it then (a model load lost)
    check_out_file(state_path, field="state", what="state file")
    owner = None if no_record else (card or (plan.model_id if plan else _served_name(spec.argv)))
    typer.echo(f"starting: {' '.join(spec.argv)}", err=True)
    typer.echo(f"log: {log}  ready timeout: {spec.ready_timeout_s:g}s", err=True)

    def ready(srv: ServerState, capture: int | None) -> None:
        typer.echo(f"healthy: {srv.endpoint} (pid {srv.pid}) after {srv.ready_seconds:.1f}s")
        _print_facts(srv.facts)
        if capture is not None:
            typer.echo(f"start-up facts stored on the card (capture {capture})")
        if detach:
            typer.echo(f"running in the background; stop it with `launchcard down --state {state_path}`")
        else:
            typer.echo("serving; Ctrl-C stops it", err=True)

    result = run_up(spec, log=log, state_path=state_path, detach=detach, card=owner, catalog=catalog,
                    on_ready=ready, on_stopping=lambda: typer.echo("stopping the server ...", err=True))
    if result.exit_code is not None:
        typer.echo(f"server exited with status {result.exit_code}", err=True)


@app.command()
def down(state: StateOpt = None) -> None:
    """Stop the server `launchcard up --detach` started (its whole process group)."""
    from launchcard.live import DEFAULT_STATE, stop_server

    path = state or DEFAULT_STATE
    stopped = stop_server(path)
    typer.echo(f"stopped pid {stopped.pid}" if stopped else "the server had already exited")


def _load_state(state: Path | None, endpoint: str | None) -> ServerState | None:
    """The `up` state that describes ``endpoint`` (explicit --state, or the default one if it matches)."""
    from launchcard.live import DEFAULT_STATE, ServerState

    if state is not None:
        return ServerState.load(state)
    if DEFAULT_STATE.exists():
        srv = ServerState.load(DEFAULT_STATE)
        if endpoint is None or endpoint.rstrip("/") == srv.endpoint:
            return srv
    return None


def _endpoint(endpoint: str | None, srv: ServerState | None) -> str:
    if endpoint:
        from urllib.parse import urlsplit

        if not endpoint.startswith(("http://", "https://")):
            raise InputError(f"not an http(s) URL ({endpoint!r})", where="--endpoint",
                             fix="write e.g. http://127.0.0.1:8000")
        try:
            parts = urlsplit(endpoint)  # ValueError: a bracketed host that is no IPv6 address
            host, port = parts.hostname, parts.port  # ValueError: a port not a number, or outside 0-65535
        except ValueError:
            host, port = None, 0
        if not host or port == 0:  # port 0 is no server's: `up --port` takes 1-65535
            raise InputError(f"not an http(s) URL with a host and a port in 1-65535 ({endpoint!r})",
                             where="--endpoint", fix="write e.g. http://127.0.0.1:8000")
        if parts.path.rstrip("/").endswith("/v1"):  # an OpenAI client's base URL: every check would ask /v1/v1/...
            raise InputError(f"{endpoint!r} is the OpenAI API's base URL; the checks add /v1/... and /health "
                             "themselves", where="--endpoint",
                             fix=f"give the server's root: {endpoint.rstrip('/').removesuffix('/v1')}")
        return endpoint.rstrip("/")
    if srv is None:
        raise InputError("no endpoint", where="--endpoint", fix="pass --endpoint URL or start one with `up`")
    return srv.endpoint


@app.command()
def verify(
    endpoint: EndpointOpt = None,
    model: Annotated[str | None, typer.Option("--model", help="Served model name (default: first listed).")] = None,
    expect: Annotated[list[str] | None, typer.Option("--expect", help="Feature the server must have: tools, "
                                                        "reasoning, vision (repeatable).")] = None,
    resolve: ResolveOpt = None, recipes: RecipesOpt = None, variant: VariantOpt = None,
    hardware: HardwareOpt = None, strategy: StrategyOpt = None, feature: FeatureOpt = None,
    state: StateOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Limit per request, seconds.")] = 60.0,
    as_json: JsonOpt = False,
    config: ConfigOpt = None, engine: EngineOpt = "vllm", max_model_len: MaxModelLenOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
) -> None:
    """Check a live endpoint feature by feature; exit 1 if an enabled check fails."""
    from launchcard.verify import Expect, run_verify

    _seconds(timeout, "--timeout", "60")
    srv = _load_state(state, endpoint)
    url = _endpoint(endpoint, srv)
    plan = _plan(resolve, recipes, variant, hardware, strategy, feature, config=config, engine=engine,
                 max_model_len=max_model_len, gpus_per_node=gpus_per_node)
    base = Expect()
    if plan is not None:
        base = Expect.from_argv(plan.commands[0].argv)
    elif srv is not None:
        base = Expect.from_argv(srv.argv)
    wanted = {e.strip().lower() for e in expect or []}
    bad = wanted - {"tools", "reasoning", "vision"}
    if bad:
        raise InputError(f"unknown feature {min(bad)!r}", where="--expect", fix="use tools, reasoning or vision")
    exp = base.merged(Expect(**{k: True for k in wanted}))
    # The served name `up` launched with, when verify was not told one.
    served = model or (_served_name(srv.argv) if srv is not None else None)
    report = run_verify(url, model=served, expect=exp, timeout_s=timeout)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json") | {"ok": report.ok}, indent=2, ensure_ascii=False))
    else:
        _print_report(report)
    raise typer.Exit(0 if report.ok else 1)


def _print_report(report: VerifyReport) -> None:
    from rich.markup import escape
    from rich.table import Table

    from launchcard.cli._console import console as make_console

    style = {"pass": "green", "fail": "bold red", "skipped": "yellow"}
    model = report.model or "unknown (/v1/models gave none; pass --model)"
    table = Table(title=f"verify {report.endpoint} model={model} max_model_len={report.max_model_len or 'unknown'}")
    for col in ("check", "result", "why / evidence"):
        table.add_column(col, overflow="fold")
    for c in report.checks:
        ev = c.evidence
        detail = c.reason if c.status != "pass" else ""
        if ev is not None:
            detail = "; ".join(x for x in (detail, ev.request, f"HTTP {ev.status}" if ev.status else "",
                                           ev.decided_by or "") if x)
        table.add_row(c.name, f"[{style[c.status]}]{c.status}[/]", escape(detail))
    make_console().print(table)
    n = report.counts()
    typer.echo(f"{n['pass']} passed, {n['fail']} failed, {n['skipped']} skipped")


@app.command()
def bench(
    endpoint: EndpointOpt = None,
    model: Annotated[str | None, typer.Option("--model", help="Served model name (default: first listed).")] = None,
    model_dir: Annotated[Path | None, typer.Option("--model-dir", exists=True, file_okay=False,  # a typo: refused
                                                   help="Local checkpoint: exact prompt sizes from its tokenizer, "
                                                        "weight hash.")] = None,
    model_revision: Annotated[str | None, typer.Option("--model-revision", help="Weights revision served.")] = None,
    input_tokens: Annotated[int, typer.Option("--input-tokens", min=1)] = 128,
    output_tokens: Annotated[int, typer.Option("--output-tokens", min=1)] = 64,
    num_prompts: Annotated[int, typer.Option("--num-prompts", min=1)] = 16,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
    request_rate: Annotated[float, typer.Option("--request-rate", help="Requests/s (Poisson); inf = all at once.")]
    = math.inf,
    warmup: Annotated[int, typer.Option("--warmup", min=0)] = 2,
    repetitions: Annotated[int, typer.Option("--repetitions", min=1)] = 1,
    temperature: Annotated[float, typer.Option("--temperature")] = 0.0,
    top_p: Annotated[float, typer.Option("--top-p")] = 1.0,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", help="Limit per request, seconds.")] = 120.0,
    driver: Annotated[str, typer.Option("--driver", help="Load generator: builtin (default), vllm (vllm bench "
                                        "serve) or guidellm; the external ones must be installed.")] = "builtin",
    driver_cmd: Annotated[str | None, typer.Option("--driver-cmd", help="How to start the --driver tool, "
                                                   "shell-quoted (default: `vllm bench serve` / `guidellm` "
                                                   "from PATH).")] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", min=1, help=(
        "Accelerators the endpoint's deployment runs on (an endpoint does not say): recorded with the run "
        "(a bench.gpus fact) so the catalog's performance chart can plot tokens/s per GPU."))] = None,
    state: StateOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the result JSON here.")] = None,
    catalog: CatalogOpt = None, no_record: NoRecordOpt = False, card: CardOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Benchmark a live endpoint with a fixed workload; exit 1 if any request failed."""
    from pydantic import ValidationError

    from launchcard.bench import Workload, measured_facts
    from launchcard.cli._outfile import check_out_file, out_file

    _seconds(timeout, "--timeout", "120")  # the one wording up and verify give (inf was taken: no limit at all)
    srv = _load_state(state, endpoint)
    url = _endpoint(endpoint, srv)
    try:
        work = Workload(input_tokens=input_tokens, output_tokens=output_tokens, num_prompts=num_prompts,
                        concurrency=concurrency, request_rate=request_rate, warmup=warmup, repetitions=repetitions,
                        temperature=temperature, top_p=top_p, seed=seed, timeout_s=timeout)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0])
        flag, fix = _BENCH_FIELDS.get(name, (f"--{name.replace('_', '-')}", "pass a positive value"))
        raise InputError(f"{err['msg']} ({err.get('input')!r})", where=flag, fix=fix) from None
    if out is not None:
        check_out_file(out)  # before the load is sent: a bad path must not cost the run
    argv = srv.argv if srv is not None else None
    cmd = _driver_cmd(driver, driver_cmd)
    if model_dir is None and argv is not None:
        from launchcard.argv import parse_command

        local = parse_command(argv).model_path()
        if local and Path(local).is_dir():
            model_dir = Path(local)
    if driver != "builtin" and not as_json:
        typer.echo(f"bench: the load goes through --driver {driver}; its output stays hidden unless it fails",
                   err=True)
    result = _run_with_progress(url, work, model, model_dir, model_revision, argv, as_json, driver, cmd)
    if gpus is not None:
        result = result.model_copy(update={"gpus": gpus})
    if out is not None:
        with out_file(out) as fh:
            fh.write(result.model_dump_json(indent=2) + "\n")
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_bench(result)
    if not no_record:
        cid = _record(card or result.model, measured_facts(result), catalog, "launchcard bench")
        if cid is not None and not as_json:
            typer.echo(f"measured facts stored on the card of {card or result.model} (capture {cid})")
    raise typer.Exit(0 if result.summary.failed == 0 else 1)


def _driver_cmd(driver: str, text: str | None) -> list[str] | None:
    """--driver is checked before anything is sent; --driver-cmd is split as a shell would."""
    import shlex

    from launchcard.bench import driver as find_driver

    if driver != "builtin":
        find_driver(driver)  # unknown: bad input, before anything is sent
    if text is None:
        return None
    if driver == "builtin":
        raise InputError("--driver-cmd needs an external --driver", where="--driver-cmd",
                         fix="add --driver vllm or --driver guidellm, or drop --driver-cmd")
    try:
        cmd = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"not a shell-quoted command ({exc})", where="--driver-cmd",
                         fix="quote it as a shell would, e.g. '/opt/vllm/bin/vllm bench serve'") from None
    if not cmd:
        raise InputError("empty command", where="--driver-cmd", fix="name the tool's executable")
    return cmd


def _run_with_progress(url: str, work: Workload, model: str | None, model_dir: Path | None,
                       model_revision: str | None, argv: tuple[str, ...] | None, quiet: bool, driver: str,
                       driver_cmd: list[str] | None) -> BenchResult:
    """run_bench with a progress bar; an external --driver reports no progress, so it runs quietly."""
    from functools import partial

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from launchcard.bench import run_bench

    run = partial(run_bench, url, work, model=model, model_dir=model_dir, model_revision=model_revision, argv=argv,
                  driver=driver, driver_cmd=driver_cmd)
    from launchcard.cli._console import console as make_console

    err = make_console(stderr=True)  # the bar on stderr, and only on a terminal: stdout is the report
    if quiet or driver != "builtin" or not err.is_terminal:
        return run()
    with Progress(TextColumn("bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task("bench", total=work.warmup + work.num_prompts * work.repetitions)
        return run(on_progress=lambda done, total: bar.update(task, completed=done))


CPU_SHARE_NOTE = 0.5  # half a core and up: worth saying the client may be part of what was measured


def _print_bench(result: BenchResult) -> None:
    s, w = result.summary, result.workload
    typer.echo(f"bench {result.endpoint} model={result.model} runtime={result.runtime_version or 'unknown'}")
    typer.echo(f"workload: {w.num_prompts} prompts x {w.repetitions}, in={w.input_tokens} ({result.prompt_sizing}) "
               f"out={w.output_tokens}, concurrency={w.concurrency}, rate={w.request_rate}, warmup={w.warmup}")
    typer.echo(f"load generator: {result.conditions.load_generator or 'unknown'}; prompts {result.sizing_note}")
    if (cpu := result.load_generator_cpu) is not None and cpu.startup_included:
        typer.echo(f"load generator CPU: {cpu.cpu_s:.2f} s over its whole run of {cpu.wall_s:.2f} s, start-up "
                   f"included ({cpu.share:.0%} of one core)")
    elif cpu is not None:
        typer.echo(f"load generator CPU: {cpu.cpu_s:.2f} s over {cpu.wall_s:.2f} s ({cpu.share:.0%} of one core"
                   + ("; on a machine it shares with the server it may slow what it measures)"
                      if cpu.share >= CPU_SHARE_NOTE else ")"))
    typer.echo(f"completed {s.completed}, failed {s.failed}, duration {s.duration_s:.2f}s")
    per_gpu = (f"   per GPU: {s.output_tokens_per_s / result.gpus:.2f} ({result.gpus} GPUs, stated with --gpus)"
               if result.gpus and s.output_tokens_per_s is not None else "")
    typer.echo(f"output tokens/s: {s.output_tokens_per_s}   requests/s: {s.requests_per_s}{per_gpu}")
    for name in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        p = getattr(s, name)
        typer.echo(f"{name:8} " + (f"p50 {p.p50:.1f}  p90 {p.p90:.1f}  p99 {p.p99:.1f}  mean {p.mean:.1f}"
                                   if p else "not measured"))
    for err in result.errors:
        typer.echo(f"failure: {err}")
