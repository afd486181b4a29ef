"""What to sync from where: a small typed config with the upstreams as defaults.

A TOML file overrides any field per source (unknown keys are bad input)::

    [git.vllm-recipes]
    remote = "https://github.com/my-fork/recipes.git"
    revision = "8959cf64189c71d36e11c6a30335f923f261b1f7"   # a commit, tag or branch; default: the remote's HEAD

    [hub]
    endpoint = "https://huggingface.co"     # default: $HF_ENDPOINT, else huggingface_hub's default
    models = ["zai-org/GLM-5.3-Flash"]      # default: every model the synced vLLM recipes name
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from launchcard.errors import InputError
from launchcard.gitref import REF_RULE, is_ref_name


@dataclass(frozen=True)
class GitSource:
    """One git upstream: where it is, which commit, which paths launchcard reads, where they go in the corpus."""

    name: str
    remote: str
    web: str | None  # permalink base: <web>/blob/<commit>/<path>
    paths: tuple[str, ...]  # files read (git-style globs; a plain path is a file or a whole folder)
    folder: str  # corpus folder the snapshot's ``subdir`` becomes
    subdir: str = ""  # the snapshot folder the corpus folder points at
    revision: str | None = None  # commit, tag or branch; None = the remote's HEAD
    filter: str | None = "blob:none"  # partial clone: blobs fetched only for the paths checked out
    models_dir: str | None = None  # ``<models_dir>/<org>/<name>.yaml`` names a model (history reads only those)


@dataclass(frozen=True)
class HubSource:
    """Hugging Face Hub metadata and files, through ``huggingface_hub`` (HF_ENDPOINT, HF_TOKEN honoured)."""

    name: str = "hf"
    folder: str = "hf"
    endpoint: str | None = None
    models: tuple[str, ...] = ()  # empty: the models of the synced vLLM recipes
    files: tuple[str, ...] = ("config.json",)
    timeout_s: float = 20.0


@dataclass(frozen=True)
class SyncConfig:
    git: tuple[GitSource, ...]
    hub: HubSource

    def names(self) -> list[str]:
        return [g.name for g in self.git] + [self.hub.name]


DEFAULT_GIT = (
    GitSource(name="vllm-recipes", remote="https://github.com/vllm-project/recipes.git",
              web="https://github.com/vllm-project/recipes", folder="vllm-recipes",
              paths=("models", "strategies", "kv_store", "taxonomy.yaml", "platforms.yaml"), models_dir="models"),
    GitSource(name="sglang-cookbook", remote="https://github.com/sgl-project/sglang.git",
              web="https://github.com/sgl-project/sglang", folder="sglang-cookbook",
              subdir="docs/cookbook/autoregressive",
              paths=("docs/cookbook/autoregressive", "docs/src/snippets/configs", "docs/src/snippets/autoregressive")),
    GitSource(name="dynamo", remote="https://github.com/ai-dynamo/dynamo.git",
              web="https://github.com/ai-dynamo/dynamo", folder="dynamo", subdir="recipes",
              paths=("recipes/**/*.yaml", "recipes/**/*.yml", "recipes/**/README.md")),
    GitSource(name="truss-examples", remote="https://github.com/basetenlabs/truss-examples.git",
              web="https://github.com/basetenlabs/truss-examples", folder="providers",
              paths=("**/config.yaml", "**/README.md")),
)


def default_config() -> SyncConfig:
    return SyncConfig(git=DEFAULT_GIT, hub=HubSource(endpoint=os.environ.get("HF_ENDPOINT") or None))


def default_cache_dir() -> Path:
    """``$LAUNCHCARD_CACHE``, else ``<user cache dir>/launchcard`` (platformdirs)."""
    env = os.environ.get("LAUNCHCARD_CACHE")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("launchcard", appauthor=False))


def _bad(where: str, rule: str, fix: str) -> InputError:
    return InputError(rule, where=where, fix=fix, field="sync-config")


def _typed(where: str, key: str, value: Any, like: Any) -> Any:
    if isinstance(like, tuple) or key in ("paths", "models", "files"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad(where, f"{key} must be a list of strings (got {value!r})", f'write {key} = ["..."]')
        return tuple(value)
    if key == "timeout_s":
        if not isinstance(value, (int, float)) or value <= 0:
            raise _bad(where, f"timeout_s must be a positive number (got {value!r})", "write timeout_s = 20")
        return float(value)
    if not isinstance(value, str):
        raise _bad(where, f"{key} must be a string (got {value!r})", f'write {key} = "..."')
    if key == "revision" and not is_ref_name(value):  # fetched as the refspec +REV:ref
        raise _bad(where, f"not a git revision ({value!r}): {REF_RULE}", 'write revision = "COMMIT, TAG or BRANCH"')
    return value


def _apply(obj: Any, table: Any, where: str) -> Any:
    if not isinstance(table, dict):
        raise _bad(where, "not a table", "write [section] followed by key = value lines")
    known = {f.name: getattr(obj, f.name) for f in fields(obj) if f.name != "name"}
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise _bad(f"{where}.{key}", "unknown setting", f"known: {', '.join(sorted(known))}")
        changes[key] = _typed(f"{where}.{key}", key, value, known[key])
    return replace(obj, **changes)


def load_config(path: Path | None = None, *, remotes: dict[str, str] | None = None,
                revisions: dict[str, str] | None = None) -> SyncConfig:
    """Defaults, then the TOML file's tables, then per-source remote/revision overrides (options)."""
    cfg = default_config()
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise _bad(str(path), f"cannot read the sync config ({exc.strerror})", "give a readable TOML file") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise _bad(str(path), f"not valid TOML ({exc})", "fix the file's syntax") from exc
        for key in data:
            if key not in ("git", "hub"):
                raise _bad(f"{path}: {key}", "unknown section", "sections are [git.<name>] and [hub]")
        git = {g.name: g for g in cfg.git}
        for name, table in (data.get("git") or {}).items():
            if name in git:
                git[name] = _apply(git[name], table, f"{path}: git.{name}")
            else:  # a new git source: remote, paths and folder are needed
                if not isinstance(table, dict) or not {"remote", "paths", "folder"} <= set(table):
                    raise _bad(f"{path}: git.{name}", "a new git source needs remote, paths and folder",
                               f"known sources: {', '.join(git)}")
                base = GitSource(name=name, remote="", web=None, paths=(), folder="")
                git[name] = _apply(base, table, f"{path}: git.{name}")
        cfg = SyncConfig(git=tuple(git.values()), hub=_apply(cfg.hub, data.get("hub") or {}, f"{path}: hub"))
    names = {g.name for g in cfg.git}
    for what, given in (("remote", remotes or {}), ("revision", revisions or {})):
        for name, value in given.items():
            if name not in names:  # the option's input, not the config file's
                raise InputError(f"unknown git source {name!r}", where=f"{name}={value}", field=f"sync-{what}",
                                 fix=f"known: {', '.join(sorted(names))}")
    for name, value in (revisions or {}).items():  # fetched as the refspec +REV:ref: a ':' or space is not a REV
        if not is_ref_name(value):
            raise InputError(f"not a git revision ({value!r}): {REF_RULE}", where=f"{name}={value}",
                             field="sync-revision", fix="give the commit, tag or branch to pin")
    cfg = replace(cfg, git=tuple(replace(g, remote=(remotes or {}).get(g.name, g.remote),
                                         revision=(revisions or {}).get(g.name, g.revision)) for g in cfg.git))
    return cfg
