"""PyTorch with a CUDA GPU for the bench scripts that measure one (gpu_*.py), or one line saying why not.

Those scripts run on a lent GPU machine with nothing but PyTorch; on this one they must still answer ``--help`` and
refuse in one line, never a traceback."""

from __future__ import annotations

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
