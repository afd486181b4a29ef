"""The recipe index page as Markdown, section for section like the published pages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_HEADER_ROWS = (
    ("Type", "type"),
    ("Model family", "model_family"),
    ("Model", "model_id"),
    ("Original author", "original_author"),
    ("Original project", "original_project"),
    ("Pinned document", "pinned_document"),
    ("Source revision", "source_revision"),
    ("Source commit time (not experiment date)", "source_commit_time"),
    ("Checked", "checked"),
    ("Experiment date", "experiment_date"),
)


def _plain(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "None" if value is None else str(value)


# Any: the page data is a JSON document (page_data)
def page_markdown(page: Mapping[str, Any]) -> str:
    h = page["header"]
    out = [f"# {page['title']}", "", page["summary"], ""]
    rows = [f"- {label}: {_plain(h.get(key))}" for label, key in _HEADER_ROWS]
    rows.insert(1, f"- Evidence: {h['evidence']}; site reproduced: {str(h['site_reproduced']).lower()}")
    rows += [
        f"- Runtime topics: {_plain(h['runtime_topics'])}",
        f"- Hardware topics: {_plain(h['hardware_topics'])}",
        f"- Reported setup: {_plain(h['reported_setup'])}",
        f"- Performance figures: {h['performance_figures']}",
        f"- Source document sha256: {h['source_document_sha256']}",
        f"- Revision taken from: {h['source_revision_from']}",
    ]
    out += rows
    out += ["", "## Conditions", "", "Unknown is null. Recipe options are not measured benchmark settings.", "",
            "```json", json.dumps({"conditions": page["conditions"], "test_profiles": page["test_profiles"],
                                   "recipe_parameters": page["recipe_parameters"],
                                   "deployment_options": page["deployment_options"]}, indent=2,
                                  ensure_ascii=False), "```", ""]
    out += ["## Reading notes", "", *[f"- {n}" for n in page["reading_notes"]], ""]
    out += ["## Limits", "", *[f"- {n}" for n in page["limits"]], ""]
    out += ["## License declaration", "", json.dumps(page["license"], ensure_ascii=False), ""]
    ed = page["editorial"]
    out += ["", "## Editorial answer", "", ed["text"], "", f"By {ed['by']} · {ed['date']}", "", ed["label"], ""]
    for qa in page["faq"]:
        out += [f"## {qa['question']}", "", qa["answer"], "", "Sources: " + ", ".join(qa["sources"]), ""]
    out += ["## Attributed configuration facts", "", "```json",
            json.dumps(page["facts"], indent=2, ensure_ascii=False), "```"]
    if page.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in page["notes"]]]
    return "\n".join(out) + "\n"
