"""``--config``: a config.json file, a model folder, or a Hub repo id found on this machine (never the network).

A repo id is looked up in the local Hugging Face cache (``huggingface_hub``'s own cache lookup, which
honours ``HF_HUB_CACHE``/``HF_HOME``) and then in ``launchcard sync``'s Hub snapshots
(``<sync cache>/corpus/hf/<org>/<name>/config.json``).  Nothing cached is one line saying how to get it.
"""

from __future__ import annotations

import re
from pathlib import Path

from launchcard.errors import InputError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


def looks_like_repo_id(value: str) -> bool:
    return bool(_REPO_ID.match(value)) and ".." not in value


def hub_cache_file(repo_id: str, filename: str = "config.json") -> Path | None:
    """``filename`` of ``repo_id`` (its ``main`` revision) in the local Hugging Face cache, or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    try:
        hit = try_to_load_from_cache(repo_id, filename)
    except Exception:  # noqa: BLE001 - a malformed cache entry is "not cached", never a crash
        return None
    return Path(hit) if isinstance(hit, str) and Path(hit).is_file() else None


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
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except ImportError:  # pragma: no cover
        return "~/.cache/huggingface/hub"


def locate_config(value: str | Path, *, where: str = "--config") -> Path:
    """The config.json ``value`` names: a file, a folder holding one, or a Hub repo id cached on this machine.

    Raises InputError (exit 2) naming where it looked and how to get the file."""
    text = str(value).strip()
    path = Path(text).expanduser()
    if path.is_dir():
        path = path / "config.json"
    if path.is_file():
        return path
    if looks_like_repo_id(text) and not path.parent.is_dir():
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
