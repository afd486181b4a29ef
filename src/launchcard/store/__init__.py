"""SQLite catalog of captured launch cards, with history and diffs."""

from launchcard.store._catalog import Capture, Catalog, default_catalog_path
from launchcard.store._diff import CaptureDiff, Change, diff_captures, diff_cards

__all__ = ["Capture", "CaptureDiff", "Catalog", "Change", "default_catalog_path", "diff_captures", "diff_cards"]
