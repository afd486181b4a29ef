"""A whole provider preset (Baseten/Truss ``config.yaml`` + ``README.md``) from one environment of a launch card.

From a provider-preset environment the preset's own settings come back as the provider wrote them (serving flags,
concurrency, environment, resources, description, tags, health checks, secrets, example input).  From any other
environment (the vLLM recipe's resolved command, a Dynamo worker ...) the same structure is built from the card:
the command with the container layout (``/app/checkpoint/model``, host, port, served name), the instance sized to
the GPUs the command uses, a description and tags from the card's facts, the example input with the sampling
parameters the recipe's guide uses.  Options (concurrency, extra engine args, parser overrides) are applied to the
command and judged with the rest of it by :func:`launchcard.check.check_command`; a concurrency above the
engine's ``--max-num-seqs`` is a warning of its own.  Pure: card in, ``{file: text}`` out.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from launchcard import __version__
from launchcard.argv import parse_command
from launchcard.card import EngineEnv, LaunchCard, ProviderPreset
from launchcard.emit import _yaml
from launchcard.emit._common import is_secret
from launchcard.emit._header import comment_safe, verdict_lines
from launchcard.emit._truss import (
    DEFAULT_CONCURRENCY,
    DOCKER_SERVER,
    _folded,
    container_argv,
    default_concurrency_note,
    example_input,
    health_checks,
    hf_weights,
    instance_size,
    instance_type,
)
from launchcard.errors import EmitError, InputError
from launchcard.explain import full_stop, split_flags

if TYPE_CHECKING:
    from launchcard.check import Finding, Verdict
    from launchcard.render import RecipeTexts

PARSER_FLAGS = {"reasoning": "--reasoning-parser", "tool-call": "--tool-call-parser"}
_SAMPLING = re.compile(r"\b(temperature|top_p|top_k|min_p)[\"']?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)")


@dataclass(frozen=True)
class PresetOptions:
    """What the user changes on the environment's settings."""

    concurrency: int | None = None
    extra_args: tuple[str, ...] = ()
    parsers: Mapping[str, str] = field(default_factory=dict)  # reasoning | tool-call -> parser name
    image: str | None = None
    weights_revision: str | None = None


def parse_parser_overrides(values: Sequence[str]) -> dict[str, str]:
    """``KIND=NAME`` pairs (``reasoning=glm45``, ``tool-call=glm47``) as a mapping; bad input is one InputError."""
    out: dict[str, str] = {}
    for v in values:
        kind, sep, name = v.partition("=")
        if not sep or kind not in PARSER_FLAGS or not name.strip():
            raise InputError(f"parser override {v!r} is not KIND=NAME", where="--parser", field="parser",
                             fix=f"use one of {', '.join(f'{k}=NAME' for k in PARSER_FLAGS)}")
        out[kind] = name.strip()
    return out


def select_env(card: LaunchCard, key: str) -> tuple[int, EngineEnv]:
    """The environment ``key`` names: its index as ``launchcard card`` lists them, or a source kind (the first
    environment of that kind with a command a client can call)."""
    if key.isdigit():
        i = int(key)
        if i >= len(card.envs):
            raise InputError(f"environment index {i} out of range", where="--env", field="env",
                             fix=f"use 0..{len(card.envs) - 1} (see `launchcard card {card.model}`)")
        return i, card.envs[i]
    hits = [(i, e) for i, e in enumerate(card.envs) if e.source.kind == key]
    front = [(i, e) for i, e in hits if e.argv and e.role in ("single", "head")]
    if not (front or hits):
        kinds = sorted({e.source.kind for e in card.envs})
        raise InputError(f"no environment of source kind {key!r} on the card of {card.model}", where="--env",
                         field="env", fix=f"use one of {', '.join(kinds)} or an index")
    return (front or hits)[0]


def _replace(argv: list[str], flag: str, value: str | None) -> list[str]:
    """``argv`` with every occurrence of ``flag`` (any spelling, dotted keys, its value) removed, then
    ``flag value`` appended: one setting, stated once, where a reader looks for changes."""
    cmd = parse_command(argv)
    name = flag.split("=", 1)[0]
    base, dot, key = name.partition(".")
    dest = cmd.dest_of(base)
    drop: set[int] = set()
    starts = {} if dot else {occ.index: occ.value is True for occ in cmd.occurrences if occ.dest == dest}
    # vLLM merges --x.key v words into one occurrence: each such word is found by its base flag (a dotted
    # flag replaces only its own key; a whole --x replaces every key)
    for i, w in enumerate(argv):
        head, wdot, wkey = w.split("=", 1)[0].partition(".")
        if w.startswith("--") and wdot and cmd.dest_of(head) == dest and (not dot or wkey == key):
            starts[i] = False
    for i, switch in starts.items():
        drop.add(i)
        if "=" not in argv[i] and not switch and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            drop.add(i + 1)
    return [a for i, a in enumerate(argv) if i not in drop] + [flag] + ([value] if value is not None else [])


def serving_argv(env: EngineEnv, card: LaunchCard, options: PresetOptions) -> list[str]:
    """The start command: the environment's own (a preset's as written), in the container layout, overrides applied."""
    argv = list(env.argv)
    if env.preset is None:
        layout = container_argv(argv, card.model)
        if layout is None:
            raise EmitError(f"a Truss preset serves 'vllm serve MODEL ...'; this environment runs "
                            f"{shlex.join(argv[:3]) or '(no command)'}", where="--env", fix="pick a vLLM environment")
        argv = layout
    for kind, name in options.parsers.items():
        argv = _replace(argv, PARSER_FLAGS[kind], name)
    for group in _groups(argv[:3], options.extra_args):
        argv = _replace(argv, group[0], group[1] if len(group) > 1 else None) + group[2:]
    return argv


def _groups(entry: Sequence[str], extra: Sequence[str]) -> list[list[str]]:
    """The user's extra args as the engine's parser groups them: each option with the words it takes."""
    if not extra:
        return []
    cmd = parse_command([*entry, *extra])
    # vLLM merges dotted --x.key words into one occurrence (recorded at its first word and applied
    # last), so each dotted word starts a group of its own, in the order the user wrote them.
    dotted = {i for i, w in enumerate(extra) if w.startswith("--") and "." in w.split("=", 1)[0]}
    starts = sorted({o.index - len(entry) for o in cmd.occurrences} | dotted)
    if cmd.problems or not starts or starts[0] != 0:
        raise InputError(f"--extra-args {shlex.join(extra)!r} is not a list of engine options"
                         + (f" ({cmd.problems[0]})" if cmd.problems else ""), where="--extra-args",
                         field="extra_args", fix="e.g. --extra-args '--max-num-seqs 32 --enable-prefix-caching'")
    bounds = [*starts, len(extra)]
    return [list(extra[a:b]) for a, b in itertools.pairwise(bounds) if a < b]


def _sampling(recipe: RecipeTexts | None) -> dict[str, float]:
    """Sampling parameters the recipe's guide sends (``temperature=1.0`` ...), in the guide's order."""
    out: dict[str, float] = {}
    for m in _SAMPLING.finditer(recipe.guide if recipe is not None and recipe.guide else ""):
        out.setdefault(m.group(1), float(m.group(2)))
    return out


def _fact(card: LaunchCard, name: str) -> Any:
    return next((f.value for f in card.facts if f.name == name and f.scope is None), None)


def _tags(card: LaunchCard, argv: Sequence[str]) -> list[str]:
    from launchcard.clients import capabilities_from_argv
    from launchcard.render import takes_images

    caps = capabilities_from_argv(argv)
    tags = ["openai-compatible"]
    if takes_images(card):
        tags.append("multimodal")
    if _fact(card, "architecture_family") == "moe":
        tags.append("moe")
    if caps.reasoning:
        tags.append("reasoning")
    if caps.tools:
        tags.append("tool-use")
    fmt = next((c.format for c in card.checkpoints if c.name == card.model and c.format), None)
    return tags + ([str(fmt)] if fmt else [])


def _description(card: LaunchCard, env: EngineEnv, gpus: int, hardware: str) -> str:
    said = full_stop(" ".join(str(_fact(card, "description") or card.model).split()))
    return (f"{said} This preset serves it with {env.engine} on {gpus} {hardware.upper()} GPU(s), from the "
            f"{env.source.kind} command ({env.source.path or env.source.url}).")


def _instance(env: EngineEnv, argv: Sequence[str]) -> tuple[str, int]:
    """(instance_type, GPUs) for a non-preset environment: the command's GPUs rounded up to 1/2/4/8, at most
    the environment's node."""
    if not env.hardware:
        raise EmitError("this environment names no hardware", where="--env", fix="pick one with hardware")
    prefix = instance_type(env.hardware)
    if prefix is None:
        raise EmitError(f"Baseten offers no instance type for hardware {env.hardware!r}", where="--env",
                        fix="pick an environment on hardware Baseten rents (H100, H200, B200 ...)")
    cmd = parse_command(argv)
    used = max(1, (cmd.try_int("--tensor-parallel-size") or 1) * (cmd.try_int("--pipeline-parallel-size") or 1)
               * (cmd.try_int("--data-parallel-size-local") or cmd.try_int("--data-parallel-size") or 1))
    size = instance_size(used, env.gpus or 8)  # Baseten instances hold one node (8 GPUs at most); the verdict says so
    return f"{prefix}:{size}", size


def _start_command(p: ProviderPreset, env: EngineEnv, argv: list[str]) -> tuple[str, bool]:
    """(start_command, changed): as the provider wrote it when the command is unchanged; else the new command
    in the written form (its ``VAR=value`` prefix, its ``sh -c "..."`` wrapper)."""
    if p.start_command and argv == list(env.argv):
        return p.start_command, False
    inner = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in p.start_env.items()), shlex.join(argv)])
    wrapped = p.start_command is not None and re.match(r"^(/bin/)?(ba)?sh -l?c ", p.start_command) is not None
    if wrapped:
        return f"sh -c {_double_quoted(inner)}", True
    return inner, True


def _double_quoted(text: str) -> str:
    return '"' + re.sub(r'(["\\$`])', r"\\\1", text) + '"'


def as_written(card: LaunchCard, env: EngineEnv, options: PresetOptions) -> tuple[dict[str, Any], list[str],
                                                                               list[str]]:
    """(config, argv, changes) of a provider-preset environment: the preset as its provider wrote it (build
    commands, weights with their patterns, resources, the start command in its own form, a TensorRT-LLM
    preset's ``trt_llm`` engine settings), with the options applied and each change said with its reason."""
    p = env.preset or ProviderPreset()
    changes: list[str] = []
    argv = serving_argv(env, card, options) if env.argv else []
    config: dict[str, Any] = {}
    if p.model_name:
        config["model_name"] = p.model_name
    if p.build_commands:
        config["build_commands"] = list(p.build_commands)
    meta: dict[str, Any] = {}
    if p.description:
        meta["description"] = _folded_text(p.description)
    if p.repo_id:
        meta["repo_id"] = p.repo_id
    if p.tags:
        meta["tags"] = list(p.tags)
    if p.example_input:
        meta["example_model_input"] = dict(p.example_input)
    if meta:
        config["model_metadata"] = meta
    image = options.image or env.image
    if image:
        config["base_image"] = {"image": image}
        if options.image and options.image != env.image:
            changes.append(f"base_image.image: {env.image} -> {options.image} (your --image)")
    rev = options.weights_revision
    if p.model_cache:
        config["model_cache"] = [({**c, "revision": rev} if rev and "revision" in c else dict(c))
                                 for c in p.model_cache]
    if p.weights:
        config["weights"] = [
            {"source": w.source, **w.model_dump(exclude_none=True, exclude_defaults=True)} for w in p.weights]
    if rev:
        for w in config.get("weights", []):
            w["source"] = re.sub(r"@[^@]*$", "", w["source"]) + "@" + rev
        changes.append(f"weights revision -> {rev} (your --weights-revision)")
    if p.secrets:
        config["secrets"] = {s: None for s in p.secrets}
    if p.environment:
        config["environment_variables"] = {k: v for k, v in p.environment.items() if not is_secret(k)}
    if argv:
        start, changed = _start_command(p, env, argv)
        config["docker_server"] = {"start_command": _folded_command(start), **p.server}
        if changed:
            changes += [f"start_command: {f}{' ' + v if v else ''} ({why})"
                        for f, why in _added(env, argv, options).items() for v in [_value(argv, f)]]
    if p.trt_llm is not None:
        config["trt_llm"] = p.trt_llm
        if options.extra_args or options.parsers:
            raise InputError("engine flags (--extra-args, --parser) do not apply to a TensorRT-LLM preset: "
                             "Baseten builds its server from the trt_llm settings", where="--extra-args",
                             field="extra_args", fix="edit trt_llm in the emitted config.yaml instead")
    config["resources"] = dict(p.resources) or {"instance_type": p.instance_type or _instance(env, argv)[0]}
    runtime: dict[str, Any] = {}
    if options.concurrency or p.predict_concurrency:
        runtime["predict_concurrency"] = options.concurrency or p.predict_concurrency
        if options.concurrency and options.concurrency != p.predict_concurrency:
            was = p.predict_concurrency if p.predict_concurrency is not None else "not set"
            changes.append(f"runtime.predict_concurrency: {was} -> {options.concurrency} (your --concurrency)")
    if p.health_checks:
        runtime["health_checks"] = dict(p.health_checks)
    if runtime:
        config["runtime"] = runtime
    return config, argv, changes


def _concurrency(options: PresetOptions, p: ProviderPreset, argv: Sequence[str]) -> int | None:
    """The preset's predict_concurrency from a source (your option, the provider's, the command's --max-num-seqs);
    None: none gives one, and the preset takes launchcard's DEFAULT_CONCURRENCY, said as an assumption."""
    return options.concurrency or p.predict_concurrency or parse_command(argv).try_int("--max-num-seqs")


def _value(argv: Sequence[str], flag: str) -> str:
    return next((v or "" for f, v in split_flags(argv) if f == flag), "")


def preset_config(card: LaunchCard, env: EngineEnv, options: PresetOptions,
                  recipe: RecipeTexts | None = None) -> tuple[dict[str, Any], list[str]]:
    """The ``config.yaml`` mapping and the start command's argv (from a card environment that is not a preset)."""
    argv = serving_argv(env, card, options)
    p = env.preset or ProviderPreset()
    concurrency = _concurrency(options, p, argv) or DEFAULT_CONCURRENCY
    instance = p.instance_type if env.preset is not None and p.instance_type else _instance(env, argv)[0]
    gpus = instance_gpus(instance)
    rev = options.weights_revision or _pinned(card, env)
    weights = [w.model_dump() for w in p.weights] or [hf_weights(env.checkpoint or card.model, rev)]
    if options.weights_revision:
        weights = [{**w, "source": re.sub(r"@[^@]*$", "", w["source"]) + "@" + options.weights_revision}
                   for w in weights]
    example = dict(p.example_input or example_input(card.model, **_sampling(recipe)))
    ready = int(env.env.get("VLLM_ENGINE_READY_TIMEOUT_S", "1800") or 1800)
    health = dict(p.health_checks) or health_checks(ready)
    image = options.image or env.image
    if not image:
        raise EmitError("the environment names no container image", where="--env", fix="pass --image IMAGE")
    name = card.model.rsplit("/", 1)[-1].lower()
    config: dict[str, Any] = {
        "model_name": p.model_name or f"model:{name} preset:{env.source.kind}",
        "model_metadata": {
            "description": _folded_text(p.description or _description(card, env, gpus, instance.split(":")[0])),
            "repo_id": p.repo_id or card.model,
            "tags": list(p.tags) or _tags(card, argv),
            "example_model_input": example,
        },
        "base_image": {"image": image},
        "weights": weights,
        "secrets": {s: None for s in (p.secrets or ("hf_access_token",))},
        "environment_variables": {k: v for k, v in env.env.items() if not is_secret(k)},
        "docker_server": {"start_command": _folded(argv), **(p.server or DOCKER_SERVER)},
        "resources": {"instance_type": instance},
        "runtime": {"predict_concurrency": concurrency, "health_checks": health},
    }
    if not config["environment_variables"]:
        del config["environment_variables"]
    return config, argv


def instance_gpus(instance: str) -> int:
    count = instance.rpartition(":")[2]
    return int(count) if count.isdigit() else 1


def config_gpus(config: Mapping[str, Any]) -> int:
    """GPUs of the config's instance: ``instance_type`` or ``accelerator`` (``B200:8``; ``B200`` is one)."""
    res = config.get("resources") or {}
    return instance_gpus(str(res.get("instance_type") or res.get("accelerator") or ""))


def _pinned(card: LaunchCard, env: EngineEnv) -> str | None:
    """The weights revision to load: the card's agreed one, else the one this environment's source pins."""
    ckpt = next((c for c in card.checkpoints if c.name == (env.checkpoint or card.model)), None)
    if ckpt is None:
        return None
    if ckpt.revision:
        return ckpt.revision
    return next((p.revision for p in ckpt.pins if p.kind == env.source.kind and p.revision not in ("main", "HEAD")),
                None)


def _folded_command(text: str) -> Any:
    """A start command as a folded block scalar with one option per line (the string is unchanged: YAML folds
    each line break back into one space)."""
    from ruamel.yaml.scalarstring import FoldedScalarString

    if not _yaml.plain_safe(text) or "  " in text or text != text.strip() or len(text) < 80:
        return text
    fs = FoldedScalarString(text)
    fs.fold_pos = [m.start() for m in re.finditer(r" (?=--)", text)]
    return fs


def _folded_text(text: str) -> Any:
    """A long description as a folded block scalar (``>-``), as presets write it."""
    from ruamel.yaml.scalarstring import FoldedScalarString

    if not _yaml.plain_safe(text) or "  " in text or text != text.strip() or len(text) < 80:
        return text
    fs = FoldedScalarString(text)
    positions, line = [], 0
    for i, ch in enumerate(text):
        if ch == " " and i - line > 76:
            positions.append(i)
            line = i + 1
    fs.fold_pos = positions
    return fs


def preset_verdict(card: LaunchCard, env: EngineEnv, argv: Sequence[str], concurrency: int, gpus: int,
                   config: Mapping[str, Any] | None = None, *, assumed_concurrency: bool = False) -> Verdict:
    """The plan verdict on the start command as emitted, plus the concurrency against ``--max-num-seqs``, plus the
    environment's own findings from its recipe document (``check.RECIPE_CODES``: quirks, install notes, the engine
    version it needs), which the command alone cannot give: the card and the preset say them alike."""
    from launchcard.check import RECIPE_CODES, Finding, Verdict, check_command, sort_findings

    base = check_command(list(argv), engine=env.engine, gpus=gpus, role="single",
                         model_id=env.checkpoint or card.model, config=config)
    extra: list[Finding] = [f for f in map(Finding.from_line, env.verdict.findings if env.verdict else ())
                            if f is not None and f.code in RECIPE_CODES]
    max_seqs = parse_command(argv).try_int("--max-num-seqs")
    if max_seqs is not None and concurrency > max_seqs:
        extra.append(Finding(severity="warning", code="concurrency-above-max-num-seqs", role="single", message=(
            f"predict_concurrency {concurrency} exceeds --max-num-seqs {max_seqs}: the engine queues the rest"),
            evidence="runtime.predict_concurrency vs the start command",
            fix=f"use --concurrency {max_seqs} or raise --max-num-seqs"))
    if assumed_concurrency:
        extra.append(Finding(severity="info", code="assumed", message=default_concurrency_note(),
                             evidence="launchcard.emit DEFAULT_CONCURRENCY", fix="pass --concurrency N"))
    return Verdict(sort_findings([*base.findings, *extra]))


def emit_preset(card: LaunchCard, env: EngineEnv, options: PresetOptions, *, index: int | None = None,
                recipe: RecipeTexts | None = None,
                config_json: Mapping[str, Any] | None = None) -> tuple[dict[str, str], Verdict]:
    """``config.yaml`` and ``README.md`` for one card environment, and the verdict they were judged with."""
    changes: list[str] | None = None
    if env.preset is not None:
        config, argv, changes = as_written(card, env, options)
    else:
        config, argv = preset_config(card, env, options, recipe)
    concurrency = int((config.get("runtime") or {}).get("predict_concurrency") or DEFAULT_CONCURRENCY)
    gpus = config_gpus(config)
    if argv:
        assumed = _concurrency(options, env.preset or ProviderPreset(), argv) is None
        verdict = preset_verdict(card, env, argv, concurrency, gpus, config_json, assumed_concurrency=assumed)
    else:  # a TensorRT-LLM preset: no command for the engines' parsers to judge
        from launchcard.check import Finding, Verdict

        verdict = Verdict((Finding(severity="info", code="engine-settings-not-checked", message=(
            f"{env.engine} preset: Baseten builds the server from the trt_llm settings; no command to check"),
            evidence=f"{env.source.path or env.source.url}: trt_llm", role="single"),))
    head = _header(card, env, index, options, changes)
    text = _yaml.dump([config])
    files = {"config.yaml": "\n".join(head + verdict_lines(verdict)) + "\n\n" + text}
    from launchcard.emit._preset_readme import readme

    files["README.md"] = readme(card, env, config, argv, verdict, recipe=recipe, added=_added(env, argv, options),
                                changes=changes)
    return files, verdict


def _added(env: EngineEnv, argv: Sequence[str], options: PresetOptions) -> dict[str, str]:
    """Where each flag not in the environment's own command came from."""
    own = {f for f, _ in split_flags(env.argv)}
    asked = {f for f, _ in split_flags(options.extra_args)} | {PARSER_FLAGS[k] for k in options.parsers}
    return {f: ("your option (launchcard emit)" if f in asked else "launchcard: Truss container layout")
            for f, _ in split_flags(argv) if f not in own or f in asked}


def _header(card: LaunchCard, env: EngineEnv, index: int | None, options: PresetOptions,
            changes: Sequence[str] | None = None) -> list[str]:
    src = env.source
    lines = [(f"Generated by launchcard {__version__} (target: truss preset); edit the inputs and re-emit rather "
              "than this file."),
             f"card: {card.model}  environment: {'' if index is None else f'[{index}] '}{src.kind} {env.engine} "
             f"{env.role}" + (f" on {env.hardware} x {env.gpus}" if env.hardware else ""),
             f"source: {src.path or src.url or ''}{'@' + src.revision if src.revision else ''}"
             + (f"  sha256: {src.sha256}" if src.sha256 else "")]
    changed = [f"concurrency={options.concurrency}" if options.concurrency else "",
               f"extra-args={shlex.join(options.extra_args)}" if options.extra_args else "",
               *(f"parser {k}={v}" for k, v in options.parsers.items()),
               f"image={options.image}" if options.image else "",
               f"weights-revision={options.weights_revision}" if options.weights_revision else ""]
    if changes is not None:  # a provider's preset: as written, or each change with its reason
        lines += ([f"changed from the provider's preset: {c}" for c in changes] if changes
                  else ["as the provider wrote it: no setting changed"])
        # YAML comments do not survive the re-emitted settings: the provider's are said here, with their line
        lines += [f"provider's comment ({src.path or 'config.yaml'}#{c.split(': ', 1)[0]}): {c.split(': ', 1)[1]}"
                  for c in (env.preset.comments if env.preset is not None else ())]
    elif any(changed):
        lines.append("changed: " + "; ".join(c for c in changed if c))
    secrets = env.preset.secrets if env.preset is not None else ("hf_access_token",)
    if secrets:
        lines.append(f"Baseten reads the Hugging Face token from the secret '{secrets[0]}'; no value is stored here.")
    return ["# " + comment_safe(line) for line in lines]
