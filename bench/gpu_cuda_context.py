"""The device memory a fresh PyTorch process holds outside torch's allocator, measured on a GPU.

Why: TensorRT-LLM's PyTorch backend sizes its KV pool from ``torch.cuda.mem_get_info`` after its estimation run
(pyexecutor/_util.py KvCacheCreator.estimate_max_tokens: ``extra_cost = (total - free) - allocated``), so the
memory the process holds outside torch from its very start (the CUDA context, the modules the driver loads with
it) is taken from the pool.  vLLM's profile takes its baseline after that context exists (worker init_snapshot;
memory_profiling's ``non_torch_increase = after_profile - before_create``), so the memory planner's non-torch
figures, fitted on vLLM's logs, hold only what came after it.  This script measures, with PyTorch:

* ``context_gib``: ``total - free - torch.cuda.memory_reserved()`` right after the first CUDA call (the
  baseline vLLM's profile starts from, which its non-torch figure leaves out);
* ``after_kernels_gib``: the same after a bf16 GEMM and a scaled-dot-product attention ran and the cache was
  emptied (``total - free - memory_allocated()``, TensorRT-LLM's own reading), for comparison;
* ``total_gib``: ``mem_get_info``'s total, the device memory TensorRT-LLM and vLLM take shares of.

    python bench/gpu_cuda_context.py [--out results.json]

Needs a CUDA GPU (run it with the device tool); prints one JSON document.  Each figure is the median of
``--runs`` fresh processes.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

GiB = 2**30

_CHILD = r"""
import json, torch, torch.nn.functional as F
torch.cuda.init()
torch.empty(0, device="cuda")
free, total = torch.cuda.mem_get_info()
ctx = total - free - torch.cuda.memory_reserved()
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
(a @ a).sum().item()
q = torch.randn(8, 32, 1024, 128, device="cuda", dtype=torch.bfloat16)
F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().item()
torch.cuda.synchronize()
del a, q
torch.cuda.empty_cache()
free2, _ = torch.cuda.mem_get_info()
after = total - free2 - torch.cuda.memory_allocated()
print(json.dumps({"total": total, "context": ctx, "after_kernels": after,
                  "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}))
"""


def main(argv: list[str] | None = None) -> int:
    from gpu_torch import finish, start

    got = start(__doc__, "gpu_cuda_context.py", argv, runs=5)
    if got is None:
        return 2
    args, _torch = got  # the children import it themselves
    runs = []
    for _ in range(args.runs):  # a fresh process each: the context is created once per process
        out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    doc = {"gpu": runs[0]["gpu"], "torch": runs[0]["torch"], "runs": len(runs),
           "total_gib": round(runs[0]["total"] / GiB, 3),
           "context_gib": round(statistics.median(r["context"] for r in runs) / GiB, 3),
           "after_kernels_gib": round(statistics.median(r["after_kernels"] for r in runs) / GiB, 3),
           "each": [{"context_gib": round(r["context"] / GiB, 3),
                     "after_kernels_gib": round(r["after_kernels"] / GiB, 3)} for r in runs]}
    return finish(doc, args.out, indent=1)


if __name__ == "__main__":
    sys.exit(main())
