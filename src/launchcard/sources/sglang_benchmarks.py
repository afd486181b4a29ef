"""SGLang cookbook benchmark tables (``docs/src/snippets/configs/<org>/<name>-benchmarks.jsx``).

The cookbook publishes per-cell speed and accuracy next to each deployment-panel
config generator: ``export const benchmarks = [ { match: {hw, strategy, ...},
sglang_version, latencyPercentile, speed: [{workload: {isl, osl, max_concurrency,
...}, ttft_ms, tpot_ms, tokens_per_sec_per_gpu}], accuracy: {gsm8k_pct, ...},
notes }, ... ]``.  The file is JavaScript, so it is read by a small tolerant
reader of JS data literals (:func:`parse_js_literal`: comments, unquoted keys,
single/double/back-quoted strings, trailing commas); nothing is evaluated.

Each published measurement becomes one :class:`PublishedPoint` keeping the source
URL with its commit and the entry's line, hardware, GPU count, parallelism,
engine version, workload, speculative settings, quantization and results.
Parallelism, speculative settings and quantization come from the matching
panel cell of the config generator (the corpus' ``*.config-summary.md`` data
summaries, read as :mod:`launchcard.sources.sglang_cookbook` reads them), else
from the entry's notes ("8x H100 (TP8/EP8)"), else they stay null.

These points are not launch-card facts (no vocabulary name, never compared
across sources), so this module is not a registered :class:`Adapter`; the web
catalog's performance pages read a folder of such files through it (a synced
sglang checkout's ``docs/src/snippets/configs`` works as it is).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchcard.argv import parse_command
from launchcard.errors import SourceError

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
# Provenance header of a stored copy: ``// source: https://github.com/OWNER/REPO/blob/COMMIT/PATH``
_SOURCE = re.compile(
    r"^//\s*source:\s*(https://github\.com/([^/\s]+/[^/\s]+)/blob/([0-9a-f]{7,40})/(\S+))\s*$", re.MULTILINE
)


class _Reader:
    """Recursive-descent reader of a JavaScript data literal."""

    def __init__(self, text: str, where: str) -> None:
        self.s = text
        self.i = 0
        self.where = where
        self.starts: list[int] = []  # line of each element of the outermost array

    def line(self, pos: int | None = None) -> int:
        return self.s.count("\n", 0, self.i if pos is None else pos) + 1

    def fail(self, rule: str) -> SourceError:
        near = self.s[self.i : self.i + 20].split("\n")[0]
        return SourceError(
            f"{rule} (near {near!r})",
            where=f"{self.where}:{self.line()}",
            fix="the benchmarks file must hold a plain data literal (objects, arrays, strings, numbers)",
        )

    def skip(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif s.startswith("/*", self.i):
                end = s.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.i = end + 2
            else:
                return

    def value(self, depth: int = 0) -> Any:
        if depth > 64:
            raise self.fail("nested too deeply")
        self.skip()
        if self.i >= len(self.s):
            raise self.fail("unexpected end of file")
        c = self.s[self.i]
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.arr(depth)
        if c in "\"'`":
            return self.string()
        m = _NUMBER.match(self.s, self.i)
        if m and m.group(0) not in ("-", ""):
            self.i = m.end()
            text = m.group(0).replace("_", "")
            if text.lower().startswith(("0x", "-0x")):
                return int(text, 16)
            return float(text) if any(ch in text for ch in ".eE") else int(text)
        m = _IDENT.match(self.s, self.i)
        if m:
            word = m.group(0)
            consts: dict[str, Any] = {"true": True, "false": False, "null": None, "undefined": None}
            if word in consts:
                self.i = m.end()
                return consts[word]
            raise self.fail(f"not a data value: {word}")
        raise self.fail("unexpected character")

    def string(self) -> str:
        q = self.s[self.i]
        self.i += 1
        out: list[str] = []
        while True:
            if self.i >= len(self.s):
                raise self.fail("unterminated string")
            c = self.s[self.i]
            if c == q:
                self.i += 1
                return "".join(out)
            if q == "`" and self.s.startswith("${", self.i):
                raise self.fail("template string with an expression")
            if c == "\n" and q != "`":
                raise self.fail("line break inside a string")
            if c == "\\":
                nxt = self.s[self.i + 1 : self.i + 2]
                if nxt == "u":
                    hexdigits = self.s[self.i + 2 : self.i + 6]
                    if not re.fullmatch(r"[0-9a-fA-F]{4}", hexdigits):
                        raise self.fail("bad \\u escape")
                    out.append(chr(int(hexdigits, 16)))
                    self.i += 6
                    continue
                if nxt == "\n":  # line continuation
                    self.i += 2
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                self.i += 2
                continue
            out.append(c)
            self.i += 1

    def key(self) -> str:
        self.skip()
        c = self.s[self.i : self.i + 1]
        if c in ('"', "'", "`"):
            return self.string()
        m = _IDENT.match(self.s, self.i) or re.compile(r"\d+").match(self.s, self.i)
        if not m:
            raise self.fail("expected a key")
        self.i = m.end()
        return m.group(0)

    def obj(self, depth: int) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.skip()
            if self.s.startswith("}", self.i):
                self.i += 1
                return out
            k = self.key()
            self.skip()
            if not self.s.startswith(":", self.i):
                raise self.fail(f"expected ':' after key {k!r}")
            self.i += 1
            out[k] = self.value(depth + 1)
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("}", self.i):
                raise self.fail("expected ',' or '}'")

    def arr(self, depth: int) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.skip()
            if self.s.startswith("]", self.i):
                self.i += 1
                return out
            if depth == 0:
                self.starts.append(self.line())
            out.append(self.value(depth + 1))
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("]", self.i):
                raise self.fail("expected ',' or ']'")


def parse_js_literal(text: str, *, where: str = "<text>", name: str | None = None) -> tuple[Any, list[int]]:
    """The data literal of ``export const NAME = ...`` (or the whole text), and the line of each top-level element.

    Raises SourceError (one line, with the file line) on anything that is not plain data.
    """
    start = 0
    if name is not None:
        m = re.search(rf"(?:export\s+)?(?:const|let|var)\s+{re.escape(name)}\s*=", text)
        if not m:
            raise SourceError(f"no `const {name} =` in the file", where=where, fix="pass a *-benchmarks.jsx file")
        start = m.end()
    reader = _Reader(text, where)
    reader.i = start
    value = reader.value()
    reader.skip()
    if reader.s.startswith(";", reader.i):
        reader.i += 1
    return value, reader.starts


# -- published points ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PublishedPoint:
    """One published measurement and every condition it was measured under (null = not published)."""

    model: str
    source: str
    source_url: str | None
    revision: str | None
    hardware: str | None
    gpus: int | None
    parallelism: str | None
    engine: str
    engine_version: str | None
    selection: Mapping[str, str]
    workload: Mapping[str, Any] | None
    speculative: str | None
    quantization: str | None
    results: Mapping[str, Any]
    latency_percentile: str | None = None
    parallelism_from: str | None = None
    notes: str | None = None
    source_note: str | None = None
    flags: tuple[str, ...] = ()  # the matching panel cell's server flags, as the config generator writes them
    line: int | None = None  # the entry's line in the benchmark file

    @property
    def configuration(self) -> str:
        """The label of the configuration this point belongs to (one chart series)."""
        sel = ", ".join(f"{k}={v}" for k, v in self.selection.items() if k != "hw")
        return f"{self.hardware or '?'} x{self.gpus or '?'} {sel}".strip()

    def to_json(self) -> dict[str, Any]:
        w = dict(self.workload) if self.workload else None
        return {
            "model": self.model,
            "source": self.source,
            "source_url": self.source_url,
            "revision": self.revision,
            "hardware": self.hardware,
            "configuration": self.configuration,
            "conditions": {
                "gpus": self.gpus,
                "parallelism": self.parallelism,
                "parallelism_from": self.parallelism_from,
                "engine": self.engine,
                "engine_version": self.engine_version,
                "selection": dict(self.selection),
                "dataset": w.get("dataset") if w else None,
                "input_tokens": w.get("isl") if w else None,
                "output_tokens": w.get("osl") if w else None,
                "concurrency": w.get("max_concurrency") if w else None,
                "num_prompts": w.get("num_prompts") if w else None,
                "speculative": self.speculative,
                "quantization": self.quantization,
                "latency_percentile": self.latency_percentile,
                "command": list(self.flags) if self.flags else None,
            },
            "results": dict(self.results),
            "notes": self.notes,
            "source_note": self.source_note,
        }


@dataclass(frozen=True, slots=True)
class Cell:
    """A deployment-panel cell: its match keys and launch flags (from a config data summary)."""

    match: Mapping[str, str]
    argv: tuple[str, ...]
    nnodes: int | None = None
    defaults: Mapping[str, str] = field(default_factory=dict)  # the panel's first option per match key
    stem: str | None = None  # the config generator it came from (``glm-5.3-flash``)


@dataclass(frozen=True, slots=True)
class BenchmarkFile:
    """One parsed ``*-benchmarks.jsx`` with where it came from."""

    org: str
    stem: str  # file name without ``-benchmarks.jsx``
    path: str
    repo: str | None
    revision: str | None
    url: str | None
    entries: tuple[Mapping[str, Any], ...]
    lines: tuple[int, ...]
    header: str | None = None
    excerpt: bool = False


def read_benchmark_file(path: Path, *, org: str | None = None) -> BenchmarkFile:
    """Parse one benchmarks file; provenance from a ``// source: <github blob URL>`` header when present."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(
            f"cannot read the benchmarks file ({exc})", where=where, fix="pass a UTF-8 *-benchmarks.jsx file"
        ) from None
    data, lines = parse_js_literal(text, where=where, name="benchmarks")
    if not isinstance(data, list):
        raise SourceError("`benchmarks` is not an array", where=where, fix="pass a *-benchmarks.jsx file")
    m = _SOURCE.search(text)
    head = [
        line.lstrip("/ ").strip()
        for line in text[: max(0, text.find("export"))].splitlines()
        if line.startswith("//") and not _SOURCE.match(line)
    ]
    excerpt = any(h.startswith("excerpt:") for h in head)  # a stored excerpt: its lines are not upstream lines
    header = " ".join(h for h in head if not h.startswith("excerpt:")) or None
    stem = path.name.removesuffix(".jsx").removesuffix("-benchmarks")
    return BenchmarkFile(
        org=org or path.parent.name,
        stem=stem,
        path=m.group(4) if m else path.name,
        repo=m.group(2) if m else None,
        revision=m.group(3) if m else None,
        url=m.group(1) if m else None,
        excerpt=excerpt,
        entries=tuple(e for e in data if isinstance(e, dict)),
        lines=tuple(ln for e, ln in zip(data, lines, strict=False) if isinstance(e, dict)),
        header=header,
    )


def summary_cells(text: str) -> list[Cell]:
    """Panel cells from the JSON blocks of a cookbook config data summary (``*.config-summary.md``)."""
    cells: list[Cell] = []
    for block in re.findall(r"```json\n(.*?)\n```", text, re.DOTALL):
        try:
            data = json.loads(block)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        src = data.get("source")
        stem = Path(str((src if isinstance(src, dict) else {}).get("path") or "")).name.removesuffix(".jsx") or None
        defaults: dict[str, str] = {}
        for dims in (data.get("matchDims"), data):
            if isinstance(dims, dict):
                for k, plural in (
                    ("strategy", "strategies"),
                    ("quant", "quantizations"),
                    ("quant", "quant"),
                    ("strategy", "strategy"),
                    ("nodes", "nodesOptions"),
                    ("variant", "variants"),
                ):
                    opts = dims.get(plural)
                    if isinstance(opts, list) and opts and k not in defaults:
                        first = opts[0]
                        defaults[k] = str(first.get("id") if isinstance(first, dict) else first)
        for key, value in data.items():
            if not key.startswith("cells") or not isinstance(value, list):
                continue
            for cell in value:
                if not isinstance(cell, dict) or not isinstance(cell.get("match"), dict):
                    continue
                argv: list[str] = []
                for flag in cell.get("flags") or []:
                    try:
                        argv += shlex.split(str(flag))
                    except ValueError:
                        argv += str(flag).split()
                nn = cell.get("nnodes")
                cells.append(
                    Cell(
                        match={str(k): str(v) for k, v in cell["match"].items()},
                        argv=tuple(argv),
                        nnodes=nn if isinstance(nn, int) else None,
                        defaults=defaults,
                        stem=stem,
                    )
                )
    return cells


def _flag(argv: Sequence[str], *names: str) -> str | None:
    """The value of any of ``names`` (one option's spellings), as SGLang's parser reads the cell's flags."""
    return parse_command(argv, engine="sglang").get_str(*names)


def _cell_for(match: Mapping[str, Any], cells: Sequence[Cell]) -> Cell | None:
    """The panel cell a benchmark entry is keyed to: every shared key equal; one candidate, else none."""
    hits = [
        c
        for c in cells
        if all(str(match[k]) == v for k, v in c.match.items() if k in match) and any(k in match for k in c.match)
    ]
    if len(hits) > 1:  # keys the entry leaves out: the panel's default (first listed) value, e.g. quant fp8
        hits = [c for c in hits if all(k in match or c.defaults.get(k) == v for k, v in c.match.items())]
    return hits[0] if len(hits) == 1 else None


_NOTE_GPUS = re.compile(r"(\d+)\s*[x×]\s*(?:NVIDIA\s+)?([A-Z]{1,3}\d{2,4}[A-Z]?)\b")
_NOTE_PAR = re.compile(r"\((TP\d+(?:\s*/\s*(?:EP|DP|PP|CP|DCP)\d+)*)\)")


def _parallelism(cell: Cell | None, notes: str | None) -> tuple[int | None, str | None, str | None]:
    if cell is not None:
        cmd = parse_command(cell.argv, engine="sglang")
        tp = cmd.get_str("--tp-size", "--tp", "--tensor-parallel-size")
        if tp and tp.isdigit():
            parts = [f"TP{tp}"]
            dp = cmd.get_str("--dp-size", "--dp", "--data-parallel-size")
            attn = cmd.get_str("--attn-dp-size", "--attention-data-parallel-size")
            ep = cmd.get_str("--ep-size", "--ep", "--expert-parallel-size")
            pp = cmd.get_str("--pp-size", "--pp")
            if attn and attn != "1":  # SGLang 0.5.22+: --dp-size D --enable-dp-attention (limits.ATTN_DP_RULE)
                parts.append(f"DP{attn} (attention)")
            elif dp and dp != "1":
                parts.append(f"DP{dp}" + (" (attention)" if cmd.has("--enable-dp-attention") else ""))
            if ep and ep != "1":
                parts.append(f"EP{ep}")
            if pp and pp != "1":
                parts.append(f"PP{pp}")
            return int(tp) * max(1, int(pp) if pp and pp.isdigit() else 1), "/".join(parts), "panel cell"
    if notes:
        g, p = _NOTE_GPUS.search(notes), _NOTE_PAR.search(notes)
        if g or p:
            return (int(g.group(1)) if g else None), (p.group(1).replace(" ", "") if p else None), "notes"
    return None, None, None


def _speculative(cell: Cell | None) -> str | None:
    if cell is None:
        return None
    algo = _flag(cell.argv, "--speculative-algorithm", "--speculative-algo")
    if not algo:
        return "off"
    steps = _flag(cell.argv, "--speculative-num-steps")
    topk = _flag(cell.argv, "--speculative-eagle-topk")
    draft = _flag(cell.argv, "--speculative-num-draft-tokens")
    extra = "/".join(x for x in (steps, topk, draft) if x)
    return f"{algo} {extra}".strip()


def _model_for(bf: BenchmarkFile, entry: Mapping[str, Any], models: Iterable[str]) -> str | None:
    """The catalog model an entry measures: ``<org>/<stem>-<variant>``, else ``<org>/<stem>`` (case-insensitive)."""
    by_lower = {m.lower(): m for m in models}
    match = entry.get("match") if isinstance(entry.get("match"), dict) else {}
    variant = match.get("variant") if isinstance(match, dict) else None
    names = [f"{bf.stem}-{variant}"] if variant else [bf.stem]
    for name in names:
        hit = by_lower.get(f"{bf.org}/{name}".lower())
        if hit:
            return hit
    return None


def points(bf: BenchmarkFile, models: Iterable[str], cells: Sequence[Cell] = ()) -> list[PublishedPoint]:
    """Every published speed row and accuracy result of ``bf`` for a model in ``models``."""
    models = list(models)
    out: list[PublishedPoint] = []
    for entry, line in zip(bf.entries, bf.lines, strict=False):
        model = _model_for(bf, entry, models)
        if model is None:
            continue
        match = {str(k): str(v) for k, v in (entry.get("match") or {}).items()}
        cell = _cell_for(match, [c for c in cells if c.stem in (None, bf.stem)])
        notes = entry.get("notes") if isinstance(entry.get("notes"), str) else None
        gpus, par, par_from = _parallelism(cell, notes)
        quant = match.get("quant") or (cell.match.get("quant") if cell else None)
        cell_q = _flag(cell.argv, "--quantization") if cell else None
        if cell_q:
            quant = f"{quant} ({cell_q})" if quant else cell_q
        version = entry.get("sglang_version")
        accuracy = entry.get("accuracy") if isinstance(entry.get("accuracy"), dict) else None
        url = f"{bf.url}#L{line}" if bf.url and not bf.excerpt else bf.url
        common: dict[str, Any] = {
            "model": model,
            "source": f"SGLang cookbook {bf.path}",
            "source_url": url,
            "revision": bf.revision,
            "hardware": match.get("hw"),
            "gpus": gpus,
            "parallelism": par,
            "parallelism_from": par_from,
            "engine": "sglang",
            "engine_version": str(version) if version is not None else None,
            "selection": match,
            "speculative": _speculative(cell),
            "quantization": quant,
            "latency_percentile": str(entry["latencyPercentile"]) if entry.get("latencyPercentile") else None,
            "notes": notes,
            "source_note": bf.header,
            "flags": cell.argv if cell is not None else (),
            "line": line,
        }
        speed = [s for s in entry.get("speed") or [] if isinstance(s, dict)]
        for s in speed:
            results = {k: s.get(k) for k in ("ttft_ms", "tpot_ms", "tokens_per_sec_per_gpu") if k in s}
            w = s.get("workload") if isinstance(s.get("workload"), dict) else {}
            if "tokens_per_sec_per_gpu" in s:
                results["output_tokens_per_sec_per_gpu"] = output_per_gpu(s.get("tokens_per_sec_per_gpu"), w or {})
            if accuracy:
                results["accuracy"] = dict(accuracy)
            out.append(PublishedPoint(workload=w, results=results, **common))
        if accuracy and not speed:
            out.append(PublishedPoint(workload=None, results={"accuracy": dict(accuracy)}, **common))
    return out


def output_per_gpu(total: Any, workload: Mapping[str, Any]) -> float | None:
    """Output tokens/s per GPU of a speed row: the cookbook's ``tokens_per_sec_per_gpu`` is total (input + output)
    tokens/s per GPU, "= output/GPU x (isl+osl)/osl" (sglang 03f4c00a
    docs/src/snippets/configs/deepseek-ai/deepseek-v4-benchmarks.jsx L7; GLM-5.3-Flash's gb300 low-latency entry at
    018de1f3: 1,824.66 aggregate output tok/s on 4 GPUs, published 2280.83 = 1824.66 / 4 x 1280 / 256), so
    output = total x osl / (isl + osl). None without a number and both lengths, or for a workload of images
    (their vision tokens are in the total too, in a count the row does not give)."""
    def num(v: Any) -> float | None:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    t, isl, osl = num(total), num(workload.get("isl")), num(workload.get("osl"))
    if t is None or isl is None or osl is None or isl <= 0 or osl <= 0:
        return None
    return None if "image" in str(workload.get("dataset") or "") else t * osl / (isl + osl)


def load_points(folders: Sequence[Path], models: Iterable[str], summaries: Sequence[Path] = ()) -> list[PublishedPoint]:
    """Points of every ``*-benchmarks.jsx`` under ``folders`` (recursively) for ``models``.

    ``summaries``: folders searched for ``*.config-summary.md`` panel data joined by ``match``.
    A broken file raises SourceError naming it (the caller decides whether to skip it).
    """
    cells: list[Cell] = []
    for folder in summaries:
        if folder.is_dir():
            for md in sorted(folder.rglob("*.config-summary.md")):
                cells += summary_cells(md.read_text(encoding="utf-8", errors="replace"))
    models = list(models)
    out: list[PublishedPoint] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*-benchmarks.jsx")):
            out += points(read_benchmark_file(path), models, cells)
    return out
