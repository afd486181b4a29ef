"""Docker image choice, ``docker run`` argv and the shell string (spec §7)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from launchcard.resolve._context import Ctx

if TYPE_CHECKING:
    from launchcard.resolve._plan import Command, ResolvedPlan

_BRAND_KEYS = ("nvidia", "amd", "tpu", "intel")
_CUDA_KEYS = ("cu129", "cu130")
_SAFE = re.compile(r"[A-Za-z0-9_./=:@,+%-]+")
_VAR = re.compile(r"\$[A-Z0-9_]+")


def brand_key(ctx: Ctx) -> str:
    gen, brand = ctx.prof.gen, ctx.prof.brand
    if gen == "tpu":
        return "tpu"
    if brand == "AMD":
        return "amd"
    if gen in ("cpu", "xpu") or brand == "Intel":
        return "intel"
    return "nvidia"


def _is_cuda_map(value: Any) -> bool:
    return isinstance(value, Mapping) and any(k in value for k in _CUDA_KEYS) \
        and not any(k in value for k in _BRAND_KEYS)


def _from_layer(value: Any, key: str) -> Any:
    """A string image, a CUDA map, or None when this layer says nothing for ``key``."""
    if isinstance(value, str):
        return value if key == "nvidia" else None
    if _is_cuda_map(value):
        return value if key == "nvidia" else None
    if isinstance(value, Mapping) and any(k in value for k in _BRAND_KEYS):
        entry = value.get(key)
        if isinstance(entry, str):
            return entry
        if key == "nvidia" and _is_cuda_map(entry):
            return entry
    return None


def docker_image(ctx: Ctx) -> str | None:
    hit = ctx.scope.shared.get("image")
    if hit is None:
        hit = ctx.scope.shared["image"] = (_docker_image(ctx), ())
    image: str | None = hit[0]
    return image


def _docker_image(ctx: Ctx) -> str | None:
    key = brand_key(ctx)
    exact = ctx.variant.hardware_overrides.get(ctx.hw)
    if exact is not None and exact.docker_image is not None:
        return exact.docker_image
    found: Any = None
    for layer in (ctx.variant.docker_image, ctx.recipe.model.docker_image):
        found = _from_layer(layer, key)
        if found is not None:
            break
    if ctx.prof.gen == "xpu" and not isinstance(found, str):
        return "vllm/vllm-openai-xpu:latest"
    if isinstance(found, Mapping):
        image: str | None = found.get("cu130") or found.get("cu129")
        return image
    if isinstance(found, str):
        return found
    return builder_default_image(key, nightly=ctx.recipe.model.nightly_required)


def builder_default_image(key: str, *, nightly: bool = False) -> str | None:
    """The recipes builder's image for a brand key (``brand_key``: nvidia, amd, tpu, intel) when the recipe
    names none; None where it has no nightly image for the brand."""
    if nightly:
        return {"nvidia": "vllm/vllm-openai:nightly", "amd": "vllm/vllm-openai-rocm:nightly",
                "tpu": "vllm/vllm-tpu:nightly"}.get(key)
    return {"nvidia": "vllm/vllm-openai:latest", "amd": "vllm/vllm-openai-rocm:latest",
            "tpu": "vllm/vllm-tpu:latest", "intel": "vllm/vllm-openai-cpu:latest-x86_64"}[key]


def accelerator_brand_key(vendor: str, kind: str) -> str:
    """``brand_key`` for a hardware-catalog accelerator (vendor and kind) rather than a recipe profile."""
    if kind == "tpu":
        return "tpu"
    if vendor == "AMD":
        return "amd"
    if kind == "cpu" or vendor == "Intel":
        return "intel"
    return "nvidia"


def gpu_flags(ctx: Ctx) -> list[str]:
    """Device flags by the image brand key: profiles of other brands (Huawei, unknown) run the
    NVIDIA image in the reference, so they get the NVIDIA flags too."""
    key = brand_key(ctx)
    if key == "amd":
        return ["--device=/dev/kfd", "--device=/dev/dri", "--security-opt", "seccomp=unconfined",
                "--group-add", "video"]
    if key == "tpu":
        return ["--privileged", "--network", "host", "-v", "/dev/shm:/dev/shm"]
    if key == "intel":
        if ctx.prof.gen == "xpu":
            return ["--device", "/dev/dri", "-v", "/dev/dri/by-path:/dev/dri/by-path", "--shm-size", "16g"]
        return ["--shm-size", "16g"]
    return ["--gpus", "all"]


def env_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def docker_argv(ctx: Ctx, image: str | None, argv: list[str], env: dict[str, Any], port: int,
                model_id: str) -> list[str]:
    hit = ctx.scope.memo.get("gpu_flags")
    if hit is None:
        hit = ctx.scope.memo["gpu_flags"] = (gpu_flags(ctx), ())
    out = ["docker", "run", *hit[0], "--privileged", "--ipc=host", "-p", f"{port}:{port}",
           "-v", "~/.cache/huggingface:/root/.cache/huggingface"]
    if model_id.startswith("/"):
        out += ["-v", f"{model_id}:{model_id}:ro"]
    for key, value in env.items():
        if key.endswith("_CONFIG_PATH"):
            out += ["-v", f"{env_str(value)}:{env_str(value)}:ro"]
    for key, value in env.items():
        out += ["-e", f"{key}={env_str(value)}"]
    out.append(image if image is not None else "undefined")
    out += argv[2:]
    return out


_UNQUOTED = re.compile(f"{_VAR.pattern}|{_SAFE.pattern}").fullmatch  # one regex pass per token


def quote(value: str) -> str:
    if _UNQUOTED(value):
        return value
    return "'" + value.replace("'", "'\\''") + "'"


def shell_command(argv: list[Any]) -> str:
    head = " ".join([str(t) for t in argv[:3]])
    rest = [t if t.__class__ is str else str(t) for t in argv[3:]]
    lines: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        tok = rest[i]
        if tok[:1] == "-" and i + 1 < n and rest[i + 1][:1] != "-":
            value = rest[i + 1]
            lines.append(tok + " " + (value if _UNQUOTED(value) else quote(value)))
            i += 2
        else:
            lines.append(tok)
            i += 1
    if not lines:
        return head
    return head + " \\\n  " + " \\\n  ".join(lines)


def command_title(plan: ResolvedPlan, cmd: Command) -> str:
    """What a command of ``plan`` is for, in words (``node rank 1 (worker)``, ``prefill``...)."""
    if cmd.role in ("head", "worker"):
        return f"node rank {cmd.node_rank} ({'head' if cmd.node_rank == 0 else 'worker'})"
    if cmd.role == "instance":
        return f"instance node rank {cmd.node_rank}"
    return str(cmd.role)


def command_blocks(plan: ResolvedPlan) -> list[tuple[str, str]]:
    """(title, shell text) of every process of ``plan``, its environment included, then the router's.

    The one shell rendering of a plan's commands: ``resolve``'s output and the web builder's Command box."""
    blocks = []
    for cmd in plan.commands:
        env = " ".join(f"{k}={quote(v)}" for k, v in cmd.env_str.items())
        text = shell_command(list(cmd.argv))
        if env:
            text = f"{env} \\\n{text}" if len(env) < 100 else "\n".join(
                f"export {k}={quote(v)}" for k, v in cmd.env_str.items()) + "\n" + text
        blocks.append((command_title(plan, cmd), text))
    if plan.router:
        blocks.append((f"router ({plan.router.install or ''})", plan.router.command))
    return blocks
