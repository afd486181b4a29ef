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
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

# the releases and their source strings (tests read Release and _templated here)
from engine_sources import _HINT, Release, _templated, releases  # noqa: E402,F401

from launchcard import atomicfile  # noqa: E402
from launchcard.flags._ranges import derive_env_ranges, derive_ranges  # noqa: E402
from launchcard.flagspec import FlagSpec, Option, shipped_index, shipped_spec, version_key  # noqa: E402

_TARGET = (r"`?'?(--[\w.{},-]+(?:[ =](?:'[^']*'|`[^`]*`|<[^>]+>|[^\s`'.,;)]+))?|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
           r"|[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)?)`?'?")
_PATTERNS = (
    re.compile(r"[Pp]lease\s+instead\s+use\s+" + _TARGET),
    re.compile(r"(?:[Pp]lease\s+)?[Uu]se\s+" + _TARGET + r"\s+instead"),
    re.compile(r"replaced\s+(?:with|by)\s+" + _TARGET),
    re.compile(r"[Dd]eprecated[,:.]?\s+use\s+" + _TARGET),
    re.compile(r"[Ss]et\s+`?(--[\w-]+)`?\s+to\s+'([^']+)'\s+instead"),
    re.compile(r"[Rr]eplace\s+this\s+option\s+with\s+" + _TARGET),
    re.compile(r"renamed\s+to\s+" + _TARGET),
)
# looser wordings, read only in a text that itself says the name is deprecated, removed or renamed:
# "Please use the --all2all-backend command-line argument instead", "... removed in v0.23. Use --linear-backend
# fbgemm." (a sentence that starts with Use), "Please use --attention-config.backend command line argument"
_DEPRECATION = re.compile(r"deprecat|removed|renamed|replaced", re.IGNORECASE)
_LOOSE = (
    re.compile(r"[Pp]lease\s+use\s+(?:the\s+)?" + _TARGET),
    re.compile(r"(?:^|[.!;:]\s+)[Uu]se\s+(?:the\s+)?" + _TARGET),
    re.compile(r"(?:^|[.!;:]\s+)[Pp]ass\s+" + _TARGET + r"\s+(?:directly|instead)"),
)
# "Please set `--ep-size` to the same value as `--tp-size` instead" (SGLang's --enable-ep-moe)
_SAME_AS = re.compile(r"[Ss]et\s+`?(--[\w-]+)`?\s+to\s+the\s+same\s+value\s+as\s+`?(--[\w-]+)`?")
# an environment variable named as the replacement ("Use VLLM_TRITON_USE_TD instead")
_ENV_TARGET = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")
# words a loose wording puts after a flag that are not its value
_NOT_VALUES = {"command", "command-line", "commandline", "cli", "argument", "arguments", "option", "options",
               "flag", "flags", "instead", "or", "and", "to", "with", "in", "for", "config", "field", "directly",
               "e", "eg", "which", "that", "if", "when", "the", "a", "an"}
_THIS_OPTION = re.compile(r"[Rr]eplace\s+this\s+option\s+with\s+" + _TARGET)




# ---------------------------------------------------------------- target normalisation


def _mentions(text: str, name: str, dest: str | None) -> bool:
    if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
        return True
    if dest:
        return bool(re.search(rf"(?:`|'|^|\[DEPRECATED\]\s*){re.escape(dest)}(?:`|'|\s+(?:is|was|has)\b)", text))
    return False


def _is_bool(o: Option | None) -> bool:
    return o is not None and o.nargs == 0


# the variables of the release that last read each removed variable (``build`` sets it per engine): whether a
# variable is a 0/1 switch decides how its value is written in its successor
_LAST_ENVS: dict[str, Any] = {}


def _env_switch(name: str) -> bool:
    entry = _LAST_ENVS.get(name)
    return isinstance(entry, dict) and isinstance(entry.get("default"), bool)


def _value(o: Option | None, name: str) -> str:
    """The JSON value a flag given as ``name`` stands for (bool switches are written out; BOOL is a 0/1
    variable's value as JSON true/false)."""
    if _is_bool(o):
        return "false" if name.startswith("--no-") or (o is not None and o.action == "store_false") else "true"
    if o is None and not name.startswith("-") and _env_switch(name):
        return "BOOL"
    return "VALUE"


def _given(raw: str, o: Option) -> str | None:
    """The value a wording writes after flag ``o`` when it is one: quoted, ``=value``, ``<placeholder>``, a
    number, or one of the option's choices; "" when the words after the flag are prose ("command-line
    argument", "(e.g. a, b)"); None when they name a value the option does not take."""
    quoted = raw[:1] in ("'", "`", "<") or raw.startswith("=")
    value = raw.lstrip("=").strip("`")
    if not value or value.strip("'").lower().strip("().") in _NOT_VALUES or value.startswith("("):
        return ""
    if quoted or re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return value
    if o.choices:
        return value if value in {str(c) for c in o.choices} else None
    return value if o.type in ("str", "json_or_str") and re.fullmatch(r"[\w.:/-]+", value) else ""


def _normalise(raw: str, value: str | None, name: str, old: Option | None, new: FlagSpec,
               scope: str) -> str | None:
    """The full replacement text in ``new`` for ``raw`` (as the evidence writes it), or None when not there.

    ``VALUE`` in the result stands for the value given with the old flag (or variable) where the new option
    takes the same kind of value; ``<value>`` where the user has to choose one (a switch replaced by an
    option with choices, and the evidence names none)."""
    raw = raw.strip("`'").rstrip(".")
    if _ENV_TARGET.match(raw) and not name.startswith("-"):  # a variable renamed (VLLM_TRITON_USE_TD)
        return raw + "=VALUE" if raw in new.envs and raw != name else None
    if raw.startswith("--"):
        braces = re.match(r"^(--[\w-]*)\{([\w,]+)\}([\w-]*)(=.*)?$", raw)
        if braces:  # --cuda-graph-backend-{decode,prefill}=disabled
            parts = [_normalise(braces.group(1) + alt + braces.group(3) + (braces.group(4) or ""), value, name, old,
                                new, scope) for alt in braces.group(2).split(",")]
            return " ".join(p for p in parts if p) if all(parts) else None
        sep = re.search(r"[ =]", raw)
        flag, written = (raw[:sep.start()], raw[sep.start():].lstrip(" ")) if sep else (raw, "")
        if "." in flag:  # --logging-config.pylogging_config_file: a field of a JSON option
            head, field = flag.split(".", 1)
            head = "--" + head[2:].replace("_", "-")  # vLLM reads --quantization_config as --quantization-config
            shown = written.lstrip("=").strip() if written[:1] in ("'", "`", "=") or (
                written and written.lower().strip("().") not in _NOT_VALUES) else None
            return _json_field(new.by_flag.get(head), field, name, old, new, shown or None)
        o = new.by_flag.get(flag)
        if o is None:
            return None
        if "{" in written and "}" in written:  # f-string: --hf-overrides '{hf_overrides_str}'
            key = _dict_key(scope, old.dest if old else "")
            return f"{flag} '{{\"{key}\": {_value(old, name)}}}'" if key else None
        given = _given(written, o) if written else value or ""
        if given is None:
            return None
        if _is_bool(old) and _is_bool(o) and not given:
            return _sense(name, o, flag)
        if given in ("%d", "%s", "%r"):
            given = "VALUE"
        if not given and o.nargs != 0:
            given = "VALUE" if _carries(old, name, o, new) else "<value>"
        return f"{flag} {given}".strip()
    if "." in raw:  # eplb_config.window_size
        cfg, field = raw.split(".", 1)
        return _json_field(new.by_dest.get(cfg), field, name, old, new)
    o = new.by_dest.get(raw)
    if o is None:
        return None
    if _is_bool(old) and _is_bool(o):
        return _sense(name, o, o.name)
    return o.name + ("" if o.nargs == 0 else " VALUE" if _carries(old, name, o, new) else " <value>")


def _carries(old: Option | None, name: str, o: Option, new: FlagSpec) -> bool:
    """Whether the value given with the old flag (or variable) is a value of its successor ``o``.

    A switch carries no value; a variable carries one where it is not a 0/1 switch and, where ``o`` has
    choices, the variable's own choices are among them."""
    if old is not None:
        return not _is_bool(old)
    if name.startswith("-"):
        return True
    if _env_switch(name):
        return False
    entry = _LAST_ENVS.get(name)
    mine = entry.get("choices") if isinstance(entry, dict) else None
    if o.choices:
        return bool(mine) and {str(c) for c in mine} <= {str(c) for c in o.choices}
    return True


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


def _json_field(o: Option | None, field: str, name: str, old: Option | None, new: FlagSpec,
                given: str | None = None) -> str | None:
    """``--x-config '{"field": VALUE}'`` where ``o``'s config class has ``field`` (a dotted path is nested:
    ``moe.activation`` of a field typed ``any``); None otherwise."""
    if o is None or not o.json_class:
        return None
    fields = (new.json_classes.get(o.json_class) or {}).get("fields") or {}
    head, _, rest = field.partition(".")
    info = fields.get(head)
    if info is None or (rest and (info.get("t") if isinstance(info, dict) else None) not in ("any", "dict")):
        return None
    if given is not None:
        value = given if given in ("true", "false") or re.fullmatch(r"-?\d+(?:\.\d+)?", given) \
            else json.dumps(given.strip("'`"))
    else:
        value = _value(old, name)
        allowed = _literals(info)
        if value == "VALUE" and allowed is not None and not _choices_within(old, name, allowed):
            # the old values need not be the field's: the given value is kept only where the field allows it
            value = "VALUE{" + "|".join(sorted(allowed)) + "}"
    for key in reversed(rest.split(".") if rest else []):
        value = f'{{"{key}": {value}}}'
    return f"{o.name} '{{\"{head}\": {value}}}'"


def _literals(info: Any) -> set[str] | None:
    """The values a config field's type allows, where it is a literal (or a literal or None)."""
    if not isinstance(info, dict):
        return None
    if info.get("t") == "literal":
        return {str(v) for v in info.get("values", ())}
    if info.get("t") == "union":
        parts = [_literals(x) for x in info.get("of", ()) if not (isinstance(x, dict) and x.get("t") == "null")]
        if parts and all(p is not None for p in parts):
            return set().union(*[p for p in parts if p is not None])
    return None


def _choices_within(old: Option | None, name: str, allowed: set[str]) -> bool:
    if old is not None:
        return bool(old.choices) and {str(c) for c in old.choices or ()} <= allowed
    entry = _LAST_ENVS.get(name)
    mine = entry.get("choices") if isinstance(entry, dict) else None
    return bool(mine) and {str(c) for c in mine} <= allowed


def _dict_key(scope: str, dest: str) -> str | None:
    m = re.search(r"\{\s*[\"'](\w+)[\"']\s*:\s*self\." + re.escape(dest) + r"\s*\}", scope)
    return m.group(1) if m else None


# ---------------------------------------------------------------- evidence per flag


def _uses_in(text: str, name: str, dest: str | None, old: Option | None, new: FlagSpec, scope: str) -> list[str]:
    """Every replacement ``text`` names for ``name`` (one per value where it lists several)."""
    out: list[str] = []
    loose = _LOOSE if _DEPRECATION.search(text) else ()
    for pat in (*_PATTERNS, *loose):
        for m in pat.finditer(text):
            raw = m.group(1) + (f"={m.group(2)}" if m.lastindex and m.lastindex > 1 else "")
            if raw.strip("`'") in (name, dest):
                continue
            use = _normalise(raw, None, name, old, new, scope)
            if not use:
                continue
            rest = text[m.end():]
            # "Use --moe-backend flashinfer_trtllm with --quantization_config.moe.activation mxfp8": both, or none
            both = re.match(r"\s+with\s+" + _TARGET, rest)
            if both:
                second = _normalise(both.group(1), None, name, old, new, scope)
                if not second:
                    continue
                use, rest = f"{use} {second}", rest[both.end():]
            out.append(use)
            # "Use --moe-backend flashinfer_trtllm, flashinfer_cutlass, or flashinfer_cutedsl" (one per value),
            # "Use --moe-backend marlin or --linear-backend marlin" (one per layer kind): each is a replacement
            flag, _, given = use.partition(" ")
            o = new.by_flag.get(flag)
            while True:
                more = re.match(r"\s*(?:,\s*(?:or\s+)?|\s+or\s+)" + _TARGET, rest)
                if not more:
                    break
                word = more.group(1).rstrip(".")
                if word.startswith("--"):
                    alt = _normalise(word, None, name, old, new, scope)
                elif o is not None and o.choices and given and word in {str(c) for c in o.choices}:
                    alt = f"{flag} {word}"
                else:
                    break
                if not alt:
                    break
                out.append(alt)
                rest = rest[more.end():]
    if _DEPRECATION.search(text):
        for m in _SAME_AS.finditer(text):  # set --ep-size to the same value as --tp-size
            if m.group(1) in new.by_flag and m.group(2) in new.by_flag:
                out.append(f"{m.group(1)} <the value of {m.group(2)}>")
    return list(dict.fromkeys(out))  # one wording matched by two patterns is one piece of evidence


def _candidates(name: str, dest: str | None, old: Option | None, new: FlagSpec,
                rels: list[Release], specs: list[FlagSpec]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def add(uses: list[str], kind: str, release: str, path: str, line: int | None, text: str,
            rel: Release | None) -> None:
        for use in uses:
            found.append({"use": use, "kind": kind, "release": release, "file": path, "line": line,
                          "text": " ".join(text.split()),
                          **({"wheel": rel.wheel, "sha256": rel.sha256} if rel is not None else {})})

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
                        add([use] if use else [], "source", rel.version, path, line, text, rel)
                continue
            add(_uses_in(text, name, dest, old, new, scope), "source", rel.version, path, line, text, rel)
        for path, line, code, cfg, field, src in rel.forwards:
            if not dest or src != dest:
                continue
            use = _json_field(new.by_dest.get(cfg), field, name, old, new)
            if use:
                add([use], "forward", rel.version, path, line, code, rel)
                continue
            # forwarded into a field the config class does not have (0.11.2's so_config.guided_decoding_backend):
            # the field the flag stored into when it was added is the one the engine means, where the config
            # it is forwarded into has that field
            for first_rel in rels:
                stored = first_rel.stored.get(name)
                if stored is None:
                    continue
                spath, sline, scode, sfield = stored
                use = _json_field(new.by_dest.get(cfg), sfield, name, old, new)
                if use:
                    add([use], "forward", rel.version, path, line,
                        f"{code} ({first_rel.version} {spath}:{sline}: {scode})", rel)
                break
    for spec in specs:
        o = spec.by_flag.get(name)
        if o is None or not o.help or not _HINT.search(o.help):
            continue
        add(_uses_in(o.help, name, dest, old, new, ""), "help", spec.version,
            f"{spec.engine} {spec.version} parser help of {name} (captured spec)", None, o.help, None)
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


def _verdict(found: list[dict[str, Any]]) -> dict[str, Any]:
    """One successor where every piece of evidence names the same; several: the engine names one per value
    (none is THE successor); none: ``use`` null."""
    uses = sorted({f["use"] for f in found})
    if len(uses) == 1:
        return {"use": uses[0], "evidence": found[0]}
    if uses:
        # the engine names one replacement per value: none is THE successor
        return {"use": None, "ambiguous": uses, "evidence": found[0]}
    return {"use": None}


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
        flags[name] = {"last": r.last, "removed_in": r.removed_in, "deprecated_from": r.deprecated_from,
                       **_verdict(found)}
    envs: dict[str, Any] = {}
    for name, r in sorted(derive_env_ranges(specs).items()):
        if not r.removed_in:
            continue
        _LAST_ENVS.clear()
        _LAST_ENVS.update(by_version[r.last].envs)
        new = by_version[r.removed_in]
        window = [rel for rel in rels if version_key(r.first) <= version_key(rel.version) <= version_key(new.version)]
        found = _candidates(name, None, None, new, window, [])
        envs[name] = {"last": r.last, "removed_in": r.removed_in, **_verdict(found)}
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
    atomicfile.write_text(args.out, json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
