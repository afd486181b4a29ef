"""``launchcard resolve``: one plan, or a batch of reference cases."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    ConfigOpt,
    EngineOpt,
    FeatureOpt,
    GpusPerNodeOpt,
    HardwareOpt,
    JsonOpt,
    KvOpt,
    MaxModelLenOpt,
    ModeOpt,
    NodesOpt,
    NoFeatureOpt,
    PlanOptions,
    RecipesOpt,
    RevisionOpt,
    StrategyOpt,
    TaskOpt,
    VariantOpt,
    open_recipes,
    plan_and_config,
)
from launchcard.errors import InputError


@app.command()
def resolve(
    model: Annotated[str | None, typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")] = None,
    recipes: RecipesOpt = None,
    revision: RevisionOpt = None,
    variant: VariantOpt = None,
    hardware: HardwareOpt = None,
    strategy: StrategyOpt = None,
    nodes: NodesOpt = None,
    feature: FeatureOpt = None,
    no_feature: NoFeatureOpt = None,
    mode: ModeOpt = None,
    kv_offload: KvOpt = None,
    task: TaskOpt = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Add one table per command: what each argument and its value do (the recipe's or the "
        "engine's own words, cited) and where each came from (layer, source line, what it overrode).")] = False,
    as_json: JsonOpt = False,
    check: Annotated[
        bool,
        typer.Option("--check", help="Check every command against the engine's captured flags; exit 1 on an error."),
    ] = False,
    engine_version: Annotated[
        str | None,
        typer.Option("--engine-version", help="vLLM version for --check and --memory (default: newest captured)."),
    ] = None,
    memory: Annotated[bool, typer.Option("--memory", help="Plan GPU memory for the resolved command.")] = False,
    config: ConfigOpt = None,
    engine: EngineOpt = "vllm",
    max_model_len: MaxModelLenOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
    safetensors_index: Annotated[
        Path | None, typer.Option("--safetensors-index", help="model.safetensors.index.json (for --memory).")
    ] = None,
    cases: Annotated[Path | None, typer.Option("--cases", help="Batch: JSONL of reference cases.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Batch: write results here (default stdout).")] = None,
) -> None:
    """Resolve the launch command of a recipe, as the recipes builder would."""
    if cases is not None:
        _batch(cases, recipes, revision, out)
        return
    if model is None:
        raise InputError(
            "missing MODEL",
            where="resolve",
            fix="pass a recipe id such as zai-org/GLM-5.3-Flash, or --cases FILE for a batch",
        )
    if safetensors_index is not None and not memory:
        raise InputError(
            "--safetensors-index is only read with --memory",
            where="--safetensors-index",
            fix="add --memory to plan memory with it, or drop it",
        )
    plan, config_path = plan_and_config(
        PlanOptions.from_cli(
            model,
            recipes,
            revision=revision,
            variant=variant,
            hardware=hardware,
            strategy=strategy,
            nodes=nodes,
            feature=feature,
            no_feature=no_feature,
            mode=mode,
            kv_offload=kv_offload,
            task=task,
            provenance=explain or as_json,
        ),
        config, engine=engine, max_model_len=max_model_len, engine_version=engine_version,
        gpus_per_node=gpus_per_node,
    )
    verdict = _verdict(plan, recipes, revision, engine_version, memory, config_path, safetensors_index, check)
    from launchcard.check import plan_facts

    # the verdict already ran the flag checker and the memory planner: show what they found, per role
    findings = list(verdict.flag_findings)
    mem = list(verdict.memory_plans) if memory else []
    if as_json:
        payload = plan.to_json()
        if check:
            import dataclasses

            payload["check"] = [{"role": role, **dataclasses.asdict(f)} for role, f in findings]
        if memory:
            payload["memory"] = [{"role": role, **m.model_dump(mode="json")} for role, m in mem]
        payload["verdict"] = verdict.to_json()
        payload["facts"] = plan_facts(plan, verdict).to_json()
        if explain:  # the JSON twin of the tables: what each argument and its value do, with their sources
            from launchcard.cli._explain import explain_json

            payload["explain"] = explain_json(plan, _recipe_features(plan, recipes, revision))
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        _exit_on_errors(findings)
        raise typer.Exit(verdict.exit_code)
    from launchcard.cli._explain import plan_text

    if plan.derived:
        typer.echo(f"# {plan.model} on {plan.hardware}: {plan.derived} ({plan.engine}); every choice is a "
                   "finding below, `--explain` credits each argument")
    typer.echo(plan_text(plan))
    # comments: the output stays runnable
    typer.echo("\n" + "\n".join("# " + line for line in [*verdict.lines(), plan_facts(plan).gpus_line()]))
    if explain:
        from launchcard.cli._console import console as make_console
        from launchcard.cli._explain import print_explain

        typer.echo("")
        print_explain(make_console(), plan, _recipe_features(plan, recipes, revision))
    if memory:
        from launchcard.cli._console import console as make_console
        from launchcard.memory import plan_to_text

        console = make_console()
        for role, mplan in mem:
            console.print(f"\n[bold]memory plan ({role}, {plan.hardware})[/]")
            console.print(plan_to_text(mplan))
    if check:
        from launchcard.flags import format_finding

        for role, finding in findings:
            typer.echo(f"check {role}: {format_finding(finding)}")
        if not findings:
            typer.echo("check: every command passes the engine's own flag specification")
        _exit_on_errors(findings)
    raise typer.Exit(verdict.exit_code)


def _verdict(
    plan: Any,
    recipes: Path | None,
    revision: str | None,
    version: str | None,
    memory: bool,
    config: Path | None,
    index: Path | None,
    check: bool,
) -> Any:
    """The plan's verdict, memory fit included whenever a config.json is known (--config with --memory, else
    the corpus hf/ copy), as `emit` and `card` judge it; with --check it keeps every command's flag findings
    (the recipe's engine requirements applied)."""
    from launchcard.check import check_plan, corpus_config

    repo = None if plan.derived else open_recipes(recipes, revision)
    if memory and config is None and repo is not None:
        config = corpus_config(plan.model_id, repo.root)
        if config is None:
            raise InputError(
                f"--memory needs the model's config.json (none for {plan.model_id} in the corpus hf/)",
                where="--config",
                fix="pass --config path/to/config.json (and --safetensors-index for exact weight bytes)",
            )
    return check_plan(
        plan,
        config=config,
        engine_version=version,
        recipes=repo,
        # Planned whenever a config is known, so resolve, emit and card give one verdict; the
        # planner's import cost (pydantic, ~0.2 s) is paid only then (no config: an info finding).
        memory=True,
        safetensors_index=index,
        flag_report=check,
    )


def _recipe_features(plan: Any, recipes: Path | None, revision: str | None) -> dict[str, object] | None:
    """The recipe's ``features`` (whose own words explain the flags they add); none for a derived plan."""
    if plan.derived:
        return None
    features = open_recipes(recipes, revision).recipe(plan.model).data.get("features")
    return features if isinstance(features, dict) else None


def _exit_on_errors(findings: list[tuple[str, Any]]) -> None:
    from launchcard.flags import has_errors

    if findings and has_errors([f for _, f in findings]):
        raise typer.Exit(1)


def _batch(cases: Path, recipes: Path | None, revision: str | None, out: Path | None) -> None:
    import gc

    # A batch builds many small, acyclic, short-lived objects next to a large cache that
    # lives until exit; the cyclic collector would re-walk that cache over and over and
    # costs more than half the run.  Nothing here makes cycles worth collecting.  At the
    # end the survivors are frozen, so the interpreter's final collection skips them too
    # (walking them at exit cost a third of a sample batch).
    collecting = gc.isenabled()
    gc.disable()
    try:
        _run_batch(cases, recipes, revision, out)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


_SPLIT_AT = 2000  # cases: below this a second process costs more than it saves


def _line_encoder() -> Callable[[object], str]:
    """JSON for one result line: orjson (about 5x the standard encoder on result objects, a
    measurable share of a batch), with the standard encoder for anything orjson refuses."""
    import orjson

    fallback = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    options = orjson.OPT_NON_STR_KEYS

    def encode(obj: object) -> str:
        try:
            return orjson.dumps(obj, option=options).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError is a TypeError: e.g. an int beyond 64 bits
            return fallback(obj)

    return encode


def _run_batch(cases: Path, recipes: Path | None, revision: str | None, out: Path | None) -> None:
    from launchcard.cli._outfile import check_out_file, out_file
    from launchcard.errors import LaunchcardError
    from launchcard.resolve import resolve_case
    from launchcard.yamlread import ParsedCache, cache_root

    if out:
        check_out_file(out)  # before the cases are resolved: a bad path must not cost the batch
    repo = open_recipes(recipes, revision)
    root = cache_root()
    if root is not None:  # a batch reads every recipe: unchanged files are not parsed again
        repo.parsed = ParsedCache(root)
    try:
        lines = cases.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read cases file ({exc})", where=str(cases), fix="pass a UTF-8 JSONL file") from None
    encode = _line_encoder()
    todo = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    del lines

    def run(part: list[tuple[int, str]]) -> list[str]:
        parsed = _parse_all([line for _, line in part])
        return [
            encode(_one_case(repo, line, f"{cases}:{number}", resolve_case, LaunchcardError, case))
            for (number, line), case in zip(part, parsed, strict=False)
        ]

    # the results file is written whole or not at all (a bad case is an error line, an interruption no file)
    with out_file(out) if out else contextlib.nullcontext(sys.stdout) as sink:
        if len(todo) >= _SPLIT_AT:
            # the shared files are read once, before the split (a broken one is each case's error)
            with contextlib.suppress(LaunchcardError):
                _ = repo.strategy_docs, repo.hardware
            run(todo[:1])  # and what the first case sets up lazily (YAML parser, caches) is set up once
            _split_run(todo, run, sink.write)
        else:
            _write_in_chunks(todo, run, sink.write)


_CHUNK = 2048  # cases resolved, then written, at a time: bounded memory, few large writes


def _write_in_chunks(todo: list[tuple[int, str]], run: Any, write: Any) -> None:
    for start in range(0, len(todo), _CHUNK):
        write("\n".join(run(todo[start : start + _CHUNK])) + "\n")


def _jobs() -> int:
    """Processes for a large batch: ``LAUNCHCARD_JOBS`` (1 or 2), else 2 only while a core is idle.

    A second process costs CPU of its own (copy-on-write pages, its own caches: about a tenth of a
    batch) and gains wall time only on a core nobody else is using; on a busy machine it loses both.
    """
    import os

    asked = os.environ.get("LAUNCHCARD_JOBS", "").strip()
    if asked in ("1", "2"):
        return int(asked)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores < 2:
        return 1
    running = _running_now()
    if running is not None:  # this process included: another core is idle right now
        return 2 if running <= cores - 1 else 1
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load figure on this system
        return 2
    return 2 if busy <= cores - 1 else 1


def _running_now() -> int | None:
    """Tasks runnable at this instant (Linux ``/proc/loadavg``'s fourth field), this one included.

    The one-minute load average still counts whatever ran in the last minute (a benchmark's previous
    tool, a finished build), so on a machine that has just gone idle it kept the batch in one process."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _split_run(todo: list[tuple[int, str]], run: Any, write: Any) -> None:
    """Resolve half of the cases in a forked child, the other half here, and write both in input order.

    Cases are split by recipe, so each process reads and converts only its own recipes and
    fills only its own caches: the total work stays what one process would do, the wall
    time roughly halves on a second core.  Without fork (or a second core, or when the
    child fails) everything is resolved here.
    """
    import gc
    import os
    import tempfile

    if not hasattr(os, "fork") or _jobs() < 2:
        _write_in_chunks(todo, run, write)
        return
    gc.freeze()  # neither process walks the other's objects, and fewer pages are copied
    by_model: dict[str, list[int]] = {}
    for i, (_, line) in enumerate(todo):
        by_model.setdefault(_model_of(line), []).append(i)
    mine: list[int] = []
    theirs: list[int] = []
    for idx in sorted(by_model.values(), key=len, reverse=True):  # greedy balance by case count
        (mine if len(mine) <= len(theirs) else theirs).extend(idx)
    theirs.sort()
    mine.sort()
    with tempfile.TemporaryFile() as spool:
        pid = os.fork()
        if pid == 0:  # child: resolve its half into the spool, skip the interpreter's teardown
            code = 0
            try:
                _write_in_chunks([todo[i] for i in theirs], run, lambda text: spool.write(text.encode("utf-8")))
                spool.flush()
            except BaseException:  # noqa: BLE001  # the parent redoes this half
                code = 1
            os._exit(code)
        done = run([todo[i] for i in mine])
        _, status = os.waitpid(pid, 0)
        spool.seek(0)
        # a child that exits 0 wrote all of its lines (else the parent resolves that half too); its half is
        # decoded and split in one go (reading it line by line cost as much as a tenth of the child's work)
        got = iter(spool.read().decode("utf-8").split("\n") if status == 0 else run([todo[i] for i in theirs]))
        owner = bytearray(len(todo))  # 1: the child's case
        for i in theirs:
            owner[i] = 1
        mine_iter = iter(done)
        chunk: list[str] = []
        for flag in owner:
            chunk.append(next(got) if flag else next(mine_iter))
            if len(chunk) >= _CHUNK:
                write("\n".join(chunk) + "\n")
                chunk.clear()
        if chunk:
            write("\n".join(chunk) + "\n")


def _model_of(line: str) -> str:
    """The case's recipe id, cheaply (the split only needs a grouping key; any string will do)."""
    at = line.find('"model"')
    if at < 0:
        return ""
    start = line.find('"', line.find(":", at) + 1)
    end = line.find('"', start + 1)
    return line[start + 1 : end] if start >= 0 and end > start else ""


def _parse_all(lines: list[str]) -> list[Any]:
    """Every line's JSON value, in one parser call when all are valid (else None: parse one by one)."""
    if not lines:
        return []
    try:
        values = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        return [None] * len(lines)
    if not isinstance(values, list) or len(values) != len(lines):  # a line held two values: ask each
        return [None] * len(lines)
    return values


def _one_case(
    repo: Any, line: str, where: str, resolve_case: Any, error_type: type[Exception], case: Any = None
) -> dict[str, Any]:
    if case is None:
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            return {"id": None, "error": f"{where}: not JSON ({exc.msg}); write one JSON object per line"}
    if not isinstance(case, dict) or "model" not in case:
        return {
            "id": case.get("id") if isinstance(case, dict) else None,
            "error": f"{where}: a case needs 'id', 'model' and 'inputs'",
        }
    if not isinstance(case["model"], str):
        return {"id": case.get("id"), "error": f"{where}: 'model' must be a recipe id, e.g. \"zai-org/GLM-5.3-Flash\" "
                                               f"(got {case['model']!r})"}
    try:
        return {"id": case.get("id"), "result": resolve_case(repo, case)}
    except error_type as exc:
        return {"id": case.get("id"), "error": str(exc)}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return {"id": case.get("id"), "error": f"{where}: cannot resolve this case ({type(exc).__name__}: {exc})"}
