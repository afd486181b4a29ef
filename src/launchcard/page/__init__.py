"""The recipe index page: its data (the JSON twin) and its Markdown and HTML views.

Public API: :func:`page_data`, :func:`page_markdown`, :func:`page_html`, :func:`page_json`.
"""

from __future__ import annotations

from launchcard.page._data import PAGE_SCHEMA, page_data, page_json
from launchcard.page._html import page_html
from launchcard.page._markdown import page_markdown

__all__ = ["PAGE_SCHEMA", "page_data", "page_html", "page_json", "page_markdown"]
