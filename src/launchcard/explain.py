"""What each flag of a launch command does, and where that sentence comes from.

One line per flag, from the best source there is, in this order:

1. the recipe's own words: the description of the feature or mode that put the
   flag there (``features.reasoning.description`` ...);
2. the engine's captured ``--help`` text for that release (``data/flags``), cut
   to its first sentence; a dotted JSON key (``--speculative-config.method``)
   gets its parent flag's sentence with the key named;
3. an explicit "no description" — never an invented one.

And one line for the chosen VALUE (:func:`explain_value`), from the engine's own description of its
choices as shipped in ``data/values/<engine>-<version>.json`` (built from the release's source by
``scripts/capture_value_docs.py``: config-field enumerations such as ``--load-format``'s, help-text
clauses that lead with a value, the tool and reasoning parser registries, quantization methods, attention
backends, load formats, speculative methods, the comments on SGLang's choice lists), each with the file
and line it was read from; the recipe's feature or mode text for the flag is the recipe's own reason for
the value; where neither says anything about the value: "no value-specific description".

Standard library only: ``resolve --explain`` is on the CLI's start-up path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from launchcard.argv import parse_command, resolve_flag
from launchcard.datadir import data_path
from launchcard.flagspec import FlagSpec, Option, shipped_spec, version_key

NO_DESCRIPTION = "no description"
NO_VALUE_DESCRIPTION = "no value-specific description"

NoteSource = Literal["recipe", "engine-help", "none"]
ValueSource = Literal["engine-source", "recipe", "none"]

# Sentence end: a full stop, ! or ? followed by space and a capital, an opening
# bracket or a quote (SGLang's help texts start a sentence with a quoted choice).
# Abbreviations such as "e.g. foo" stay inside the sentence.
_SENTENCE_END = re.compile(r"(?<![A-Za-z]\.[a-z])(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s+[A-Z(\[`\"'])")
_MAX_LEN = 200


@dataclass(frozen=True, slots=True)
class FlagNote:
    """One flag, its value and what it does."""

    flag: str  # as written in the command (``--x.y`` keeps its key)
    value: str | None  # None for a flag without a value
    what: str  # one line; NO_DESCRIPTION when no source says
    source: NoteSource
    cited: str | None = None  # e.g. "vllm 0.32.0 --help" or "recipe features.reasoning"
    value_what: str | None = None  # what the chosen value does; NO_VALUE_DESCRIPTION; None: no value to explain
    value_source: ValueSource = "none"
    value_cited: str | None = None  # e.g. "vllm 0.31.0 vllm/config/load.py#L51"
    value_url: str | None = None  # the engine source line, pinned to the release's tag

    def text(self) -> str:
        """The whole explanation on one line: the flag's sentence, then the value's, each with its source."""
        out = f"{self.what} [{self.cited}]" if self.cited else self.what
        if self.value_what:
            out += f" {self.value_what}" + (f" [{self.value_cited}]" if self.value_cited else "")
        return out


def full_stop(text: str) -> str:
    """``text`` ending as a sentence does (a full stop added where it has none), so another can follow."""
    text = text.rstrip()
    return text + "." if text and not text.endswith((".", "!", "?", "…")) else text


def first_sentence(text: str) -> str:
    """The first sentence of a help text, on one line, at most ~200 characters."""
    flat = " ".join(text.split())
    m = _SENTENCE_END.search(flat)
    out = flat[: m.start() + 1] if m else flat
    out = out.rstrip(":; ")
    if len(out) > _MAX_LEN:
        cut = out[:_MAX_LEN].rsplit(" ", 1)[0]
        out = cut.rstrip(",;:") + "…"
    return full_stop(out)


def _lookup(spec: FlagSpec, flag: str) -> tuple[Option | None, str | None, str]:
    """The option a flag belongs to (as the engine's parser reads the name), the JSON key of a dotted
    flag, and the canonical spelling."""
    name, _, key = flag.split("=", 1)[0].partition(".")
    _, opt, canonical = resolve_flag(name, spec)
    return opt, (key or None), canonical


def engine_spec(engine: str, version: str | None = None) -> FlagSpec | None:
    """The captured parser spec for ``engine`` (newest shipped when no version)."""
    try:
        return shipped_spec(engine, version)
    except Exception:  # noqa: BLE001 -- any unknown engine/version simply has no help text to offer
        return None


def explain_flag(flag: str, value: str | None, *, spec: FlagSpec | None,
                 recipe: Mapping[str, str] | None = None, recipe_where: Mapping[str, str] | None = None) -> FlagNote:
    """Explain one flag and its value; ``recipe`` maps a flag to the recipe's own sentence for it."""
    note = _explain_flag(flag, value, spec, recipe, recipe_where)
    if value is None:
        return note
    from dataclasses import replace

    engine = spec.engine if spec is not None else "vllm"
    what, source, cited, url = explain_value(flag, value, engine=engine, spec=spec,
                                             recipe_said=note.source == "recipe")
    return replace(note, value_what=what, value_source=source, value_cited=cited, value_url=url)


def _explain_flag(flag: str, value: str | None, spec: FlagSpec | None, recipe: Mapping[str, str] | None,
                  recipe_where: Mapping[str, str] | None) -> FlagNote:
    if recipe:
        base = flag.split("=", 1)[0]
        for key in (base, base.split(".", 1)[0]):
            text = recipe.get(key)
            if text:
                where = (recipe_where or {}).get(key)
                return FlagNote(flag, value, first_sentence(text), "recipe", where)
    if spec is not None:
        opt, json_key, canonical = _lookup(spec, flag)
        if opt is not None and opt.help.strip():
            what = first_sentence(opt.help)
            if json_key:
                what = f"{what.rstrip('.')} (key {json_key})."
            elif canonical in opt.negation:
                what = f"Turns off: {what[0].lower()}{what[1:]}" if what else what
            return FlagNote(flag, value, what, "engine-help", f"{spec.engine} {spec.version} --help")
    return FlagNote(flag, value, NO_DESCRIPTION, "none", None)


# -- what a chosen value does -----------------------------------------------------------------

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_PLACEHOLDER = re.compile(r"^\$[A-Z][A-Z0-9_]*$")


def _values_dir() -> Path:
    return data_path("values")


@cache
def value_docs(engine: str, version: str | None = None) -> dict[str, Any] | None:
    """The shipped value descriptions of ``engine`` (``data/values``): those of ``version`` where that
    release was captured, else the newest (each entry cites its own release), or None."""
    files = sorted(_values_dir().glob(f"{engine}-*.json"), key=lambda p: version_key(p.stem.removeprefix(f"{engine}-")))
    if not files:
        return None
    exact = [p for p in files if version and p.stem == f"{engine}-{version}"]
    data: dict[str, Any] = json.loads((exact or files)[-1].read_text(encoding="utf-8"))
    return data


def _canonical(flag: str, spec: FlagSpec | None) -> tuple[str, str | None]:
    name, _, key = flag.split("=", 1)[0].partition(".")
    if spec is not None:
        _, opt, canonical = resolve_flag(name, spec)
        if opt is not None:
            name = opt.flags[0] if canonical not in opt.negation else canonical
    return name, (key or None)


def explain_value(flag: str, value: str, *, engine: str = "vllm", spec: FlagSpec | None = None,
                  recipe_said: bool = False) -> tuple[str | None, ValueSource, str | None, str | None]:
    """(what the value does, source, citation, URL) for ``flag value``; (None, ...) for a number, which
    the flag's own sentence explains; NO_VALUE_DESCRIPTION where the engine describes no such value
    (the recipe's sentence, when ``recipe_said``, is then the only reason given)."""
    if _NUMBER.match(value) or value in ("true", "false") or _PLACEHOLDER.match(value):
        return None, "none", None, None  # a number or a deploy-time placeholder ($HEAD_IP) needs no description
    name, key = _canonical(flag, spec)
    docs = value_docs(engine, spec.version if spec is not None and spec.engine == engine else None)
    tables: Mapping[str, Mapping[str, Any]] = (docs or {}).get("flags", {})
    # a JSON object (--speculative-config '{"method": "mtp", ...}'): each key the engine enumerates, in order
    picks = [(key, value)]
    if key is None and value.lstrip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            picks = [(k, v) for k, v in parsed.items() if isinstance(v, str) and f"{name}.{k}" in tables]
    found = []
    for k, choice in picks:
        table = tables.get(f"{name}.{k}" if k else name, {})
        entry = table.get(choice) or table.get(choice.upper()) or table.get(choice.lower())
        if entry is not None and docs is not None:
            found.append((_value_text(choice, k, entry, docs), _value_cite(docs, entry)))
    if found:
        text = " ".join(t for t, _ in found)
        return text, "engine-source", *found[0][1]
    if recipe_said:
        return None, "recipe", None, None
    return NO_VALUE_DESCRIPTION, "none", None, None


def _value_text(choice: str, key: str | None, entry: Mapping[str, Any], src: Mapping[str, Any]) -> str:
    """The engine's words about the value, each secondary sentence with the line it was read from.

    Entry kinds (``scripts/capture_value_docs.py``): a config field's bullet (``field``), a clause of the
    flag's help text (``kind: help``), a registry's class and its docstring (``cls``; ``when``: the
    platform test it is registered under; ``check``/``deprecated``: what the registry's factory asserts
    or warns), an enum member or ``Literal`` group (``enum``/``group``), an alias, a bare choice; and a
    comment the engine's choice list carries on the value (``comment``)."""
    label = f"{key}={choice}" if key else choice
    text = str(entry["text"]).strip() if entry.get("text") else None
    comment = entry.get("comment")
    said = text or (comment or {}).get("text")
    if text and (entry.get("field") or entry.get("kind") in ("help", "alias")):
        starts = key is None and text.startswith((choice, f'"{choice}"', f"'{choice}'", f"`{choice}`"))
        out = text if starts else f"{label}: {text}"  # the engine's own clause about the value
    elif entry.get("cls"):
        where = f", registered only when {entry['when']}" if entry.get("when") else ""
        of = "the docstring of the module of engine class" if entry.get("module_doc") else "engine class"
        out = (f"{label}: {text.rstrip('.')} ({of} {entry['cls']}{where})" if text
               else f"{label}: engine class {entry['cls']}{where}")
    elif entry.get("enum"):
        out = f"{label}: the engine's enum member {entry['enum']}"
    elif entry.get("group"):
        out = f"{label}: listed in the engine's {entry['group']}"
    elif entry.get("kind") == "choice":
        out = f"{label}: one of the engine's choices for this flag"
    elif entry.get("factory"):
        out = f"{label}: built by the engine's factory {entry['factory']}"
    else:
        out = f"{label}: {text}" if text else label
    if not said:
        out += f": {NO_VALUE_DESCRIPTION}" if out == label else f"; {NO_VALUE_DESCRIPTION}"
    out = full_stop(out)
    if comment:
        c = full_stop(str(comment["text"]))
        out += f" The engine's choice list notes: {c}" + _secondary(src, comment, entry)
    for kind, word in (("check", "Engine check"), ("deprecated", "Deprecated")):
        if entry.get(kind):
            out += f" {word}: {full_stop(str(entry[kind]['text']))}" + _secondary(src, entry[kind], entry)
    return out


def _secondary(src: Mapping[str, Any], part: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """`` (file#L)`` for a sentence read from another line than the entry's own."""
    if part.get("path") == entry.get("path") and part.get("line") == entry.get("line"):
        return ""
    return f" ({part.get('path')}#L{part.get('line')})"


def _value_cite(docs: Mapping[str, Any], entry: Mapping[str, Any]) -> tuple[str, str | None]:
    src = docs.get("source") or {}
    if not entry.get("text") and entry.get("comment"):
        entry = entry["comment"]  # the only words about the value are the choice list's comment
    where = f"{entry['path']}#L{entry['line']}"
    cited = f"{docs.get('engine')} {docs.get('version')} {where}"
    url = f"{src['repo']}/blob/{src['ref']}/{where}" if src.get("repo") and src.get("ref") else None
    return cited, url


def split_flags(argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """(flag, value) pairs of a command's options as written, in argv order; positionals are skipped.

    Which words are options and which are their values is the one argv model's reading
    (:mod:`launchcard.argv`); this only lays its occurrences out for a table: a switch has no
    value, ``--x=v`` shows ``v``, each dotted ``--x.y v`` keeps its own row.
    """
    cmd = parse_command(argv)
    words = cmd.argv
    rows: list[tuple[int, str, str | None]] = []

    def row(i: int, switch: bool) -> None:
        word = words[i]
        if word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
            rows.append((i, name, value))
        elif switch or i + 1 >= len(words):
            rows.append((i, word, None))
        else:
            rows.append((i, word, words[i + 1]))

    for occ in cmd.occurrences:
        switch = isinstance(occ.value, bool) or occ.value is None
        if not occ.parts:
            row(occ.index, switch)
            continue
        for part in occ.parts:  # merged dotted keys: one row per --x.y as written
            at = next((j for j, w in enumerate(words) if w == part or w.startswith(part + "=")), None)
            if at is not None:
                row(at, False)
    return [(flag, value) for _, flag, value in sorted(rows)]


def explain_argv(argv: Sequence[str], *, engine: str, version: str | None = None,
                 recipe: Mapping[str, str] | None = None,
                 recipe_where: Mapping[str, str] | None = None) -> list[FlagNote]:
    """One note per option of ``argv`` (engine prefix and positionals skipped)."""
    spec = engine_spec(engine, version)
    return [explain_flag(f, v, spec=spec, recipe=recipe, recipe_where=recipe_where) for f, v in split_flags(argv)]


def recipe_flag_descriptions(features: Mapping[str, object], modes: Mapping[str, str] | None = None,
                             ) -> tuple[dict[str, str], dict[str, str]]:
    """Flag -> the recipe's sentence for it, from its features and their modes.

    A flag that a mode adds takes the mode's description (it is the more
    specific one); otherwise the feature's.  ``modes`` (feature -> selected
    mode, as a resolved plan records them) keeps other modes' sentences off a
    flag several modes share.  Returns (sentences, where), where ``where``
    names the recipe key each sentence was read from.
    """
    text: dict[str, str] = {}
    where: dict[str, str] = {}

    def add(args: object, desc: object, at: str) -> None:
        if not isinstance(desc, str) or not desc.strip() or not isinstance(args, list):
            return
        for tok in args:
            if isinstance(tok, str) and tok.startswith("--"):
                name = tok.split("=", 1)[0]
                text[name] = desc
                where[name] = at

    for name, feat in features.items():
        if not isinstance(feat, Mapping):
            continue
        add(feat.get("args"), feat.get("description"), f"features.{name}")
        feat_modes = feat.get("modes")
        if isinstance(feat_modes, Mapping):
            for mode, body in feat_modes.items():
                if modes is not None and name in modes and modes[name] != mode:
                    continue
                if isinstance(body, Mapping):
                    add(body.get("args"), body.get("description") or feat.get("description"),
                        f"features.{name}.modes.{mode}")
    return text, where


def markdown_table(notes: Iterable[FlagNote], origins: Mapping[str, str] | None = None) -> str:
    """The preset seed's flag table: flag, value, what it does, where it came from."""
    rows = ["| Flag | Value | What it does | Where it came from |", "|---|---|---|---|"]
    for n in notes:
        value = "(no value)" if n.value is None else f"`{_cell(n.value)}`"
        origin = (origins or {}).get(n.flag) or "—"
        what = n.what if n.source != "engine-help" else f"{n.what} ({n.cited})"
        if n.value_what:
            what += f" {n.value_what}" + (f" ({n.value_cited})" if n.value_cited else "")
        rows.append(f"| `{_cell(n.flag)}` | {value} | {_cell(what)} | {_cell(origin)} |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
