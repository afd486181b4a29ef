"""Baseten/Truss ``config.yaml`` presets.

The start command becomes argv (a ``sh -c "..."`` wrapper is unwrapped, leading
``VAR=value`` words become environment), plus the image with its digest, the
pinned weights revision, the instance type as hardware, concurrency and the
health endpoints.  A TRT-LLM preset (``trt_llm:``) has no start command: its
engine settings are recorded as an env without argv.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from launchcard.argv import parse_command, split_env
from launchcard.card import Checkpoint, EngineEnv, Fact, PresetWeights, ProviderPreset
from launchcard.sources._base import (
    Adapter,
    Extract,
    SourceDoc,
    argv_facts,
    fact,
    find_line,
    flag_lines,
    is_repo_id,
    prose_param_facts,
)
from launchcard.sources._yamldoc import engine_of, load_all

# Any in this module: the Truss config.yaml as parsed (YAML values of every type).

_HF_SOURCE = re.compile(r"^hf://([^@]+?)(?:@(.+))?$")


class TrussPreset(Adapter):
    kind = "provider-preset"
    folder = "providers"

    def files(self, root: Path) -> Iterable[Path]:
        return sorted(root.rglob("config.yaml"))

    def extract(self, doc: SourceDoc) -> Extract:
        docs = load_all(doc)
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise doc.error("a Truss config must be one YAML mapping",
                            fix="keep one document with model_name, resources ...")
        cfg: dict[str, Any] = docs[0]
        lines = doc.lines
        facts: list[Fact] = []
        checkpoints: list[Checkpoint] = []
        meta = cfg.get("model_metadata") or {}
        repo = meta.get("repo_id") if is_repo_id(meta.get("repo_id")) else None

        for w in cfg.get("weights") or []:
            m = _HF_SOURCE.match(str((w or {}).get("source", "")))
            if m:
                wrepo, rev = m.group(1), m.group(2)
                repo = repo or wrepo
                line = find_line(lines, str(w.get("source")))
                checkpoints.append(Checkpoint(name=wrepo, repo=wrepo, revision=rev, notes="Truss weights"))
                facts.append(fact(doc, "weights_revision", rev or "main", line, scope=wrepo))
        for c in cfg.get("model_cache") or []:
            crepo = (c or {}).get("repo_id")
            if is_repo_id(crepo):
                repo = repo or crepo
                rev = c.get("revision")
                checkpoints.append(Checkpoint(name=crepo, repo=crepo, revision=rev, notes="Truss model_cache"))
                facts.append(fact(doc, "weights_revision", rev or "main", find_line(lines, "revision:"), scope=crepo))
        if repo is None and is_repo_id(str(cfg.get("model_name", ""))):
            repo = str(cfg["model_name"])

        image = ((cfg.get("base_image") or {}).get("image"))
        env = {str(k): str(v) for k, v in (cfg.get("environment_variables") or {}).items()}
        hw, gpus = _hardware(cfg.get("resources") or {})
        runtime = cfg.get("runtime") or {}
        conc = runtime.get("predict_concurrency")
        if conc is not None:
            facts.append(fact(doc, "concurrency", int(conc), find_line(lines, "predict_concurrency")))
        server = cfg.get("docker_server") or {}
        health = {k: server[k] for k in ("readiness_endpoint", "liveness_endpoint", "predict_endpoint", "server_port")
                  if k in server}
        if health:
            facts.append(fact(doc, "health_endpoints", health, find_line(lines, "readiness_endpoint")))

        start = server.get("start_command")
        if start:
            start_line = find_line(lines, "start_command:") or 1
            argv, prefix_env = _argv(doc, str(start), start_line)
            cmd = parse_command(argv)
            served = cmd.get_str("--served-model-name")
            repo = repo or (served if is_repo_id(served) else None)
            model_arg = cmd.model_path()
            checkpoint = model_arg if is_repo_id(model_arg) else repo
            facts += argv_facts(doc, argv, line_of=flag_lines(lines, argv, start_line - 1), scope=hw)
            env_ = EngineEnv(engine=engine_of(argv), checkpoint=checkpoint, image=image, argv=tuple(argv),
                             command=" ".join(str(start).split()), env={**env, **prefix_env}, hardware=hw, gpus=gpus,
                             notes=_notes(health, conc), source=doc.ref(), evidence=doc.evidence(start_line),
                             preset=_preset(doc, cfg, prefix_env))
        elif cfg.get("trt_llm"):
            env_, trt_facts = self._trtllm(doc, cfg["trt_llm"], repo, image, env, hw, gpus, health, conc)
            env_ = env_.model_copy(update={"preset": _preset(doc, cfg, {})})
            facts += trt_facts
        else:
            raise doc.error("Truss config has no start command (docker_server.start_command) and no trt_llm section",
                            line=find_line(lines, "docker_server:"),
                            fix="add docker_server.start_command with the server's launch command")
        if repo is None:
            raise doc.error("Truss config names no model (model_metadata.repo_id, weights or model_cache)",
                            fix="add model_metadata.repo_id")
        facts += prose_param_facts(doc, repo, enumerate(lines, start=1))  # the description's counts
        return Extract(doc=doc.ref(), models=(repo,), facts=tuple(facts), envs=(env_,),
                       checkpoints=tuple(checkpoints))

    def _trtllm(self, doc: SourceDoc, trt: dict[str, Any], repo: str | None, image: str | None, env: dict[str, str],
                hw: str | None, gpus: int | None, health: dict[str, Any], conc: Any) -> tuple[EngineEnv, list[Fact]]:
        lines = doc.lines
        rt = trt.get("runtime") or {}
        facts: list[Fact] = []
        if rt.get("max_seq_len"):
            facts.append(fact(doc, "context_tokens", int(rt["max_seq_len"]), find_line(lines, "max_seq_len"),
                              unit="tokens", scope=hw))
        tp = rt.get("tensor_parallel_size")
        notes = ("Baseten TRT-LLM inference stack "
                 f"{trt.get('inference_stack', '')}: no start command; Baseten builds the server from trt_llm "
                 f"settings (tensor_parallel_size={tp}, max_batch_size={rt.get('max_batch_size')}). "
                 + (_notes(health, conc) or "")).strip()
        return EngineEnv(engine="trtllm", checkpoint=repo, image=image, argv=(), command=None, env=env, hardware=hw,
                         gpus=int(tp) if tp else gpus, notes=notes, source=doc.ref(),
                         evidence=doc.evidence(find_line(lines, "trt_llm:"))), facts


def _preset(doc: SourceDoc, cfg: dict[str, Any], start_env: dict[str, str]) -> ProviderPreset:
    """The preset's own settings, typed once here (wrong shapes are one-line errors naming the line)."""
    meta = cfg.get("model_metadata") or {}
    runtime = cfg.get("runtime") or {}
    server = cfg.get("docker_server") or {}
    if not all(isinstance(x, dict) for x in (meta, runtime, server)):
        raise doc.error("model_metadata, runtime and docker_server must be mappings",
                        fix="write each as a YAML mapping")
    example = meta.get("example_model_input")
    tags = meta.get("tags") or []
    health = runtime.get("health_checks") or {}
    conc = runtime.get("predict_concurrency")
    resources = cfg.get("resources") or {}
    trt = cfg.get("trt_llm")
    if not isinstance(resources, dict) or not isinstance(trt, dict | None):
        raise doc.error("resources and trt_llm must be mappings", fix="write each as a YAML mapping")
    try:
        weights = tuple(PresetWeights(source=str(w["source"]), mount_location=w.get("mount_location"),
                                      auth_secret_name=w.get("auth_secret_name"),
                                      allow_patterns=tuple(str(p) for p in w.get("allow_patterns") or ()),
                                      ignore_patterns=tuple(str(p) for p in w.get("ignore_patterns") or ()))
                        for w in cfg.get("weights") or [] if isinstance(w, dict) and w.get("source"))
        start = server.get("start_command")
        return ProviderPreset(
            model_name=str(cfg["model_name"]) if cfg.get("model_name") else None,
            description=" ".join(str(meta["description"]).split()) if meta.get("description") else None,
            repo_id=str(meta["repo_id"]) if meta.get("repo_id") else None,
            tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
            example_input=example if isinstance(example, dict) else None, weights=weights,
            secrets=tuple(str(k) for k in (cfg.get("secrets") or {})),
            server={k: v for k, v in server.items() if k != "start_command" and isinstance(v, str | int)},
            instance_type=str((cfg.get("resources") or {}).get("instance_type") or "") or None,
            predict_concurrency=int(conc) if conc is not None else None,
            health_checks={str(k): int(v) for k, v in health.items()} if isinstance(health, dict) else {},
            build_commands=tuple(str(c) for c in cfg.get("build_commands") or ()),
            resources={str(k): v if isinstance(v, bool | int) else str(v) for k, v in resources.items()},
            start_command=" ".join(str(start).split()) if start else None, start_env=dict(start_env),
            environment={str(k): v if isinstance(v, bool | int | float) else str(v)
                         for k, v in (cfg.get("environment_variables") or {}).items()},
            model_cache=tuple(dict(c) for c in cfg.get("model_cache") or () if isinstance(c, dict)),
            trt_llm=dict(trt) if trt else None,
            # whole-line comments only: a '#' after a value may be inside a quoted string
            comments=tuple(f"L{i}: {line.strip().lstrip('#').strip()}" for i, line in enumerate(doc.lines, 1)
                           if line.strip().startswith("#") and line.strip().lstrip("#").strip()))
    except (TypeError, ValueError) as exc:
        raise doc.error(f"preset setting of the wrong type ({exc})".splitlines()[0],
                        fix="give weights as mappings with source, counts and seconds as integers") from exc


def _argv(doc: SourceDoc, start: str, line: int) -> tuple[list[str], dict[str, str]]:
    try:
        words = shlex.split(start)
        if len(words) >= 3 and words[0] in ("sh", "bash", "/bin/sh", "/bin/bash") and words[1] in ("-c", "-lc"):
            words = shlex.split(words[2])
    except ValueError as exc:
        raise doc.error(f"unbalanced quotes in start_command ({exc})", line=line, fix="close the quote") from exc
    env, argv = split_env(words)
    if not argv:
        raise doc.error("start_command is empty", line=line, fix="give the server's launch command")
    return argv, env


def _hardware(res: dict[str, Any]) -> tuple[str | None, int | None]:
    spec = str(res.get("instance_type") or res.get("accelerator") or "")
    if not spec:
        return None, None
    name, _, count = spec.partition(":")
    return name.lower(), int(count) if count.isdigit() else (1 if name else None)


def _notes(health: dict[str, Any], conc: Any) -> str | None:
    parts = []
    if health:
        parts.append("health: " + ", ".join(f"{k}={v}" for k, v in health.items()))
    if conc is not None:
        parts.append(f"predict_concurrency={conc}")
    return "; ".join(parts) or None
