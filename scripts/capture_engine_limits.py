"""Capture what vLLM's quantization methods accept, from the engine itself: ``python scripts/capture_engine_limits.py``.

Runs in the vLLM environment (default ``.cache/vllm-venv``, vLLM 0.32.0 CPU): for every
name in ``vllm.model_executor.layers.quantization.QUANTIZATION_METHODS`` it asks the
method's config class for ``get_supported_act_dtypes()`` and ``get_min_capability()``,
the two values ``VllmConfig._get_quantization_config`` compares with ``--dtype`` and the
GPU's compute capability before vLLM starts (it raises "... is not supported for
quantization method ..." / "... is not supported for the current GPU").  A method whose
act dtypes depend on the checkpoint (an instance method) records ``null``.

Writes ``src/launchcard/data/engine_limits/vllm-<version>.json`` with each value's source
file and line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / ".cache" / "vllm-venv" / "bin" / "python"

_PROBE = r'''
import inspect, json, sys
import vllm
from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS, get_quantization_config
import vllm.config.vllm as vc
root = vllm.__path__[0].rsplit("/vllm", 1)[0] + "/"
src = inspect.getsource(vc)
line = next(i for i, t in enumerate(src.splitlines(), 1) if "is not supported for quantization" in t)
cap_line = next(i for i, t in enumerate(src.splitlines(), 1) if "is not supported for the current GPU" in t)
out = {}
for name in QUANTIZATION_METHODS:
    cls = get_quantization_config(name)
    entry = {"class": cls.__name__}
    fn = cls.get_supported_act_dtypes
    try:
        entry["act_dtypes"] = sorted(str(d).replace("torch.", "") for d in fn())
    except TypeError:
        entry["act_dtypes"] = None  # depends on the checkpoint's config
    entry["min_capability"] = cls.get_min_capability()
    f = inspect.getsourcefile(fn) or ""
    entry["source"] = f"{f.replace(root, '')}:{inspect.getsourcelines(fn)[1]}"
    out[name] = entry
print(json.dumps({"engine": "vllm", "version": vllm.__version__.split("+")[0], "methods": out,
                  "dtype_rule": f"vllm/config/vllm.py:{line}", "capability_rule": f"vllm/config/vllm.py:{cap_line}"}))
'''


def main() -> int:
    host = Path(sys.argv[1]) if len(sys.argv) > 1 else HOST
    done = subprocess.run([str(host), "-c", _PROBE], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return 1
    data = json.loads(done.stdout.strip().splitlines()[-1])
    out = ROOT / "src" / "launchcard" / "data" / "engine_limits" / f"vllm-{data['version']}.json"
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
