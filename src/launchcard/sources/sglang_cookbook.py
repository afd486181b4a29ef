"""SGLang cookbook pages (MDX) and deployment-panel data summaries.

Every launch command in a shell code block becomes one :class:`EngineEnv`:
leading ``VAR=value`` prefixes and ``export`` lines become its environment,
line continuations are joined, comments dropped, several commands per block
kept apart.  Hardware and role come from the block title, the enclosing
``<Accordion>``, the heading and the prose above it, where they say so.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from launchcard.argv import parse_command, split_env
from launchcard.card import EngineEnv, Fact
from launchcard.sources._base import (
    Adapter,
    Extract,
    SourceDoc,
    argv_facts,
    fact,
    find_line,
    flag_lines,
    hardware_in,
    is_repo_id,
    prose_param_facts,
)
from launchcard.sources._markdown import Block, blocks

SHELL_LANGS = {"", "bash", "shell", "sh", "console", "zsh"}
_LAUNCHERS = {"sglang.launch_server", "sglang_router.launch_router"}


def is_launch(argv: Sequence[str]) -> bool:
    if len(argv) >= 2 and argv[0] == "sglang" and argv[1] == "serve":
        return True
    return len(argv) >= 3 and argv[0] in ("python", "python3") and argv[1] == "-m" and argv[2] in _LAUNCHERS


def role_of(argv: Sequence[str], title: str) -> str:
    if "sglang_router.launch_router" in argv:
        return "router"
    cmd = parse_command(argv)
    mode = cmd.get_str("--disaggregation-mode")
    if mode in ("prefill", "decode"):
        return mode
    if cmd.has("--encoder-only"):
        return "encoder"
    t = title.lower()
    for word in ("prefill", "decode", "router", "encoder"):
        if t.startswith(word):
            return word
    return "single"


def logical_commands(doc: SourceDoc, block: Block) -> list[tuple[int, str]]:
    """(first line, text) of each command: continuations joined, comment lines dropped."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for offset, raw in enumerate(block.lines):
        lineno = block.first_line + offset
        stripped = raw.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # a comment between continued lines
        if not buf:
            start = lineno
        if stripped.endswith("\\"):
            buf.append(stripped[:-1].rstrip())
            continue
        buf.append(stripped)
        out.append((start, " ".join(b for b in buf if b)))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


class SGLangCookbook(Adapter):
    kind = "sglang-cookbook"
    folder = "sglang-cookbook"

    def files(self, root: Path) -> Iterable[Path]:
        for sub in sorted(p for p in root.iterdir() if p.is_dir()):
            yield from (f for f in sorted(sub.iterdir()) if f.is_file() and f.suffix in (".mdx", ".md"))

    def extract(self, doc: SourceDoc) -> Extract:
        lines = doc.lines
        warnings: list[str] = []
        envs: list[EngineEnv] = []
        facts: list[Fact] = []
        found = blocks(doc)
        image = _pulled_image(found)
        for block in found:
            if block.lang not in SHELL_LANGS:
                continue
            exported: dict[str, str] = {}
            for start, text in logical_commands(doc, block):
                try:
                    words = shlex.split(text, comments=True)
                except ValueError as exc:
                    raise doc.error(f"unbalanced quotes in code block command ({exc})", line=start,
                                    fix="close the quote in the command") from exc
                if not words:
                    continue
                if words[0] == "export":
                    for w in words[1:]:
                        if "=" in w:
                            k, v = w.split("=", 1)
                            exported[k] = v
                    continue
                env, argv = split_env(words)
                if not argv:
                    continue
                if re.match(r"^--?[a-z]", argv[0]):
                    warnings.append(f"{doc.kind} {doc.where(start)}: code block is not a command "
                                    f"(starts with flag {argv[0]!r}); skipped")
                    continue
                if not is_launch(argv):
                    continue
                holes = [t for t in argv if t.startswith("<") or t.endswith(">")]
                if holes:
                    warnings.append(f"{doc.kind} {doc.where(start)}: command has a placeholder "
                                    f"({' '.join(holes)}); skipped")
                    continue
                envs.append(self._env(doc, block, start, argv, {**exported, **env}, image))
                scope = envs[-1].hardware
                facts += argv_facts(doc, argv, line_of=flag_lines(lines, argv, start - 1), scope=scope)
        if doc.path.endswith(".md"):
            cell_envs, cell_facts = self._cells(doc)
            envs += cell_envs
            facts += cell_facts
        facts += self._prose_facts(doc)
        facts += prose_param_facts(doc, _models(doc, envs)[0] if envs else None, enumerate(lines, start=1))
        if not envs:
            raise doc.error("no launch command found in any code block", fix=(
                "a cookbook page must hold at least one `sglang serve` or "
                "`python -m sglang.launch_server` command"))
        models = _models(doc, envs)
        return Extract(doc=doc.ref(), models=models, facts=tuple(facts), envs=tuple(envs),
                       warnings=tuple(warnings))

    def _env(self, doc: SourceDoc, block: Block, start: int, argv: list[str], env: dict[str, str],
             image: str | None) -> EngineEnv:
        title = block.title
        hw, count = (None, None)
        for text in (title, block.accordion, block.heading, block.before):
            hw, count = hardware_in(text)
            if hw:
                break
        cmd = parse_command(argv)
        gpus = cmd.try_int("--tp-size", "--tp", "--tensor-parallel-size")
        if gpus is None and count and role_of(argv, title) == "single":
            gpus = count
        model = cmd.model_path()
        command = shlex.join(argv)
        if env:
            command = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + command
        notes = " / ".join(x for x in (block.accordion, title if title != "Command" else "") if x) or None
        return EngineEnv(engine="sglang", role=role_of(argv, title), checkpoint=model if is_repo_id(model) else None,
                         image=image, argv=tuple(argv), command=command, env=env, hardware=hw, gpus=gpus,
                         notes=notes, source=doc.ref(), evidence=doc.evidence(start))

    def _cells(self, doc: SourceDoc) -> tuple[list[EngineEnv], list[Fact]]:
        """Panel cells of a data summary: one env per (hardware, strategy, quant) cell."""
        envs: list[EngineEnv] = []
        facts: list[Fact] = []
        lines = doc.lines
        for block in blocks(doc):
            if block.lang != "json":
                continue
            try:
                data = json.loads("\n".join(block.lines))
            except ValueError as exc:
                raise doc.error(f"JSON block is not valid JSON ({exc})", line=block.start,
                                fix="repair the summary's JSON") from exc
            if not isinstance(data, dict):
                continue
            names = data.get("modelNames") or {}
            images = data.get("dockerImages") or {}
            for key, cells in data.items():
                if not key.startswith("cells") or not isinstance(cells, list):
                    continue
                for cell in cells:
                    match = cell.get("match") or {}
                    hw, variant, quant = match.get("hw"), match.get("variant"), match.get("quant")
                    model = _cell_lookup(names, hw, variant, quant)
                    flags: list[str] = []
                    for flag in cell.get("flags", []):
                        flag = (flag.replace("{{MODEL_NAME}}", model or "{{MODEL_NAME}}")
                                .replace("{{HOST_IP}}", "0.0.0.0").replace("{{PORT}}", "30000"))
                        flags += shlex.split(flag)
                    argv = ["sglang", "serve", *flags]
                    env = dict(e.split("=", 1) for e in cell.get("env", []) if "=" in e)
                    tp = parse_command(argv).try_int("--tp-size", "--tp")
                    line = find_line(lines, json.dumps(match, indent=None).strip("{}").split(",")[0],
                                     block.start) or find_line(lines, f'"hw": "{hw}"', block.start)
                    label = ", ".join(f"{k}={v}" for k, v in match.items())
                    envs.append(EngineEnv(
                        engine="sglang", role="single", checkpoint=model, argv=tuple(argv),
                        command=shlex.join(argv), env=env, image=_cell_lookup(images, hw, variant, quant),
                        hardware=hw, gpus=tp,
                        validated_hardware=(hw,) if cell.get("verified") and hw else (),
                        notes=f"deployment-panel cell ({label}); overlay options not applied",
                        source=doc.ref(), evidence=doc.evidence(line)))
                    facts += argv_facts(doc, argv, scope=hw)
        return envs, facts

    def _prose_facts(self, doc: SourceDoc) -> list[Fact]:
        out: list[Fact] = []
        for i, line in enumerate(doc.lines, start=1):
            for pm in re.finditer(r"`--(reasoning|tool-call)-parser auto`\s*\(which resolves to `([\w.-]+)`", line):
                name = "reasoning_parser" if pm.group(1) == "reasoning" else "tool_call_parser"
                out.append(fact(doc, name, pm.group(2), i, engine="sglang"))
            if not any(f.name == "context_tokens" for f in out):
                m = re.search(r"\b(\d{1,3}(?:,\d{3})+)-token context", line)
                if m:
                    out.append(fact(doc, "context_tokens", int(m.group(1).replace(",", "")), i, unit="tokens"))
        return out


# Any: the page's JSON summary (modelNames / dockerImages maps); only string cells are names
def _cell_lookup(table: dict[str, Any], hw: str | None, variant: str | None, quant: str | None) -> str | None:
    for key in (f"{hw}|{variant}|{quant}", f"{variant}|{quant}", f"{hw}|{quant}", quant, hw, "default"):
        if key in table:
            value = table[key]
            return value if isinstance(value, str) else None
    return None


def _pulled_image(found: list[Block]) -> str | None:
    for block in found:
        for line in block.lines:
            m = re.match(r"\s*docker pull\s+(\S+)", line)
            if m:
                return m.group(1)
    return None


def _models(doc: SourceDoc, envs: list[EngineEnv]) -> tuple[str, ...]:
    """Subject first: the repo whose name matches the page's folder, else the most used."""
    counts = Counter(e.checkpoint for e in envs if e.checkpoint)
    folder = Path(doc.path).parent.name.lower()
    subject = next((m for m in counts if m.split("/")[-1].lower() == folder), None)
    ordered = [m for m, _ in counts.most_common()]
    if subject:
        ordered.remove(subject)
        ordered.insert(0, subject)
    return tuple(ordered)
