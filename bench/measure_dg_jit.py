"""CPU time of one JIT compile of DeepGEMM's paged-MQA-logits schedule kernel (launchcard.predict._sglang_nsa's
``JIT_COMPILE_S``).

SGLang's DeepSeek Sparse Attention decode indexer calls ``deep_gemm.get_paged_mqa_logits_metadata`` every decode
step (nsa_indexer.py 0.5.6.post2 L298); DeepGEMM generates ``smxx_paged_mqa_logits_metadata<aligned_batch_size,
split_kv, num_sms>`` with the batch rounded up to 32 as a template argument
(csrc/jit_kernels/impls/smxx_fp8_paged_mqa_logits.hpp ``generate_impl``) and builds it with NVCC the first time a
process meets it (csrc/jit/compiler.hpp ``build``; SGLang keeps NVCC, not NVRTC: deep_gemm_wrapper/compile_utils.py
L37-39).  This script writes the source ``generate_impl`` writes, for a few rounded sizes, and runs the NVCC command
``NVCCCompiler::compile`` runs (its flags at the commit given, sm_90a, the H200's 132 SMs, ``split_kv`` 64 x 4),
reporting each compile's wall time and its user + system CPU time (the children's rusage).  Every TP rank compiles
its own copy at once, so one compile's CPU time is what a rank waits on a host with a free core per rank.

Needs ``nvcc`` on PATH, a DeepGEMM checkout (``--deepgemm``, read at ``--commit`` with ``git archive``) and CUTLASS's
headers (``--cutlass``: a directory holding ``cute/`` and ``cutlass/``, e.g. the ``nvidia-cutlass`` wheel's
``cutlass_library/source/include``).

    python bench/measure_dg_jit.py --deepgemm /work/.mirror/sgl-project+DeepGEMM/repo --cutlass DIR [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

# the commit sgl-kernel's CMakeLists.txt pins (FetchContent repo-deepgemm GIT_TAG)
COMMIT = "f4adba8a6695e635b0106ce3dae3202016ad0ee5"
SIZES = (544, 576, 640, 672, 704, 1024)
# Compiler() and NVCCCompiler() flags at that commit (csrc/jit/compiler.hpp L61-63, L160-163)
FLAGS = ("-std=c++20 --diag-suppress=39,161,174,177,186,940 --ptxas-options=--register-usage-level=10 "
         "--gpu-architecture=sm_90a --compiler-options=-fPIC,-O3,-fconcepts,-Wno-deprecated-declarations,-Wno-abi "
         "-cubin -O3 --expt-relaxed-constexpr --expt-extended-lambda")
SOURCE = """#include <deep_gemm/impls/sm90_fp8_paged_mqa_logits.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {{
    auto ptr = reinterpret_cast<void*>(&smxx_paged_mqa_logits_metadata<
        {}, {}, {}
    >);
}};
"""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(deepgemm: Path, cutlass: Path, commit: str = COMMIT,
            sizes: tuple[int, ...] = SIZES) -> list[dict[str, float]]:
    """Each size's compile: wall and CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tar = subprocess.run(["git", "-C", str(deepgemm), "archive", commit, "deep_gemm/include"], check=True,
                             capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(tar)) as t:
            t.extractall(root, filter="data")
        include = root / "deep_gemm" / "include"
        for name in ("cute", "cutlass"):
            (include / name).symlink_to(cutlass / name)
        out = []
        for size in sizes:
            src = root / f"k{size}.cu"
            src.write_text(SOURCE.format(size, 64 * 4, 132))
            cpu0, wall0 = _children_cpu(), time.perf_counter()
            subprocess.run(["nvcc", str(src), "-o", str(root / f"k{size}.cubin"), f"-I{include}", *FLAGS.split()],
                           check=True, capture_output=True)
            out.append({"aligned_batch": size, "wall_s": time.perf_counter() - wall0, "cpu_s": _children_cpu() - cpu0})
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deepgemm", type=Path, required=True)
    ap.add_argument("--cutlass", type=Path, required=True)
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = measure(a.deepgemm, a.cutlass, a.commit)
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        print(f"aligned batch {r['aligned_batch']:5.0f}: wall {r['wall_s']:.2f} s, CPU {r['cpu_s']:.2f} s")


if __name__ == "__main__":
    main()
