#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite.
# Extra set-up steps (test fixtures such as the vLLM server environment or the
# browser) live in scripts/setup.d/*.sh, run in name order.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  echo "== set-up: $step"
  bash "$step"
done
# The set-up steps above built the vLLM server fixture, so the live tests must
# run (a missing fixture fails them instead of skipping them).
export LAUNCHCARD_REQUIRE_LIVE="${LAUNCHCARD_REQUIRE_LIVE:-1}"
exec .venv/bin/python -m pytest "$@"
