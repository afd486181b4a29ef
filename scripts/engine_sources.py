"""The engine releases and the strings their own source holds (scripts/engine_successors.py's evidence): each
release's wheel as scripts/capture_flags.py unpacks it, and the deprecation warnings, help and config docstrings,
``EngineArgs`` forwards, stored fields and templated messages read from it, scanned once per release and kept."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from launchcard import atomicfile  # noqa: E402
from launchcard.flagspec import shipped_index  # noqa: E402

# bump when what a release's scan collects changes (its saved scans are then read again)
SCAN_VERSION = 3
# The engine source files that hold flag deprecations (warnings, help, config docstrings).
_SCAN = {
    "vllm": ("vllm/engine/arg_utils.py", "vllm/config", "vllm/entrypoints/openai/cli_args.py",
             "vllm/entrypoints/cli/serve.py", "vllm/utils/argparse_utils.py", "vllm/envs.py"),
    "sglang": ("sglang/srt/server_args.py", "sglang/srt/environ.py", "sglang/srt/arg_groups"),  # 0.5.21+ splits
}
_HINT = re.compile(r"deprecat|removed|replace|instead|renamed", re.IGNORECASE)


def _strings(path: Path, rel: str) -> list[tuple[int, str, str]]:
    """(line, text, enclosing function source) for every string literal and f-string in ``path``."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, str]] = []

    def walk(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            scope = func
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = ast.get_source_segment(source, child) or ""
            if isinstance(child, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                               else "{" + (ast.get_source_segment(source, v.value) or "?") + "}"
                               if isinstance(v, ast.FormattedValue) else "" for v in child.values)
                out.append((child.lineno, text, scope))
                continue
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                out.append((child.lineno, child.value, scope))
            walk(child, scope)

    walk(tree, "")
    return out


def _forwards(path: Path) -> list[tuple[int, str, str, str, str]]:
    """(line, code, config dest, field, source dest): ``<cfg>.<field> = self.<dest>`` in EngineArgs code."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, str, str, str]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        alias: dict[str, str] = {}
        for node in ast.walk(fn):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and _self_attr(value):
                alias[target.id] = _self_attr(value) or ""
            if not (isinstance(target, ast.Attribute) and _self_attr(value)):
                continue
            owner = target.value
            cfg = _self_attr(owner) or (alias.get(owner.id) if isinstance(owner, ast.Name) else None)
            if cfg and cfg.endswith("_config"):
                code = ast.get_source_segment(source, node) or ""
                out.append((node.lineno, " ".join(code.split()), cfg, target.attr, _self_attr(value) or ""))
    return out


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _stored(path: Path) -> list[tuple[int, str, str, str]]:
    """(line, code, flag, field): ``add_argument("--x", **<config>_kwargs["field"])``, the config field a flag
    stores into (vLLM 0.10.2: ``--guided-decoding-backend`` is ``DecodingConfig.backend``)."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument" and node.args):
            continue
        flag = node.args[0]
        if not (isinstance(flag, ast.Constant) and isinstance(flag.value, str) and flag.value.startswith("--")):
            continue
        for kw in node.keywords:
            sub = kw.value
            if kw.arg is None and isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) \
                    and isinstance(sub.slice.value, str):
                code = " ".join((ast.get_source_segment(source, node) or "").split())
                out.append((node.lineno, code, flag.value, sub.slice.value))
    return out


def _templated(path: Path) -> list[tuple[int, str, str]]:
    """(line, text, scope) for each call of a function that words a deprecation from its parameters.

    vLLM writes some deprecations once, in a helper: ``_set_from_env_if_set("backend",
    "VLLM_ATTENTION_BACKEND")`` warns "Using %s environment variable is deprecated ... Please use
    --attention-config.%s ..." with those arguments; ``deprecated_env("VLLM_USE_FBGEMM", "v0.23", "Use
    --linear-backend fbgemm.", ...)`` likewise.  The message the engine prints for that call is the helper's
    text with the call's constant arguments in place; it is attributed to the call's line.  A helper that
    passes its own parameters on to such a helper is one too.
    """
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    # helper name -> (parameter names, message pieces: str or parameter index)
    helpers: dict[str, tuple[list[str], list[str | int]]] = {}
    funcs = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def params(f: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
        return [a.arg for a in f.args.args if a.arg not in ("self", "cls")]

    def pieces(node: ast.AST, names: list[str]) -> list[str | int] | None:
        if isinstance(node, ast.JoinedStr):
            out: list[str | int] = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    out.append(v.value)
                elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id in names:
                    out.append(names.index(v.value.id))
                else:
                    return None
            return out
        return None

    for f in funcs:
        names = params(f)
        for node in ast.walk(f):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[0]
            msg: list[str | int] | None = None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and "%s" in first.value:
                rest = node.args[1:]
                if all(isinstance(a, ast.Name) and a.id in names for a in rest) and \
                        first.value.count("%s") == len(rest):
                    parts = first.value.split("%s")
                    msg = [parts[0]]
                    for a, tail in zip(rest, parts[1:], strict=True):
                        msg += [names.index(a.id) if isinstance(a, ast.Name) else "", tail]
            else:
                msg = pieces(first, names)
            if msg and any(isinstance(x, int) for x in msg) and _HINT.search("".join(x for x in msg
                                                                               if isinstance(x, str))):
                helpers.setdefault(f.name, (names, msg))
    for _ in range(2):  # wrappers: a helper calling a helper with its own parameters
        for f in funcs:
            if f.name in helpers:
                continue
            names = params(f)
            for node in ast.walk(f):
                callee = _callee(node)
                if callee in helpers and callee != f.name and isinstance(node, ast.Call):
                    args = node.args
                    inner_names, inner = helpers[callee]
                    if len(args) >= len(inner_names) and all(
                            isinstance(a, ast.Name) and a.id in names for a in args[:len(inner_names)]):
                        mapping = [names.index(a.id) for a in args if isinstance(a, ast.Name)]
                        helpers[f.name] = (names, [mapping[x] if isinstance(x, int) else x for x in inner])
                        break
    out: list[tuple[int, str, str]] = []
    if not helpers:
        return out

    def walk(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = ast.get_source_segment(source, child) or ""
            callee = _callee(child)
            if callee in helpers and isinstance(child, ast.Call):
                names, msg = helpers[callee]
                given = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
                         for a in child.args]
                given += [None] * (len(names) - len(given))
                for kw in child.keywords:
                    if kw.arg in names and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                        given[names.index(kw.arg)] = kw.value.value
                used = {x for x in msg if isinstance(x, int)}
                if all(given[i] is not None for i in used):
                    out.append((child.lineno, "".join(x if isinstance(x, str) else str(given[x]) for x in msg),
                                inner))
            walk(child, inner)

    walk(tree, "")
    return out


def _callee(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


class Release:
    """One release's unpacked wheel source: its scanned strings, config forwards and flag fields."""

    def __init__(self, engine: str, version: str, folder: Path) -> None:
        self.engine, self.version, self.folder = engine, version, folder
        stamp = folder / ".complete"
        self.wheel = stamp.read_text().strip() if stamp.exists() else ""
        wheel = folder.parent.parent / "wheels" / self.wheel
        self.sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest() if self.wheel and wheel.exists() else None
        self.strings: list[tuple[str, int, str, str]] = []
        self.forwards: list[tuple[str, int, str, str, str, str]] = []
        self.stored: dict[str, tuple[str, int, str, str]] = {}  # flag -> (file, line, code, config field)
        # a release's scan is kept beside its source, valid while the wheel and this script are unchanged
        saved = folder.parent.parent / "successor-scan" / f"{engine}-{version}.json"
        key = f"{SCAN_VERSION} {self.wheel} {self.sha256}"
        try:
            data = json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if self.sha256 and data.get("key") == key:  # a folder without its wheel is read afresh
            self.strings = [tuple(x) for x in data["strings"]]  # type: ignore[misc]
            self.forwards = [tuple(x) for x in data["forwards"]]  # type: ignore[misc]
            self.stored = {k: tuple(v) for k, v in data["stored"].items()}  # type: ignore[misc]
            return
        self._scan()
        if not self.sha256:
            return
        saved.parent.mkdir(parents=True, exist_ok=True)
        atomicfile.write_text(saved, json.dumps({"key": key, "strings": self.strings, "forwards": self.forwards,
                                                 "stored": self.stored}))

    def _scan(self) -> None:
        engine, folder = self.engine, self.folder
        for rel in _SCAN[engine]:
            base = folder / rel
            files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
            for f in files:
                r = f.relative_to(folder).as_posix()
                self.strings += [(r, line, text, scope) for line, text, scope in _strings(f, r) if _HINT.search(text)]
                self.strings += [(r, line, text, scope) for line, text, scope in _templated(f)]
                if r.endswith("arg_utils.py"):
                    self.forwards += [(r, *fw) for fw in _forwards(f)]
                    for line, code, flag, field in _stored(f):
                        self.stored.setdefault(flag, (r, line, code, field))


def releases(engine: str, fetch: bool) -> list[Release]:
    cache = ROOT / ".cache" / "engine-envs" / "src"
    out = []
    for v in shipped_index().get(engine, ()):
        folder = cache / f"{engine}-{v}"
        if not (folder / ".complete").exists() and fetch:
            import capture_flags

            capture_flags.fetch_source(engine, v)
        if (folder / ".complete").exists():
            out.append(Release(engine, v, folder))
    return out
