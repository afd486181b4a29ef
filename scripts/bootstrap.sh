#!/usr/bin/env bash
# Creates .venv at the repository root and installs launchcard with its test
# extras.  Idempotent: re-running only reinstalls when pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
stamp=.venv/.launchcard-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  log=.venv/pip-install.log
  if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e ".[test]"; } \
      >"$log" 2>&1; then
    cat "$log" >&2
    echo "bootstrap: installing launchcard into .venv failed (log above)" >&2
    exit 1
  fi
  touch "$stamp"
fi
# Machines here set PYTHONDONTWRITEBYTECODE=1, so an editable install would
# recompile launchcard on every start; write the bytecode once instead.
.venv/bin/python -m compileall -q src >/dev/null
