"""Compose target: one service per process, all on one host.

Meant for a single machine: single-node plans as they are; prefill + decode +
router on one host; head + workers on one host for testing multi-node.
Placeholders become service names on the compose network (``$HEAD_IP`` ->
``head``, ``$PREFILL_NODE_1`` -> ``prefill``), ``$IFACE_NAME`` -> ``eth0`` (the
container's interface), ``$ROUTER_HOST`` -> ``0.0.0.0`` and ``$ROUTER_PORT``
-> the router port.  Every other ``$`` is written ``$$`` so Compose never
interpolates plan data.  ``HF_TOKEN`` is listed without a value: Compose copies
it from the caller's environment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from launchcard.check import visible_devices
from launchcard.emit import _yaml
from launchcard.emit._common import (
    HF_CACHE_MOUNT,
    ROUTER_START_S,
    Unit,
    accelerator,
    container_mapping,
    env_items,
    gpus_used,
    pool_unit_name,
    renumbered,
    require_image,
    router_entry,
    secret_names,
    slug,
    substitute,
    units,
)
from launchcard.emit._header import header
from launchcard.resolve import ResolvedPlan

# Any in this module: the compose file is a JSON/YAML document (dict[str, Any]) whose values are of
# every JSON type.

DP_RPC_PORT = "13345"


def escape(text: str) -> str:
    """Compose interpolates ``$VAR`` / ``${VAR}``; ``$$`` is a literal ``$``."""
    return text.replace("$", "$$")


def _mapping(plan: ResolvedPlan) -> Callable[[str], str | None]:
    """Service names on the compose network: the head is ``head``, a pool process its service."""
    return container_mapping(plan, head_ip="head", address=lambda role, n: pool_unit_name(plan, role, n),
                             dp_rpc_port=DP_RPC_PORT)


def _health(port: int, start_s: int) -> dict[str, Any]:
    # python3 is in every vLLM image; curl is not guaranteed.
    probe = f"import urllib.request; urllib.request.urlopen('http://localhost:{port}/health', timeout=4)"
    return {"test": ["CMD", "python3", "-c", probe], "interval": "15s", "timeout": "5s",
            "retries": 3, "start_period": f"{start_s}s"}


def _devices(brand: str, ids: list[str] | int | None) -> dict[str, Any]:
    if brand == "amd":
        return {"devices": ["/dev/kfd:/dev/kfd", "/dev/dri:/dev/dri"], "group_add": ["video"],
                "security_opt": ["seccomp=unconfined"]}
    device: dict[str, Any] = {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}
    if isinstance(ids, int):
        device["count"] = ids
    elif ids is not None:
        del device["count"]
        device["device_ids"] = ids
    return {"deploy": {"resources": {"reservations": {"devices": [device]}}}}


def _node_gpus(plan: ResolvedPlan, unit: Unit) -> list[str] | int | None:
    """Which GPUs a service reserves: device ids, a count, or None for all.

    Head and workers share one host here: node rank r gets the g GPUs it uses from r*g on.
    A process placed by CUDA_VISIBLE_DEVICES reserves those host devices (and sees them as 0..N-1,
    see :func:`renumbered`); any other process reserves the count it uses (TP x PP x local DP), never
    the whole host.
    """
    if unit.command is None:
        return None
    g = gpus_used(plan, unit.command)
    if unit.role in ("head", "worker") and unit.command.node_rank is not None:
        return [str(i) for i in range(unit.command.node_rank * g, (unit.command.node_rank + 1) * g)]
    return visible_devices(unit.command) or g


def _depends(unit: Unit, all_units: list[Unit]) -> dict[str, Any] | None:
    if unit.role == "router":
        # The router needs every serving pool healthy.
        return {u.name: {"condition": "service_healthy"} for u in all_units if u.role != "router"}
    if unit.role == "worker" or (unit.rank > 0 and unit.role in ("prefill", "decode")):
        # The head's /health only passes once its workers joined: wait for "started" only.
        lead = next((u for u in all_units if u.role in ("head", unit.role) and u.port), None)
        if lead is not None and lead is not unit:
            return {lead.name: {"condition": "service_started"}}
    return None


def emit_compose(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
                 image: str | None = None, **_: object) -> dict[str, str]:
    img = require_image(plan, image, "compose")
    brand = accelerator(plan, "compose")
    mapping = _mapping(plan)
    all_units = units(plan)
    start_s = plan.ready_timeout_s or 1800

    def sub(text: str) -> str:
        return substitute(text, mapping, escape, target="compose")

    services: dict[str, Any] = {}
    published = False
    for unit in all_units:
        svc: dict[str, Any] = {"image": escape(img)}
        if unit.command is not None:
            svc["entrypoint"] = [sub(unit.argv[0])]
            svc["command"] = [sub(t) for t in unit.argv[1:]]
        else:
            entry, rest = router_entry(plan, unit.argv)
            svc["entrypoint"] = [escape(entry[0])] + [escape(t) for t in entry[1:]]
            svc["command"] = [sub(t) for t in rest]
        env: dict[str, Any] = {name: None for name in secret_names(plan)}
        pairs = env_items(unit.command) if unit.command else [("UV_SYSTEM_PYTHON", "1")]
        env.update({name: sub(value) for name, value in pairs})
        placed = visible_devices(unit.command) if unit.command is not None else None
        if placed and brand == "nvidia":
            env["CUDA_VISIBLE_DEVICES"] = renumbered(placed)  # the reserved host devices, as the container numbers them
        elif unit.command is not None and brand == "amd" and "HIP_VISIBLE_DEVICES" not in env:
            # /dev/kfd and /dev/dri map every ROCm device: HIP_VISIBLE_DEVICES limits the process to its share
            env["HIP_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(gpus_used(plan, unit.command)))
        svc["environment"] = env
        svc["ipc"] = "host"
        if unit.command is not None:
            svc.update(_devices(brand, _node_gpus(plan, unit)))
            svc["volumes"] = [f"hf-cache:{HF_CACHE_MOUNT}"]
        # Publish the entry point only: the router if any, else the first HTTP server.
        entry_unit = unit.role == "router" or (plan.router is None and unit.port and not published)
        if entry_unit and unit.port:
            svc["ports"] = [f"{unit.port}:{unit.port}"]
            published = True
        if unit.port:
            svc["healthcheck"] = _health(unit.port, ROUTER_START_S if unit.role == "router" else start_s)
        deps = _depends(unit, all_units)
        if deps:
            svc["depends_on"] = deps
        services[unit.name] = svc
    doc = {"name": slug(plan.model), "services": services, "volumes": {"hf-cache": {}}}
    notes = ["HF_TOKEN is copied from your environment by Compose; its value is never stored here.",
             "All services run on one host; placeholders are mapped to compose service names."]
    if any(u.role in ("head", "worker") or u.rank > 0 for u in all_units):  # only a plan over several nodes
        notes.append("Head and workers on one host need gpus/node x nodes GPUs there (testing only).")
    return {"compose.yaml": header(plan, "compose", card_name=card_name, inputs=inputs, notes=notes)
            + _yaml.dump([doc])}
