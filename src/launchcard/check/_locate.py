"""``--config``: a config.json file, a model folder, or a Hub repo id found on this machine (never the network).

A repo id is looked up in the local Hugging Face cache (``huggingface_hub``'s own cache lookup, which
honours ``HF_HUB_CACHE``/``HF_HOME``) and then in ``launchcard sync``'s Hub snapshots
(``<sync cache>/corpus/hf/<org>/<name>/config.json``).  Nothing cached is one line saying how to get it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from launchcard.errors import InputError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


def looks_like_repo_id(value: str) -> bool:
    return bool(_REPO_ID.match(value)) and ".." not in value


def hub_cache_file(repo_id: str, filename: str = "config.json") -> Path | None:
    """``filename`` of ``repo_id`` (its ``main`` revision) in the local Hugging Face cache, or None.

    Looked up as huggingface_hub's ``try_to_load_from_cache`` does (huggingface_hub 2.4.0 file_download.py
    L1523-1607): ``<cache>/models--<org>--<name>``, ``refs/main`` names the snapshot, a file recorded under
    ``.no_exist/<snapshot>/`` is not there, else ``snapshots/<snapshot>/<filename>`` if it is a file; without
    importing the library (~0.25 s of CPU a process, for a few stat calls)."""
    try:
        repo = os.path.join(_hub_cache_dir(), "--".join(("models", *repo_id.split("/"))))
        if not os.path.isdir(repo):
            return None
        revision = "main"
        ref = os.path.join(repo, "refs", revision)
        if os.path.isfile(ref):
            with open(ref, encoding="utf-8") as fh:
                revision = fh.read()
        if os.path.isfile(os.path.join(repo, ".no_exist", revision, filename)):
            return None
        snapshots = os.path.join(repo, "snapshots")
        if not os.path.exists(snapshots) or revision not in os.listdir(snapshots):
            return None
        hit = Path(snapshots, revision, filename)
    except (OSError, UnicodeDecodeError, ValueError):  # a malformed cache entry is "not cached", never a crash
        return None
    return hit if hit.is_file() else None


def sync_snapshot_file(repo_id: str, filename: str = "config.json") -> Path | None:
    """``filename`` of ``repo_id`` in ``launchcard sync``'s Hub snapshot (``<cache>/corpus/hf``), or None."""
    from launchcard.sync import HubSource, default_cache_dir

    candidate = default_cache_dir() / "corpus" / HubSource().folder / repo_id / filename
    return candidate if candidate.is_file() else None


def synced_config_dirs() -> tuple[Path, ...]:
    """Folders laid out ``<org>/<name>/config.json`` that ``launchcard sync`` keeps (its Hub snapshot), if any:
    the configs a catalog built from the sync cache holds, for ``check_plan(config_search=...)``."""
    from launchcard.sync import HubSource, default_cache_dir

    folder = default_cache_dir() / "corpus" / HubSource().folder
    return (folder,) if folder.is_dir() else ()


def _hub_cache_dir() -> str:
    """huggingface_hub's ``HF_HUB_CACHE``: the loaded library's own constant (a caller may have set it), else as
    its constants.py computes it at import (huggingface_hub 2.4.0 L159-184): ``HF_HUB_CACHE``, else the legacy
    ``HUGGINGFACE_HUB_CACHE``, else ``$HF_HOME/hub`` with ``HF_HOME`` defaulting to
    ``${XDG_CACHE_HOME:-~/.cache}/huggingface``."""
    loaded = sys.modules.get("huggingface_hub.constants")
    if loaded is not None:
        return str(loaded.HF_HUB_CACHE)

    def expand(p: str) -> str:
        return os.path.expandvars(os.path.expanduser(p))

    home = expand(os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", os.path.join(
        os.path.expanduser("~"), ".cache")), "huggingface")))
    return expand(os.getenv("HF_HUB_CACHE", os.getenv("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub"))))


def locate_config(value: str | Path, *, where: str = "--config") -> Path:
    """The config.json ``value`` names: a file, a folder holding one, or a Hub repo id cached on this machine.

    Raises InputError (exit 2) naming where it looked and how to get the file."""
    text = str(value).strip()
    path = Path(text).expanduser()
    # os.path's tests: a name the file system cannot hold (ENAMETOOLONG, which Path.is_dir raises) is not there
    if os.path.isdir(path):
        path = path / "config.json"
    if os.path.isfile(path):
        return path
    if looks_like_repo_id(text) and not os.path.isdir(path.parent):
        found = hub_cache_file(text) or sync_snapshot_file(text)
        if found is not None:
            return found
        from launchcard.sync import default_cache_dir

        raise InputError(
            f"no config.json for {text}: not a file here, not in the local Hugging Face cache "
            f"({_hub_cache_dir()}) nor in launchcard sync's Hub snapshots "
            f"({default_cache_dir() / 'corpus' / 'hf'}); launchcard reads no network for it",
            where=f"{where} {text}",
            fix=f"fetch it once: `hf download {text} config.json tokenizer_config.json` (or `launchcard sync` "
                "with the model under [hub] models), or pass the path of a config.json")
    raise InputError("config.json not found", where=f"{where} {text}",
                     fix="pass the model's config.json, the folder holding it, or a Hub repo id that is cached here")


def model_folder_file(config: Path, filename: str, repo_id: str | None = None) -> Path | None:
    """A sibling of ``config`` (tokenizer_config.json ...), else the same file of ``repo_id`` in the local caches."""
    sibling = config.parent / filename
    if sibling.is_file():
        return sibling
    if repo_id and looks_like_repo_id(repo_id):
        return hub_cache_file(repo_id, filename) or sync_snapshot_file(repo_id, filename)
    return None
