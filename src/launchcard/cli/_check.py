"""``launchcard check -- <command...>``: check a launch command's flags offline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import parse_pairs

if TYPE_CHECKING:
    from launchcard.check import Finding, ModelConfig
    from launchcard.flags import Finding as FlagFinding


@app.command(
    "check",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def check(
    command: list[str] | None = typer.Argument(
        None, help="The launch command, after `--` (e.g. -- vllm serve MODEL --flag ...)."),
    engine: str = typer.Option("vllm", "--engine", help="Engine whose captured parser to check against."),
    version: str | None = typer.Option(None, "--version", help="Engine version (default: the newest captured, as "
                                       "memory, predict and plan take)."),
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
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object: the verdict, every finding (flag and "
                                          "start-up) and the notes.")] = False,
) -> None:
    """Check a launch command against an engine version's own flags.

    One line per finding (flag, what is wrong, rule and stage, fix, evidence: engine
    spec version and field); exit code 1 when any is an error.  Stage "startup"
    marks what the engine rejects after parsing (config field bounds, enum values,
    JSON config keys).
    """
    from launchcard.errors import InputError
    from launchcard.flags import check_argv, format_finding, has_errors, verdict
    from launchcard.flagspec import default_release_note, release_key, shipped_spec

    if not command:
        raise InputError("no command given", where="check",
                         fix="pass it after --, e.g. launchcard check -- vllm serve MODEL ...")
    if command[0].startswith("-"):  # an option of this command misspelt before --, taken as the launch command
        raise InputError(f"{command[0]!r} is not an option of launchcard check", where="check",
                         fix="see launchcard check --help; put the launch command after --, "
                             "e.g. launchcard check --engine vllm -- vllm serve MODEL ...")
    if min_version is not None and release_key(min_version) is None:  # it was compared as text: "abc" passed
        raise InputError(f"not a release number ({min_version!r})", where="--min-version",
                         fix="write e.g. --min-version 0.10.0 (a nightly requirement is --nightly-required)")
    pairs = parse_pairs(env, flag="--env", shape="KEY=VALUE", example="VLLM_X=1", empty_value=True)
    spec = shipped_spec(engine, version)
    findings = check_argv(list(command), engine=engine, version=spec.version, min_version=min_version,
                          nightly_required=nightly_required, env=pairs)
    _refuse_non_server(list(command), engine, spec.command_prefix, findings)
    # no release given: the one default every surface takes (memory, predict, plan: flagspec.default_release), said
    notes: list[str] = [] if version else [default_release_note(engine)]
    refusals = _startup_limits(list(command), engine, spec.version, config, gpu, pairs, notes)
    from launchcard.check import without_repeats

    findings = without_repeats(findings, refusals)  # a fact both say (an unknown speculative method): said once
    refused = any(f.severity == "error" for f in refusals)
    failed = has_errors(findings) or refused
    status = "fail" if failed else verdict(findings)
    warnings = sum(f.severity == "warning" for f in findings)
    if as_json:
        import dataclasses
        import json

        typer.echo(json.dumps({"engine": engine, "version": spec.version, "command": list(command),
                               "status": status, "ok": not failed, "exit_code": 1 if failed else 0,
                               "findings": [dataclasses.asdict(f) for f in findings],
                               "startup": [f.to_json() for f in refusals], "notes": notes}, indent=2))
        if failed:
            raise typer.Exit(1)
        return
    for f in findings:
        typer.echo(format_finding(f))
    for line in notes:
        typer.echo(f"info: {line}")
    for r in refusals:
        typer.echo(f"{r.severity}: {r.message} [{r.code}, startup]; {r.fix} (evidence: {r.evidence})"
                   if r.fix else f"{r.severity}: {r.message} [{r.code}, startup] (evidence: {r.evidence})")
    if failed:
        raise typer.Exit(1)
    if status == "n/a":
        typer.echo(f"not checked: not a command {engine} {spec.version}'s captured parser judges (see above)")
        return
    typer.echo(f"ok: {engine} {spec.version} accepts this command" + (f" ({warnings} warning(s))" if warnings else ""))


def _refuse_non_server(command: list[str], engine: str, prefix: tuple[str, ...], findings: list[FlagFinding]) -> None:
    """InputError (exit 2) for a command that is not ``engine``'s server command (``vllm`` alone, ``vllm bench``, a
    router, another engine's server): nothing of it would be judged, and a CI gate took the old exit 0 ("not
    checked") as a pass.  Inside a recipe or plan such a process (a router) stays an info finding (``n/a``)."""
    if not any(f.rule == "not-a-server-command" for f in findings):
        return
    from launchcard.argv import split_entry
    from launchcard.errors import InputError

    other = split_entry(command)[1]
    program = " ".join(command[:3])
    served = f"`{' '.join(prefix)} ...`" + (" or `python -m vllm.entrypoints.openai.api_server ...`"
                                            if engine == "vllm" else "")
    fix = (f"pass --engine {other} to check {other}'s command" if other and other != engine else
           f"pass the server command after --, e.g. launchcard check --engine {engine} -- {' '.join(prefix)} ...")
    raise InputError(f"{program!r} is not a {engine} server command: check judges {served} only, nothing here "
                     "would be checked", where="check", fix=fix)


def _startup_limits(command: list[str], engine: str, version: str, config: str | None, gpu: str | None,
                    env: dict[str, str], notes: list[str]) -> list[Finding]:
    """vLLM's start-up refusals that the flags, the GPU and the config decide (SGLang's: the heads over its
    attention TP size, with the config); what could not be judged (and which config was used) goes to ``notes``."""
    if engine == "sglang":
        from launchcard.check import limit_rules, load_config, locate_config, sglang_rank_rules

        ranks = sglang_rank_rules(command, "single")  # predict's rule: a count below 1 splits nothing
        if ranks or config is None:
            return ranks
        cfg = load_config(locate_config(config))
        _unjudged(cfg, notes)
        from launchcard.hardware import find

        # the GPU decides gpt-oss's triton_kernel / --ep-size rule through SGLang 0.5.4.post2, as predict reads it
        return limit_rules(cfg, command, "single", gpu=find(gpu, where="--gpu") if gpu else None, version=version,
                           heads=True)
    if engine != "vllm":
        return []
    from launchcard.argv import parse_command
    from launchcard.check import flag_rules, limit_rules, load_config, locate_config
    from launchcard.errors import ArgvError

    if config is None:
        known = _corpus_config(command)
        if known is not None:
            config = str(known)
            notes.append(f"start-up limits judged with {known} (the corpus copy of the model's config.json)")
    acc = None
    if gpu is not None:
        from launchcard.hardware import find

        acc = find(gpu, where="--gpu")
    if config is None:
        if any(a.startswith(("--max-model-len", "--quantization", "--dtype", "--kv-cache-dtype")) for a in command):
            notes.append("start-up limits that need the model not checked (max length vs the model, "
                         "quantization vs dtype, KV-cache dtype vs attention backends): pass --config config.json")
        try:
            cmd = parse_command(command)
        except ArgvError:
            return []
        length = cmd.try_int("--max-model-len")
        refusals = flag_rules(cmd, "single", acc, max_model_len=length)
    else:
        cfg = load_config(locate_config(config))
        _unjudged(cfg, notes)
        refusals = limit_rules(cfg, command, "single", env, acc, version, heads=True)
    if acc is None and any(a.startswith("--kv-cache-dtype") for a in command):
        notes.append("--kv-cache-dtype not judged against vLLM's attention backends: pass --gpu NAME")
    return list(refusals)


def _unjudged(cfg: ModelConfig, notes: list[str]) -> None:
    """A note naming the split rules the config cannot decide (no heads or layer count): `ok` was said of `{}`."""
    lacking = [name for name, v in (("num_attention_heads", cfg.heads), ("num_hidden_layers", cfg.layers))
               if v is None]
    if lacking:
        notes.append(f"{cfg.path} gives no {' or '.join(lacking)}: the heads and layer split rules not judged "
                     "(pass the model's full config.json)")


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
