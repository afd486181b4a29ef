"""What an engine's help text (or config docstring) says about each of a flag's choices, verbatim.

Used by ``scripts/capture_value_docs.py``.  A help text describes a value where it leads a clause with it
(quoted, as engines quote choices) and says something after it:

- ``"pt" will load the weights in the pytorch bin format.`` (a sentence, a ``*``/``-`` bullet or a
  ``,``/``;``/``:``-separated clause that starts with the value; ``"a" and "b" ...`` describes both);
- ``'deep_gemm' (JIT-compiled; ...)`` (a parenthesis right after the value);
- ``'lru': Least Recently Used ...`` (a colon after the value);
- a sentence that names exactly one of the choices anywhere (``The 'torch' backend currently requires ...``).

A bare list (``Options: 'a', 'b', 'c'.``, ``Supports 'a' and 'b'.``) describes none of them.  The segment
kept is the engine's own text, cut at the end of its sentence (or its closing parenthesis); nothing is
reworded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_QUOTED = re.compile(r"""(['"`])([^'"`\s]{1,80}?)\1""")
_JOIN = re.compile(r"^\s*(?:,|and|or|/|,\s*and|,\s*or)\s*$")
# a sentence ends at . ! ? followed by space, a quote or the end ("e.g." and "i.e." do not end one)
_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?](?=\s|['\"`]|$)")
_LEADS = ".;:*-,"


def first_sentence(text: str) -> str:
    """A docstring's first sentence (of its first paragraph; a paragraph that ends in a colon keeps the
    first item it introduces)."""
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if not paras:
        return ""
    flat = " ".join(paras[0].split())
    m = re.search(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s+[A-Z(\[`-])", flat)
    out = flat[: m.start() + 1] if m else flat
    if out.endswith(":") and len(paras) > 1:
        item = re.split(r"\n\s*-\s", "\n" + paras[1].strip())[1:2] or [paras[1]]
        out = f"{out} {first_sentence(item[0])}"
    return out


def _sentence_end(text: str, start: int) -> int:
    """The index just past the sentence end at or after ``start`` (parentheses are never cut)."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and _END.match(text, i):
            return i + 1
    return len(text)


def _paren_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


_AND = re.compile(r"[,;]\s*(?:and|or)$")
_TAIL = re.compile(r"(?:[\s,;]+(?:and|or))?[\s,;]*$")


def _is_lead(text: str, at: int) -> bool:
    """Whether the value at ``at`` starts a sentence, bullet or clause (``, and 'slow' will ...``)."""
    before = text[:at].rstrip()
    return (not before or before[-1] in _LEADS or before.endswith(('."', ".'", ".`"))
            or _AND.search(before) is not None)


def _clause_lead(text: str, at: int) -> bool:
    """A lead that starts a new clause inside a sentence (after ``,`` ``;`` ``:`` or ``, and``)."""
    before = text[:at].rstrip()
    return before[-1:] in (",", ";", ":") or _AND.search(before) is not None


def _clause_stop(text: str, occ: list[tuple[int, int, str]], j: int, end: int) -> int:
    """Where the clause from ``end`` stops: its sentence's end, or the next value that leads a clause."""
    stop = _sentence_end(text, end)
    nxt = next((o for o in occ[j:] if end <= o[0] < stop and _clause_lead(text, o[0])), None)
    return nxt[0] if nxt is not None else stop


def value_segments(text: str, choices: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Choice -> (the help's own words about it, the offset in ``text`` of the value's quote)."""
    wanted = {str(c) for c in choices}
    occ = [(m.start(), m.end(), m.group(2)) for m in _QUOTED.finditer(text) if m.group(2) in wanted]
    found: dict[str, list[tuple[str, int]]] = {}

    def add(values: list[str], segment: str, at: int) -> None:
        segment = _TAIL.sub("", " ".join(segment.split()))  # a clause cut before ", and 'next' ..."
        if segment:
            for v in values:
                found.setdefault(v, []).append((segment, at))

    i = 0
    described: set[int] = set()
    while i < len(occ):
        start, end, value = occ[i]
        group = [value]
        listed = False  # a comma among the joins: a list ('a', 'b' (what b is)), not a conjunction
        j = i + 1
        while j < len(occ) and _JOIN.match(text[occ[j - 1][1]:occ[j][0]]):
            listed = listed or "," in text[occ[j - 1][1]:occ[j][0]]
            group.append(occ[j][2])
            end = occ[j][1]
            j += 1
        rest = text[end:]
        if rest.lstrip().startswith("("):  # 'value' (what it is)
            stop = end + (len(rest) - len(rest.lstrip())) + _paren_end(rest.lstrip(), 0)
            if re.match(r"\s+(?!(?:and|or)\b)[a-z]", text[stop:]):  # 'none' (default) disables the canary.
                stop = _clause_stop(text, occ, j, stop)
            if listed:  # the parenthesis is the last value's only
                start, group, i = occ[j - 1][0], [occ[j - 1][2]], j - 1
            add(group, text[start:stop].rstrip(" ,;"), start)
            described.update(range(i, j))
        elif _is_lead(text, start) and len(rest.strip()) > 1:
            stop = _clause_stop(text, occ, j, end)
            segment = text[start:stop].rstrip(" ,;")
            if len(segment) - (end - start) > 2 and not _JOIN.match(segment[end - start:]):
                add(group, segment, start)
                described.update(range(i, j))
        i = j
    # a sentence naming exactly one choice describes it, where no clause of its own did
    pos = 0
    while pos < len(text):
        stop = _sentence_end(text, pos)
        inside = [k for k, o in enumerate(occ) if pos <= o[0] < stop]
        names = {occ[k][2] for k in inside}
        if len(names) == 1 and not any(k in described for k in inside):
            (name,) = names
            if name not in found:
                add([name], text[pos:stop], occ[inside[0]][0])
        pos = stop
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return {v: (" ".join(s for s, _ in segs), segs[0][1]) for v, segs in found.items()}


def line_of(source_lines: list[str], first: int, last: int, value: str, fallback: int) -> int:
    """The source line (1-based) between ``first`` and ``last`` holding ``value`` quoted, else ``fallback``."""
    needles = (f"'{value}'", f'"{value}"', f"`{value}`", f"\\'{value}\\'", f'\\"{value}\\"')
    for n in range(first, min(last, len(source_lines)) + 1):
        if any(s in source_lines[n - 1] for s in needles):
            return n
    return fallback
