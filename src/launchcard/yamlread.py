"""Safe YAML loading that keeps the line of every value.

A C parser composes the node graph -- libyaml through PyYAML when it is there
(a dependency of huggingface_hub, and several times faster at composing than
ruamel, whose composer is Python), else ruamel.yaml -- and we build plain
Python values from it ourselves so that we can (1) record the 1-based line of
every mapping key and sequence item, (2) reject duplicate keys, (3) bound alias
expansion (a "billion laughs" document stops with a clear error instead of
exhausting memory), (4) turn dates back into ``YYYY-MM-DD`` strings as the
reference loader does and (5) read plain scalars by YAML 1.2 rules (``yes`` is
text, as in the reference's js-yaml) whichever parser composed them.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import marshal
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path as _FsPath
from typing import Any

from launchcard import atomicfile
from launchcard.errors import SourceError

Path = tuple[Any, ...]

CACHE_ENV = "LAUNCHCARD_BUILD_CACHE"
_OFF = ("", "0", "off", "no", "false")

MAX_NODES = 200_000
"""Upper bound on constructed values per document, aliases expanded."""

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class LoadedYaml:
    """A parsed document: its value and the line of each path inside it."""

    value: Any
    lines: dict[Path, int] = field(default_factory=dict)

    def line(self, *path: Any) -> int | None:
        """Line of the deepest known prefix of ``path`` (None if nothing known)."""
        p: Path = tuple(path)
        while p:
            line = self.lines.get(p)
            if line is not None:
                return line
            p = p[:-1]
        return None


def _yaml() -> Any:
    from ruamel.yaml import YAML

    try:
        return YAML(typ="safe", pure=False)
    except Exception:  # noqa: BLE001  # pragma: no cover - C extension missing
        return YAML(typ="safe", pure=True)


# YAML 1.2 core-schema resolution of plain scalars (plus timestamps and merge keys, which
# the reference loader also reads), first character -> candidates in order.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$")
_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.VERBOSE)
_TIMESTAMP = re.compile(r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
    (?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", re.VERBOSE)
_T = "tag:yaml.org,2002:"


def _plain_tag(value: str) -> str:
    first = value[:1]
    if first in ("", "~", "n", "N") and _NULL.match(value):
        return _T + "null"
    if first in ("t", "T", "f", "F") and _BOOL.match(value):
        return _T + "bool"
    if first in "-+0123456789.":
        if _INT.match(value):
            return _T + "int"
        if _FLOAT.match(value):
            return _T + "float"
        if _TIMESTAMP.match(value):
            return _T + "timestamp"
    if value == "<<":
        return _MERGE_TAG
    return _STR_TAG


def _libyaml_composer() -> Any:
    """A libyaml composer class that tags plain scalars by YAML 1.2, or None without libyaml."""
    import importlib

    try:
        yaml: Any = importlib.import_module("yaml")  # untyped library
    except ImportError:  # pragma: no cover - PyYAML is a huggingface_hub dependency
        return None
    base = getattr(yaml, "CSafeLoader", None)
    if base is None or not getattr(yaml, "__with_libyaml__", False):  # pragma: no cover
        return None
    scalar_node = yaml.ScalarNode

    class Composer(base):  # type: ignore[misc, valid-type]
        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            if kind is scalar_node:
                return _plain_tag(value) if implicit[0] else _STR_TAG
            return _T + ("seq" if kind is yaml.SequenceNode else "map")

    return Composer


_COMPOSER: Any = False  # not looked up yet


def _compose(text: str) -> tuple[Any, Any]:
    """(root node, scalar constructor) for ``text``."""
    global _COMPOSER
    if _COMPOSER is False:
        _COMPOSER = _libyaml_composer()
    if _COMPOSER is not None:
        loader = _COMPOSER(text)
        try:
            return loader.get_single_node(), loader
        finally:
            loader.dispose()
    yaml = _yaml()
    return yaml.compose(text), yaml.constructor


def decode_text(data: bytes, where: str, error: type[SourceError] = SourceError) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            where=f"{where}:{line}",
            fix="save the file as UTF-8",
        ) from None
    return text.removeprefix("\ufeff")


def load_yaml(data: bytes, where: str, *, error: type[SourceError] = SourceError) -> LoadedYaml:
    """Parse one YAML document.  ``where`` names the file in error messages."""
    text = decode_text(data, where, error)
    if not text.strip():
        raise error("empty document", where=f"{where}:1", fix="add the YAML content or remove the file")
    try:
        node, constructor = _compose(text)
    except Exception as exc:  # noqa: BLE001  # both parsers raise several unrelated classes
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = (mark.line + 1) if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, cmark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and cmark is not None and cmark.line + 1 != line:
            problem = f"{problem} ({context} started at line {cmark.line + 1})"
        raise error(f"YAML syntax error: {problem}", where=f"{where}:{line}",
                    fix="fix the YAML syntax at that line") from None
    if node is None:
        raise error("empty document", where=f"{where}:1", fix="add the YAML content or remove the file")
    builder = _Builder(constructor, where, error)
    value = builder.build(node, ())
    return LoadedYaml(value, builder.lines)


class _Builder:
    def __init__(self, constructor: Any, where: str, error: type[SourceError]) -> None:
        self.constructor = constructor
        self.where = where
        self.error = error
        self.lines: dict[Path, int] = {}
        self.count = 0

    def _tick(self, node: Any) -> None:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.error(
                f"document expands to more than {MAX_NODES:,} values (alias bomb?)",
                where=f"{self.where}:{node.start_mark.line + 1}",
                fix="remove the nested aliases; write the values out",
            )

    def build(self, node: Any, path: Path) -> Any:
        self._tick(node)
        kind = node.id
        if kind == "scalar":
            return self._scalar(node)
        if kind == "sequence":
            out = []
            for i, item in enumerate(node.value):
                self.lines.setdefault(path + (i,), item.start_mark.line + 1)
                out.append(self.build(item, path + (i,)))
            return out
        return self._mapping(node, path)

    def _mapping(self, node: Any, path: Path) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        explicit: set[Any] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for source in self._merge_sources(value_node, path):
                    for k, v in source.items():
                        if k not in explicit:
                            out[k] = v
                continue
            if key_node.id != "scalar":
                raise self.error("mapping keys must be plain scalars",
                                 where=f"{self.where}:{key_node.start_mark.line + 1}",
                                 fix="use a string key")
            key = self._scalar(key_node)
            if key in explicit:
                raise self.error(
                    f"duplicate key {key!r}", where=f"{self.where}:{key_node.start_mark.line + 1}",
                    fix="keep only one definition of that key",
                )
            explicit.add(key)
            self.lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, path + (key,))
        return out

    def _merge_sources(self, node: Any, path: Path) -> list[dict[Any, Any]]:
        nodes = node.value if node.id == "sequence" else [node]
        sources = []
        for n in nodes:
            value = self.build(n, path)
            if not isinstance(value, dict):
                raise self.error("merge key '<<' needs a mapping or a list of mappings",
                                 where=f"{self.where}:{n.start_mark.line + 1}",
                                 fix="point '<<' at a mapping anchor")
            sources.append(value)
        return sources

    def _scalar(self, node: Any) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        known = _SCALARS.get(tag)
        try:
            value = known(node.value) if known is not None else self.constructor.construct_object(node, deep=True)
        except _Overflow:
            raise self.error(f"number {node.value!r} is beyond a float's range (it would be read as infinity)",
                             where=f"{self.where}:{node.start_mark.line + 1}",
                             fix="write a finite number, or .inf where infinity is meant") from None
        except Exception as exc:  # noqa: BLE001  # any constructor failure is this file's bad value
            raise self.error(f"cannot read scalar {node.value!r}: {exc}",
                             where=f"{self.where}:{node.start_mark.line + 1}",
                             fix="quote the value") from None
        if isinstance(value, _dt.datetime):
            return value.date().isoformat() if value.time() == _dt.time(0) else value.isoformat()
        if isinstance(value, _dt.date):
            return value.isoformat()
        return value


def _int(text: str) -> int:
    """A YAML 1.2 integer (underscores allowed; a leading zero is still decimal, as in 1.2)."""
    digits = text.replace("_", "")
    sign = -1 if digits[:1] == "-" else 1
    digits = digits.lstrip("+-")
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)


class _Overflow(ValueError):
    """A numeral too large for a float: Python reads it as infinity, which the file did not write."""


def _float(text: str) -> float:
    lowered = text.replace("_", "").lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered[0] == "-" else float("inf")
    if lowered.endswith(".nan"):
        return float("nan")
    value = float(lowered)
    if math.isinf(value):  # 1e400: a finite numeral that would be read as infinity (a burst, a limit never hit)
        raise _Overflow(text)
    return value


_SCALARS: dict[str, Any] = {_T + "null": lambda _t: None, _T + "bool": lambda t: t in ("true", "True", "TRUE"),
                            _T + "int": _int, _T + "float": _float}


def cache_root() -> _FsPath | None:
    """launchcard's on-disk build cache folder (parsed documents here, cards and extracts in
    ``launchcard.merge``), or None when ``LAUNCHCARD_BUILD_CACHE`` turns it off (``off``, ``0``, empty)."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return None if env.strip().lower() in _OFF else _FsPath(env).expanduser()
    from platformdirs import user_cache_dir

    return _FsPath(user_cache_dir("launchcard", appauthor=False)) / "build"


class ParsedCache:
    """Parsed documents kept on disk under the sha256 of their bytes, so an unchanged file is not parsed again.

    Composing YAML is most of what reading a recipes checkout costs (a batch over every recipe spends more
    time there than resolving a case).  An entry is the document's value and line table in :mod:`marshal`
    form, which holds exactly what :func:`load_yaml` returns (plain dicts, lists, strings, numbers) and reads
    back several times faster than any parser.  Entries live in a folder named by this module's own file
    (size, mtime) and the Python version (marshal's format), so an edited loader never meets an old entry.
    A document that fails to parse is never stored; an entry that cannot be read is a miss; writes are
    write-then-rename and never fail a read.
    """

    def __init__(self, root: _FsPath) -> None:
        st = os.stat(__file__)
        stamp = f"{sys.version}\0{st.st_size}\0{st.st_mtime_ns}".encode()
        self.folder = root / f"yaml-{hashlib.sha256(stamp).hexdigest()[:16]}"

    def get(self, digest: str) -> LoadedYaml | None:
        try:
            with open(self.folder / digest[:2] / digest, "rb") as fh:
                data = fh.read()  # marshal.load(fh) would read the file item by item, several times slower
            value, lines = marshal.loads(data)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        return LoadedYaml(value, lines)

    def put(self, digest: str, loaded: LoadedYaml) -> None:
        path = self.folder / digest[:2] / digest
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # readers see no entry or the whole entry; no fsync: a lost entry is parsed again
            atomicfile.write_bytes(path, marshal.dumps((loaded.value, loaded.lines)), durable=False)
        except (OSError, ValueError):  # unwritable folder, or a value marshal cannot hold: just slower
            return

    def load(self, data: bytes, digest: str, where: str, *, error: type[SourceError] = SourceError) -> LoadedYaml:
        """:func:`load_yaml` of ``data`` (whose sha256 is ``digest``), from the cache when it holds it."""
        loaded = self.get(digest)
        if loaded is None:
            loaded = load_yaml(data, where, error=error)
            self.put(digest, loaded)
        return loaded
