"""NVIDIA Dynamo recipes: DynamoGraphDeployment manifests and recipe READMEs.

Each worker of a manifest becomes one :class:`EngineEnv` (engine from the
``dynamo.<engine>`` module, argv, env, GPU count, role).  A worker started
through ``bash -lc`` keeps its launch in a script: the ``python3 -m dynamo.*``
line is taken from it, with ``$VAR`` arguments resolved from the container env.
Kubernetes ``$(VAR)`` references in ``command``/``args`` are expanded as the
kubelet does (``$$(VAR)`` stays literal), from the container's ``env``:
plain values and ``valueFrom.configMapKeyRef`` entries whose ConfigMap is a
document of the same file.  A reference that cannot be resolved that way
(a Secret, a ConfigMap defined elsewhere, an unknown name) is kept as written
and the worker's notes say which and why.  The target GPU is read from the
pod's ``nodeSelector`` or its required ``nodeAffinity`` terms.
README configuration tables give per-deployment facts such as context length.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from launchcard.argv import parse_command
from launchcard.card import Checkpoint, EngineEnv, Fact
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
from launchcard.sources._markdown import tables
from launchcard.sources._yamldoc import engine_of, load_all

# Any in this module: parsed Kubernetes manifests (YAML values of every type).

_VAR = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_K8S_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_GPU_LABEL = "nvidia.com/gpu.product"


class DynamoRecipe(Adapter):
    kind = "dynamo"
    folder = "dynamo"

    def files(self, root: Path) -> Iterable[Path]:
        return (f for f in sorted(root.rglob("*"))
                if f.is_file() and (f.suffix in (".yaml", ".yml") or f.name == "README.md"))

    def extract(self, doc: SourceDoc) -> Extract:
        if doc.path.endswith(".md"):
            return self._readme(doc)
        envs: list[EngineEnv] = []
        facts: list[Fact] = []
        checkpoints: list[Checkpoint] = []
        models: list[str] = []
        manifests = load_all(doc)
        self._config_maps = {str((m.get("metadata") or {}).get("name")): m.get("data") or {}
                             for m in manifests if isinstance(m, dict) and m.get("kind") == "ConfigMap"}
        for manifest in manifests:
            if not isinstance(manifest, dict):
                continue
            kind = manifest.get("kind")
            if kind == "DynamoGraphDeployment":
                for name, comp in _components(manifest.get("spec") or {}):
                    env = self._worker(doc, name, comp, facts)
                    if env is not None:
                        envs.append(env)
                        if env.checkpoint and env.checkpoint not in models:
                            models.append(env.checkpoint)
            elif kind == "Job":
                for c in _containers((manifest.get("spec") or {}).get("template") or {}):
                    env_map = _env(c)
                    repo = env_map.get("MODEL_NAME")
                    if is_repo_id(repo):
                        checkpoints.append(Checkpoint(name=repo, repo=repo, revision=env_map.get("REVISION"),
                                                      notes="downloaded by the recipe's model-cache Job"))
                        facts.append(fact(doc, "weights_revision", env_map.get("REVISION") or "main",
                                          find_line(doc.lines, repo), scope=repo))
                        models.append(repo)
        if not envs and not checkpoints:
            raise doc.error("no DynamoGraphDeployment worker and no model download Job found",
                            fix="give a manifest with spec.components (or spec.services) holding a worker")
        return Extract(doc=doc.ref(), models=tuple(models), facts=tuple(facts), envs=tuple(envs),
                       checkpoints=tuple(checkpoints))

    def _worker(self, doc: SourceDoc, name: str, comp: dict[str, Any], facts: list[Fact]) -> EngineEnv | None:
        ctype = comp.get("componentType") or comp.get("type") or ""
        containers = _containers(comp.get("podTemplate") or {}) or _main(comp.get("extraPodSpec") or {})
        if not containers:
            return None
        c = containers[0]
        env, unresolved = _env_resolved(c, getattr(self, "_config_maps", {}))
        command = [str(x) for x in c.get("command") or []]
        args = [str(x) for x in c.get("args") or []]
        lines = doc.lines
        anchor = find_line(lines, f"name: {name}") or find_line(lines, f"{name}:") or 1
        unknown: dict[str, str] = {}
        # a flag whose value comes from a ConfigMap key of this file is credited to that key's line
        maps = getattr(self, "_config_maps", {})
        from_map = {flag: line for t in command + args for flag, line in _map_lines(doc, c, t, maps).items()}
        command = [_expand(t, env, unresolved, unknown) for t in command]
        args = [_expand(t, env, unresolved, unknown) for t in args]
        if command[-1:] in (["-c"], ["-lc"]) and args:
            argv, start_line = _from_script(doc, args[0], anchor)
        else:
            argv, start_line = command + args, anchor
        if not argv:
            return None
        argv = [_subst(t, env) for t in argv]
        # a script's own variable (GLM-5.3-Flash's "$model_path", set by the script's snapshot lookup) is not in the
        # container env: the command keeps it as written, and the notes say it is not a literal value
        script_vars = [m.group(1) for t in argv if (m := _VAR.match(t))]
        engine = engine_of(argv)
        if engine == "dynamo-frontend" or ctype == "frontend":
            role = "frontend"
        else:
            sub = comp.get("subComponentType")
            cmd = parse_command(argv)
            mode = cmd.get_str("--disaggregation-mode")
            role = mode if mode in ("prefill", "decode") else (
                "prefill" if cmd.has("--is-prefill-worker") else ("single" if sub in (None, "decode") else sub))
        hw = None
        product = _gpu_product((comp.get("podTemplate") or {}).get("spec") or {}) or \
            _gpu_product(comp.get("extraPodSpec") or {})
        if product:
            # the label value is a device name (GPU feature discovery writes torch's name with dashes): it
            # resolves exactly or not at all, never by a catalog name found inside it
            from launchcard.hardware import lookup

            acc = lookup(str(product))
            hw = acc.id if acc is not None else None
            if acc is None:
                unknown[f"{_GPU_LABEL}={product}"] = "not a hardware-catalog name; the target GPU is left unknown"
        gpus = _gpus(comp, c)
        cmd = parse_command(argv)
        model = cmd.model_path()
        served = cmd.get_str("--served-model-name")
        checkpoint = model if is_repo_id(model) else (served if is_repo_id(served) else None)
        if role != "frontend":
            facts += argv_facts(doc, argv, line_of={**flag_lines(lines, argv, start_line - 1), **from_map}, scope=hw)
        return EngineEnv(engine=engine, role=role, checkpoint=checkpoint, image=c.get("image"), argv=tuple(argv),
                         command=shlex.join(argv), env={k: v for k, v in env.items()}, hardware=hw, gpus=gpus,
                         notes=f"Dynamo component {name} ({ctype or 'worker'}), replicas={comp.get('replicas', 1)}"
                         + "".join(f"; unresolved $({k}): {why}" for k, why in unknown.items())
                         + "".join(f"; unresolved ${v}: set by the worker script at run time, not by the container "
                                   f"env (the command shows it as written)" for v in dict.fromkeys(script_vars)),
                         source=doc.ref(), evidence=doc.evidence(start_line))

    def _readme(self, doc: SourceDoc) -> Extract:
        facts: list[Fact] = []
        for _, header, rows in tables(doc):
            for line, cells in rows:
                label = cells[0].lower() if cells else ""
                if label.startswith("context length"):
                    for col, value in zip(header[1:], cells[1:], strict=False):
                        digits = value.replace(",", "").strip()
                        if digits.isdigit():
                            facts.append(fact(doc, "context_tokens", int(digits), line, unit="tokens",
                                              scope=f"Dynamo {col.strip()}"))
        checkpoints: list[Checkpoint] = []
        for i, text in enumerate(doc.lines, start=1):
            for m in re.finditer(r"`([\w.-]+/[\w.-]+)`\s+at\s+revision\s*`?([0-9a-f]{40})", text + " " +
                                 (doc.lines[i] if i < len(doc.lines) else "")):
                if any(c.repo == m.group(1) for c in checkpoints):
                    continue
                checkpoints.append(Checkpoint(name=m.group(1), repo=m.group(1), revision=m.group(2),
                                              notes="pinned by the Dynamo recipe README"))
                facts.append(fact(doc, "weights_revision", m.group(2), i, scope=m.group(1)))
        hf = re.search(r"https://huggingface.co/([\w.-]+/[\w.-]+)", doc.text)
        models = tuple(dict.fromkeys(([hf.group(1)] if hf else []) + [c.repo for c in checkpoints if c.repo]))
        facts += prose_param_facts(doc, models[0] if models else None, enumerate(doc.lines, start=1))
        return Extract(doc=doc.ref(), models=models, facts=tuple(facts), checkpoints=tuple(checkpoints))


def _components(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    comps = spec.get("components")
    if isinstance(comps, list):
        return [(str(c.get("name", "")), c) for c in comps if isinstance(c, dict)]
    services = spec.get("services") or {}
    return [(str(k), v) for k, v in services.items() if isinstance(v, dict)]


def _containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in ((template.get("spec") or {}).get("containers") or []) if isinstance(c, dict)]


def _main(extra: dict[str, Any]) -> list[dict[str, Any]]:
    main = extra.get("mainContainer")
    return [main] if isinstance(main, dict) else []


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {str(e["name"]): str(e["value"]) for e in container.get("env") or []
            if isinstance(e, dict) and "value" in e}


def _env_resolved(container: dict[str, Any], config_maps: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> value, name -> why it has none): plain values and keys of ConfigMaps in the same file."""
    env: dict[str, str] = {}
    unresolved: dict[str, str] = {}
    # envFrom first (every key of a ConfigMap, optionally prefixed); env entries then override (Kubernetes order)
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef") if isinstance(source, dict) else None
        if not isinstance(ref, dict):
            continue
        data = config_maps.get(str(ref.get("name")))
        if data is None:
            unresolved[f"envFrom {ref.get('name')}"] = f"ConfigMap {ref.get('name')!r} is not defined in this file"
            continue
        prefix = str(source.get("prefix") or "")
        env.update({prefix + str(k): str(v).strip() for k, v in data.items()})
    for e in container.get("env") or []:
        if not isinstance(e, dict) or "name" not in e:
            continue
        name = str(e["name"])
        if "value" in e:
            env[name] = _expand(str(e["value"]), env, unresolved, {})  # earlier entries may be referenced
            continue
        source = e.get("valueFrom") or {}
        ref = source.get("configMapKeyRef") if isinstance(source, dict) else None
        if isinstance(ref, dict):
            data = config_maps.get(str(ref.get("name")))
            if data is None:
                unresolved[name] = f"ConfigMap {ref.get('name')!r} is not defined in this file"
            elif str(ref.get("key")) not in data:
                unresolved[name] = f"ConfigMap {ref.get('name')!r} has no key {ref.get('key')!r}"
            else:
                env[name] = str(data[str(ref.get("key"))]).strip()
        elif isinstance(source, dict) and source:
            unresolved[name] = f"set from {', '.join(sorted(source))} at deploy time"
    return env, unresolved


def _expand(token: str, env: dict[str, str], unresolved: dict[str, str], unknown: dict[str, str]) -> str:
    """Kubernetes dependent-variable expansion: ``$(VAR)`` from ``env``; ``$$`` is a literal ``$``."""
    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        if name in env:
            return env[name]
        unknown[name] = unresolved.get(name, "not defined in the container's env")
        return m.group(0)

    return _K8S_REF.sub(one, token)


def _map_lines(doc: SourceDoc, container: dict[str, Any], token: str,
               config_maps: dict[str, Any] | None = None) -> dict[str, int]:
    """``--flag`` -> line of the ConfigMap value its ``$(VAR)`` reads (the first line of a block scalar)."""
    m = re.match(r"^(--[\w.-]+)=.*\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", token)
    if not m:
        return {}
    key = None
    for e in container.get("env") or []:
        ref = ((e.get("valueFrom") or {}).get("configMapKeyRef") or {}) if isinstance(e, dict) else {}
        if isinstance(e, dict) and e.get("name") == m.group(2) and isinstance(ref, dict) and ref.get("key"):
            key = str(ref["key"])
    if key is None:  # envFrom: the variable is a ConfigMap key (after the source's prefix)
        for source in container.get("envFrom") or []:
            if isinstance(source, dict) and isinstance(source.get("configMapRef"), dict):
                prefix = str(source.get("prefix") or "")
                data = (config_maps or {}).get(str(source["configMapRef"].get("name"))) or {}
                if m.group(2).startswith(prefix) and m.group(2)[len(prefix):] in data:
                    key = m.group(2)[len(prefix):]
    if key is None:
        return {}
    line = find_line(doc.lines, f"{key}:")
    if line is None:
        return {}
    block = doc.lines[line - 1].rstrip().endswith(("|", "|-", "|+", ">", ">-"))
    return {m.group(1): line + 1 if block else line}


def _gpu_product(pod: dict[str, Any]) -> str | None:
    """The GPU product a pod is pinned to: ``nodeSelector`` or a required ``nodeAffinity`` term (``In`` one value)."""
    product = (pod.get("nodeSelector") or {}).get(_GPU_LABEL)
    if product:
        return str(product)
    required = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for expr in (term or {}).get("matchExpressions") or []:
            values = expr.get("values") or []
            if expr.get("key") == _GPU_LABEL and expr.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def _gpus(comp: dict[str, Any], container: dict[str, Any]) -> int | None:
    for res in (comp.get("resources") or {}, container.get("resources") or {}):
        for part in ("limits", "requests"):
            vals = res.get(part) or {}
            for key in ("gpu", "nvidia.com/gpu"):
                if key in vals and str(vals[key]).isdigit():
                    return int(vals[key])
    return None


def _subst(token: str, env: dict[str, str]) -> str:
    m = _VAR.match(token)
    return env.get(m.group(1), token) if m else token


def _from_script(doc: SourceDoc, script: str, anchor: int) -> tuple[list[str], int]:
    """The ``python3 -m dynamo.<engine>`` command of a shell script (workers before frontends)."""
    joined: list[tuple[int, str]] = []
    buf: list[str] = []
    first = 0
    for offset, raw in enumerate(script.splitlines()):
        s = raw.strip()
        if not buf:
            first = offset
        if s.endswith("\\"):
            buf.append(s[:-1])
            continue
        buf.append(s)
        joined.append((first, " ".join(buf)))
        buf = []
    candidates = [(o, t) for o, t in joined if re.search(r"-m\s+dynamo\.\w+", t)]
    if not candidates:
        return [], anchor
    candidates.sort(key=lambda ot: "dynamo.frontend" in ot[1])
    offset, text = candidates[0]
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise doc.error(f"unbalanced quotes in worker script ({exc})", line=anchor, fix="close the quote") from exc
    if words and words[0] == "exec":
        words = words[1:]
    line = find_line(doc.lines, text.split()[0 if not text.startswith("exec") else 1], anchor - 1) or anchor
    line = find_line(doc.lines, "-m dynamo.", anchor - 1) or line
    return words, line
