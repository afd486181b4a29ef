"""The catalog's model index: one row per model (its newest capture), facet values, full-text search.

Written in the same transaction as each capture, so the index never disagrees
with the captures; read by the web catalog's index page, which filters, counts
facets and pages in SQL instead of loading every card (a Hub-scale catalog
holds hundreds of thousands of models).

Search is a case-insensitive substring match on the model id and title, as the
index always offered: SQLite answers it from an FTS5 ``trigram`` table (three
characters or more; shorter queries scan the index's lower-cased text), and
PostgreSQL from ``LIKE`` over the same text (with a ``pg_trgm`` index where the
server has that extension).  A facet's counts apply every other filter but its
own, so each count says how many models choosing that value would give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from launchcard.card import LaunchCard
from launchcard.errors import InputError
from launchcard.store._sql import Db

SIZE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<10B", 10), ("10-40B", 40), ("40-150B", 150), ("150-500B", 500), (">500B", float("inf")))
FACETS = ("task", "arch", "size", "precision", "hardware", "engine", "source")
SORTS = ("name", "size", "updated")

# {id} is the row's integer id (SQLite's rowid alias / a PostgreSQL identity); facet rows and the FTS rows are keyed
# by it (integer lookups; a text key would repeat every model id once per facet value).  model_index stays narrow
# (what filters and sorts read); the row as pages show it lives in model_rows, read only for a page's rows.
# facet_combos: each distinct set of facet values (hardware status included) some model has had, its values in
# combo_facets, and model_index.combo_id the model's own.  Facet counts under filters (no text query) are sums over
# the matching combinations, weighted by their models (one GROUP BY over the narrow index, kept until the catalog
# changes), instead of a walk over every matching model's facet rows: models sharing shapes share a combination
# (100,000 corpus-shaped cards: 385), so a broad filter pair costs milliseconds, not a GROUP BY over half a million
# rows.  Filters go by combo_id too (the few combinations holding a value, then each row's combo_id).
# model_index_by_size / _by_updated are the page sorts' own order (page_rows' ORDER BY, expression for expression):
# a page of a broad filter reads the index in order and stops after its rows instead of sorting every match.
# No per-model facet rows (model_facets, up to version 6): every reader goes through the model's combination, so
# a stored card writes one index row, not one row per facet value (ingest at Hub scale, issue 23).
INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_index (
    id {id},
    model TEXT NOT NULL UNIQUE,
    capture_id INTEGER NOT NULL,
    search_text TEXT NOT NULL,
    name_key TEXT NOT NULL,
    updated TEXT,
    params_b REAL,
    need_gib REAL,
    combo_id BIGINT
);
CREATE TABLE IF NOT EXISTS model_rows (
    id BIGINT PRIMARY KEY,
    row_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS model_index_name ON model_index(name_key);
CREATE INDEX IF NOT EXISTS model_index_by_size ON model_index((params_b IS NULL), params_b DESC, name_key{collate});
CREATE INDEX IF NOT EXISTS model_index_by_updated ON model_index((updated IS NULL), updated DESC, name_key{collate});
CREATE TABLE IF NOT EXISTS facet_combos (
    id {id},
    combo_key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS combo_facets (
    cid BIGINT NOT NULL,
    facet TEXT NOT NULL,
    value TEXT NOT NULL,
    status TEXT,
    PRIMARY KEY (facet, value, cid)
){without_rowid};
CREATE INDEX IF NOT EXISTS combo_facets_cid ON combo_facets(cid)
"""
# the FTS row's rowid is the model_index row's id (a lookup by model would scan the whole FTS table)
_SQLITE_FTS = "CREATE VIRTUAL TABLE IF NOT EXISTS model_search USING fts5(search_text, tokenize='trigram')"
_PG_TRGM = ("CREATE EXTENSION IF NOT EXISTS pg_trgm",
            "CREATE INDEX IF NOT EXISTS model_index_trgm ON model_index USING gin (search_text gin_trgm_ops)")


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the index shows and filters on, for one model: read from its newest capture alone, so a catalog
    copied to another host lists the same models with the same facets."""

    model: str
    title: str
    capture_id: int
    captured_at: str | None
    updated: str | None  # newest commit time of the card's documents, else the capture time (date)
    tasks: tuple[str, ...]
    arch: str | None
    params_b: float | None
    precisions: tuple[str, ...]
    hardware: Mapping[str, str]  # profile id -> verified | declared
    engines: tuple[str, ...]
    sources: tuple[str, ...]
    min_total_vram_gib: float | None = None  # the card's planned minimum (memory planner), for "fits a node"

    @property
    def size(self) -> str | None:
        return size_bucket(self.params_b)

    def facet(self, name: str) -> tuple[str, ...]:
        return self.facet_values()[name]

    def facet_values(self) -> dict[str, tuple[str, ...]]:
        """Every facet's values at once (a stored card asks for all seven: one pass, one size bucket)."""
        arch, size = self.arch, self.size
        return {"task": self.tasks, "arch": (arch,) if arch is not None else (),
                "size": (size,) if size is not None else (), "precision": self.precisions,
                "hardware": tuple(self.hardware), "engine": self.engines, "source": self.sources}

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "title": self.title, "capture_id": self.capture_id,
                "captured_at": self.captured_at, "updated": self.updated, "tasks": list(self.tasks),
                "architecture": self.arch, "params_b": self.params_b, "size": self.size,
                "precisions": list(self.precisions), "hardware": dict(self.hardware), "engines": list(self.engines),
                "sources": list(self.sources)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IndexRow:
        return cls(model=str(data["model"]), title=str(data["title"]), capture_id=int(data["capture_id"]),
                   captured_at=data.get("captured_at"), updated=data.get("updated"),
                   tasks=tuple(data.get("tasks") or ()), arch=data.get("architecture"),
                   params_b=data.get("params_b"), precisions=tuple(data.get("precisions") or ()),
                   hardware=dict(data.get("hardware") or {}), engines=tuple(data.get("engines") or ()),
                   sources=tuple(data.get("sources") or ()), min_total_vram_gib=data.get("min_total_vram_gib"))


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """The index's filter state (the web index's URL parameters)."""

    q: str = ""
    task: str | None = None
    arch: str | None = None
    size: str | None = None
    precision: str | None = None
    hardware: str | None = None
    hw_status: str | None = None  # verified | declared
    engine: str | None = None
    source: str | None = None
    sort: str = "name"
    page: int = 1
    per_page: int = 50

    def selected(self) -> dict[str, str]:
        return {k: v for k in FACETS if (v := getattr(self, k))}


@dataclass(frozen=True, slots=True)
class IndexPage:
    rows: tuple[IndexRow, ...]
    counts: Mapping[str, Mapping[str, int]]  # facet -> value -> models (every other filter applied)
    total: int


def size_bucket(params_b: float | None) -> str | None:
    if params_b is None:
        return None
    return next(name for name, top in SIZE_BUCKETS if params_b < top)


def _first(card: LaunchCard, name: str) -> Any:  # Any: a fact's JSON value
    return next((f.value for f in card.facts if f.name == name and f.value is not None), None)


def index_row(capture_id: int, card: LaunchCard) -> IndexRow:
    """The index row of a stored card: title and tasks from their facts (else the repo name and the Hub's
    modalities), hardware a source validated (``verified``) or wrote a command for (``declared``), precisions
    from the checkpoints, engines from the commands, sources from the evidence, "updated" from the recipe's
    date (else the newest commit of its documents, else the capture date)."""
    hardware: dict[str, str] = {}
    for env in card.envs:
        for hw in env.validated_hardware:
            hardware[hw] = "verified"
    for env in card.envs:
        if env.hardware:
            hardware.setdefault(env.hardware, "declared")
    params = _first(card, "params_total_b")
    if params is None and card.hf is not None:
        params = card.hf.params_b
    tasks_fact = _first(card, "tasks")
    tasks = (tuple(str(t) for t in tasks_fact) if isinstance(tasks_fact, list | tuple) and tasks_fact
             else tuple(card.hf.modality) if card.hf is not None else ())
    committed = max((r.committed_at for r in card.evidence if r.committed_at is not None), default=None)
    captured = card.captured_at.isoformat() if card.captured_at else None
    updated = _first(card, "recipe_updated_on") or (
        committed.date().isoformat() if committed else (captured[:10] if captured else None))
    arch = _first(card, "architecture_family")
    title = _first(card, "title")
    return IndexRow(
        model=card.model, title=str(title) if title else card.model.split("/")[-1], capture_id=capture_id,
        captured_at=captured, updated=str(updated)[:10] if updated else None, tasks=tasks,
        arch=str(arch) if arch is not None else None,
        params_b=float(params) if isinstance(params, int | float) and not isinstance(params, bool) else None,
        precisions=tuple(sorted({c.format.lower() for c in card.checkpoints if c.format})),
        hardware=hardware,
        engines=tuple(sorted({e.engine for e in card.envs if e.engine})),
        sources=tuple(sorted({str(r.kind) for r in card.evidence if r.kind})),
        min_total_vram_gib=card.hardware.min_total_vram_gib,
    )


def drop_index(db: Db) -> None:
    """Drop the index tables of any earlier layout (inside the caller's write transaction)."""
    for table in ("model_search", "combo_facets", "facet_combos", "model_facets", "model_rows", "model_index"):
        db.execute(f"DROP TABLE IF EXISTS {table}")


def create_index(db: Db) -> None:
    """The index tables (inside the caller's write transaction)."""
    pg = db.dialect == "postgresql"
    ddl = INDEX_SCHEMA.format(id="BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" if pg else "INTEGER PRIMARY KEY",
                              without_rowid="" if pg else " WITHOUT ROWID", collate=' COLLATE "C"' if pg else "")
    for stmt in (s.strip() for s in ddl.split(";")):
        if stmt:
            db.execute(stmt)
    if db.dialect == "sqlite":
        db.execute(_SQLITE_FTS)
        return
    for stmt in _PG_TRGM:  # a faster LIKE where the server ships pg_trgm; plain LIKE answers the same without it
        db.execute("SAVEPOINT trgm")
        try:
            db.execute(stmt)
        except Exception:  # noqa: BLE001 -- the extension is optional: roll back just this step
            db.execute("ROLLBACK TO SAVEPOINT trgm")
            break
        db.execute("RELEASE SAVEPOINT trgm")


def put(db: Db, row: IndexRow) -> None:
    """Make ``row`` the model's index entry (inside the caller's write transaction)."""
    text = f"{row.model} {row.title}".lower()
    values = row.facet_values()
    facets = [(name, value, row.hardware.get(value) if name == "hardware" else None)
              for name in FACETS for value in dict.fromkeys(values[name])]
    combo = _combo(db, facets)
    for key in ("facet-counts", "combo-models"):  # this connection's own write: its memos are stale
        db.memo.pop(key, None)
    got = db.one(
        "INSERT INTO model_index(model, capture_id, search_text, name_key, updated, params_b, need_gib, combo_id) "
        "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(model) DO UPDATE SET capture_id = excluded.capture_id, "
        "search_text = excluded.search_text, name_key = excluded.name_key, updated = excluded.updated, "
        "params_b = excluded.params_b, need_gib = excluded.need_gib, combo_id = excluded.combo_id RETURNING id",
        (row.model, row.capture_id, text, row.model.lower(), row.updated, row.params_b, row.min_total_vram_gib,
         combo))
    mid = int(got[0]) if got else 0
    db.execute("INSERT INTO model_rows(id, row_json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET "
               "row_json = excluded.row_json",
               (mid, json.dumps({**row.to_json(), "min_total_vram_gib": row.min_total_vram_gib}, sort_keys=True)))
    if db.dialect == "sqlite":
        db.execute("DELETE FROM model_search WHERE rowid = ?", (mid,))
        db.execute("INSERT INTO model_search(rowid, search_text) VALUES (?, ?)", (mid, text))


def _combo(db: Db, facets: list[tuple[str, str, str | None]]) -> int:
    """The id of the combination of ``facets``, created when new (writers take turns: no two create one).

    Ids are kept on the connection (a combination is never deleted or renumbered; a rollback drops the memo,
    with any combination the transaction had created): a stream of cards mostly repeats known combinations."""
    ordered = sorted(facets, key=lambda f: (f[0], f[1], f[2] or ""))
    known = cast("dict[tuple[tuple[str, str, str | None], ...], int]", db.memo.setdefault("combo-ids", {}))
    cid = known.get(tuple(ordered))  # the memo's key is the tuple itself: no JSON text for a known combination
    if cid is not None:
        return cid
    key = json.dumps(ordered, separators=(",", ":"))
    got = db.one("SELECT id FROM facet_combos WHERE combo_key = ?", (key,))
    if got is None:
        got = db.one("INSERT INTO facet_combos(combo_key) VALUES (?) RETURNING id", (key,))
        db.executemany("INSERT INTO combo_facets(cid, facet, value, status) VALUES (?,?,?,?)",
                       [(int(got[0]) if got else 0, *f) for f in facets])
    cid = known[tuple(ordered)] = int(got[0]) if got else 0
    return cid


def _combo_models(db: Db) -> dict[int, int]:
    """combination id -> models having it now; kept on the connection until the catalog changes."""
    key = ("combo-models", db.data_version())
    memo = db.memo.get("combo-models")
    if isinstance(memo, tuple) and memo[0] == key:
        return cast("dict[int, int]", memo[1])
    out = {int(c): int(n) for c, n in db.rows("SELECT combo_id, COUNT(*) FROM model_index GROUP BY combo_id")
           if c is not None}
    db.memo["combo-models"] = (key, out)
    return out


def _text_filter(db: Db, q: str) -> tuple[str, list[object]] | None:
    """SQL (a condition on ``model_index``) for the text query, or None for no text query.

    Raises InputError (field ``q``) for a text holding NUL (U+0000), which neither database reads: SQLite's FTS5
    parses a MATCH expression only up to the NUL (``unterminated string``) and LIKE reads its pattern only up to it
    (``\\x00q`` matched every model), and PostgreSQL text cannot hold the character with code zero (its manual,
    "Character Types")."""
    if "\x00" in q:
        raise InputError(f"a text search cannot hold a NUL character (U+0000) (got {q[:40]!r})", field="q",
                         fix="search without it")
    q = q.strip().lower()
    if not q:
        return None
    like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    if db.dialect == "sqlite" and len(q) >= 3:
        return "model_index.id IN (SELECT rowid FROM model_search WHERE model_search MATCH ?)", [
            '"' + q.replace('"', '""') + '"']
    return "model_index.search_text LIKE ? ESCAPE '\\'", [like]


def _facet_filter(name: str, value: str, hw_status: str | None) -> tuple[str, list[object]]:
    # by combination: the few combinations holding the value, then each row's combo_id (a sorted page stops
    # after its rows instead of probing every model's facet rows)
    if name == "hardware" and hw_status:
        return ("model_index.combo_id IN (SELECT cid FROM combo_facets WHERE facet = ? AND value = ? AND status = ?)",
                [name, value, hw_status])
    return "model_index.combo_id IN (SELECT cid FROM combo_facets WHERE facet = ? AND value = ?)", [name, value]


def _conditions(db: Db, query: IndexQuery) -> tuple[tuple[str, list[object]] | None,
                                                   dict[str, tuple[str, list[object]]]]:
    return _text_filter(db, query.q), {name: _facet_filter(name, value, query.hw_status)
                                       for name, value in query.selected().items()}


def _where(text: tuple[str, list[object]] | None, filters: dict[str, tuple[str, list[object]]],
           skip: str | None = None) -> tuple[str, list[object]]:
    parts = ([text] if text else []) + [f for n, f in filters.items() if n != skip]
    if not parts:
        return "", []
    return " WHERE " + " AND ".join(p[0] for p in parts), [v for p in parts for v in p[1]]


def _everything(db: Db) -> dict[tuple[str, str], int]:
    """(facet, value) -> models, over the whole index; kept on the connection until another writer commits."""
    key = ("facet-counts", db.data_version())
    memo = db.memo.get("facet-counts")
    if isinstance(memo, tuple) and memo[0] == key:
        return cast("dict[tuple[str, str], int]", memo[1])
    models = _combo_models(db)
    out: dict[tuple[str, str], int] = {}
    for cid, f, v in db.rows("SELECT cid, facet, value FROM combo_facets"):
        n = models.get(int(cid), 0)
        if n:
            out[(str(f), str(v))] = out.get((str(f), str(v)), 0) + n
    db.memo["facet-counts"] = (key, out)
    return out


def _counts(db: Db, cond: str, params: list[object], matches: int, size: int,
            facet: str | None = None) -> dict[tuple[str, str], int]:
    """(facet, value) -> models among those meeting ``cond`` (all of ``facet`` only, when given), counted from
    the smaller side: the matching models' own facet rows when they are at most half the index, else the whole
    index's counts less those of the models that do not match."""
    only = " AND f.facet = ?" if facet else ""
    extra: list[object] = [facet] if facet else []
    if not cond:
        every = _everything(db)
        return {k: n for k, n in every.items() if facet is None or k[0] == facet}
    # the matching models counted per facet combination (one row each), then summed over the combinations' values
    sql = ("SELECT f.facet, f.value, SUM(s.n) FROM (SELECT combo_id, COUNT(*) AS n FROM model_index{} "
           "GROUP BY combo_id) s JOIN combo_facets f ON f.cid = s.combo_id{} GROUP BY f.facet, f.value")
    if matches <= size // 2:
        rows = db.rows(sql.format(cond, only), [*params, *extra])
        return {(str(f), str(v)): int(n) for f, v, n in rows}
    out = {k: n for k, n in _everything(db).items() if facet is None or k[0] == facet}
    rest = " WHERE NOT (" + cond.removeprefix(" WHERE ") + ")"
    for f, v, n in db.rows(sql.format(rest, only), [*params, *extra]):
        left = out.get((str(f), str(v)), 0) - int(n)
        if left > 0:
            out[(str(f), str(v))] = left
        else:
            out.pop((str(f), str(v)), None)
    return out


def tally(db: Db, query: IndexQuery) -> tuple[dict[str, dict[str, int]], int]:
    """(facet counts, number of matches) for ``query``'s text and filters (its sort and page play no part).

    The facets no filter names are counted once over the matching models; each filtered facet is counted again
    with its own filter left out (so its counts say what choosing another value of it would give).  Filters
    without a text query are summed over the facet combinations alone (:func:`_tally_combos`: milliseconds
    for any pair of broad filters); with a text query the matching models are counted per combination, from the
    smaller side of the index (see :func:`_counts`), so a broad query costs what a narrow one does.
    """
    if not query.q.strip() and query.selected():
        return _tally_combos(db, query)
    return _tally_models(db, query)


def _tally_combos(db: Db, query: IndexQuery) -> tuple[dict[str, dict[str, int]], int]:
    """:func:`tally` for filters without a text query: the combinations each filter admits, weighted by their
    models (:func:`_combo_models`), summed per facet value."""
    models = _combo_models(db)
    values: dict[int, list[tuple[str, str]]] = {}
    selected = query.selected()
    admits: dict[str, set[int]] = {name: set() for name in selected}
    for cid, f, v, status in db.rows("SELECT cid, facet, value, status FROM combo_facets"):
        cid, f, v = int(cid), str(f), str(v)
        if not models.get(cid):
            continue
        values.setdefault(cid, []).append((f, v))
        if selected.get(f) == v and (f != "hardware" or not query.hw_status or status == query.hw_status):
            admits[f].add(cid)

    def counted(skip: str | None, facet: str | None) -> dict[tuple[str, str], int]:
        kept = [a for name, a in admits.items() if name != skip]
        chosen = set.intersection(*kept) if kept else set(values)
        out: dict[tuple[str, str], int] = {}
        for cid in chosen:
            for f, v in values.get(cid, ()):
                if facet is None or f == facet:
                    out[(f, v)] = out.get((f, v), 0) + models[cid]
        return out

    kept = list(admits.values())
    total = sum(models[cid] for cid in set.intersection(*kept)) if kept else sum(models.values())
    raw: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for (facet, value), n in counted(None, None).items():
        if facet in raw and facet not in selected:
            raw[facet][value] = n
    for name in selected:
        raw[name] = {v: n for (_, v), n in counted(name, name).items()}
    return {name: dict(sorted(t.items(), key=lambda kv: (-kv[1], kv[0]))) for name, t in raw.items()}, total


def _tally_models(db: Db, query: IndexQuery) -> tuple[dict[str, dict[str, int]], int]:
    """:func:`tally` over the matching models' own facet rows (a text query narrows by model, not combination)."""
    text, filters = _conditions(db, query)
    size = count(db)

    def matching(c: str, p: list[object]) -> int:
        row = db.one(f"SELECT COUNT(*) FROM model_index{c}", p) if c else (size,)
        return int(row[0]) if row else 0

    cond, params = _where(text, filters)
    total = matching(cond, params)
    raw: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for (facet, value), n in _counts(db, cond, params, total, size).items():
        if facet in raw and facet not in filters:
            raw[facet][value] = n
    for name in filters:
        fcond, fparams = _where(text, filters, skip=name)
        raw[name] = {v: n for (_, v), n in _counts(db, fcond, fparams, matching(fcond, fparams), size, name).items()}
    counts = {name: dict(sorted(t.items(), key=lambda kv: (-kv[1], kv[0]))) for name, t in raw.items()}
    return counts, total


def page_rows(db: Db, query: IndexQuery) -> tuple[IndexRow, ...]:
    """The rows of ``query``'s page, in its sort order."""
    text, filters = _conditions(db, query)
    cond, params = _where(text, filters)
    name = _binary(db, "name_key")
    order = {"size": f"(params_b IS NULL), params_b DESC, {name}",
             "updated": f"(updated IS NULL), updated DESC, {name}"}.get(query.sort, name)
    start = (max(query.page, 1) - 1) * query.per_page
    # the sort sees only ids and keys; the page's 50 stored rows are read after it
    ids = [int(r[0]) for r in db.rows(f"SELECT id FROM model_index{cond} ORDER BY {order} LIMIT ? OFFSET ?",
                                      [*params, query.per_page, start])]
    if not ids:
        return ()
    marks = ",".join("?" * len(ids))
    stored = {int(i): j for i, j in db.rows(f"SELECT id, row_json FROM model_rows WHERE id IN ({marks})", ids)}
    return tuple(IndexRow.from_json(json.loads(stored[i])) for i in ids)


def search(db: Db, query: IndexQuery) -> IndexPage:
    """One page of the models matching ``query``, the facet counts and the number of matches, all in SQL."""
    counts, total = tally(db, query)
    return IndexPage(rows=page_rows(db, query), counts=counts, total=total)


def _binary(db: Db, column: str) -> str:
    """``column`` compared by code point on both databases (PostgreSQL would otherwise sort by the server's
    locale, and a page of the index would differ between the two)."""
    return f'{column} COLLATE "C"' if db.dialect == "postgresql" else column


def get(db: Db, model: str) -> IndexRow | None:
    row = db.one("SELECT r.row_json FROM model_index i JOIN model_rows r ON r.id = i.id WHERE i.model = ?", (model,))
    return IndexRow.from_json(json.loads(row[0])) if row else None


def names(db: Db) -> list[str]:
    return [str(r[0]) for r in db.rows(f"SELECT model FROM model_index ORDER BY {_binary(db, 'name_key')}")]


def by_hardware(db: Db, hw: str, node_gib: float | None) -> dict[str, list[str]]:
    """Models a source verifies or declares ``hw`` for, and (``node_gib`` given) models whose planned minimum
    total memory fits that much: the hardware page's lists, in SQL."""
    out: dict[str, list[str]] = {"verified": [], "declared": [], "fits": []}
    for model, status in db.rows("SELECT i.model, f.status FROM combo_facets f JOIN model_index i ON "
                                 "i.combo_id = f.cid WHERE f.facet = 'hardware' AND f.value = ? ORDER BY "
                                 + _binary(db, "i.name_key"),
                                 (hw,)):
        out.setdefault(str(status), []).append(str(model))
    if node_gib is not None:
        out["fits"] = [str(r[0]) for r in db.rows(
            "SELECT model FROM model_index WHERE need_gib IS NOT NULL AND need_gib <= ? ORDER BY "
            + _binary(db, "name_key"),
            (node_gib,))]
    return out


def count(db: Db) -> int:
    row = db.one("SELECT COUNT(*) FROM model_index")
    return int(row[0]) if row else 0
