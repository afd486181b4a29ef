"""Safe YAML loading that keeps the line of every value.

ruamel.yaml (with its C parser) composes the node graph; we build plain Python
values from it ourselves so that we can (1) record the 1-based line of every
mapping key and sequence item, (2) reject duplicate keys, (3) bound alias
expansion (a "billion laughs" document stops with a clear error instead of
exhausting memory) and (4) turn dates back into ``YYYY-MM-DD`` strings as the
reference loader does.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from launchcard.errors import SourceError

Path = tuple[Any, ...]

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
    except Exception:  # pragma: no cover - C extension missing
        return YAML(typ="safe", pure=True)


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
    yaml = _yaml()
    try:
        node = yaml.compose(text)
    except Exception as exc:  # ruamel raises several unrelated classes
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
    builder = _Builder(yaml.constructor, where, error)
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
        if node.tag == _STR_TAG:
            return node.value
        try:
            value = self.constructor.construct_object(node, deep=True)
        except Exception as exc:
            raise self.error(f"cannot read scalar {node.value!r}: {exc}",
                             where=f"{self.where}:{node.start_mark.line + 1}",
                             fix="quote the value") from None
        if isinstance(value, _dt.datetime):
            return value.date().isoformat() if value.time() == _dt.time(0) else value.isoformat()
        if isinstance(value, _dt.date):
            return value.isoformat()
        return value
