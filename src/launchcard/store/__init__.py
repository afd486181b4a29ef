"""SQLite catalog of captured launch cards, with history and diffs."""

from launchcard.store._catalog import (
    Capture,
    Catalog,
    CommitRef,
    IngestResult,
    content_fingerprint,
    default_catalog_path,
    docs_fingerprint,
)
from launchcard.store._diff import CaptureDiff, Change, diff_captures, diff_cards
from launchcard.store._documents import corpus_documents, materialize_corpus
from launchcard.store._drift import drift_badges, store_drift

__all__ = [
    "Capture",
    "CaptureDiff",
    "Catalog",
    "Change",
    "CommitRef",
    "IngestResult",
    "content_fingerprint",
    "corpus_documents",
    "default_catalog_path",
    "diff_captures",
    "diff_cards",
    "docs_fingerprint",
    "drift_badges",
    "materialize_corpus",
    "store_drift",
]
