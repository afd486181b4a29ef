"""Artifacts from a resolved plan: shell, docker, compose, kubernetes, truss.

``emit`` is pure: plan in, ``{file name: content}`` out, no I/O.  Each target
lives in its own module; ``write_files`` is the only function that touches
the disk, and it never leaves a partial write behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard import atomicfile
from launchcard.errors import EmitError, InputError
from launchcard.resolve import ResolvedPlan

if TYPE_CHECKING:
    from launchcard.check import Verdict

    # `X as X`: explicit re-exports of the names loaded on first use (see __getattr__)
    from launchcard.emit._common import check_image as check_image
    from launchcard.emit._common import check_weights_revision as check_weights_revision
    from launchcard.emit._docker import docker_argvs as docker_argvs
    from launchcard.emit._docker import one_liner as one_liner
    from launchcard.emit._preset import PresetOptions as PresetOptions
    from launchcard.emit._preset import emit_preset as emit_preset
    from launchcard.emit._preset import parse_parser_overrides as parse_parser_overrides
    from launchcard.emit._preset import select_env as select_env

TARGETS = ("shell", "docker", "compose", "kubernetes", "truss")
# the engines whose server command a target can write, where not every engine's (the others write any command):
# truss writes a vLLM chat server (vllm/vllm-openai image, `vllm serve MODEL` parsed into its config)
TARGET_ENGINES = {"truss": ("vllm",)}
TARGET_WHY = {"truss": "it writes a vLLM chat server (vllm/vllm-openai image, the `vllm serve MODEL ...` command "
                       "read into its config)"}


# the names each target writes (emit/_shell.file_name, _docker, _compose, _kubernetes, _truss): a plan of several
# units writes one script per unit, NAME-UNIT.sh, whose units only the resolved plan knows
TARGET_FILES = {"shell": ("launch.sh", "launch-*.sh"), "docker": ("docker-run.sh", "docker-run-*.sh"),
                "compose": ("compose.yaml",), "kubernetes": ("kubernetes.yaml",), "truss": ("config.yaml",)}


def check_out_files(out_dir: str | os.PathLike[str], target: str) -> None:
    """Bad input where a file ``target`` may write exists in ``out_dir`` as a folder, in :func:`write_files`'s
    words: a command that works for seconds before it writes (``plan --emit --out``) asks first (a per-unit script
    name is judged by its pattern, the winner's units not being known yet)."""
    out = Path(out_dir)
    if not out.is_dir():
        return
    for pattern in TARGET_FILES.get(target, ()):
        for path in sorted(out.glob(pattern)):
            if path.is_dir():
                raise InputError(f"{path.name!r} exists there as a folder", where=str(out), field="out",
                                 fix="remove it or choose another folder")


def check_target_hardware(target: str, gpu: str) -> None:
    """InputError on ``--emit`` (before any work: ``plan --emit``) when ``target`` cannot request ``gpu`` (a hardware
    catalog name): the container targets map NVIDIA and AMD devices only (:func:`_common.device_family`), truss
    needs an instance type Baseten rents (:func:`_truss.rented_instance`); the emitters' own rules and words."""
    from launchcard.emit._common import device_family
    from launchcard.emit._truss import _instance_choices, rented_instance
    from launchcard.hardware import find

    acc = find(gpu)
    try:
        if target in ("docker", "compose", "kubernetes"):
            device_family(acc.vendor, acc.id, target)
        elif target == "truss":
            rented_instance(acc.id)
    except EmitError as exc:
        fix = (f"use a --gpu Baseten rents ({', '.join(_instance_choices())}) or another target" if target == "truss"
               else "use the shell target and start the container the vendor documents")
        raise InputError(exc.rule, where="--emit", fix=fix) from None


def check_target_engine(target: str, engine: str) -> None:
    """InputError (before any work) when ``target`` cannot write a plan served by ``engine``."""
    allowed = TARGET_ENGINES.get(target)
    if allowed is not None and engine not in allowed:
        usable = [t for t in TARGETS if engine in TARGET_ENGINES.get(t, (engine,))]
        raise InputError(f"the {target} target cannot express a plan served by {engine}: {TARGET_WHY[target]}",
                         where="--emit", fix=f"use one of {', '.join(usable)}")


def _emitter(target: str) -> Callable[..., dict[str, str]]:
    if target == "shell":
        from launchcard.emit._shell import emit_shell
        return emit_shell
    if target == "docker":
        from launchcard.emit._docker import emit_docker
        return emit_docker
    if target == "compose":
        from launchcard.emit._compose import emit_compose
        return emit_compose
    if target == "kubernetes":
        from launchcard.emit._kubernetes import emit_kubernetes
        return emit_kubernetes
    if target == "truss":
        from launchcard.emit._truss import emit_truss
        return emit_truss
    raise InputError(f"unknown emit target {target!r}", where="--target", fix=f"choose one of {', '.join(TARGETS)}")


def emit(plan: ResolvedPlan, target: str, *, card_name: str | None = None,
         inputs: Mapping[str, object] | None = None, image: str | None = None,
         revision: str | None = None, verdict: Verdict | None = None,
         cache_size: str | None = None) -> dict[str, str]:
    """Files (name -> text) that launch ``plan`` on ``target``.

    ``inputs`` are the resolution inputs shown in every file's header (default:
    those recorded on the plan); ``image`` overrides the plan's container image
    (e.g. with a pinned digest; checked as an image reference); ``revision`` pins
    the weights (truss; InputError for another target); ``cache_size`` the model-cache volume (kubernetes, a
    storage quantity; default 1Ti, said so in the header); ``verdict`` (from :func:`launchcard.check.check_plan`)
    is written into every file's header.  Refusing a plan with an error finding
    is the caller's decision.  Raises EmitError when the target cannot express
    the plan, InputError for a malformed image.
    """
    if not plan.commands:
        raise EmitError("the plan has no command to launch", where="plan.commands",
                        fix="resolve a serving strategy first")
    if image is not None:
        from launchcard.emit._common import check_image

        check_image(image)
    if cache_size is not None and target != "kubernetes":
        raise InputError(f"--cache-size sizes the kubernetes target's model cache, not {target}'s",
                         where="--cache-size", fix="drop it, or emit -t kubernetes")
    if revision is not None and target == "truss":
        from launchcard.emit._common import check_weights_revision

        check_weights_revision(revision)
    elif revision is not None:
        raise InputError(f"--weights-revision pins the truss target's weights; {target} loads what the command "
                         "names", where="--weights-revision",
                         fix="drop it, or emit -t truss")
    extra = {"cache_size": cache_size} if cache_size is not None else {}
    files = _emitter(target)(plan, card_name=card_name, inputs=inputs, image=image, revision=revision, **extra)
    if verdict is None:
        return files
    from launchcard.emit._header import with_verdict

    return {name: with_verdict(text, verdict) for name, text in files.items()}


def write_files(files: Mapping[str, str], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write every file into ``out_dir`` with :func:`launchcard.atomicfile.write_files`: all to temporaries first,
    then rename each into place.

    Shell scripts become executable.  On any error the temporaries are removed
    and no target file has been touched.
    """
    out = Path(out_dir)
    for name in files:
        if not name or Path(name).name != name or name in (".", ".."):
            raise EmitError(f"file name {name!r} is not a plain name", where="emit", fix="report this as a bug")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder ({exc.strerror})", where=str(out), field="out",
                         fix="choose a writable folder") from None
    for name in files:
        if (out / name).is_dir():  # checked first: a failed rename after others would be a partial write
            raise InputError(f"{name!r} exists there as a folder", where=str(out), field="out",
                             fix="remove it or choose another folder")
    try:
        return atomicfile.write_files(out, files, mode=lambda name: 0o755 if name.endswith(".sh") else 0o644)
    except OSError as exc:
        raise InputError(f"cannot write the emitted files ({exc.strerror})", where=str(out), field="out",
                         fix="choose a writable folder with free space") from None


# public name -> private module; loaded on first use (the preset target pulls pydantic in)
_LAZY = {
    "check_image": "_common",
    "check_weights_revision": "_common",
    "docker_argvs": "_docker",
    "one_liner": "_docker",
    "PresetOptions": "_preset",
    "emit_preset": "_preset",
    "parse_parser_overrides": "_preset",
    "select_env": "_preset",
}

__all__ = ["TARGETS", "TARGET_ENGINES", "TARGET_FILES", "PresetOptions", "check_image", "check_out_files",
           "check_target_engine", "check_target_hardware", "check_weights_revision", "docker_argvs", "emit",
           "emit_preset", "one_liner", "parse_parser_overrides", "select_env", "write_files"]


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of _LAZY
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'launchcard.emit' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"launchcard.emit.{module}"), name)
