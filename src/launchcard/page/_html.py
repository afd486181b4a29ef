"""The recipe index page as one self-contained HTML document (Jinja2, autoescaped).

Every string from the recipe goes through Jinja2's escaping; links are only
emitted for ``https://`` URLs the page data built itself.  No scripts, one
inline style sheet, so the page works offline and under a strict CSP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from launchcard.page._markdown import command_text, conflict_text, env_label, plain

if TYPE_CHECKING:
    import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # only the HTML view needs it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("launchcard", "data/templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    env.filters["safe_href"] = lambda v: v if isinstance(v, str) and v.startswith("https://") else None
    env.filters["command_text"] = command_text
    env.filters["env_label"] = env_label
    env.filters["conflict_text"] = conflict_text
    env.filters["plain"] = plain
    return env


# Any: the page data is a JSON document (page_data)
def page_html(page: Mapping[str, Any]) -> str:
    return environment().get_template("page.html.j2").render(page=page)
