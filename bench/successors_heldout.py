"""Score launchcard's flag successors on the held-out list: ``python bench/successors_heldout.py [--cli]``.

Reads ``tests/fixtures/successors_heldout.json`` (flags and variables the engines removed, each with the
successor its upstream pull requests, release notes or messages name, or none) and asks ``launchcard check``
about each, as a user would: ``check --engine vllm --version 0.34.0 -- [VAR=value] vllm serve m FLAG VALUE``.
Prints per entry the fix launchcard gives and the totals: named (the fix is one of the accepted
replacements), none (reported as "names no successor" where none is known), wrong (any other replacement),
missed (a known successor not named).  ``--cli`` runs the real command line per entry (slower).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "successors_heldout.json"


def command(entry: dict[str, Any], versions: dict[str, str]) -> tuple[str, str, list[str]]:
    """(engine, version, argv) that passes the entry's flag or variable the way a user would."""
    engine, name, value = entry["engine"], entry["name"], entry.get("value")
    version = versions["version"] if engine == "vllm" else versions["sglang_version"]
    head = ["vllm", "serve", "m"] if engine == "vllm" else ["python3", "-m", "sglang.launch_server",
                                                               "--model-path", "m"]
    if name.startswith("-"):
        return engine, version, head + [name] + ([value] if value is not None else [])
    return engine, version, [f"{name}={value}"] + head


def fix_of(line: str) -> str:
    """The replacement a finding line names ("" for none): ``...; use X (evidence`` / ``use X instead``."""
    m = re.search(r"\]; use (.*?)(?: instead)?(?: \(named by [^)]*\))? \(evidence", line)
    if m:
        return m.group(1)
    m = re.search(r"; use (.*?) instead", line)
    return m.group(1) if m else ""


def score(lines: dict[str, str], entries: list[dict[str, Any]]) -> dict[str, Any]:
    rows, totals = [], {"known": 0, "named": 0, "wrong": 0, "missed": 0, "none_ok": 0, "none_cases": 0}
    for e in entries:
        line = lines.get(e["name"], "")
        got = fix_of(line)
        want = e.get("want")
        says_none = "names no successor" in line
        if want:
            totals["known"] += 1
            verdict = "named" if got in want else "wrong" if got else "missed"
        else:
            totals["none_cases"] += 1
            verdict = "wrong" if got else "none_ok" if (says_none and "last accepted in" in line) or (
                says_none and "no longer reads it" in line) else "missed"
        totals[verdict] += 1
        rows.append({"name": e["name"], "engine": e["engine"], "verdict": verdict, "fix": got, "want": want,
                     "line": line})
    return {"rows": rows, "totals": totals}


def run(cli: bool = False) -> dict[str, Any]:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    lines: dict[str, str] = {}
    for e in data["entries"]:
        engine, version, argv = command(e, data["checked_against"])
        if cli:
            out = subprocess.run([sys.executable, "-m", "launchcard", "check", "--engine", engine, "--version",
                                  version, "--", *argv], capture_output=True, text=True, cwd=ROOT).stdout
        else:
            from launchcard.flags import check_argv, format_finding

            out = "\n".join(format_finding(f) for f in check_argv(argv, engine=engine, version=version))
        lines[e["name"]] = next((ln for ln in out.splitlines() if ln.split(": ", 2)[1:2] == [e["name"]]), "")
    return score(lines, data["entries"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", action="store_true", help="ask the launchcard command (a subprocess per entry) "
                                                       "instead of the library")
    result = run(ap.parse_args(argv).cli)
    for r in result["rows"]:
        print(f"{r['verdict']:8} {r['engine']:6} {r['name']:45} {r['fix'] or '-'}")
    t = result["totals"]
    print(f"\nknown successors {t['known']}: named {t['named']}, missed {t['missed']}; wrong {t['wrong']}; "
          f"no-successor cases {t['none_cases']}: reported as none {t['none_ok']}")
    print("command per entry: launchcard check --engine E --version V -- " + shlex.join(["[VAR=value]", "..."]))
    return 0 if t["wrong"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
