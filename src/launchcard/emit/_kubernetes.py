"""Kubernetes target: one multi-document ``kubernetes.yaml``.

* single node -> Deployment + Service + PersistentVolumeClaim (model cache);
* multi-node (head + workers) -> LeaderWorkerSet + Service on the leader: the
  leader runs the head argv, workers the worker argv with ``--node-rank``
  taken from ``$(LWS_WORKER_INDEX)``; ``$HEAD_IP`` becomes
  ``$(LWS_LEADER_ADDRESS)``, both injected by the LWS controller;
* prefill/decode (and other multi-process plans of single-node processes) ->
  one Deployment + Service per process and per pool cache; a process's own
  ``$PREFILL_NODE_1`` is its pod IP (downward API), other processes reach it
  through its Service.

``$IFACE_NAME`` -> ``eth0`` (the pod interface).  Kubernetes expands
``$(VAR)`` in command, args and env values and reads ``$$`` as ``$``, so a
literal ``$`` before ``$`` or ``(`` is doubled.  Tokens come from a Secret
(``secretKeyRef``), never as values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from launchcard.emit import _yaml
from launchcard.emit._common import (
    HF_CACHE_MOUNT,
    HF_TOKEN,
    ROUTER_START_S,
    Unit,
    accelerator,
    container_mapping,
    env_items,
    gpus_used,
    pool_unit_name,
    require_image,
    router_entry,
    secret_names,
    slug,
    substitute,
    units,
)
from launchcard.emit._header import header
from launchcard.errors import EmitError
from launchcard.resolve import ResolvedPlan

# Any in this module: manifests are JSON/YAML documents (dict[str, Any]) whose values are of every
# JSON type.

SECRET_NAME = "hf-token"
DEFAULT_CACHE_SIZE = "1Ti"
SHM_SIZE = "16Gi"
_DOLLAR = re.compile(r"\$(?=[$(])")


def escape(text: str) -> str:
    """Kubernetes reads ``$(VAR)`` as a reference and ``$$`` as ``$``; keep ``text`` literal."""
    return _DOLLAR.sub("$$", text)


def _labels(base: str, component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": base, "app.kubernetes.io/component": component,
            "app.kubernetes.io/managed-by": "launchcard"}


def _probe(period: int, failures: int, timeout: int = 5) -> dict[str, Any]:
    return {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": period,
            "timeoutSeconds": timeout, "failureThreshold": failures}


def _env(plan: ResolvedPlan, unit: Unit, sub: Callable[[str], str], *, pod_ip: bool) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = []
    if pod_ip:  # defined first: later env values may reference $(POD_IP)
        env.append({"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    for name in secret_names(plan):
        env.append({"name": name, "valueFrom": {"secretKeyRef": {
            "name": SECRET_NAME, "key": name, "optional": name == HF_TOKEN}}})
    pairs = env_items(unit.command) if unit.command else [("UV_SYSTEM_PYTHON", "1")]
    # The device plugin hands the pod its GPUs renumbered from 0: a host-level
    # CUDA_VISIBLE_DEVICES (e.g. 4,5,6,7 for a decode pool) would point past them.
    pairs = [(k, v) for k, v in pairs if k != "CUDA_VISIBLE_DEVICES"]
    env.extend({"name": name, "value": sub(value)} for name, value in pairs)
    return env


def _container(plan: ResolvedPlan, unit: Unit, image: str, sub: Callable[[str], str], *, brand: str, start_s: int,
               pod_ip: bool, args_override: list[str] | None = None) -> dict[str, Any]:
    if unit.command is not None:
        command, args = [unit.argv[0]], list(unit.argv[1:])
    else:
        command, args = router_entry(plan, unit.argv)
    c: dict[str, Any] = {
        "name": plan.engine if unit.command is not None else "router",
        "image": image,
        "command": [escape(t) for t in command],
        "args": args_override if args_override is not None else [sub(t) for t in args],
        "env": _env(plan, unit, sub, pod_ip=pod_ip),
    }
    if unit.port:
        c["ports"] = [{"name": "http", "containerPort": unit.port, "protocol": "TCP"}]
        # Startup budget: the plan's engine ready timeout, polled every 10 s.
        c["startupProbe"] = _probe(10, max(1, math.ceil((ROUTER_START_S if unit.command is None else start_s) / 10)))
        c["readinessProbe"] = _probe(10, 3)
        c["livenessProbe"] = _probe(30, 3, timeout=10)
    if unit.command is not None:
        from launchcard.hardware import k8s_resource

        gpu_key = k8s_resource(brand) or "nvidia.com/gpu"
        c["resources"] = {"limits": {gpu_key: str(_gpu_count(plan, unit))}}
        c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"},
                             {"name": "hf-cache", "mountPath": HF_CACHE_MOUNT}]
    return c


def _gpu_count(plan: ResolvedPlan, unit: Unit) -> int:
    """GPUs the pod requests: the process's CUDA_VISIBLE_DEVICES share, else the GPUs it uses on its node."""
    return gpus_used(plan, unit.command) if unit.command else 0


def _pod_spec(containers: list[dict[str, Any]], volumes: list[dict[str, Any]]) -> dict[str, Any]:
    # No service links: a Service named e.g. "vllm" would inject VLLM_PORT=tcp://..., which
    # vLLM reads as its own setting.
    spec: dict[str, Any] = {"enableServiceLinks": False, "containers": containers}
    if volumes:
        spec["volumes"] = volumes
    return spec


def _gpu_volumes(claim: str | None) -> list[dict[str, Any]]:
    vols: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}}]
    if claim:
        vols.append({"name": "hf-cache", "persistentVolumeClaim": {"claimName": claim}})
    return vols


def _pvc(name: str, labels: dict[str, str], size: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "labels": labels},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}


def _service(name: str, selector: dict[str, str], port: int, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels},
            "spec": {"type": "ClusterIP", "selector": selector,
                     "ports": [{"name": "http", "port": port, "targetPort": "http", "protocol": "TCP"}]}}


def _deployment(name: str, labels: dict[str, str], pod: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": 1, "strategy": {"type": "Recreate"},  # GPUs and an RWO cache: no surge
                     "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod}}}


def _mapping(plan: ResolvedPlan, base: str, unit: Unit) -> Callable[[str], str | None]:
    """The LeaderWorkerSet leader for ``$HEAD_IP``; a pool process is its Service, or the pod's own IP."""
    def address(role: str, n: int) -> str | None:
        target = pool_unit_name(plan, role, n)
        if target is None:
            return None
        return "$(POD_IP)" if target == unit.name else f"{base}-{target}"

    return container_mapping(plan, head_ip="$(LWS_LEADER_ADDRESS)", address=address)


def _sub_for(plan: ResolvedPlan, base: str, unit: Unit) -> Callable[[str], str]:
    mapping = _mapping(plan, base, unit)
    return lambda text: substitute(text, mapping, escape, target="kubernetes")


def _lws(plan: ResolvedPlan, base: str, image: str, brand: str, start_s: int, cache_size: str,
         all_units: list[Unit]) -> list[dict[str, Any]]:
    head = next(u for u in all_units if u.role == "head")
    workers = [u for u in all_units if u.role == "worker"]
    if len(workers) + 1 != plan.node_count or any(u.role not in ("head", "worker") for u in all_units):
        raise EmitError(f"a LeaderWorkerSet needs one head and {plan.node_count - 1} workers, got "
                        f"{[u.name for u in all_units]}", where="--target kubernetes",
                        fix="use the shell or docker target for this plan")
    sub = _sub_for(plan, base, workers[0])
    shapes = set()
    for w in workers:
        args = [sub(t) for t in w.argv[1:]]
        if "--node-rank" in args:
            args[args.index("--node-rank") + 1] = "$(LWS_WORKER_INDEX)"
        shapes.add((tuple(args), tuple(sorted(w.command.env.items())) if w.command else ()))
    if len(shapes) != 1:
        raise EmitError("the workers' commands differ in more than --node-rank, which one LeaderWorkerSet "
                        "worker template cannot express", where="--target kubernetes",
                        fix="use the shell or docker target for this strategy")
    worker_args = list(next(iter(shapes))[0])
    labels = _labels(base, "multi-node")
    leader = _container(plan, head, image, _sub_for(plan, base, head), brand=brand, start_s=start_s, pod_ip=False)
    worker = _container(plan, workers[0], image, sub, brand=brand, start_s=start_s, pod_ip=False,
                        args_override=worker_args)
    claim = {"metadata": {"name": "hf-cache"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": cache_size}}}}
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": base, "labels": labels},
           "spec": {"replicas": 1, "startupPolicy": "LeaderCreated", "leaderWorkerTemplate": {
               "size": plan.node_count,
               "restartPolicy": "RecreateGroupOnPodRestart",
               # Each pod gets its own cache claim (pods sit on different nodes).
               "volumeClaimTemplates": [claim],
               "leaderTemplate": {"metadata": {"labels": {**labels, "role": "leader"}},
                                  "spec": _pod_spec([leader], _gpu_volumes(None))},
               "workerTemplate": {"metadata": {"labels": {**labels, "role": "worker"}},
                                  "spec": _pod_spec([worker], _gpu_volumes(None))}}}}
    svc = _service(base, {"leaderworkerset.sigs.k8s.io/name": base, "role": "leader"},
                   head.port or 8000, labels)
    return [lws, svc]


_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")


def check_cache_size(size: str) -> str:
    """A storage request Kubernetes accepts (a resource quantity such as ``200Gi``), else InputError."""
    from launchcard.errors import InputError

    m = _QUANTITY.match(size)
    if not m:
        raise InputError(f"not a Kubernetes storage quantity ({size!r})", where="--cache-size",
                         fix="give a number with a binary or decimal suffix, e.g. 200Gi or 1Ti")
    if float(size[:m.start(2)] if m.group(2) else size) == 0:
        # the API server refuses the claim: ValidatePersistentVolumeClaimSpec ->
        # ValidatePositiveQuantityValue(storage) "must be greater than zero" (pkg/apis/core/validation)
        raise InputError(f"a model-cache volume of {size!r} holds nothing; Kubernetes refuses a claim of zero "
                         "storage", where="--cache-size", fix="give a size the weights fit in, e.g. 200Gi or 1Ti")
    return size


def emit_kubernetes(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
                    image: str | None = None, cache_size: str | None = None, **_: object) -> dict[str, str]:
    cache_size = check_cache_size(cache_size) if cache_size is not None else DEFAULT_CACHE_SIZE
    img = require_image(plan, image, "kubernetes")
    brand = accelerator(plan, "kubernetes")
    base = slug(plan.model)
    start_s = plan.ready_timeout_s or 1800
    all_units = units(plan)
    docs: list[dict[str, Any]] = []
    if any(u.role == "head" for u in all_units):
        docs = _lws(plan, base, img, brand, start_s, cache_size, all_units)
    else:
        roles = [u.role for u in all_units]
        multi = sorted({r for r in roles if roles.count(r) > 1 and r in ("prefill", "decode")})
        if multi or any(u.port is None for u in all_units):
            raise EmitError(f"the kubernetes target emits one single-node Deployment per process; the "
                            f"{', '.join(multi) or 'headless'} pool spans several nodes",
                            where="--target kubernetes", fix="use single-node pools, or the shell/docker target")
        for unit in all_units:
            name = base if unit.role == "single" else f"{base}-{unit.name}"
            labels = _labels(base, unit.name)
            sub = _sub_for(plan, base, unit)
            pod_ip = unit.role != "single"
            claim = f"{name}-hf-cache" if unit.command is not None else None
            container = _container(plan, unit, img, sub, brand=brand, start_s=start_s, pod_ip=pod_ip)
            pod = _pod_spec([container], _gpu_volumes(claim) if claim else [])
            if claim:
                docs.append(_pvc(claim, labels, cache_size))
            docs.append(_deployment(name, labels, pod))
            docs.append(_service(name, labels, unit.port or 8000, labels))
    notes = [f"HF_TOKEN comes from Secret {SECRET_NAME!r} (key HF_TOKEN): "
             f"kubectl create secret generic {SECRET_NAME} --from-literal=HF_TOKEN=...",
             f"model cache: PersistentVolumeClaim of {cache_size} per GPU pod"
             + (" (launchcard's fixed default, not sized to this checkpoint: --cache-size SIZE sets it)"
                if cache_size == DEFAULT_CACHE_SIZE else " (your --cache-size)")
             + f"; /dev/shm: {SHM_SIZE} memory volume."]
    return {"kubernetes.yaml": header(plan, "kubernetes", card_name=card_name, inputs=inputs, notes=notes)
            + _yaml.dump(docs)}
