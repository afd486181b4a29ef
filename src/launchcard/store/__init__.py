"""The catalog of captured launch cards (SQLite, or PostgreSQL), with history, diffs and the model index."""

from launchcard.store._catalog import Capture, Catalog, IngestResult, default_catalog_path, refuse_other_url
from launchcard.store._diff import CaptureDiff, Change, diff_captures, diff_cards
from launchcard.store._documents import corpus_documents, materialize_corpus
from launchcard.store._drift import drift_badges, store_drift
from launchcard.store._index import FACETS, SIZE_BUCKETS, SORTS, IndexPage, IndexQuery, IndexRow, size_bucket
from launchcard.store._prepare import CommitRef, Prepared, content_fingerprint, docs_fingerprint, prepare
from launchcard.store._sql import CatalogTarget, DbError, is_url, redact
from launchcard.store._stream import prepared_cards, read_cards

__all__ = [
    "FACETS",
    "SIZE_BUCKETS",
    "SORTS",
    "Capture",
    "CaptureDiff",
    "Catalog",
    "CatalogTarget",
    "Change",
    "CommitRef",
    "DbError",
    "IndexPage",
    "IndexQuery",
    "IndexRow",
    "IngestResult",
    "Prepared",
    "content_fingerprint",
    "corpus_documents",
    "default_catalog_path",
    "diff_captures",
    "diff_cards",
    "docs_fingerprint",
    "drift_badges",
    "is_url",
    "materialize_corpus",
    "prepare",
    "prepared_cards",
    "read_cards",
    "redact",
    "refuse_other_url",
    "size_bucket",
    "store_drift",
]
