"""One interface for every source adapter.

A *source document* is raw bytes plus where they came from (path, url,
revision, sha256 of the bytes, fetch time).  An adapter turns one document into
an :class:`Extract`: declared facts with evidence, engine environments,
checkpoints and (for the Hub) an :class:`HfInfo`.  Conversion from the wire or
file format happens here, once; merge only ever sees these frozen types.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from abc import ABC
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import Field

from launchcard.card import (
    Checkpoint,
    EngineEnv,
    Evidence,
    Fact,
    Frozen,
    Gap,
    HfInfo,
    SourceKind,
    SourceRef,
)
from launchcard.errors import SourceError
from launchcard.facts import check


class SourceDoc(Frozen):
    """One document of one source, exactly as read."""

    kind: SourceKind
    path: str = Field(description="Path inside the source's repository (or corpus folder).")
    url: str | None = None
    revision: str | None = None
    sha256: str
    fetched_at: datetime | None = None
    committed_at: datetime | None = None
    raw: bytes = Field(repr=False)
    local_path: str | None = Field(None, description="Where the bytes were read on this machine.")

    @classmethod
    def from_file(
        cls,
        file: Path,
        *,
        kind: SourceKind,
        path: str,
        url: str | None = None,
        revision: str | None = None,
        fetched_at: datetime | None = None,
        committed_at: datetime | None = None,
    ) -> SourceDoc:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read source document ({exc.strerror})", where=str(file),
                              fix="check the path and its permissions") from exc
        return cls(kind=kind, path=path, url=url, revision=revision, fetched_at=fetched_at, committed_at=committed_at,
                   sha256=hashlib.sha256(raw).hexdigest(), raw=raw, local_path=str(file))

    @property
    def text(self) -> str:
        try:
            return self.raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(f"not UTF-8 text (byte {exc.start})", where=self.where(),
                              fix="store the document as UTF-8") from exc

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def where(self, line: int | None = None) -> str:
        base = self.local_path or self.url or self.path
        return f"{base}:{line}" if line else base

    def ref(self) -> SourceRef:
        return SourceRef(kind=self.kind, url=self.url, path=self.path, revision=self.revision,
                         sha256=self.sha256, fetched_at=self.fetched_at, committed_at=self.committed_at)

    def evidence(self, line: int | None = None) -> Evidence:
        url = self.url
        # A line anchor only makes sense on the very file that was read (a summary's
        # URL points at the summarised upstream file, whose lines differ).
        if url and line and url.rsplit("/", 1)[-1] == self.path.rsplit("/", 1)[-1]:
            url = f"{url}#L{line}"
        return Evidence(kind=self.kind, url=url, path=self.path, line=line, revision=self.revision,
                        sha256=self.sha256, fetched_at=self.fetched_at, committed_at=self.committed_at)

    def error(self, rule: str, *, line: int | None = None, fix: str | None = None) -> SourceError:
        return SourceError(rule, where=f"{self.kind} {self.where(line)}", fix=fix)


class Extract(Frozen):
    """What one document declares, per model it talks about."""

    doc: SourceRef
    models: tuple[str, ...] = Field((), description="HF repo ids the document is about (first = subject).")
    facts: tuple[Fact, ...] = ()
    envs: tuple[EngineEnv, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    hf: HfInfo | None = None
    config: dict[str, Any] | None = Field(None, description="The model's config.json as read (Hub or corpus), "
                                          "for the memory planner.")
    warnings: tuple[str, ...] = Field((), description="Parts of the document skipped, one clear line each.")


@dataclass(frozen=True)
class ReadOptions:
    """What a corpus read asks of every adapter (the same for all of them)."""

    hardware: str | None = None  # hardware a resolving source resolves its command for
    hub: bool = False  # ask the live Hugging Face Hub too
    hf_endpoint: str | None = None
    revision: str | None = None  # the vLLM recipes' revision (else git HEAD, else each file's SOURCES.md row)
    # config.json files the user gave (``--config``), as (checkpoint or model id, path): they judge the plans
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModelExtract:
    """What a per-model source declares about one model: its extract and what it could not give."""

    extract: Extract
    gaps: tuple[Gap, ...] = ()


class Adapter(ABC):
    """A source kind, registered once in :mod:`launchcard.sources._registry`.

    Two ways to read a source, both optional: *documents* (``files`` then
    ``extract`` each one, e.g. a cookbook page) and *models* (``model_extract``
    once per model, e.g. a recipe resolved for a hardware, or the Hub API).
    ``folder`` is the source's folder in a corpus (None: the source is not a folder).
    """

    kind: SourceKind
    folder: str | None = None
    defines_models: bool = False  # its documents name models that get a card of their own

    def files(self, root: Path) -> Iterable[Path]:
        """This source's files under ``root`` (the source's corpus folder), in a stable order."""
        return ()

    def discover(self, root: Path) -> Iterable[SourceDoc]:
        """Documents of this source under ``root``, each with the URL and revision the corpus records."""
        from launchcard.snapshot import snapshot_of
        from launchcard.sources._provenance import lookup

        corpus = root.parent
        synced = snapshot_of(root)  # a folder `launchcard sync` wrote: commit, time, upstream path of each file
        for file in self.files(root):
            rel = file.relative_to(corpus).as_posix()
            if synced is not None:
                at = synced.file(file.relative_to(root).as_posix())
                yield SourceDoc.from_file(file, kind=self.kind, path=rel, url=at.url, revision=at.revision,
                                          committed_at=at.committed_at)
                continue
            url, rev = lookup(corpus, rel)
            yield SourceDoc.from_file(file, kind=self.kind, path=rel, url=url, revision=rev)

    def extract(self, doc: SourceDoc) -> Extract:
        """Facts, envs and checkpoints declared by one document; SourceError when malformed."""
        raise doc.error(f"the {self.kind} source reads models, not single documents")

    def open(self, root: Path | None, options: ReadOptions) -> bool:
        """Prepare a per-model read of ``root`` (None when the corpus has no such folder); False: nothing to do."""
        return False

    def models(self) -> Sequence[str]:
        """Models this source has a card for (after ``open``)."""
        return ()

    def model_extract(self, model: str) -> ModelExtract | None:
        """What this source declares about ``model`` (after ``open``); None when it says nothing."""
        return None

    def plan_envs(self, model: str, parts: Sequence[Extract], configs: Collection[str]) -> list[EngineEnv]:
        """Extra commands to size for memory planning only (checkpoints with a config.json in ``configs``)."""
        return []

    def model_key(self, model: str) -> str | None:
        """A digest of everything ``model_extract(model)`` and ``plan_envs`` read (after ``open``), so a build
        cache can tell the model's extract has not changed; None: cannot say (the card is then never cached)."""
        return None


# --- helpers shared by adapters -------------------------------------------------

# Any: a fact value is a JSON/YAML value as the source wrote it
def fact(doc: SourceDoc, name: str, value: Any, line: int | None = None, *, unit: str | None = None,
         scope: str | None = None, engine: str | None = None) -> Fact:
    """A declared fact; ``name`` must be in the vocabulary (launchcard.facts), ``unit`` its unit."""
    check(name, unit)
    return Fact(name=name, value=value, evidence=doc.evidence(line), unit=unit, scope=scope, engine=engine)


def argv_engine(argv: Sequence[str], flag: str) -> str | None:
    """Whose parser registry ``flag`` of ``argv`` names: Dynamo's own ``--dyn-*`` flags, else the launched engine."""
    if flag.startswith("--dyn-"):
        return "dynamo"
    head = " ".join(argv[:4]).lower()
    for engine in ("sglang", "vllm", "trtllm"):
        if engine in head:
            return engine
    return None


def find_line(lines: Sequence[str], needle: str, start: int = 0) -> int | None:
    """1-based number of the first line at or after ``start`` (0-based) containing ``needle``."""
    for i in range(max(start, 0), len(lines)):
        if needle in lines[i]:
            return i + 1
    return None


def argv_facts(doc: SourceDoc, argv: Sequence[str], *, line_of: dict[str, int] | None = None,
               scope: str | None = None) -> list[Fact]:
    """Facts every launch command declares, whatever the engine's spelling.

    Only values that can be compared across engines are taken: parsers,
    speculative token count and served context.  The command is read by the
    shared argv model (last occurrence wins, dotted keys merged as vLLM merges
    them); a value the engine would not read gives no fact.
    """
    from launchcard.argv import Occurrence, parse_command
    from launchcard.errors import ArgvError

    line_of = line_of or {}
    cmd = parse_command(argv)

    def ln(occ: Occurrence, key: str | None = None) -> int | None:
        spelled = next((p for p in occ.parts if key and p.endswith("." + key)), occ.written)
        return line_of.get(spelled)

    out: list[Fact] = []
    for name, flags in (
        ("reasoning_parser", ("--reasoning-parser", "--dyn-reasoning-parser")),
        ("tool_call_parser", ("--tool-call-parser", "--dyn-tool-call-parser")),
    ):
        value = cmd.get_str(*flags)
        occ = cmd.last(*flags)
        if value and value != "auto" and occ is not None:
            out.append(fact(doc, name, value, ln(occ), scope=scope, engine=argv_engine(argv, occ.written)))
    spec_occ = cmd.last("--speculative-config")
    try:
        spec = cmd.get_json("--speculative-config")
    except ArgvError:
        spec = None
    if spec_occ is not None and isinstance(spec, dict) and "num_speculative_tokens" in spec:
        with contextlib.suppress(TypeError, ValueError):
            out.append(fact(doc, "num_speculative_tokens", int(spec["num_speculative_tokens"]),
                            ln(spec_occ, "num_speculative_tokens"), scope=scope))
    ctx_occ = cmd.last("--max-model-len", "--context-length")
    try:
        ctx = cmd.get_int("--max-model-len", "--context-length")
    except ArgvError:
        ctx = None
    if ctx_occ is not None and ctx is not None and ctx > 0:
        out.append(fact(doc, "context_tokens", ctx, ln(ctx_occ), unit="tokens", scope=scope))
    return out


def flag_lines(lines: Sequence[str], argv: Sequence[str], start: int) -> dict[str, int]:
    """Line of each ``--flag`` of ``argv`` in the document, searching from ``start`` (0-based)."""
    out: dict[str, int] = {}
    for tok in argv:
        if tok.startswith("--"):
            key = tok.split("=", 1)[0]
            if key not in out:
                line = find_line(lines, key, start)
                if line is not None:
                    out[key] = line
    return out


HF_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def is_repo_id(value: str | None) -> TypeGuard[str]:
    return bool(value) and bool(HF_REPO.match(value or "")) and not (value or "").startswith("/")


def hardware_in(text: str) -> tuple[str | None, int | None]:
    """First accelerator named in ``text`` (its hardware-catalog id) and a count like ``4x``."""
    from launchcard.hardware import named_in

    return named_in(text)


_COUNT = r"(\d+(?:\.\d+)?)\s?([BT])"
# "321B total", "320B-total", "117B parameters" (not "5.1B active parameters"), "321B-parameter"
_TOTAL = re.compile(_COUNT + r"(?:[- ]total\b|[- ]parameters?\b)")
_ACTIVE = re.compile(_COUNT + r"[- ]active\b")


def prose_param_facts(doc: SourceDoc, subject: str | None, lines: Iterable[tuple[int, str]]) -> list[Fact]:
    """Total and active parameter counts a document's prose states about ``subject``, one extraction for every
    source ("321B total and 18B active", "117B parameters with 5.1B active parameters", "1T total parameters,
    32B active", "284B total / 13B active", "321B-parameter, 18B-active").

    A line naming a sibling model (``gpt-oss-20b`` on a page about ``gpt-oss-120b``) and not ``subject`` is
    about the sibling and is skipped; the first statement of each count wins.
    """
    short = (subject or "").split("/")[-1]
    family = short.rsplit("-", 1)[0] + "-" if "-" in short else None
    sibling = re.compile(re.escape(family) + r"[\w.]+", re.IGNORECASE) if family else None
    out: dict[str, Fact] = {}
    for line, text in lines:
        if sibling is not None and short.lower() not in text.lower() and any(
                m.group(0).lower() != short.lower() for m in sibling.finditer(text)):
            continue
        for name, pattern in (("params_total_b", _TOTAL), ("params_active_b", _ACTIVE)):
            m = pattern.search(text)
            if m and name not in out:
                value = float(m.group(1)) * (1000.0 if m.group(2) == "T" else 1.0)
                out[name] = fact(doc, name, value, line, unit="B")
    return list(out.values())


def parse_params_b(text: str) -> float | None:
    """``"321B"`` → 321.0; ``"1.2T"`` → 1200.0."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([BbTtMm])\s*", str(text))
    if not m:
        return None
    scale = {"b": 1.0, "t": 1000.0, "m": 0.001}[m.group(2).lower()]
    return float(m.group(1)) * scale
