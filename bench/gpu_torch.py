"""PyTorch with a CUDA GPU for the bench scripts that measure one (gpu_*.py), or one line saying why not.

Those scripts run on a lent GPU machine with nothing but PyTorch; on this one they must still answer ``--help`` and
refuse in one line, never a traceback."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def cuda_torch(script: str) -> Any | None:
    """The ``torch`` module where it is installed and sees a CUDA GPU; else None after one line on stderr naming
    ``script`` and what is missing."""
    try:
        import torch
    except ImportError:
        print(f"bench/{script}: needs PyTorch with CUDA (run it on a GPU machine)", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"bench/{script}: no CUDA GPU visible to PyTorch; run it on a GPU machine", file=sys.stderr)
        return None
    return torch


def start(doc: str | None, script: str, argv: list[str] | None, **counts: int) -> tuple[argparse.Namespace, Any] | None:
    """A GPU script's command line (``--out FILE`` for its JSON, and an integer option per ``counts`` entry with
    that default) parsed from ``argv``, and :func:`cuda_torch`; None where there is no CUDA PyTorch (said on
    stderr)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--out", default="", help="also write the JSON document to this file")
    for name, default in counts.items():
        ap.add_argument(f"--{name}", type=int, default=default)
    args = ap.parse_args(argv)
    torch = cuda_torch(script)
    return None if torch is None else (args, torch)


def finish(doc: dict[str, Any], out: str, indent: int = 2) -> int:
    """Print a GPU script's JSON document and, with ``--out``, write it there too; the script's exit status."""
    import json

    text = json.dumps(doc, indent=indent)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return 0
