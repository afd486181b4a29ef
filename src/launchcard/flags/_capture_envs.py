"""Capture an engine's environment-variable registry: each variable's default and choices.

Standard library only (runs inside the engine's environment, like ``_capture``).
"""

from __future__ import annotations

from typing import Any

from launchcard.flags._capture_types import closure_var, jsonable


def machine_free(value: Any) -> Any:
    """A default with this machine's home and temp directories written as ``~`` and ``$TMPDIR``."""
    import os
    import tempfile

    home, tmp = os.path.expanduser("~"), tempfile.gettempdir()
    if isinstance(value, str):
        value = value.replace(home, "~") if home not in ("", "/") else value
        value = value.replace(tmp, "$TMPDIR") if tmp not in ("", "/") else value
    return value


def capture_vllm_envs() -> dict[str, Any]:
    """vLLM's environment-variable registry (``vllm.envs.environment_variables``): name -> default.

    Each default is what vLLM's own getter returns with no ``VLLM_*`` (nor any
    registered) variable set; the home and temp directories are written as ``~`` and ``$TMPDIR`` so
    the capture does not depend on the machine.  ``choices`` where the getter
    is built by ``env_with_choices``.
    """
    import os

    try:
        import vllm.envs as vllm_envs  # engine env only
    except ImportError:
        return {}
    registry = getattr(vllm_envs, "environment_variables", None)
    if not isinstance(registry, dict):
        return {}
    # Defaults as a bare machine sees them: vLLM derives some from the XDG base directories
    # (VLLM_CACHE_ROOT = $XDG_CACHE_HOME/vllm ...), so those are unset for the capture too.
    saved = {k: v for k, v in os.environ.items()
             if k.startswith(("VLLM_", "XDG_")) or k in registry}
    for k in saved:
        del os.environ[k]
    out: dict[str, Any] = {}
    try:
        import importlib

        # a default drawn once per import (a module-level uuid...) differs in a re-imported registry
        again: dict[str, Any] = getattr(importlib.reload(vllm_envs), "environment_variables", {})
    except Exception:  # noqa: BLE001 - engine code: no second registry, no comparison
        again = {}
    try:
        for name, getter in sorted(registry.items()):
            entry: dict[str, Any] = {}
            try:
                os.environ.pop(name, None)
                value = jsonable(getter())
                os.environ.pop(name, None)  # some getters set the variable to the default they drew
                other = again.get(name)
                if jsonable(getter()) != value or (other is not None and jsonable(other()) != value):
                    # random per call or per import (a fresh uuid...): no fixed default
                    value, entry["default_varies"] = None, True
            except Exception as exc:  # noqa: BLE001 - engine code: record that it has no plain default
                value, entry["default_error"] = None, type(exc).__name__
            os.environ.pop(name, None)
            entry["default"] = machine_free(value)
            choices = closure_var(getter, "choices")
            if isinstance(choices, (list, tuple)):
                entry["choices"] = [jsonable(c) for c in choices]
            out[name] = entry
    finally:
        os.environ.update(saved)
    return out


def capture_sglang_envs() -> dict[str, Any]:
    """SGLang's environment-variable registry (``sglang.srt.environ.Envs``, from 0.5.3): name -> default.

    Each ``EnvField`` of the class gives its name and default (a callable
    default is called); ``deprecated_name`` (an alias it still reads) and the
    replacements in ``_DEPRECATED_ENVS`` are recorded as ``replaced_by`` entries.
    """
    try:
        from sglang.srt import environ  # engine env only
    except ImportError:
        return {}
    field = getattr(environ, "EnvField", None)
    envs_class = getattr(environ, "Envs", None)
    if field is None or envs_class is None:
        return {}
    out: dict[str, Any] = {}
    for value in vars(envs_class).values():
        if not isinstance(value, field) or not getattr(value, "name", None):
            continue
        default = value.default
        entry: dict[str, Any] = {}
        try:
            entry["default"] = machine_free(jsonable(default() if callable(default) else default))
        except Exception as exc:  # noqa: BLE001 - engine code: no plain default
            entry["default"], entry["default_error"] = None, type(exc).__name__
        out[value.name] = entry
        alias = getattr(value, "deprecated_name", None)
        if isinstance(alias, str) and alias:
            out.setdefault(alias, {"default": None, "deprecated": True, "replaced_by": value.name})
    for old, dep in (getattr(environ, "_DEPRECATED_ENVS", None) or {}).items():
        replacement = getattr(dep, "replacement", None)
        out.setdefault(old, {"default": None, "deprecated": True,
                             **({"replaced_by": replacement} if replacement else {})})
    return dict(sorted(out.items()))
