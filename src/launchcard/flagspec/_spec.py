"""Typed loading of captured flag specifications (``data/flags/*.json``).

Standard library only, so ``launchcard check`` starts fast.  A spec is read
once per process and converted to frozen values here, at the boundary; the
checker never touches the raw JSON.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from launchcard.flagspec._release import ReleaseKey, release_key

# Any in this module: the captured spec is a JSON document (defaults, choices, schemas).

SCHEMA = "launchcard.flag-spec/v1"


@dataclass(frozen=True, slots=True)
class Option:
    """One option of an engine's server parser, as captured."""

    flags: tuple[str, ...]
    dest: str
    action: str  # store | store_true | store_false | store_const | bool_pair | append | count | help | ...
    nargs: int | str | None
    const: Any
    default: Any
    type: str  # str | int | float | json | json_or_str | human_int | human_int_or_auto | other
    optional: bool  # "" and "None" mean None
    normalize: str | None
    choices: tuple[Any, ...] | None
    json_class: str | None
    negation: tuple[str, ...]
    deprecated: bool
    help: str
    # "CacheConfig.gpu_memory_utilization": the config field the engine passes the value to
    config_field: str | None = None
    # that field's declared type when it checks more than argparse (bounds,
    # Literal/enum values, object keys): judged as the "startup" stage.
    # Wire data from the spec JSON (same shape as json_classes' field types).
    startup: Any = None

    @property
    def name(self) -> str:
        """The canonical (first long) spelling."""
        longs = [f for f in self.flags if f.startswith("--")]
        return longs[0] if longs else (self.flags[0] if self.flags else self.dest)


@dataclass(frozen=True, eq=False)  # identity hash: specs are cached singletons
class FlagSpec:
    """Everything the checker needs to know about one engine version's parser."""

    engine: str
    version: str
    nightly: bool
    dialect: str  # "vllm-flexible" or "argparse"
    prefix_chars: str
    allow_abbrev: bool
    command_prefix: tuple[str, ...]
    options: tuple[Option, ...]
    positionals: tuple[Option, ...]
    json_classes: dict[str, Any] = field(hash=False, compare=False)
    registries: dict[str, tuple[str, ...]] = field(hash=False, compare=False)
    plugin_flags: dict[str, str] = field(hash=False, compare=False)
    source: str = ""
    # vLLM's environment-variable registry: name -> {"default": ..., "choices"?: [...]}; empty when not captured
    envs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # how the spec was obtained: {"method": "real parser in full env" | ..., "host_env"?, "stubbed"?}
    captured_by: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    # cached_property needs an instance __dict__, hence no slots on FlagSpec.
    @functools.cached_property
    def by_flag(self) -> dict[str, Option]:
        return {f: o for o in self.options for f in o.flags}

    @functools.cached_property
    def by_dest(self) -> dict[str, Option]:
        return {o.dest: o for o in self.options}

    @functools.cached_property
    def long_flags(self) -> tuple[str, ...]:
        """Every ``--`` option string, sorted: the options a prefix abbreviates are one contiguous run."""
        return tuple(sorted(f for f in self.by_flag if f.startswith("--")))

    def abbreviated(self, prefix: str) -> Option | None:
        """The one option whose long strings start with ``prefix`` (argparse's abbreviation rule), else None."""
        longs = self.long_flags
        i = bisect.bisect_left(longs, prefix)
        j = i
        while j < len(longs) and longs[j].startswith(prefix):
            j += 1
        if len({self.by_flag[f].dest for f in longs[i:j]}) != 1:
            return None
        # several spellings of one dest: the one declared last, as a dict over by_flag would keep
        return self.by_flag[max(longs[i:j], key=self._flag_order.__getitem__)]

    @functools.cached_property
    def _flag_order(self) -> dict[str, int]:
        return {f: i for i, f in enumerate(self.by_flag)}


_DEPRECATED_LEAD = re.compile(r"^\W*deprecated\b", re.IGNORECASE)
_DEPRECATED_VERB = re.compile(r"\s+(?:is|has been|was)\s+(?:now\s+)?deprecated\b", re.IGNORECASE)
_THIS = ("this option", "this flag", "this argument", "this parameter")


def deprecated_by_help(help_text: str, flags: tuple[str, ...], dest: str) -> bool:
    """Whether the help text says, definitely, that THIS option is deprecated.

    "Deprecated. Use ..." / "(Deprecated: ...)" at the start, or "<flag or
    dest or this option> is/has been deprecated".  A future tense ("will be
    deprecated when ..."), a mention of another deprecated thing ("replaces
    the deprecated --x", "allow deprecated methods") is not a deprecation.
    """
    if "deprecated" not in help_text.lower():  # most help texts: skip building a per-option pattern
        return False
    if _DEPRECATED_LEAD.match(help_text):
        return True
    # "<subject>`? is deprecated": one shared pattern finds the verb, the text before it is compared with
    # the subjects (a pattern built per option cost a compile per option on every cold start)
    names = tuple(n.lower() for n in (*flags, dest, dest.replace("_", "-")) if n)
    for m in _DEPRECATED_VERB.finditer(help_text):
        before = help_text[: m.start()].lower()
        if before.endswith(_THIS) or before.removesuffix("`").endswith(names):
            return True
    return False


def option_from_dict(raw: dict[str, Any], where: str) -> Option:
    """One captured option as its frozen value (SourceError naming ``where`` when a key is missing)."""
    try:
        help_text = raw.get("help", "")
        flags = tuple(raw["flags"])
        return Option(
            flags=flags,
            dest=raw["dest"],
            action=raw["action"],
            nargs=raw.get("nargs"),
            const=raw.get("const"),
            default=raw.get("default"),
            type=raw.get("type", "str"),
            optional=bool(raw.get("optional", False)),
            normalize=raw.get("normalize"),
            choices=tuple(raw["choices"]) if raw.get("choices") is not None else None,
            json_class=raw.get("json_class"),
            negation=tuple(raw.get("negation", ())),
            deprecated=bool(raw.get("deprecated")) or deprecated_by_help(help_text, flags, raw["dest"]),
            help=help_text,
            config_field=raw.get("config_field"),
            startup=raw.get("startup"),
        )
    except KeyError as exc:
        from launchcard.errors import SourceError

        raise SourceError(f"flag spec option lacks key {exc}", where=where, fix="re-capture the spec") from None


def spec_from_dict(raw: dict[str, Any], where: str = "<spec>") -> FlagSpec:
    if raw.get("schema") != SCHEMA:
        from launchcard.errors import SourceError

        raise SourceError(
            f"not a flag spec (schema {raw.get('schema')!r})",
            where=where,
            fix=f"capture one with `launchcard flags capture`; expected schema {SCHEMA}",
        )
    return assemble_spec(raw, tuple(option_from_dict(o, where) for o in raw["options"]),
                         tuple(option_from_dict(o, where) for o in raw.get("positionals", [])), where)


def assemble_spec(raw: dict[str, Any], options: tuple[Option, ...], positionals: tuple[Option, ...],
                  where: str) -> FlagSpec:
    """The spec whose scalar and table fields ``raw`` holds and whose options are already decoded (the shipped
    pack decodes each distinct option once for every release that has it)."""
    return FlagSpec(
        engine=raw["engine"],
        version=raw["version"],
        nightly=bool(raw.get("nightly")),
        dialect=raw.get("dialect", "argparse"),
        prefix_chars=raw.get("prefix_chars", "-"),
        allow_abbrev=bool(raw.get("allow_abbrev", True)),
        command_prefix=tuple(raw.get("command_prefix", ())),
        options=options,
        positionals=positionals,
        json_classes=raw.get("json_classes", {}),
        registries={k: tuple(v) for k, v in raw.get("registries", {}).items()},
        plugin_flags=dict(raw.get("plugin_flags", {})),
        source=where,
        envs=dict(raw.get("envs", {})),
        captured_by=dict(raw.get("captured_by", {})),
    )


def version_key(version: str) -> tuple[int, ReleaseKey | tuple[()], str]:
    """:func:`release_key` made total for sorting captured releases: '0.9.2' < '0.10.0' < '0.32.0rc1' < '0.32.0' <
    '0.32.0.post1'; what is no release (``nightly``) sorts before every release, by its text."""
    key = release_key(version)
    return (1, key, "") if key is not None else (0, (), version.partition("+")[0])
