"""What each VALUE of a flag means, in the engine's own words: ``python scripts/capture_value_docs.py vllm 0.31.0``.

Reads the release's Python source (the wheel ``scripts/capture_flags.py`` downloads and unpacks under
``.cache/engine-envs/src/``, or ``--source``: an installed copy such as the CPU env's) statically, with
``ast`` (nothing of it is imported or run), and records, each entry with the file and line it was read from:

- config-field enumerations: the ``- "value" ...`` bullets of a config field's docstring
  (``LoadConfig.load_format``, ``ModelConfig.dtype`` ...), mapped to their flag through the captured
  parser spec's ``config_field`` (``data/flags/<engine>-<version>.json``); a field without bullets gives
  the clauses of its docstring that lead with one of the option's choices (``value_docs_help``);
- the tool-call and reasoning parser registries (``_TOOL_PARSERS_TO_REGISTER`` ...): name -> class, and
  the class's docstring where it has one (else its own module's docstring, marked as that);
- quantization methods (``get_quantization_config``'s ``method_to_config``): name -> config class and its
  docstring;
- attention backends (``AttentionBackendEnum``): name -> backend class and its docstring;
- ``SpeculativeConfig`` fields typed by a ``Literal`` (``method``, ``rejection_sample_method`` ...): each
  value with the ``Literal`` listing it and the field docstring's clause about it.

SGLang (``scripts/value_docs_sglang.py``): every enumerated option's help-text clauses, the attention,
quantization, load-format and speculative registries, the choice lists' comments, the tool/reasoning
detector registries.

Nothing is paraphrased: a value whose class has no docstring is recorded with its class only, and
launchcard then says so.  Writes ``src/launchcard/data/values/<engine>-<version>.json``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "src"))

import value_docs_sglang  # noqa: E402
from capture_flags import CACHE, fetch_source  # noqa: E402
from value_docs_help import first_sentence, value_segments  # noqa: E402

from launchcard import atomicfile  # noqa: E402

SCHEMA = "launchcard.value-docs/1"
REPO = "https://github.com/vllm-project/vllm"
_BULLET = re.compile(r"""^-\s+(?:"([^"]+)"|'([^']+)'|`([^`]+)`)\s*(.*)$""")


def _bullets(doc: str) -> dict[str, tuple[str, int]]:
    """``- "value" text`` bullets of a docstring -> value: (the bullet as the engine words it, quotes off;
    its line offset inside the docstring)."""
    out: dict[str, tuple[str, int]] = {}
    current: str | None = None
    parts: list[str] = []
    at = 0

    def close() -> None:
        if current is not None:
            out[current] = (" ".join(" ".join(parts).split()), at)

    for offset, raw in enumerate(doc.splitlines()):
        line = raw.strip()
        m = _BULLET.match(line)
        if m:
            close()
            at = offset
            current = (m.group(1) or m.group(2) or m.group(3)).strip("\"'")  # `"data"` names data
            rest = m.group(4)
            parts = [f"{current}{rest}" if rest.startswith((":", ",")) else f"{current} {rest}".rstrip()]
        elif current is not None and line and not line.startswith("-"):
            parts.append(line)
        else:
            close()
            current, parts = None, []
    close()
    return out


def _field_docs(src: Path) -> dict[str, tuple[str, str, int]]:
    """``Class.field`` -> (docstring, path, line) over ``vllm/config``."""
    out: dict[str, tuple[str, str, int]] = {}
    for path in sorted((src / "vllm" / "config").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            body = cls.body
            for a, b in itertools.pairwise(body):
                if (isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr)
                        and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)):
                    out[f"{cls.name}.{a.target.id}"] = (b.value.value, path.relative_to(src).as_posix(), b.lineno)
    return out


# where the registries' classes live (parsing the whole package would take several times longer)
_CLASS_DIRS = {"vllm": ("tool_parsers", "reasoning", "parser", "model_executor/layers/quantization", "v1/attention",
                        "attention"),
               "sglang": ("srt/function_call", "srt/parser", "srt/model_loader", "srt/weight_cache",
                          "srt/layers/quantization", "srt/layers/attention")}


def _classes(src: Path, engine: str) -> dict[str, tuple[str, int, str | None]]:
    """Every class of the registries' packages: name -> (path, line, docstring) (the first definition wins)."""
    out: dict[str, tuple[str, int, str | None]] = {}
    paths = sorted({p for d in _CLASS_DIRS[engine] for p in (src / engine / d).rglob("*.py")})
    for path in paths:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, (path.relative_to(src).as_posix(), node.lineno, ast.get_docstring(node)))
    return out


def _module_classes(src: Path, module: str) -> dict[str, tuple[str, int, str | None]]:
    path = src / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: (path.relative_to(src).as_posix(), n.lineno, ast.get_docstring(n))
            for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}


def _entry(text: str | None, path: str, line: int, **extra: Any) -> dict[str, Any]:
    return {"text": text, "path": path, "line": line, **extra}


def _class_entry(classes: dict[str, tuple[str, int, str | None]], name: str, reg_path: str,
                 reg_line: int, src: Path) -> dict[str, Any]:
    found = classes.get(name)
    if found is None:
        return _entry(None, reg_path, reg_line, cls=name)
    path, line, doc = found
    entry = _entry(first_sentence(doc) if doc else None, path, line, cls=name, registered=f"{reg_path}#L{reg_line}")
    return value_docs_sglang.with_module_doc(src, entry)


def _registry(src: Path, rel: str, var: str, classes: dict[str, tuple[str, int, str | None]]) -> dict[str, Any]:
    path = src / rel
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == var
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))):
            for k, v in zip(node.value.keys, node.value.values, strict=False):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and len(v.elts) == 2:
                    cls = v.elts[1]
                    if isinstance(cls, ast.Constant):
                        out[str(k.value)] = _class_entry(classes, str(cls.value), rel, k.lineno, src)
    return out


def _name_dict(src: Path, rel: str, var: str, classes: dict[str, tuple[str, int, str | None]]) -> dict[str, Any]:
    """A ``{"name": Class, ...}`` registry literal assigned to ``var`` (a plain or annotated assignment, at module
    or class level) -> name: the class and its docstring."""
    tree = ast.parse((src / rel).read_text(encoding="utf-8"))
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == var for t in targets):
            continue
        value = getattr(node, "value", None)
        if isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values, strict=False):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Name):
                    out[str(k.value)] = _class_entry(classes, v.id, rel, k.lineno, src)
    return out


def _attention(src: Path, classes: dict[str, tuple[str, int, str | None]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted((src / "vllm").rglob("registry.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "AttentionBackendEnum"):
            rel = path.relative_to(src).as_posix()
            for node in cls.body:
                if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                    module, _, name = node.value.value.rpartition(".")
                    # the member's value is the class's full path: read that module's classes too
                    found = dict(classes)
                    found.update({k: v for k, v in _module_classes(src, module).items() if k not in classes})
                    out[node.targets[0].id] = _class_entry(found, name, rel, node.lineno, src)
    return out


def _speculative(src: Path, docs: dict[str, tuple[str, str, int]]) -> dict[str, dict[str, Any]]:
    """``SpeculativeConfig`` fields typed by a ``Literal`` alias of ``vllm/config/speculative.py``
    (``method: SpeculativeMethod``, ``rejection_sample_method`` ...) -> ``--speculative-config.<field>``:
    each value with the ``Literal`` that lists it, and what the field's docstring says about it."""
    rel = "vllm/config/speculative.py"
    tree = ast.parse((src / rel).read_text(encoding="utf-8"))
    aliases: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Subscript) and ast.unparse(node.value.value) == "Literal"):
            sl = node.value.slice
            aliases[node.targets[0].id] = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]

    def values(name: str, seen: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for e in aliases.get(name, []):
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.setdefault(e.value, _entry(None, rel, e.lineno, group=name))
            elif isinstance(e, ast.Name) and e.id in aliases and e.id not in seen:
                for k, v in values(e.id, seen | {name}).items():
                    out.setdefault(k, v)
        return out

    flags: dict[str, dict[str, Any]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"):
        for node in cls.body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            named = [n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name) and n.id in aliases]
            if not named:
                continue
            table = values(named[0])
            doc = docs.get(f"SpeculativeConfig.{node.target.id}")
            if doc is not None:
                for value, entry in _help_entries(doc, list(table)).items():
                    table[value] = {**entry, "group": table[value]["group"]}
            flags[f"--speculative-config.{node.target.id}"] = table
    return flags


def _help_entries(doc: tuple[str, str, int], choices: list[str]) -> dict[str, dict[str, Any]]:
    """What a config field's docstring says about each choice outside ``- "value"`` bullets
    (``If "auto", will use model data type.``), at the docstring line naming it."""
    text, path, line = doc
    return {value: _entry(" ".join(segment.split()), path, line + text[:at].count("\n"), kind="help")
            for value, (segment, at) in value_segments(text, choices).items()}


def _vllm(src: Path, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    docs = _field_docs(src)
    classes = _classes(src, "vllm")
    flags: dict[str, dict[str, Any]] = {}
    for opt in spec["options"]:
        field = opt.get("config_field")
        if not field or field not in docs:
            continue
        text, path, line = docs[field]
        values = _bullets(text)
        if values:
            flags[opt["flags"][0]] = {v: _entry(t, path, line + off, field=field) for v, (t, off) in values.items()}
        elif opt.get("choices"):
            found = _help_entries(docs[field], [str(c) for c in opt["choices"]])
            if found:
                flags[opt["flags"][0]] = found
    flags["--tool-call-parser"] = _registry(src, "vllm/tool_parsers/__init__.py", "_TOOL_PARSERS_TO_REGISTER",
                                            classes)
    flags["--reasoning-parser"] = _registry(src, "vllm/reasoning/__init__.py", "_REASONING_PARSERS_TO_REGISTER",
                                            classes)
    flags["--quantization"] = _name_dict(src, "vllm/model_executor/layers/quantization/__init__.py",
                                         "method_to_config", classes)
    flags["--attention-backend"] = _attention(src, classes)
    flags.update(_speculative(src, docs))
    return flags


def _sglang(src: Path, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    classes = _classes(src, "sglang")
    flags = value_docs_sglang.capture(src, spec, classes)
    # the registries name each parser's class; the help's own words stay for what they do not hold ("auto")
    for flag, rel, var in (("--tool-call-parser", "sglang/srt/function_call/function_call_parser.py",
                            "ToolCallParserEnum"),
                           ("--reasoning-parser", "sglang/srt/parser/reasoning_parser.py", "DetectorMap")):
        flags[flag] = {**flags.get(flag, {}), **_name_dict(src, rel, var, classes)}
    return flags


REPOS = {"vllm": REPO, "sglang": "https://github.com/sgl-project/sglang"}


def capture(engine: str, version: str, src: Path) -> dict[str, Any]:
    spec = json.loads((ROOT / "src" / "launchcard" / "data" / "flags" / f"{engine}-{version}.json").read_text())
    flags = _vllm(src, spec) if engine == "vllm" else _sglang(src, spec)
    stamp = (src / ".complete").read_text().strip() if (src / ".complete").exists() else None
    wheel = CACHE / "wheels" / stamp if stamp else None
    dists = sorted(p.name for p in src.glob(f"{engine}*-{version}*.dist-info"))
    return {
        "schema": SCHEMA,
        "engine": engine,
        "version": version,
        "source": {
            "repo": REPOS[engine], "ref": f"v{version}",
            "package": stamp or (dists[0] if dists else None),  # the wheel, or the installed distribution
            "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest() if wheel and wheel.exists() else None,
            "captured_by": "scripts/capture_value_docs.py (ast over the release's Python source, nothing run)",
        },
        "flags": {k: dict(sorted(v.items())) for k, v in sorted(flags.items()) if v},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/capture_value_docs.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("engine", choices=("vllm", "sglang"))
    ap.add_argument("version")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--source", type=Path, help="folder holding the release's vllm/ package (an installed "
                    "site-packages, e.g. the CPU env's); default: the wheel, downloaded and unpacked")
    args = ap.parse_args(argv)
    src = args.source or fetch_source(args.engine, args.version)
    if not (src / args.engine).is_dir():
        print(f"capture_value_docs: error: no {args.engine}/ package under {src}", file=sys.stderr)
        return 2
    data = capture(args.engine, args.version, src)
    out = args.out or ROOT / "src" / "launchcard" / "data" / "values" / f"{args.engine}-{args.version}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomicfile.write_text(out, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    n = sum(len(v) for v in data["flags"].values())
    print(f"{out}: {n} values of {len(data['flags'])} flags")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
