#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite.
# Extra set-up steps (test fixtures such as the vLLM server environment or the
# browser) live in scripts/setup.d/*.sh, run in name order.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
# The type/lint gate runs first (seconds, and it fails fast before the slow
# fixture set-up): ruff over everything we ship or run, mypy --strict over the
# library.  Both always run so one report shows every problem; either failing
# fails the whole run.  Configuration: [tool.ruff] and [tool.mypy] in pyproject.toml.
gate=0
echo "== gate: ruff check src tests bench scripts"
.venv/bin/ruff check src tests bench scripts || gate=1
echo "== gate: mypy --strict src"
.venv/bin/mypy --strict src || gate=1
if [ "$gate" -ne 0 ]; then
  echo "test.sh: the type/lint gate failed (above); fix it before the tests run" >&2
  exit 1
fi
for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  echo "== set-up: $step"
  bash "$step"
done
# The set-up steps above built the vLLM server fixture, so the live tests must
# run (a missing fixture fails them instead of skipping them).
export LAUNCHCARD_REQUIRE_LIVE="${LAUNCHCARD_REQUIRE_LIVE:-1}"
# Likewise the PostgreSQL catalog tests (30-postgres.sh installed the server): fail, never skip, here.
export LAUNCHCARD_REQUIRE_POSTGRES="${LAUNCHCARD_REQUIRE_POSTGRES:-1}"
exec .venv/bin/python -m pytest "$@"
