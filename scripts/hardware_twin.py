"""Write (or check) the JSON twin of the hardware catalog: ``src/launchcard/data/hardware.json``.

The twin holds ``data/hardware.yaml`` as the project's YAML loader parses it, under the sha256 of the YAML's bytes;
``launchcard.hardware.catalog`` reads it instead of composing the YAML (~25 ms a command) while the sha256 matches,
and parses the YAML otherwise.  Run it after editing hardware.yaml (tests/test_hardware.py fails on a stale twin).

    python scripts/hardware_twin.py            # write the twin
    python scripts/hardware_twin.py --check    # exit 1 when it is missing or stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard.hardware import DATA_FILE, TWIN_FILE, twin_document  # noqa: E402

DATA = ROOT / "src" / "launchcard" / "data"


def render() -> str:
    return json.dumps(twin_document((DATA / DATA_FILE).read_bytes()), indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the twin is missing or stale")
    args = ap.parse_args(argv)
    text, path = render(), DATA / TWIN_FILE
    if args.check:
        ok = path.is_file() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'fresh' if ok else 'STALE: run python scripts/hardware_twin.py'}")
        return 0 if ok else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
