#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the main job: resolve and
# explain GLM-5.3-Flash on one 8xH100 node from the recipes corpus.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
recipes="${LAUNCHCARD_RECIPES:-$root/../shared/corpus/vllm-recipes}"
exec .venv/bin/launchcard resolve zai-org/GLM-5.3-Flash --recipes "$recipes" --hardware h100 --explain
