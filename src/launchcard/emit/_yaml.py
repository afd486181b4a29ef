"""YAML writing for the compose, Kubernetes and Truss targets.

Readers of these files differ: Kubernetes (sigs.k8s.io/yaml) follows YAML 1.1,
where ``yes``/``on``/``0777``/``1:30`` are not strings, while ruamel writes
YAML 1.2.  Every string that a YAML 1.1 *or* 1.2 reader would not read back as
that same string is therefore double-quoted.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML

# A ruamel YAML object keeps its emitter, serializer and representer between dumps: two threads
# dumping through one object interleave their events and leave it broken for every later dump
# (the web catalog serves requests from a thread pool).  Each thread gets its own dumper.
_LOCAL = threading.local()
_BREAKS = re.compile("[\x85\u2028\u2029\r\n]|[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def plain_safe(text: str) -> bool:
    """True when ``text`` has no line break or unprintable character (safe in block scalars)."""
    return not _BREAKS.search(text)


def _make_dumper() -> YAML:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.representer import RoundTripRepresenter
    from ruamel.yaml.resolver import VersionedResolver

    str_tag = "tag:yaml.org,2002:str"
    resolvers = [VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2))]

    class Representer(RoundTripRepresenter):
        def ignore_aliases(self, data: object) -> bool:  # shared dicts stay plain copies, no &id001
            return True

    def represent_str(rep: RoundTripRepresenter, data: str) -> ScalarNode:
        style = None
        if any(r.resolve(ScalarNode, data, (True, False)) != str_tag for r in resolvers) or _BREAKS.search(data):
            # Double quotes escape unusual line breaks; ruamel's single-quoted style folds a NEL.
            style = '"'
        return rep.represent_scalar(str_tag, data, style=style)

    Representer.add_representer(str, represent_str)
    yaml = YAML(typ="rt")
    yaml.Representer = Representer
    yaml.default_flow_style = False
    yaml.width = 1 << 16  # never fold long command lines
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    return yaml


# Any: the documents are JSON-shaped values (dict/list/str/int/bool/None, nested) of any shape
def dump(docs: Sequence[Any]) -> str:
    """Plain Python objects (dict/list/str/int/bool/None) as one or more YAML documents."""
    dumper: YAML | None = getattr(_LOCAL, "dumper", None)
    if dumper is None:
        dumper = _LOCAL.dumper = _make_dumper()
    out = []
    for doc in docs:
        buf = io.StringIO()
        dumper.dump(doc, buf)
        out.append(buf.getvalue())
    return "---\n".join(out)
