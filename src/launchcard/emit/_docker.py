"""Docker target: one ``docker run`` script per process.

GPUs (``--gpus all``, or the ROCm devices on AMD), ``--ipc=host`` (the host's
/dev/shm, which PyTorch and NCCL use for shared memory, so no ``--shm-size``),
the Hugging Face cache mounted from ``$HF_HOME`` (default ``~/.cache/huggingface``),
the port, the plan's image (or ``--image``, e.g. a pinned digest), and
``-e HF_TOKEN``: passed through from the caller's environment, never a value.
Multi-node and prefill/decode plans use ``--network host`` so NCCL/NIXL and
the placeholders (node addresses the user exports) work as on bare metal.
"""

from __future__ import annotations

from collections.abc import Mapping

from launchcard.emit import _sh
from launchcard.emit._common import (
    HF_CACHE_MOUNT,
    accelerator,
    env_items,
    require_image,
    router_entry,
    secret_names,
    slug,
    units,
)
from launchcard.emit._header import header
from launchcard.resolve import ResolvedPlan

_CACHE_VOLUME = _sh.Raw('"${HF_HOME:-$HOME/.cache/huggingface}":' + HF_CACHE_MOUNT)


def _device_args(brand: str) -> list[str]:
    if brand == "amd":
        return ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
                "--security-opt", "seccomp=unconfined"]
    return ["--gpus", "all"]


def emit_docker(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
                image: str | None = None, **_: object) -> dict[str, str]:
    img = require_image(plan, image, "docker")
    brand = accelerator(plan, "docker")
    all_units = units(plan)
    single = len(all_units) == 1
    host_net = plan.deploy_type != "single_node" or not single
    secrets = secret_names(plan)
    files: dict[str, str] = {}
    for unit in all_units:
        argv: list[str] = ["docker", "run", "--rm", "--name", f"{slug(plan.model)}-{unit.name}"]
        if unit.command is not None:
            argv += _device_args(brand)
        argv += ["--ipc=host"]
        if host_net:
            argv += ["--network", "host"]
        elif unit.port:
            argv += ["-p", f"{unit.port}:{unit.port}"]
        if unit.command is not None:
            argv += ["-v", _CACHE_VOLUME]
        for name in secrets:
            argv += ["-e", name]  # passthrough: docker copies the caller's value
        env = env_items(unit.command) if unit.command else [("UV_SYSTEM_PYTHON", "1")]
        for name, value in env:
            _sh.check_env_name(name, f"plan.commands[{unit.name}].env")
            argv += ["-e", f"{name}={value}"]
        if unit.command is not None:
            entry, rest = [unit.argv[0]], list(unit.argv[1:])
        else:
            entry, rest = router_entry(plan, unit.argv)
            rest = entry[1:] + rest
        argv += ["--entrypoint", entry[0], img]
        breaks = frozenset({len(argv) - 1, len(argv)})  # image and command each start a line
        argv += rest
        notes = [f"process: {unit.name}",
                 "HF_TOKEN is passed from your environment with -e HF_TOKEN; its value is never stored here."]
        text = _sh.script(header(plan, "docker", card_name=card_name, inputs=inputs, notes=notes),
                          env=[], argv=argv, lead=2, where=f"plan.commands[{unit.name}]", breaks=breaks)
        files["docker-run.sh" if single else f"docker-run-{unit.name}.sh"] = text
    return files
