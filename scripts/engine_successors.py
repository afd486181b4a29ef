"""Build the successor table from the engines' own evidence: ``python scripts/engine_successors.py``.

For every flag (and environment variable) that a captured release deprecates
or that a later captured release no longer accepts, the table names what to
use instead ONLY where the engine itself says so, and quotes where it says it:

* ``source``: a string in the release's own Python source (deprecation
  warnings, config-field docstrings, ``add_argument(help=...)``): "Please use
  `--mm-processor-cache-gb 0` instead", "Please use
  `eplb_config.window_size` instead", "Please instead use `--hf-overrides
  '{...}'`".  Read from the release's wheel as ``scripts/capture_flags.py``
  unpacks it (``.cache/engine-envs/src/<engine>-<version>``; ``--fetch``
  downloads missing ones with ``pip download --no-deps``).
* ``forward``: the release's ``EngineArgs`` code copying the flag's value into
  a field of a ``--*-config`` JSON option (``so_config.disable_fallback =
  self.guided_decoding_disable_fallback``), where the next release's config
  class really has that field.
* ``help``: the captured parser help of a release ("Deprecated. Use
  --image-processor-backend=pil instead.").
* ``same-field``: the first release without the flag has another option
  string storing into the same parser destination with the same action (the
  engine kept the field and renamed its flag).

Nothing else counts: no name likeness, no identical help lines, no
negation spelling guesses.  Where the evidence names different replacements
(one per value, e.g. vLLM's ``--task``) no single successor is recorded.
A successor that needs another value shape is written in full:
``--eplb-config '{"window_size": VALUE}'``; ``VALUE`` stands for the value the
user gave.

Writes ``src/launchcard/data/flags/successors.json`` (``--out``), with the
wheel and its sha256 for each release read.  Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from launchcard.flags._ranges import derive_env_ranges, derive_ranges  # noqa: E402
from launchcard.flagspec import FlagSpec, Option, shipped_index, shipped_spec, version_key  # noqa: E402

# The engine source files that hold flag deprecations (warnings, help, config docstrings).
_SCAN = {
    "vllm": ("vllm/engine/arg_utils.py", "vllm/config", "vllm/entrypoints/openai/cli_args.py",
             "vllm/entrypoints/cli/serve.py", "vllm/utils/argparse_utils.py", "vllm/envs.py"),
    "sglang": ("sglang/srt/server_args.py", "sglang/srt/environ.py"),
}
_HINT = re.compile(r"deprecat|removed|replace|instead|renamed", re.IGNORECASE)
_TARGET = r"`?'?(--[\w.{},-]+(?:[ =](?:'[^']*'|`[^`]*`|<[^>]+>|[^\s`'.,;)]+))?|[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)?)`?'?"
_PATTERNS = (
    re.compile(r"[Pp]lease\s+instead\s+use\s+" + _TARGET),
    re.compile(r"(?:[Pp]lease\s+)?[Uu]se\s+" + _TARGET + r"\s+instead"),
    re.compile(r"replaced\s+(?:with|by)\s+" + _TARGET),
    re.compile(r"[Dd]eprecated[,:.]?\s+use\s+" + _TARGET),
    re.compile(r"[Ss]et\s+`?(--[\w-]+)`?\s+to\s+'([^']+)'\s+instead"),
    re.compile(r"[Rr]eplace\s+this\s+option\s+with\s+" + _TARGET),
)
_THIS_OPTION = re.compile(r"[Rr]eplace\s+this\s+option\s+with\s+" + _TARGET)


# ---------------------------------------------------------------- engine source strings


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


class Release:
    """One release's unpacked wheel source: its scanned strings and config forwards."""

    def __init__(self, engine: str, version: str, folder: Path) -> None:
        self.engine, self.version, self.folder = engine, version, folder
        stamp = folder / ".complete"
        self.wheel = stamp.read_text().strip() if stamp.exists() else ""
        wheel = folder.parent.parent / "wheels" / self.wheel
        self.sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest() if self.wheel and wheel.exists() else None
        self.strings: list[tuple[str, int, str, str]] = []
        self.forwards: list[tuple[str, int, str, str, str, str]] = []
        for rel in _SCAN[engine]:
            base = folder / rel
            files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
            for f in files:
                r = f.relative_to(folder).as_posix()
                self.strings += [(r, line, text, scope) for line, text, scope in _strings(f, r) if _HINT.search(text)]
                if r.endswith("arg_utils.py"):
                    self.forwards += [(r, *fw) for fw in _forwards(f)]


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


# ---------------------------------------------------------------- target normalisation


def _mentions(text: str, name: str, dest: str | None) -> bool:
    if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
        return True
    if dest and not name.startswith("--no-"):
        return bool(re.search(rf"(?:`|'|^|\[DEPRECATED\]\s*){re.escape(dest)}(?:`|'|\s+(?:is|was|has)\b)", text))
    return False


def _is_bool(o: Option | None) -> bool:
    return o is not None and o.nargs == 0


def _value(o: Option | None, name: str) -> str:
    """The JSON value a flag given as ``name`` stands for (bool switches are written out)."""
    if _is_bool(o):
        return "false" if name.startswith("--no-") or (o is not None and o.action == "store_false") else "true"
    return "VALUE"


def _normalise(raw: str, value: str | None, name: str, old: Option | None, new: FlagSpec,
               scope: str) -> str | None:
    """The full replacement text in ``new`` for ``raw`` (as the evidence writes it), or None when not there."""
    raw = raw.strip("`'").rstrip(".")
    if raw.startswith("--"):
        braces = re.match(r"^(--[\w-]*)\{([\w,]+)\}([\w-]*)(=.*)?$", raw)
        if braces:  # --cuda-graph-backend-{decode,prefill}=disabled
            parts = [_normalise(braces.group(1) + alt + braces.group(3) + (braces.group(4) or ""), value, name, old,
                                new, scope) for alt in braces.group(2).split(",")]
            return " ".join(p for p in parts if p) if all(parts) else None
        sep = re.search(r"[ =]", raw)
        flag, given = (raw[:sep.start()], raw[sep.end():].strip("`")) if sep else (raw, value or "")
        if "." in flag:  # --logging-config.pylogging_config_file: a field of a JSON option
            head, field = flag.split(".", 1)
            return _json_field(new.by_flag.get(head), field, name, old, new)
        o = new.by_flag.get(flag)
        if o is None:
            return None
        if "{" in given and "}" in given:  # f-string: --hf-overrides '{hf_overrides_str}'
            key = _dict_key(scope, old.dest if old else "")
            return f"{flag} '{{\"{key}\": {_value(old, name)}}}'" if key else None
        if _is_bool(old) and _is_bool(o) and not given:
            return _sense(name, o, flag)
        if given in ("%d", "%s", "%r"):
            given = "VALUE"
        if not given and o.nargs != 0:
            given = "VALUE" if not _is_bool(old) else ""
        return f"{flag} {given}".strip()
    if "." in raw:  # eplb_config.window_size
        cfg, field = raw.split(".", 1)
        return _json_field(new.by_dest.get(cfg), field, name, old, new)
    o = new.by_dest.get(raw)
    if o is None:
        return None
    if _is_bool(old) and _is_bool(o):
        return _sense(name, o, o.name)
    return o.name + ("" if o.nargs == 0 else " VALUE")


def _sense(name: str, o: Option, flag: str) -> str | None:
    """The spelling of switch ``o`` that means what ``name`` meant: --disable-x is --no-enable-x."""
    def word(text: str) -> str:
        return text.lstrip("-").replace("-", "_").removeprefix("no_")

    before = word(name)
    after = word(o.dest)
    inverted = (before.startswith("disable_") and after.startswith("enable_")) or \
        (before.startswith("enable_") and after.startswith("disable_"))
    negative = name.startswith("--no-") != inverted
    if flag.startswith("--no-"):
        negative = not negative
        flag = "--" + flag[len("--no-"):]
    if not negative:
        return flag
    neg = "--no-" + flag[2:]
    return neg if neg in o.flags else None


def _json_field(o: Option | None, field: str, name: str, old: Option | None, new: FlagSpec) -> str | None:
    if o is None or not o.json_class:
        return None
    fields = (new.json_classes.get(o.json_class) or {}).get("fields") or {}
    if field not in fields:
        return None
    return f"{o.name} '{{\"{field}\": {_value(old, name)}}}'"


def _dict_key(scope: str, dest: str) -> str | None:
    m = re.search(r"\{\s*[\"'](\w+)[\"']\s*:\s*self\." + re.escape(dest) + r"\s*\}", scope)
    return m.group(1) if m else None


# ---------------------------------------------------------------- evidence per flag


def _candidates(name: str, dest: str | None, old: Option | None, new: FlagSpec,
                rels: list[Release], specs: list[FlagSpec]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for rel in rels:
        # a deprecation message naming the flag: "replace this option with X" hints that follow it closely in the
        # same function are about it (vLLM's --task: one hint per value)
        about = [(path, scope, line) for path, line, text, scope in rel.strings
                 if scope and _mentions(text, name, dest) and re.search(r"deprecat|removed", text, re.IGNORECASE)]
        for path, line, text, scope in rel.strings:
            if not _mentions(text, name, dest):
                near = any(p == path and sc == scope and 0 < line - at <= 40 for p, sc, at in about)
                if near and _THIS_OPTION.search(text):
                    for m in _THIS_OPTION.finditer(text):
                        use = _normalise(m.group(1), None, name, old, new, scope)
                        if use:
                            found.append({"use": use, "kind": "source", "release": rel.version, "file": path,
                                          "line": line, "text": " ".join(text.split()), "wheel": rel.wheel,
                                          "sha256": rel.sha256})
                continue
            for pat in _PATTERNS:
                for m in pat.finditer(text):
                    raw = m.group(1) + (f"={m.group(2)}" if m.lastindex and m.lastindex > 1 else "")
                    if raw.strip("`'") in (name, dest):
                        continue
                    use = _normalise(raw, None, name, old, new, scope)
                    if use:
                        found.append({"use": use, "kind": "source", "release": rel.version, "file": path,
                                      "line": line, "text": " ".join(text.split()), "wheel": rel.wheel,
                                      "sha256": rel.sha256})
        for path, line, code, cfg, field, src in rel.forwards:
            if dest and src == dest:
                use = _json_field(new.by_dest.get(cfg), field, name, old, new)
                if use:
                    found.append({"use": use, "kind": "forward", "release": rel.version, "file": path,
                                  "line": line, "text": code, "wheel": rel.wheel, "sha256": rel.sha256})
    for spec in specs:
        o = spec.by_flag.get(name)
        if o is None or not o.help or not _HINT.search(o.help):
            continue
        for pat in _PATTERNS:
            for m in pat.finditer(o.help):
                raw = m.group(1) + (f"={m.group(2)}" if m.lastindex and m.lastindex > 1 else "")
                use = _normalise(raw, None, name, old, new, "")
                if use and raw.strip("`'") not in (name, dest):
                    found.append({"use": use, "kind": "help", "release": spec.version,
                                  "file": f"{spec.engine} {spec.version} parser help of {name} (captured spec)",
                                  "line": None, "text": " ".join(o.help.split())})
    return found


def _same_field(name: str, last: FlagSpec, gone: FlagSpec | None) -> dict[str, Any] | None:
    o = last.by_flag.get(name)
    if o is None or gone is None:
        return None
    n = gone.by_dest.get(o.dest)
    if n is None or name in n.flags or n.action != o.action or n.type != o.type or n.const != o.const:
        return None
    # a switch (--x / --no-x / a named negation) keeps its sense: an off spelling maps to the new off spelling
    negative = o.action == "bool_pair" and (name != o.flags[0] or name in o.negation)
    offs = [f for f in n.flags[1:] if f.startswith("--")] + list(n.negation)
    use = (offs[0] if offs else None) if negative else n.name
    if use is None:
        return None
    return {"use": use, "kind": "same-field", "release": gone.version,
            "file": f"{gone.engine} {gone.version} parser (captured spec)", "line": None,
            "text": f"{last.version}: {' / '.join(o.flags)} store into {o.dest} ({o.action}); "
                    f"{gone.version}: {' / '.join(n.flags)} store into {n.dest} ({n.action})"}


def build(engine: str, fetch: bool = False) -> dict[str, Any]:
    specs = [shipped_spec(engine, v) for v in shipped_index().get(engine, ())]
    by_version = {s.version: s for s in specs}
    rels = releases(engine, fetch)
    newest = specs[-1]
    flags: dict[str, Any] = {}
    for name, r in sorted(derive_ranges(specs).items()):
        if not r.removed_in and not r.deprecated_from and r.versions == tuple(
                v for v in r.captured if version_key(v) >= version_key(r.first)):
            continue  # never deprecated, never missing after it appeared
        last = by_version[r.last]
        gone = by_version[r.removed_in] if r.removed_in else None
        gaps = [v for v in r.captured if version_key(r.first) < version_key(v) < version_key(r.last)
                and v not in r.versions]
        new = gone or (by_version[gaps[0]] if gaps else newest)
        # the flag's own field as its first release had it: a later release may point the old spelling at the
        # new field (--disable-log-requests -> enable_log_requests), whose texts are not about the old flag
        first = by_version[r.first].by_flag.get(name)
        old = last.by_flag.get(name)  # the value shape a user of the last accepting release gives
        window = [rel for rel in rels if version_key(r.first) <= version_key(rel.version) <= version_key(new.version)]
        accepting = [by_version[v] for v in r.versions]
        found = _candidates(name, (first or old).dest if (first or old) else None, old, new, window, accepting)
        same = _same_field(name, last, gone or (by_version[gaps[0]] if gaps else None))
        if same:
            found.append(same)
        uses = sorted({f["use"] for f in found})
        entry: dict[str, Any] = {"last": r.last, "removed_in": r.removed_in, "deprecated_from": r.deprecated_from}
        if len(uses) == 1:
            entry["use"] = uses[0]
            entry["evidence"] = found[0]
        elif uses:
            entry["use"] = None
            entry["ambiguous"] = uses  # the engine names one replacement per value: none is THE successor
            entry["evidence"] = found[0]
        else:
            entry["use"] = None
        flags[name] = entry
    envs: dict[str, Any] = {}
    for name, r in sorted(derive_env_ranges(specs).items()):
        if not r.removed_in:
            continue
        new = by_version[r.removed_in]
        window = [rel for rel in rels if version_key(r.first) <= version_key(rel.version) <= version_key(new.version)]
        found = _candidates(name, None, None, new, window, [])
        uses = sorted({f["use"] for f in found})
        envs[name] = {"last": r.last, "removed_in": r.removed_in, "use": uses[0] if len(uses) == 1 else None,
                      **({"evidence": found[0]} if len(uses) == 1 else {})}
    return {"flags": flags, "envs": envs,
            "read": [{"release": rel.version, "wheel": rel.wheel, "sha256": rel.sha256} for rel in rels]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/engine_successors.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", action="append", choices=("vllm", "sglang"))
    ap.add_argument("--fetch", action="store_true", help="download and unpack releases whose source is missing")
    ap.add_argument("--out", type=Path, default=ROOT / "src" / "launchcard" / "data" / "flags" / "successors.json")
    args = ap.parse_args(argv)
    data: dict[str, Any] = {"schema": "launchcard/successors/1", "generated_by": "scripts/engine_successors.py",
                            "engines": {}}
    if args.out.exists():
        data["engines"] = json.loads(args.out.read_text(encoding="utf-8")).get("engines", {})
    for engine in args.engine or ["vllm", "sglang"]:
        data["engines"][engine] = build(engine, args.fetch)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
