"""HTML rendering for the web catalog: one Jinja2 environment, autoescaped; sanitized Markdown."""

from __future__ import annotations

import json
import shlex
from typing import Any

import jinja2
import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

# What a recipe guide may keep after rendering: text structure, code, tables and
# plain links.  Links get rel=noopener noreferrer; only http(s) and in-page links survive.
_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "code", "pre", "em", "strong", "a",
         "blockquote", "table", "thead", "tbody", "tr", "th", "td", "hr", "br"}


def _figure_text(value: float, decimals: int, spec: str = "") -> str:
    from launchcard.predict import figure_text  # the predictor loads on first use, as web._predicted's calls do

    return figure_text(value, decimals, spec)


def _memory_bar(m: Any, uid: str) -> Markup:
    """The SVG memory bar of one builder memory entry (escaped inside ``memory_bar``)."""
    from launchcard.web._svg import memory_bar

    return Markup(memory_bar(m.get("breakdown") or {}, gpu=str(m.get("gpu")), role=str(m.get("role")), uid=uid))


def _perf_chart(chart: Any) -> Markup:
    """The SVG chart of one performance chart entry (escaped inside ``perf_chart``)."""
    from launchcard.web._svg import Series, perf_chart

    series = [Series(str(s["label"]), tuple((float(x), float(y)) for x, y in s["points"]),
                     tuple(s.get("links") or ()), bool(s.get("predicted")), bool(s.get("measured")),
                     int(s["colour"]) if isinstance(s.get("colour"), int) else None)
              for s in chart["series"]]
    extra = {"point": str(chart["point"])} if chart.get("point") else {}
    return Markup(perf_chart(series, title=str(chart["title"]), x_label=str(chart["x"]), y_label=str(chart["y"]),
                             uid=str(chart["id"]), x_log=bool(chart.get("x_log", True)), **extra) or "")


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
        self.env.globals["memory_bar"] = _memory_bar
        self.env.globals["perf_chart"] = _perf_chart
        self.env.filters["safe_href"] = lambda v: v if isinstance(v, str) and v.startswith("https://") else None
        # a command as a shell takes it (`launchcard predict` and `plan` print it so: a JSON flag value keeps quotes)
        self.env.filters["shell"] = lambda v: shlex.join(str(w) for w in v) if isinstance(v, (list, tuple)) else ""
        # a predicted figure at its decimals, never a non-zero one written as zero (predict's text writes it so)
        self.env.filters["figure"] = _figure_text
        # html=False: raw HTML in a guide is shown as text, never passed through.
        self._md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

    # Any: Jinja template context: JSON page data of every shape
    def page(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def markdown(self, text: str) -> str:
        html = self._md.render(text)
        return nh3.clean(html, tags=_TAGS, attributes={"a": {"href", "title"}, "code": {"class"}},
                         url_schemes={"http", "https"}, link_rel="noopener noreferrer")
