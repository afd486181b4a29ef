"""Truss target: a Baseten ``config.yaml`` serving the plan with vLLM's docker_server.

Shape follows the Baseten GLM-5.3-Flash preset: base image, weights pinned to
a revision and mounted at ``/app/checkpoint/model``, ``docker_server`` start
command with readiness/liveness on ``/health``, an instance type and runtime
concurrency.  The serving flags are the plan's, unchanged; truss adds only what
the container layout needs (model path, ``--host``/``--port``,
``--served-model-name`` so clients keep using the Hugging Face id).
Truss serves one process on one machine: multi-node and prefill/decode plans
are refused with EmitError.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from launchcard.argv import parse_command
from launchcard.emit import _yaml
from launchcard.emit._common import PLACEHOLDER, env_items, gpus_used, require_image
from launchcard.emit._header import header
from launchcard.errors import EmitError
from launchcard.resolve import ResolvedPlan

MOUNT = "/app/checkpoint/model"
PORT = 8000
DEFAULT_CONCURRENCY = 256  # vLLM batches internally; Baseten's queue should not be the limit
EXAMPLE_PROMPT = "Explain sparse attention in three concise sentences."
HEALTH_CHECKS = {"restart_threshold_seconds": 1200, "stop_traffic_threshold_seconds": 120}
DOCKER_SERVER = {"readiness_endpoint": "/health", "liveness_endpoint": "/health",
                 "predict_endpoint": "/v1/chat/completions", "server_port": PORT}
# Baseten instance-type prefixes live in the hardware catalog (``baseten``); a MIG slice is no accelerator of its own.
MIG_INSTANCE_TYPES = {"h100_mig": "H100MIG"}


def instance_type(hardware: str) -> str | None:
    """Baseten instance-type prefix for a hardware id, profile or accelerator name."""
    from launchcard.hardware import lookup

    if hardware.lower() in MIG_INSTANCE_TYPES:
        return MIG_INSTANCE_TYPES[hardware.lower()]
    acc = lookup(hardware)
    return acc.baseten if acc else None


def rented_instance(hardware: str) -> str:
    """:func:`instance_type`, or EmitError where Baseten rents none (``plan --emit truss`` asks before its search)."""
    instance = instance_type(hardware)
    if instance is None:
        raise EmitError(f"Baseten offers no instance type for hardware {hardware!r}", where="--target truss",
                        fix=f"resolve on hardware Baseten rents: --hardware {'|'.join(_instance_choices())}")
    return instance


def _instance_choices() -> list[str]:
    """The recipes' hardware profiles Baseten rents: what ``--hardware`` can resolve and truss can serve."""
    from launchcard.hardware import catalog

    cat = catalog()
    return sorted(pid for pid, prof in cat.profiles.items() if prof.accelerator.baseten and prof.per_node <= 8)


def container_argv(argv: Sequence[str], served_name: str) -> list[str] | None:
    """``vllm serve MODEL ...`` in the Truss container layout: the model from ``MOUNT``, ``--host``/``--port``/
    ``--served-model-name`` added where the command does not set them, every other word as written; None for
    a command of any other form."""
    words = [str(a) for a in argv]
    if words[:2] != ["vllm", "serve"] or len(words) < 3:
        return None
    cmd = parse_command(words)
    out = ["vllm", "serve", MOUNT]
    if not cmd.has("--host"):
        out += ["--host", "0.0.0.0"]
    if not cmd.has("--port"):
        out += ["--port", str(PORT)]
    if not cmd.has("--served-model-name"):
        out += ["--served-model-name", served_name]
    return out + words[3:]


def instance_size(used: int, most: int) -> int:
    """GPUs of the instance: ``used`` rounded up to Baseten's 1/2/4/8-GPU shapes, at most ``most``."""
    size = 1
    while size < used:
        size *= 2
    return min(size, most)


def hf_weights(model: str, revision: str | None) -> dict[str, str]:
    """The ``weights`` entry that mounts a Hugging Face checkpoint at ``MOUNT``."""
    return {"source": f"hf://{model}@{revision or 'main'}", "mount_location": MOUNT,
            "auth_secret_name": "hf_access_token"}


def example_input(model: str, **sampling: float) -> dict[str, Any]:
    """The ``example_model_input``: one streamed chat request."""
    return {"model": model, "messages": [{"role": "user", "content": EXAMPLE_PROMPT}], "stream": True,
            "max_tokens": 512, **sampling}


def default_concurrency_note() -> str:
    """What an emitted ``predict_concurrency`` of :data:`DEFAULT_CONCURRENCY` rests on: launchcard's choice alone."""
    return (f"runtime.predict_concurrency {DEFAULT_CONCURRENCY} is launchcard's default, not a source's: the command "
            "sets no --max-num-seqs and no source gives a concurrency")


def health_checks(ready_timeout_s: int) -> dict[str, int]:
    """Wait out the engine's own ready timeout (Baseten caps the delay at 1800 s)."""
    return {"restart_check_delay_seconds": min(ready_timeout_s, 1800), **HEALTH_CHECKS}


def _folded(words: list[str]) -> str:
    """The start command as a folded block (one flag per line) when folding keeps it exact."""
    from ruamel.yaml.scalarstring import FoldedScalarString

    text = shlex.join(words)
    if not _yaml.plain_safe(text) or "\t" in text or "  " in text or text != text.strip():
        return text
    # Fold before each option: the folded lines join back with single spaces.
    fs: FoldedScalarString = FoldedScalarString(text)
    pos, positions = 0, []
    for i, w in enumerate(words):
        q = shlex.quote(w)
        if i > 0 and w.startswith("--"):
            positions.append(pos - 1)
        pos += len(q) + 1
    fs.fold_pos = positions  # type: ignore[attr-defined]  # ruamel declares it in __slots__ only
    return fs


def emit_truss(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
               image: str | None = None, revision: str | None = None, **_: object) -> dict[str, str]:
    if plan.deploy_type == "omni":
        raise EmitError("the truss target writes a vLLM chat server (vllm/vllm-openai image, /v1/chat/completions "
                        "predict endpoint); an omni pipeline needs vLLM-Omni installed and serves its task's own "
                        "endpoint", where="--target truss",
                        fix="use the kubernetes, compose, docker or shell target with an image that has vLLM-Omni")
    if plan.deploy_type != "single_node" or len(plan.commands) != 1 or plan.router is not None:
        raise EmitError(f"the truss target serves one process on one machine; this plan is "
                        f"{plan.deploy_type} with {len(plan.commands)} process(es)"
                        f"{' and a router' if plan.router is not None else ''}",
                        where="--target truss", fix="use the kubernetes, compose, docker or shell target")
    cmd = plan.commands[0]
    texts = list(cmd.argv) + [v for _, v in env_items(cmd)]
    if any(PLACEHOLDER.search(t) for t in texts):
        raise EmitError("the plan has address placeholders that truss cannot fill", where="--target truss",
                        fix="use the shell or docker target")
    instance = rented_instance(plan.hardware)
    img = require_image(plan, image, "truss")
    words = container_argv(cmd.argv, plan.model_id)
    if words is None:
        raise EmitError(f"the truss target expects 'vllm serve MODEL ...', got {shlex.join(cmd.argv[:3])!r}",
                        where="--target truss", fix="use the shell or docker target")
    concurrency = parse_command(cmd.argv).try_int("--max-num-seqs") or DEFAULT_CONCURRENCY
    used = gpus_used(plan, cmd)
    gpus = instance_size(used, max(plan.gpus_per_node, used))
    config: dict[str, Any] = {  # Any: the Truss config.yaml document (JSON/YAML values)
        "model_name": plan.model_id.rsplit("/", 1)[-1].lower(),
        "model_metadata": {
            "repo_id": plan.model_id,
            "tags": ["openai-compatible"],
            "example_model_input": example_input(plan.model_id),
        },
        "base_image": {"image": img},
        "weights": [hf_weights(plan.model_id, revision)],
        "secrets": {"hf_access_token": None},
        "environment_variables": dict(env_items(cmd)),
        "docker_server": {"start_command": _folded(words), **DOCKER_SERVER},
        "resources": {"instance_type": f"{instance}:{gpus}"},
        "runtime": {"predict_concurrency": concurrency, "health_checks": health_checks(plan.ready_timeout_s or 1800)},
    }
    if not config["environment_variables"]:
        del config["environment_variables"]
    notes = ["Baseten reads the Hugging Face token from the secret 'hf_access_token'; no value is stored here."]
    if revision is None:
        notes.append("weights revision not pinned (main): pass --weights-revision SHA to pin it.")
    if parse_command(cmd.argv).try_int("--max-num-seqs") is None:
        notes.append(f"assumed: {default_concurrency_note()}.")
    return {"config.yaml": header(plan, "truss", card_name=card_name, inputs=inputs, notes=notes)
            + "\n" + _yaml.dump([config])}
