"""``launchcard check -- <command...>``: check a launch command's flags offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import parse_pairs


@app.command(
    "check",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def check(
    command: list[str] | None = typer.Argument(
        None, help="The launch command, after `--` (e.g. -- vllm serve MODEL --flag ...)."),
    engine: str = typer.Option("vllm", "--engine", help="Engine whose captured parser to check against."),
    version: str | None = typer.Option(None, "--version", help="Engine version (default: the newest captured)."),
    min_version: str | None = typer.Option(None, "--min-version", help="The recipe's minimum engine version."),
    nightly_required: bool = typer.Option(False, "--nightly-required", help="The recipe needs a nightly build."),
    env: Annotated[list[str] | None, typer.Option(
        "--env", help="KEY=VALUE the command runs with (repeatable); checked against the release's "
        "environment-variable registry.")] = None,
    config: Annotated[str | None, typer.Option(
        "--config", help="The model's config.json (a file, its folder, or a Hub repo id cached on this machine): "
        "also judge what vLLM refuses at start-up from it (max length with RoPE scaling, attention heads vs TP, "
        "quantization vs --dtype and GPU).")] = None,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="Target accelerator (hardware catalog name): also judge what vLLM refuses on it "
        "(quantization's minimum GPU, --kv-cache-dtype vs its attention backends, bfloat16, EPLB).")] = None,
) -> None:
    """Check a launch command against an engine version's own flags.

    One line per finding (flag, what is wrong, rule and stage, fix, evidence: engine
    spec version and field); exit code 1 when any is an error.  Stage "startup"
    marks what the engine rejects after parsing (config field bounds, enum values,
    JSON config keys).
    """
    from launchcard.errors import InputError
    from launchcard.flags import check_argv, format_finding, has_errors, verdict
    from launchcard.flagspec import shipped_spec

    if not command:
        raise InputError("no command given", where="check",
                         fix="pass it after --, e.g. launchcard check -- vllm serve MODEL ...")
    if command[0].startswith("-"):  # an option of this command misspelt before --, taken as the launch command
        raise InputError(f"{command[0]!r} is not an option of launchcard check", where="check",
                         fix="see launchcard check --help; put the launch command after --, "
                             "e.g. launchcard check --engine vllm -- vllm serve MODEL ...")
    pairs = parse_pairs(env, flag="--env", shape="KEY=VALUE", example="VLLM_X=1", empty_value=True)
    spec = shipped_spec(engine, version)
    findings = check_argv(list(command), engine=engine, version=spec.version, min_version=min_version,
                          nightly_required=nightly_required, env=pairs)
    for f in findings:
        typer.echo(format_finding(f))
    refused = _startup_limits(list(command), engine, spec.version, config, gpu, pairs)
    if has_errors(findings) or refused:
        raise typer.Exit(1)
    if verdict(findings) == "n/a":
        typer.echo(f"not checked: not a command {engine} {spec.version}'s captured parser judges (see above)")
        return
    warnings = sum(f.severity == "warning" for f in findings)
    typer.echo(f"ok: {engine} {spec.version} accepts this command" + (f" ({warnings} warning(s))" if warnings else ""))


def _startup_limits(command: list[str], engine: str, version: str, config: str | None, gpu: str | None,
                    env: dict[str, str]) -> bool:
    """Print vLLM's start-up refusals that the flags, the GPU and the config decide; True when there is one."""
    if engine != "vllm":
        return False
    from launchcard.argv import parse_command
    from launchcard.check import flag_rules, limit_rules, load_config, locate_config
    from launchcard.errors import ArgvError

    if config is None:
        known = _corpus_config(command)
        if known is not None:
            config = str(known)
            typer.echo(f"info: start-up limits judged with {known} (the corpus copy of the model's config.json)")
    acc = None
    if gpu is not None:
        from launchcard.hardware import find

        acc = find(gpu, where="--gpu")
    if config is None:
        if any(a.startswith(("--max-model-len", "--quantization", "--dtype", "--kv-cache-dtype")) for a in command):
            typer.echo("info: start-up limits that need the model not checked (max length vs the model, "
                       "quantization vs dtype, KV-cache dtype vs attention backends): pass --config config.json")
        try:
            cmd = parse_command(command)
        except ArgvError:
            return False
        length = cmd.try_int("--max-model-len")
        refusals = flag_rules(cmd, "single", acc, max_model_len=length)
    else:
        refusals = limit_rules(load_config(locate_config(config)), command, "single", env, acc, version, heads=True)
    if acc is None and any(a.startswith("--kv-cache-dtype") for a in command):
        typer.echo("info: --kv-cache-dtype not judged against vLLM's attention backends: pass --gpu NAME")
    for f in refusals:
        typer.echo(f"{f.severity}: {f.message} [{f.code}, startup]; {f.fix} (evidence: {f.evidence})"
                   if f.fix else f"{f.severity}: {f.message} [{f.code}, startup] (evidence: {f.evidence})")
    return any(f.severity == "error" for f in refusals)


def _corpus_config(command: list[str]) -> Path | None:
    """The served model's config.json in the corpus ``hf/`` folder ($LAUNCHCARD_CORPUS, or next to
    $LAUNCHCARD_RECIPES), when there is one."""
    import os

    from launchcard.argv import parse_command
    from launchcard.check import corpus_config
    from launchcard.errors import ArgvError

    corpus, recipes = os.environ.get("LAUNCHCARD_CORPUS"), os.environ.get("LAUNCHCARD_RECIPES")
    if not corpus and not recipes:
        return None
    try:
        model = parse_command(command).model_path()
    except ArgvError:
        return None
    if not model:
        return None
    return corpus_config(model, Path(recipes) if recipes else None, [Path(corpus) / "hf"] if corpus else [])
