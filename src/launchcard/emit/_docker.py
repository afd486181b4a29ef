"""Docker target: one ``docker run`` script per process.

GPUs: on NVIDIA exactly the ones the process holds (``--gpus N``, or the host devices its
CUDA_VISIBLE_DEVICES names, which the container then sees as 0..N-1), never ``--gpus all``; on AMD
the ROCm devices with HIP_VISIBLE_DEVICES limiting the process to its share; ``--ipc=host`` (the host's
/dev/shm, which PyTorch and NCCL use for shared memory, so no ``--shm-size``),
the Hugging Face cache mounted from ``$HF_HOME`` (default ``~/.cache/huggingface``),
the port, the plan's image (or ``--image``, e.g. a pinned digest), and
``-e HF_TOKEN``: passed through from the caller's environment, never a value.
Multi-node and prefill/decode plans use ``--network host`` so NCCL/NIXL and
the placeholders (node addresses the user exports) work as on bare metal.
"""

from __future__ import annotations

from collections.abc import Mapping

from launchcard.check import visible_devices
from launchcard.emit import _sh
from launchcard.emit._common import (
    HF_CACHE_MOUNT,
    accelerator,
    env_items,
    gpus_used,
    renumbered,
    require_image,
    router_entry,
    secret_names,
    slug,
    units,
)
from launchcard.emit._header import header
from launchcard.resolve import ResolvedPlan

_CACHE_VOLUME = _sh.Raw('"${HF_HOME:-$HOME/.cache/huggingface}":' + HF_CACHE_MOUNT)


def _device_args(brand: str, gpus: int, visible: list[str] | None) -> tuple[list[str], dict[str, str]]:
    """(docker options, environment overrides) that give the container exactly the process's ``gpus``."""
    if brand == "amd":
        # /dev/kfd and /dev/dri expose every ROCm device; HIP_VISIBLE_DEVICES limits the process to its share
        ids = ",".join(visible) if visible else ",".join(str(i) for i in range(gpus))
        return (["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
                 "--security-opt", "seccomp=unconfined"], {"HIP_VISIBLE_DEVICES": ids})
    if visible:
        # the container numbers the devices it is given from 0: the process's own list becomes 0..N-1
        return ["--gpus", '"device=' + ",".join(visible) + '"'], {"CUDA_VISIBLE_DEVICES": renumbered(visible)}
    return ["--gpus", str(gpus)], {}


def docker_argvs(plan: ResolvedPlan, image: str | None = None) -> list[tuple[str, list[str], int, list[str]]]:
    """(process name, ``docker run`` argv, index of the image in it, notes) of every process of ``plan``.

    The one definition of the docker command: the emitted scripts write it one argument a line, the
    web builder shows it as a one-liner (``one_liner``)."""
    img = require_image(plan, image, "docker")
    brand = accelerator(plan, "docker")
    all_units = units(plan)
    host_net = plan.deploy_type != "single_node" or len(all_units) != 1
    secrets = secret_names(plan)
    out: list[tuple[str, list[str], int, list[str]]] = []
    for unit in all_units:
        argv: list[str] = ["docker", "run", "--rm", "--name", f"{slug(plan.model)}-{unit.name}"]
        overrides: dict[str, str] = {}
        notes: list[str] = [f"process: {unit.name}"]
        if unit.command is not None:
            visible = visible_devices(unit.command)
            dev, overrides = _device_args(brand, gpus_used(plan, unit.command), visible)
            argv += dev
            if visible and brand == "nvidia" and visible != overrides["CUDA_VISIBLE_DEVICES"].split(","):
                notes.append(f"the container is given host GPUs {','.join(visible)}, which it numbers "
                             f"{overrides['CUDA_VISIBLE_DEVICES']}")
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
        env = [(k, overrides.get(k, v)) for k, v in env] + [(k, v) for k, v in overrides.items()
                                                             if k not in dict(env)]
        for name, value in env:
            _sh.check_env_name(name, f"plan.commands[{unit.name}].env")
            argv += ["-e", f"{name}={value}"]
        if unit.command is not None:
            entry, rest = [unit.argv[0]], list(unit.argv[1:])
        else:
            entry, rest = router_entry(plan, unit.argv)
            rest = entry[1:] + rest
        argv += ["--entrypoint", entry[0], img]
        notes.append("HF_TOKEN is passed from your environment with -e HF_TOKEN; its value is never stored here.")
        out.append((unit.name, argv + rest, len(argv) - 1, notes))
    return out


def one_liner(argv: list[str]) -> str:
    """A ``docker_argvs`` command as one shell line (the cache mount left for the shell to expand)."""
    return " ".join(_sh.word(a) for a in argv)


def emit_docker(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
                image: str | None = None, **_: object) -> dict[str, str]:
    commands = docker_argvs(plan, image)
    single = len(commands) == 1
    files: dict[str, str] = {}
    for name, argv, at_image, notes in commands:
        breaks = frozenset({at_image, at_image + 1})  # image and command each start a line
        text = _sh.script(header(plan, "docker", card_name=card_name, inputs=inputs, notes=notes),
                          env=[], argv=argv, lead=2, where=f"plan.commands[{name}]", breaks=breaks)
        files["docker-run.sh" if single else f"docker-run-{name}.sh"] = text
    return files
