"""The recipe index page as Markdown, section for section like the published pages."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

UNKNOWN = "unknown"  # how a null reads in prose (the JSON blocks keep null)

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


def plain(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return UNKNOWN if value is None else str(value)


def command_text(env: Mapping[str, Any]) -> str:
    """A source's command as one shell line: its environment prefix, then the argv, quoted."""
    prefix = [f"{k}={shlex.quote(str(v))}" for k, v in (env.get("env") or {}).items()]
    return " ".join([*prefix, shlex.join(str(a) for a in env.get("argv") or ())])


def env_label(env: Mapping[str, Any]) -> str:
    """``sglang, role decode, gb300 × 4, image lmsysorg/sglang:latest`` (what is known of one command)."""
    parts = [str(env.get("engine") or UNKNOWN)]
    if env.get("role") and env["role"] != "single":
        parts.append(f"role {env['role']}")
    hw, gpus = env.get("hardware"), env.get("gpus")
    if hw or gpus:
        parts.append(f"{hw or 'hardware unknown'} × {gpus}" if gpus else str(hw))
    if env.get("image"):
        parts.append(f"image {env['image']}")
    return ", ".join(parts)


def conflict_text(conflict: Mapping[str, Any]) -> str:
    """``321.0 (vllm-recipes, URL) vs 320.0 (sglang-cookbook, URL)``."""
    sides = []
    for side in conflict.get("sides") or ():
        ev = side.get("evidence") or {}
        where = ", ".join(str(x) for x in (ev.get("kind"), side.get("scope"), ev.get("url")) if x)
        sides.append(f"{plain(side.get('value'))} ({where})")
    return " vs ".join(sides)


def _sources_markdown(sources: Sequence[Mapping[str, Any]], conflicts: Sequence[Mapping[str, Any]],
                      gaps: Sequence[Mapping[str, Any]], with_card: bool) -> list[str]:
    out = ["## Sources side by side", ""]
    if not with_card:
        return [*out, "Only the vLLM recipe was read; pass --corpus to set every source's commands beside it.", ""]
    out += ["| source | document | revision | commands |", "|---|---|---|---|"]
    for s in sources:
        doc = f"[{s.get('path') or s.get('url')}]({s['url']})" if s.get("url") else plain(s.get("path"))
        out.append(f"| {s['kind']} | {doc} | {plain(s.get('revision'))} | {len(s.get('envs') or ())} |")
    out.append("")
    for s in sources:
        for env in s.get("envs") or ():
            out += [f"### {s['kind']}: {env_label(env)}", ""]
            if env.get("evidence_url"):
                out += [f"Source: {env['evidence_url']}", ""]
            out += ["```bash", command_text(env), "```", ""]
            out += _flag_table(env.get("flags") or ())
    out += ["## Conflicts between sources", ""]
    out += [f"- {c['field']}: {conflict_text(c)}" for c in conflicts] or ["- none: every source agrees."]
    out += ["", "## Gaps", ""]
    out += [f"- {g['field']}: {g['why']}" for g in gaps] or ["- none."]
    return [*out, ""]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _flag_table(flags: Sequence[Mapping[str, Any]]) -> list[str]:
    """What each flag and its chosen value do, each sentence with the engine text it was read from."""
    if not flags:
        return []
    out = ["| Flag | Value | What it does |", "|---|---|---|"]
    for f in flags:
        what = f"{f['what']} ({f['cited']})" if f.get("cited") else str(f["what"])
        if f.get("value_what"):
            cite = f.get("value_url") or f.get("value_cited")
            what += f" {f['value_what']}" + (f" ({cite})" if cite else "")
        value = "(no value)" if f.get("value") is None else f"`{_cell(f['value'])}`"
        out.append(f"| `{_cell(f['flag'])}` | {value} | {_cell(what)} |")
    return [*out, ""]


# Any: the page data is a JSON document (page_data)
def page_markdown(page: Mapping[str, Any]) -> str:
    h = page["header"]
    out = [f"# {page['title']}", "", page["summary"], ""]
    rows = [f"- {label}: {plain(h.get(key))}" for label, key in _HEADER_ROWS]
    rows.insert(1, f"- Evidence: {h['evidence']}; site reproduced: {str(h['site_reproduced']).lower()}")
    rows += [
        f"- Runtime topics: {plain(h['runtime_topics'])}",
        f"- Hardware topics: {plain(h['hardware_topics'])}",
        f"- Reported setup: {plain(h['reported_setup'])}",
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
    out += _sources_markdown(page.get("sources") or (), page.get("conflicts") or (), page.get("gaps") or (),
                             bool(page.get("sources")))
    out += ["## Attributed configuration facts", "", "```json",
            json.dumps(page["facts"], indent=2, ensure_ascii=False), "```"]
    if page.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in page["notes"]]]
    return "\n".join(out) + "\n"
