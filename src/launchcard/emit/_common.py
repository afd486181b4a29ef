"""What every target shares: placeholders, secrets, names, router argv, roles.

Placeholders.  A resolved plan keeps addresses it cannot know as literal
``$NAME`` tokens (``$HEAD_IP``, ``$PREFILL_NODE_1``, ``$IFACE_NAME``,
``$ROUTER_HOST`` ...).  Only the names below count as placeholders; any other
``$`` is ordinary text and every target must keep it literal.  Each target maps
a placeholder to what it means there (a shell variable, a compose service name,
the LeaderWorkerSet leader address ...).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from launchcard.argv import parse_command
from launchcard.errors import EmitError, InputError
from launchcard.gitref import is_ref_name
from launchcard.resolve import Command, ResolvedPlan, env_value_str

PLACEHOLDER = re.compile(
    r"\$(HEAD_IP|IFACE_NAME|ROUTER_HOST|ROUTER_PORT|(?:PREFILL|DECODE)_NODE_[1-9][0-9]*"
    r"|VLLM_INSTANCE_[1-9][0-9]*|(?:PREFILL|DECODE)_DP_RPC_PORT)(?![A-Za-z0-9_])")

# Meaning of each placeholder, for the shell/docker headers.
PLACEHOLDER_HELP = {
    "HEAD_IP": "address of the head node (node rank 0)",
    "IFACE_NAME": "network interface NCCL/Gloo use between nodes (e.g. eth0)",
    "ROUTER_HOST": "address the router listens on (e.g. 0.0.0.0)",
    "ROUTER_PORT": "port the router listens on (e.g. 8000)",
    "PREFILL_DP_RPC_PORT": "data-parallel RPC port of the prefill pool",
    "DECODE_DP_RPC_PORT": "data-parallel RPC port of the decode pool",
}

# Names whose values are credentials: never written as a value by any target.
_SECRET_NAME = re.compile(r"(^|_)(TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY)($|_)", re.IGNORECASE)
HF_TOKEN = "HF_TOKEN"

HF_CACHE_MOUNT = "/root/.cache/huggingface"
ROUTER_START_S = 300  # the router installs itself (pip) before it listens


_POOL_PLACEHOLDER = re.compile(r"(PREFILL|DECODE)_NODE_(\d+)|VLLM_INSTANCE_(\d+)")


def pool_placeholder(name: str) -> tuple[str, int] | None:
    """(pool role, 1-based number) a placeholder addresses: ``PREFILL_NODE_2`` -> ("prefill", 2),
    ``VLLM_INSTANCE_1`` -> ("instance", 1); None for any other name."""
    m = _POOL_PLACEHOLDER.fullmatch(name)
    if m is None:
        return None
    return (m.group(1).lower(), int(m.group(2))) if m.group(1) else ("instance", int(m.group(3)))


def placeholder_help(name: str) -> str:
    if name in PLACEHOLDER_HELP:
        return PLACEHOLDER_HELP[name]
    pool = pool_placeholder(name)
    if pool is not None:
        role, n = pool
        return f"address of vLLM instance {n}" if role == "instance" else f"address of {role} node {n}"
    return "address or value to substitute"


def container_mapping(plan: ResolvedPlan, *, head_ip: str, address: Callable[[str, int], str | None],
                      dp_rpc_port: str | None = None) -> Callable[[str], str | None]:
    """Placeholders inside containers: ``$IFACE_NAME`` is the container's ``eth0``, the router listens on
    ``0.0.0.0`` at the plan's router port, ``$HEAD_IP`` is ``head_ip``, a pool process is ``address(role, n)``
    and ``$*_DP_RPC_PORT`` is ``dp_rpc_port``; None for what the target cannot express."""
    fixed = {"HEAD_IP": head_ip, "IFACE_NAME": "eth0", "ROUTER_HOST": "0.0.0.0", "ROUTER_PORT": str(router_port(plan))}

    def resolve(name: str) -> str | None:
        if name in fixed:
            return fixed[name]
        if name.endswith("_DP_RPC_PORT"):
            return dp_rpc_port
        pool = pool_placeholder(name)
        return address(*pool) if pool is not None else None
    return resolve


def split_placeholders(text: str) -> list[tuple[bool, str]]:
    """``text`` as (is_placeholder, piece) pieces; placeholder pieces hold the bare name."""
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for m in PLACEHOLDER.finditer(text):
        if m.start() > pos:
            pieces.append((False, text[pos:m.start()]))
        pieces.append((True, m.group(1)))
        pos = m.end()
    if pos < len(text) or not pieces:
        pieces.append((False, text[pos:]))
    return pieces


def placeholders_in(texts: list[str] | tuple[str, ...]) -> list[str]:
    """Placeholder names used in ``texts``, in first-seen order."""
    seen: dict[str, None] = {}
    for text in texts:
        for m in PLACEHOLDER.finditer(text):
            seen.setdefault(m.group(1), None)
    return list(seen)


def substitute(text: str, mapping: Callable[[str], str | None], escape: Callable[[str], str],
               *, target: str) -> str:
    """Replace placeholders via ``mapping`` and escape every literal piece with ``escape``.

    The replacement text is inserted as is (it is the target's own syntax, e.g.
    ``$(LWS_LEADER_ADDRESS)``); everything else goes through ``escape`` so a
    literal ``$`` can never be interpolated by the target.
    """
    out = []
    for is_ph, piece in split_placeholders(text):
        if not is_ph:
            out.append(escape(piece))
            continue
        value = mapping(piece)
        if value is None:
            raise EmitError(f"the {target} target cannot express the placeholder ${piece} "
                            f"({placeholder_help(piece)}) in {text!r}", where=f"--target {target}",
                            fix="choose a target that supports this deployment (shell or docker)")
        out.append(value)
    return "".join(out)


def is_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def env_items(cmd: Command) -> list[tuple[str, str]]:
    """Plain (name, value) pairs of a command, secrets removed (they are passed by reference)."""
    return [(k, env_value_str(v)) for k, v in cmd.env.items() if not is_secret(k)]


def secret_names(plan: ResolvedPlan) -> list[str]:
    """Secret env names to pass by reference: always HF_TOKEN, plus any the plan names."""
    names = [HF_TOKEN]
    for cmd in plan.commands:
        for k in cmd.env:
            if is_secret(k) and k not in names:
                names.append(k)
    return names


def router_argv(plan: ResolvedPlan) -> tuple[str, ...] | None:
    """The router's argv, parsed from the plan's shell string (continuations included)."""
    if plan.router is None:
        return None
    try:
        # The plan writes it for a terminal, with backslash-newline continuations, which a
        # shell removes before splitting words (shlex would keep them as "\n" words).
        return tuple(shlex.split(re.sub(r"\\\r?\n", " ", plan.router.command)))
    except ValueError as exc:
        raise EmitError(f"the router command cannot be parsed as shell words ({exc})",
                        where="plan.router.command", fix="check the recipe's router settings") from None


def router_port(plan: ResolvedPlan) -> int:
    return plan.router.port if plan.router and plan.router.port else 8000


@dataclass(frozen=True)
class Unit:
    """One process of a plan under a stable, target-independent name."""

    name: str              # e.g. "vllm", "head", "worker-1", "prefill", "decode-2", "router"
    role: str
    rank: int              # index within its role (0-based)
    command: Command | None  # None for the router
    argv: tuple[str, ...]
    port: int | None       # HTTP port the process serves, None for headless workers


def units(plan: ResolvedPlan) -> list[Unit]:
    """Every process of the plan, named consistently for all targets."""
    counts: dict[str, int] = {}
    for cmd in plan.commands:
        counts[cmd.role] = counts.get(cmd.role, 0) + 1
    seen: dict[str, int] = {}
    out: list[Unit] = []
    for cmd in plan.commands:
        idx = seen.get(cmd.role, 0)
        seen[cmd.role] = idx + 1
        if cmd.role == "single":
            name = plan.engine  # the engine that serves (a derived SGLang plan is not a vllm container)
        elif cmd.role == "head":
            name = "head"
        elif cmd.role == "worker":
            name = f"worker-{cmd.node_rank if cmd.node_rank is not None else idx + 1}"
        elif counts[cmd.role] > 1:
            name = f"{cmd.role}-{idx}"
        else:
            name = cmd.role
        headless = bool(parse_command(cmd.argv).get_bool("--headless"))
        out.append(Unit(name, cmd.role, idx, cmd, cmd.argv, None if headless else cmd.port))
    rargv = router_argv(plan)
    if rargv:
        out.append(Unit("router", "router", 0, None, rargv, router_port(plan)))
    names = [u.name for u in out]
    if len(set(names)) != len(names):
        raise EmitError(f"the plan has two processes with the same role and rank ({names})",
                        where="plan.commands", fix="report this plan as a resolver bug")
    return out


def pool_unit_name(plan: ResolvedPlan, role: str, index: int) -> str | None:
    """Unit name serving ``$<ROLE>_NODE_<index>`` (1-based), or None if the plan has none."""
    pool = [u for u in units(plan) if u.role == role]
    if not 1 <= index <= len(pool):
        return None
    return pool[index - 1].name


def slug(text: str, *, max_len: int = 40) -> str:
    """A DNS-1123 label from a model name: ``zai-org/GLM-5.3-Flash`` -> ``glm-5-3-flash``."""
    base = text.rsplit("/", 1)[-1].lower()
    out = re.sub(r"[^a-z0-9]+", "-", base).strip("-")[:max_len].strip("-")
    return out or "model"


# Docker's reference grammar (distribution/reference): [host[:port]/]path[:tag][@sha256:<64 hex>].
_IMAGE = re.compile(
    r"^(?:(?P<host>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"(?::[0-9]+)?)/)?"
    r"(?P<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z0-9_+.-]+:[A-Za-z0-9=_-]+))?$")


def check_image(image: str) -> str:
    """``image`` if it is a valid image reference with, if any, a complete sha256 digest; else InputError."""
    m = _IMAGE.match(image)
    if m is None or len(image) > 255:
        raise InputError(f"not a container image reference ({image!r})", where="--image",
                         fix="write [registry/]name[:tag][@sha256:<64 hex digits>], e.g. vllm/vllm-openai:v0.32.0")
    digest = m.group("digest")
    if digest is not None and not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        raise InputError(f"image digest is not a complete sha256 ({digest!r})", where="--image",
                         fix="give all 64 lowercase hex digits: NAME@sha256:<digest> (docker buildx imagetools "
                             "inspect NAME shows it)")
    return image


def check_weights_revision(revision: str) -> str:
    """``revision`` if the Hub can name a branch, tag or commit by it; else InputError."""
    if not is_ref_name(revision) or "@" in revision:  # `@`: the Truss source `hf://MODEL@REVISION` splits on it
        raise InputError(f"not a weights revision ({revision!r}): a Hub revision is a branch, tag or commit id "
                         "(no spaces, '..', '@' or ~^:?*[\\)", where="--weights-revision",
                         fix="give the commit id the Hub lists for the weights (e.g. 3f1971b7...) or a branch/tag")
    return revision


def gpus_used(plan: ResolvedPlan, cmd: Command) -> int:
    """GPUs one process holds on its node, as the plan's facts count them (:func:`launchcard.check.process_gpus`):
    every target requests exactly this many."""
    from launchcard.check import process_gpus

    gpus, basis = process_gpus(cmd, deploy_type=plan.deploy_type, node_gpus=plan.gpus_per_node)
    if gpus is None:
        raise EmitError(f"the command's parallel sizes cannot be read ({basis})", where="plan.commands",
                        fix="substitute the value before emitting")
    return gpus


def renumbered(ids: list[str]) -> str:
    """The CUDA_VISIBLE_DEVICES a container given host devices ``ids`` must use: it numbers them from 0."""
    return ",".join(str(i) for i in range(len(ids)))


def require_image(plan: ResolvedPlan, image: str | None, target: str) -> str:
    chosen = image or plan.docker_image
    if not chosen:
        raise EmitError("the plan names no container image", where=f"--target {target}",
                        fix="pass --image IMAGE[@sha256:DIGEST]")
    return chosen


def accelerator(plan: ResolvedPlan, target: str) -> str:
    """``nvidia`` or ``amd``: the device families the container targets know how to request."""
    return device_family(plan.brand, plan.hardware, target)


def device_family(brand: str | None, hardware: str, target: str) -> str:
    """:func:`accelerator` of a brand (the catalog's vendor; None: NVIDIA) and hardware id, before a plan exists
    (``plan --emit`` asks it before its search)."""
    family = (brand or "NVIDIA").lower()
    if family in ("nvidia", "amd"):
        return family
    raise EmitError(f"the {target} target knows no device mapping for {brand} accelerators "
                    f"(hardware {hardware})", where=f"--target {target}",
                    fix="use the shell target and start the container the vendor documents")


def router_entry(plan: ResolvedPlan, argv: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(entrypoint, args) that install the router if the plan says how, then exec it.

    The router argv travels as positional parameters of ``bash -c``, never
    inside the script text, so no value is re-parsed by a shell.
    """
    install = plan.router.install if plan.router else None
    if not install:
        return [argv[0]], list(argv[1:])
    return ["bash", "-c", f'{install} && exec "$@"', "router"], list(argv)
