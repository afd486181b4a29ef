"""``python -m launchcard.flags.capture --engine vllm|sglang [--out F]``.

Run with the engine environment's Python and the repository ``src`` on
PYTHONPATH; imports only the standard library and the engine.
"""

import sys

from launchcard.flags._capture import main

if __name__ == "__main__":
    sys.exit(main())
