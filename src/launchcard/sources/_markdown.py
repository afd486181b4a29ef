"""Just enough Markdown/MDX structure for launch commands: fences, headings, tables.

Commands live in fenced code blocks; what they are for lives in the headings,
``<Accordion title=...>`` wrappers and the block's own title around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from launchcard.sources._base import SourceDoc

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ACCORDION = re.compile(r"<Accordion\s+title=\"([^\"]*)\"")
_ACCORDION_END = re.compile(r"</Accordion>")


@dataclass(frozen=True)
class Block:
    lang: str
    title: str
    start: int  # 1-based line of the opening fence
    lines: tuple[str, ...]
    heading: str = ""
    accordion: str = ""
    before: str = ""  # the prose just above the block

    @property
    def first_line(self) -> int:
        return self.start + 1


@dataclass
class _State:
    heading: str = ""
    accordion: str = ""
    prose: list[str] = field(default_factory=list)


def blocks(doc: SourceDoc) -> list[Block]:
    """Every fenced block with its context; SourceError on an unclosed fence or front matter."""
    lines = doc.lines
    if lines and lines[0].strip() == "---" and not any(line.strip() == "---" for line in lines[1:]):
        raise doc.error("truncated document: front matter opened at line 1 never closes", line=1,
                        fix="restore the complete page")
    out: list[Block] = []
    state = _State()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            fence = m.group(2)
            info = m.group(3).strip()
            lang, _, title = info.partition(" ")
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j])
                j += 1
            if j >= len(lines):
                raise doc.error(f"truncated document: code fence {fence}{info} opened here never closes",
                                line=i + 1, fix="restore the complete page (the text ends inside a code block)")
            out.append(Block(lang=lang.lower(), title=title.strip(), start=i + 1, lines=tuple(body),
                             heading=state.heading, accordion=state.accordion,
                             before=" ".join(state.prose[-6:])))
            i = j + 1
            continue
        h = _HEADING.match(line)
        if h:
            state.heading = h.group(2)
            state.prose = []
        a = _ACCORDION.search(line)
        if a:
            state.accordion = a.group(1)
        elif _ACCORDION_END.search(line):
            state.accordion = ""
        if line.strip() and not h:
            state.prose.append(line.strip())
        i += 1
    return out


def tables(doc: SourceDoc) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """Pipe tables: (header line, header cells, [(line, cells), ...])."""
    lines = doc.lines
    out = []
    i = 0
    while i + 1 < len(lines):
        if lines[i].lstrip().startswith("|") and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = _cells(lines[i])
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append((j + 1, _cells(lines[j])))
                j += 1
            out.append((i + 1, header, rows))
            i = j
            continue
        i += 1
    return out


def _cells(line: str) -> list[str]:
    parts = line.strip().strip("|").split("|")
    return [p.strip().replace("**", "") for p in parts]
