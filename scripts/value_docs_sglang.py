"""SGLang's own descriptions of each choice of its enumerated flags, read statically from a release's source.

Used by ``scripts/capture_value_docs.py sglang VERSION``.  For every option whose captured parser spec
(``data/flags/sglang-<version>.json``) lists choices, and for the registries behind the options that
name a class (``--attention-backend``, ``--quantization``, ``--load-format``, ``--speculative-algorithm``,
the tool/reasoning parser registries), each value gets one entry with the file and line it was read from:

1. ``help``: what the option's help text says about the value (``value_docs_help``), at the line of the
   help string naming it;
2. ``cls``: the class the registry builds for the value, with its docstring's first sentence; for an
   attention backend also the first check its factory makes (``FlashAttention v3 Backend requires ...``),
   for a deprecated alias the engine's deprecation warning;
3. a ``comment`` the engine's choice list carries on the value's line (``"fp8",  # MOE + linear online
   quantization.``), or a comment block right above the value that names it;
4. otherwise ``kind: choice``: the value is one of the engine's choices (the line listing it), and the
   engine describes it nowhere launchcard reads — shown as "no value-specific description".
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path
from typing import Any

from value_docs_help import first_sentence, line_of, value_segments

Classes = dict[str, tuple[str, int, str | None]]


@cache
def _tree(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


@cache
def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@cache
def _comments(path: Path) -> dict[int, str]:
    """Line -> the comment on it (``#`` and spaces off)."""
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _text(node: ast.AST | None) -> str | None:
    """A help expression's text: a string, implicit or ``+`` concatenation, or an f-string (its fields
    shown as ``{...}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _text(node.left), _text(node.right)
        return a + b if a is not None and b is not None else None
    return None


def _help_nodes(src: Path) -> dict[str, tuple[Path, ast.AST, ast.AST | None]]:
    """Key (``dest`` of a dataclass field, or ``--flag`` of an ``add_argument``) -> (file, help node,
    choices node)."""
    out: dict[str, tuple[Path, ast.AST, ast.AST | None]] = {}
    root = src / "sglang" / "srt"
    paths = [root / "server_args.py", *sorted((root / "arg_groups").rglob("*.py"))]
    for path in paths:
        tree = _tree(path)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(node.annotation, ast.Subscript)
                    and isinstance(node.annotation.slice, ast.Tuple) and len(node.annotation.slice.elts) > 1):
                meta = node.annotation.slice.elts[1]
                if _text(meta) is not None:
                    out.setdefault(node.target.id, (path, meta, None))
                elif isinstance(meta, ast.Call):
                    kw = {k.arg: k.value for k in meta.keywords}
                    no_cli = isinstance(kw.get("no_cli"), ast.Constant) and getattr(kw["no_cli"], "value", False)
                    if "help" in kw and not no_cli:  # a no_cli field's flag is an add_argument of its own
                        out.setdefault(node.target.id, (path, kw["help"], kw.get("choices")))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                kw = {k.arg: k.value for k in node.keywords}
                if "help" in kw:
                    out.setdefault(node.args[0].value, (path, kw["help"], kw.get("choices")))
    return out


@cache
def _module_lists(src: Path) -> dict[str, tuple[Path, ast.expr]]:
    """``NAME = [...]`` (or a set, tuple, ``set(OTHER)``) choice lists of the argument modules: name ->
    (file, expression)."""
    out: dict[str, tuple[Path, ast.expr]] = {}
    root = src / "sglang" / "srt"
    for path in [root / "server_args.py", *sorted((root / "arg_groups").rglob("*.py"))]:
        tree = _tree(path)
        # module level first (ast.walk is breadth first), then a function's local choice set
        for node in ast.walk(tree) if tree else []:
            if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.List | ast.Set | ast.Tuple | ast.Call)):
                out.setdefault(node.targets[0].id, (path, node.value))
    return out


def _list_elements(src: Path, choices: ast.AST | None, path: Path) -> dict[str, tuple[Path, int]]:
    """The string elements of a choices expression (an inline list, a named module list, ``A + [...]``)
    -> (file, line)."""
    out: dict[str, tuple[Path, int]] = {}
    if isinstance(choices, ast.List | ast.Set | ast.Tuple):
        for e in choices.elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.setdefault(e.value, (path, e.lineno))
    elif isinstance(choices, ast.Name) and choices.id in _module_lists(src):
        where, lst = _module_lists(src)[choices.id]
        out.update(_list_elements(src, lst, where))
    elif isinstance(choices, ast.Call) and ast.unparse(choices.func) in ("set", "frozenset", "list", "sorted"):
        for arg in choices.args[:1]:
            out.update(_list_elements(src, arg, path))
    elif isinstance(choices, ast.BinOp):
        out.update(_list_elements(src, choices.left, path))
        out.update(_list_elements(src, choices.right, path))
    return out


def _comment_for(path: Path, line: int, value: str) -> tuple[str, int] | None:
    """The comment on the value's line, or the comment block right above it when that block names the
    value (a section header such as ``# NVIDIA specific`` above several values is not the value's)."""
    comments = _comments(path)
    if comments.get(line):
        return comments[line], line
    lines = _lines(path)
    block: list[str] = []
    n = line - 1
    while n >= 1 and lines[n - 1].strip().startswith("#"):
        block.insert(0, comments.get(n, ""))
        n -= 1
    text = " ".join(b for b in block if b and not b.startswith("http"))
    named = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")
    if block and named.search(text):
        at = next((n + 1 + k for k, b in enumerate(block) if named.search(b)), n + 1)
        return text, at
    return None


def _rel(src: Path, path: Path) -> str:
    return path.relative_to(src).as_posix()


def _import_map(tree: ast.AST, package: str = "") -> dict[str, str]:
    """Name -> the module it is imported from (``from m import Name``; ``from .m import Name`` read
    inside ``package``), anywhere in ``tree``."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or node.level):
            module = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join([*base, module] if module else base)
            for a in node.names:
                out.setdefault(a.asname or a.name, module)
    return out


def _module_path(src: Path, module: str) -> Path | None:
    for p in (src / (module.replace(".", "/") + ".py"), src / module.replace(".", "/") / "__init__.py"):
        if p.is_file():
            return p
    return None


def _find_class(src: Path, name: str, module: str | None, classes: Classes) -> tuple[str, int, str | None] | None:
    if module:
        path = _module_path(src, module)
        tree = _tree(path) if path else None
        if tree is not None and path is not None:
            for n in ast.walk(tree):
                if isinstance(n, ast.ClassDef) and n.name == name:
                    return _rel(src, path), n.lineno, ast.get_docstring(n)
            # re-exported: follow the package's own import once
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            again = _import_map(tree, package).get(name)
            if again and again != module:
                return _find_class(src, name, again, classes)
    return classes.get(name)


def _class_entry(src: Path, name: str, module: str | None, classes: Classes, reg: str, line: int,
                 **extra: Any) -> dict[str, Any]:
    found = _find_class(src, name, module, classes)
    if found is None:
        return {"text": None, "path": reg, "line": line, "cls": name, **extra}
    path, cline, doc = found
    entry = {"text": first_sentence(doc) if doc else None, "path": path, "line": cline, "cls": name,
             "registered": f"{reg}#L{line}", **extra}
    return with_module_doc(src, entry)


def with_module_doc(src: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """A registered class without a docstring: its own module's docstring, where the module has one (the
    module the registry points at, never the registry's own file)."""
    if entry.get("text") or not entry.get("registered") or entry["registered"].startswith(entry["path"] + "#"):
        return entry
    tree = _tree(src / entry["path"])
    doc = ast.get_docstring(tree) if tree is not None else None
    if doc:
        entry = {**entry, "text": first_sentence(doc), "module_doc": True}
    return entry


def _message(node: ast.AST) -> str | None:
    """The message of an ``assert``, ``raise X("...")`` or ``warnings.warn("...")``."""
    arg: ast.AST | None = None
    if isinstance(node, ast.Assert):
        arg = node.msg
    elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
        arg = node.exc.args[0]
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn"
          and node.args):
        arg = node.args[0]
    text = _text(arg) if arg is not None else None
    return first_sentence(text) if text else None


def _attention(src: Path, classes: Classes) -> dict[str, Any]:
    """``@register_attention_backend("name")`` factories -> the backend class each builds first (its
    docstring), the first check the factory makes, and a deprecation warning it gives."""
    path = src / "sglang" / "srt" / "layers" / "attention" / "attention_registry.py"
    tree = _tree(path)
    if tree is None:
        return {}
    rel = _rel(src, path)
    out: dict[str, Any] = {}
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        names = [d.args[0].value for d in fn.decorator_list
                 if isinstance(d, ast.Call) and ast.unparse(d.func) == "register_attention_backend"
                 and d.args and isinstance(d.args[0], ast.Constant)]
        if not names:
            continue
        imports = [(n.module, a.name) for n in ast.walk(fn) if isinstance(n, ast.ImportFrom) and n.module
                   for a in n.names]
        built = next(((m, c) for m, c in imports if c[:1].isupper()), None)
        checks = [(n, _message(n)) for n in ast.walk(fn) if isinstance(n, ast.Assert | ast.Raise | ast.Call)]
        checks = [(n, m) for n, m in checks if m]
        checks.sort(key=lambda nm: nm[0].lineno)
        for name in names:
            if built is not None:
                entry = _class_entry(src, built[1], built[0], classes, rel, fn.lineno)
            else:
                entry = {"text": None, "path": rel, "line": fn.lineno, "factory": fn.name}
            if checks:
                node, msg = checks[0]
                kind = "deprecated" if isinstance(node, ast.Call) else "check"
                entry[kind] = {"text": msg, "path": rel, "line": node.lineno}
            out[str(name)] = entry
    return out


def _dict_entries(src: Path, rel: str, var: str, classes: Classes) -> dict[str, Any]:
    """A ``VAR = {"name": Class}`` registry and its ``VAR.update({...})`` additions -> name: the class."""
    path = src / rel
    tree = _tree(path)
    if tree is None:
        return {}
    imports = _import_map(tree)
    out: dict[str, Any] = {}
    dicts: list[tuple[ast.Dict, str | None]] = []  # (the dict, the platform test it is registered under)

    def visit(nodes: list[ast.stmt], when: str | None) -> None:
        for stmt in nodes:
            if isinstance(stmt, ast.If):
                test = ast.unparse(stmt.test)
                visit(stmt.body, f"{when} and {test}" if when else test)
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if (any(isinstance(t, ast.Name) and t.id == var for t in targets)
                            and isinstance(node.value, ast.Dict)):
                        dicts.append((node.value, when))
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr == "update" and ast.unparse(node.func.value) == var and node.args
                      and isinstance(node.args[0], ast.Dict)):
                    dicts.append((node.args[0], when))

    visit(tree.body, None)
    # the unconditional registration first; else the first platform's, saying which platform
    for d, when in sorted(dicts, key=lambda dw: (dw[1] is not None, dw[0].lineno)):
        for k, v in zip(d.keys, d.values, strict=False):
            if isinstance(k, ast.Constant) and isinstance(v, ast.Name) and str(k.value) not in out:
                extra = {"when": when} if when else {}
                out[str(k.value)] = _class_entry(src, v.id, imports.get(v.id), classes, rel, k.lineno, **extra)
    return out


def _enum_values(tree: ast.AST, name: str) -> dict[str, tuple[str, int]]:
    """``class Name(Enum)`` members -> (value, line); an ``auto()`` member's value is its name."""
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and cls.name == name:
            out: dict[str, tuple[str, int]] = {}
            for n in cls.body:
                if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name):
                    member = n.targets[0].id
                    value = n.value.value if isinstance(n.value, ast.Constant) else member
                    out[member] = (str(value), n.lineno)
            return out
    return {}


def _load_formats(src: Path, classes: Classes) -> dict[str, Any]:
    """``get_model_loader``'s ``if load_format == LoadFormat.X: return Loader(...)`` -> x: the loader."""
    cfg = src / "sglang" / "srt" / "configs" / "load_config.py"
    loader = src / "sglang" / "srt" / "model_loader" / "loader.py"
    ct, lt = _tree(cfg), _tree(loader)
    if ct is None or lt is None:
        return {}
    members = _enum_values(ct, "LoadFormat")
    out: dict[str, Any] = {}
    for fn in ast.walk(lt):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "get_model_loader"):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and isinstance(node.test.ops[0], ast.Eq) and len(node.test.comparators) == 1):
                continue
            right = node.test.comparators[0]
            if not (isinstance(right, ast.Attribute) and ast.unparse(right.value) == "LoadFormat"
                    and right.attr in members):
                continue
            ret = next((r for r in node.body if isinstance(r, ast.Return) and isinstance(r.value, ast.Call)
                        and isinstance(r.value.func, ast.Name)), None)
            if ret is None:
                continue
            assert isinstance(ret.value, ast.Call) and isinstance(ret.value.func, ast.Name)
            value = members[right.attr][0]
            imports = _import_map(node) | _import_map(lt)
            out.setdefault(value, _class_entry(src, ret.value.func.id, imports.get(ret.value.func.id), classes,
                                               _rel(src, loader), node.lineno))
    # the enum's own comment on a member (``FLASH_RL = "flash_rl"  # For RL training ...``)
    for member, (value, line) in members.items():
        note = _comments(cfg).get(line)
        if note and value not in out:
            out[value] = {"text": None, "path": _rel(src, cfg), "line": line, "enum": f"LoadFormat.{member}"}
    return out


def _speculative(src: Path) -> dict[str, Any]:
    """``SpeculativeAlgorithm``'s builtin members and the CLI aliases ``from_string`` maps to one."""
    info = src / "sglang" / "srt" / "speculative" / "spec_info.py"
    reg = src / "sglang" / "srt" / "speculative" / "spec_registry.py"
    tree = _tree(info)
    if tree is None:
        return {}
    rel = _rel(src, info)
    out: dict[str, Any] = {}
    for member, (_, line) in _enum_values(tree, "SpeculativeAlgorithm").items():
        if member != "NONE":
            out[member] = {"text": None, "path": rel, "line": line, "enum": f"SpeculativeAlgorithm.{member}"}
    rtree = _tree(reg)
    for node in rtree.body if rtree else []:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "_RESERVED_ALIASES"):
            names = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            above = _comment_for(reg, node.lineno, names[0]) if names else None
            for name in names:
                out[name] = {"text": first_sentence(above[0]) if above else None, "path": _rel(src, reg),
                             "line": above[1] if above else node.lineno, "kind": "alias"}
    return out


def _help_and_choices(src: Path, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes = _help_nodes(src)
    flags: dict[str, dict[str, Any]] = {}
    for opt in spec["options"]:
        choices = [str(c) for c in opt.get("choices") or []]
        if not choices:
            continue
        flag = opt["flags"][0]
        found = nodes.get(opt.get("dest") or "") or next((nodes[f] for f in opt["flags"] if f in nodes), None)
        if found is None:
            continue
        path, help_node, choices_node = found
        table: dict[str, Any] = {}
        text = _text(help_node)
        if text:
            lines = _lines(path)
            first, last = help_node.lineno, getattr(help_node, "end_lineno", None) or help_node.lineno
            for value, (segment, _) in value_segments(text, choices).items():
                table[value] = {"text": segment, "path": _rel(src, path),
                                "line": line_of(lines, first, last, value, first), "kind": "help"}
        for value, (where, line) in _list_elements(src, choices_node, path).items():
            if value not in choices:
                continue
            note = _comment_for(where, line, value)
            entry = table.setdefault(value, {"text": None, "path": _rel(src, where), "line": line,
                                             "kind": "choice"})
            if note is not None:
                entry["comment"] = {"text": note[0], "path": _rel(src, where), "line": note[1]}
        flags[flag] = table
    return flags


# option -> the registry behind its value (several options share one)
_REGISTRY_FLAGS = {
    "attention": ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend",
                  "--speculative-draft-attention-backend"),
    "quantization": ("--quantization", "--speculative-draft-model-quantization"),
    "load": ("--load-format", "--speculative-draft-load-format"),
    "speculative": ("--speculative-algorithm",),
}


def capture(src: Path, spec: dict[str, Any], classes: Classes) -> dict[str, dict[str, Any]]:
    """Flag -> value -> entry (see the module docstring for the order)."""
    flags = _help_and_choices(src, spec)
    registries = {
        "attention": _attention(src, classes),
        "quantization": _dict_entries(src, "sglang/srt/layers/quantization/__init__.py",
                                      "BASE_QUANTIZATION_METHODS", classes),
        "load": _load_formats(src, classes),
        "speculative": _speculative(src),
    }
    known = {f for opt in spec["options"] for f in opt["flags"][:1]}
    for key, names in _REGISTRY_FLAGS.items():
        for flag in names:
            if flag not in known:
                continue
            table = flags.setdefault(flag, {})
            for value, reg in registries[key].items():
                have = table.get(value)
                if have is None:
                    table[value] = dict(reg)
                elif not have.get("text") or have.get("kind") == "choice":
                    # the help said nothing about it: the registry's class (keeping the list's comment)
                    merged = dict(reg)
                    if "comment" in have:
                        merged["comment"] = have["comment"]
                    table[value] = merged
    return flags
