#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the main job: build the
# GLM-5.3-Flash launch card from every source in the corpus, store it in the
# default SQLite catalog, and print the resolved 8xH100 command with the
# conflicts between sources.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
corpus="${LAUNCHCARD_CORPUS:-$root/../shared/corpus}"
exec .venv/bin/launchcard card zai-org/GLM-5.3-Flash --corpus "$corpus" --store --hardware h100
