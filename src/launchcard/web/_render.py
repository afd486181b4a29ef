"""HTML rendering for the web catalog: one Jinja2 environment, autoescaped; sanitized Markdown."""

from __future__ import annotations

import json
from typing import Any

import jinja2
import nh3
from markdown_it import MarkdownIt

# What a recipe guide may keep after rendering: text structure, code, tables and
# plain links.  Links get rel=noopener noreferrer; only http(s) and in-page links survive.
_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "code", "pre", "em", "strong", "a",
         "blockquote", "table", "thead", "tbody", "tr", "th", "td", "hr", "br"}


class Renderer:
    def __init__(self) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("launchcard", "data/templates/web"),
            autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
            undefined=jinja2.ChainableUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
        self.env.filters["safe_href"] = lambda v: v if isinstance(v, str) and v.startswith("https://") else None
        # html=False: raw HTML in a guide is shown as text, never passed through.
        self._md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

    # Any: Jinja template context: JSON page data of every shape
    def page(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def markdown(self, text: str) -> str:
        html = self._md.render(text)
        return nh3.clean(html, tags=_TAGS, attributes={"a": {"href", "title"}, "code": {"class"}},
                         url_schemes={"http", "https"}, link_rel="noopener noreferrer")
