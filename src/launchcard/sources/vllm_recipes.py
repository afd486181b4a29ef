"""Adapter for a checkout of the vLLM recipes repository.

Layout: ``models/<org>/<name>.yaml``, ``strategies/*.yaml``,
``kv_store/*.yaml``, ``taxonomy.yaml``.  Each file is read once, its raw bytes
hashed, every value's line kept, and converted once, at this boundary, into
typed frozen records (:mod:`launchcard.sources._recipe_types`) that the resolver
reads; a value of the wrong type stops here with its file and line.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from launchcard.errors import RecipeError, ResolveError, canonical_name, suggest
from launchcard.sources._recipe_check import check_recipe, check_strategy, check_taxonomy
from launchcard.sources._recipe_doc import REPO_URL, RecipeDoc
from launchcard.sources._recipe_types import HwProfile, KvOption, Strategy, Taxonomy
from launchcard.yamlread import ParsedCache, load_yaml

__all__ = ["REPO_URL", "RecipeDoc", "RecipeRepo", "git_head", "load_recipes"]

@dataclass
class RecipeRepo:
    """A recipes checkout.  Model files are parsed on first use and cached."""

    root: Path
    revision: str | None = None
    committed_at: datetime | None = None
    _recipes: dict[str, RecipeDoc] = field(default_factory=dict, repr=False)
    # Resolver caches (per recipe doc and choice); owned by launchcard.resolve, dropped with the repo.
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)
    # Parsed documents on disk (a batch over many recipes sets it; one plan reads too few files to gain).
    parsed: ParsedCache | None = field(default=None, repr=False)

    # -- shared files -----------------------------------------------------------------
    @cached_property
    def taxonomy(self) -> RecipeDoc:
        return self._taxonomy[0]

    @cached_property
    def _taxonomy(self) -> tuple[RecipeDoc, Taxonomy]:
        doc = self._read("taxonomy.yaml")
        return doc, check_taxonomy(doc)

    @cached_property
    def _strategies(self) -> tuple[dict[str, RecipeDoc], dict[str, Strategy]]:
        docs: dict[str, RecipeDoc] = {}
        typed: dict[str, Strategy] = {}
        for folder in ("strategies", "kv_store"):
            base = self.root / folder
            if not base.is_dir():
                continue
            for path in sorted(base.glob("*.yaml")):
                doc = self._read(path.relative_to(self.root).as_posix())
                strategy = check_strategy(doc, path.stem)
                docs[strategy.name] = doc
                typed[strategy.name] = strategy
        return docs, typed

    @property
    def strategy_docs(self) -> dict[str, RecipeDoc]:
        """Serving strategies and KV-store deployments (their files), keyed by ``name``."""
        return self._strategies[0]

    @property
    def strategies(self) -> dict[str, Strategy]:
        """Serving strategies and KV-store deployments, typed, keyed by ``name``."""
        return self._strategies[1]

    @property
    def profiles(self) -> dict[str, HwProfile]:
        return dict(self._taxonomy[1].profiles)

    @cached_property
    def hardware(self) -> Taxonomy:
        """The typed taxonomy: hardware profiles and KV offload options."""
        return self._taxonomy[1]

    @property
    def kv_options(self) -> dict[str, KvOption]:
        return dict(self._taxonomy[1].kv_offload)

    # -- recipes ----------------------------------------------------------------------
    def model_ids(self) -> list[str]:
        return list(self._model_ids)

    @cached_property
    def _model_ids(self) -> tuple[str, ...]:
        # listed once per repo: a corpus build asks once per model (181 globs of the folder otherwise)
        base = self.root / "models"
        return tuple(sorted(p.relative_to(base).with_suffix("").as_posix() for p in base.glob("*/*.yaml")))

    def _file(self, model: str) -> bool:
        """Whether ``models/MODEL.yaml`` is a file here; a name the file system cannot hold (a part over 255 bytes:
        ENAMETOOLONG, which ``is_file`` raises) is none."""
        try:
            return (self.root / "models" / f"{model}.yaml").is_file()
        except OSError:
            return False

    def holds(self, model: str) -> bool:
        """Whether this checkout has a recipe for ``model`` (matched as :meth:`canonical` matches it)."""
        return self._file(self.canonical(model))

    def canonical(self, model: str) -> str:
        """The recipe id ``model`` names, matched case-insensitively (``google/x`` finds ``Google/x``)."""
        if self._file(model):
            return model
        return canonical_name(model, self.model_ids()) or model

    def recipe(self, model: str) -> RecipeDoc:
        doc = self._recipes.get(model)
        if doc is None:
            model = self.canonical(model)
            doc = self._recipes.get(model)
        if doc is None:
            rel = f"models/{model}.yaml"
            if not self._file(model):
                raise ResolveError(
                    f"no recipe for model {model!r} under {self.root / 'models'}",
                    where="MODEL", fix=suggest(model, self.model_ids(), "model"),
                )
            doc = self._read(rel)
            doc = replace(doc, typed=check_recipe(doc, set(self.strategy_docs)))
            self._recipes[model] = doc
        return doc

    # -- io ----------------------------------------------------------------------------
    def _read(self, rel: str) -> RecipeDoc:
        path = self.root / rel
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise RecipeError("file not found", where=str(path),
                              fix="point --recipes at a checkout of vllm-project/recipes") from None
        except OSError as exc:
            raise RecipeError(f"cannot read file ({exc.strerror})", where=str(path),
                              fix="check the path and its permissions") from None
        digest = hashlib.sha256(raw).hexdigest()
        if self.parsed is not None:
            loaded = self.parsed.load(raw, digest, str(path), error=RecipeError)
        else:
            loaded = load_yaml(raw, str(path), error=RecipeError)
        return RecipeDoc(rel, digest, self.revision or _manifest_revision(self.root, rel),
                         loaded, str(path), committed_at=self.committed_at)


def load_recipes(path: str | Path, revision: str | None = None) -> RecipeRepo:
    """Open a recipes checkout.  ``revision`` defaults to the directory's git HEAD, else each file's own
    commit from the folder's ``SOURCES*.md`` manifest, else None (URLs then say ``blob/HEAD``)."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise RecipeError("recipes directory not found", where=str(root),
                          fix="pass --recipes DIR pointing at a checkout of vllm-project/recipes")
    if not (root / "models").is_dir():
        raise RecipeError("not a recipes checkout: no models/ folder", where=str(root),
                          fix="pass the repository root (the folder holding models/, strategies/, taxonomy.yaml)")
    for needed in ("taxonomy.yaml", "strategies"):
        if not (root / needed).exists():
            raise RecipeError(f"not a recipes checkout: {needed} is missing", where=str(root / needed),
                              fix="pass the repository root (the folder holding models/, strategies/, taxonomy.yaml)")
    if revision is None and not (root / ".git").exists():
        from launchcard.snapshot import snapshot_of

        synced = snapshot_of(root)  # a folder `launchcard sync` wrote: its commit and commit time
        if synced is not None and synced.commit:
            return RecipeRepo(root, synced.commit, synced.committed_at)
    return RecipeRepo(root, revision or git_head(root))


def _manifest_revision(root: Path, rel: str) -> str | None:
    """The commit the corpus's SOURCES.md names for this one file (no --revision, no git checkout)."""
    from launchcard.sources._provenance import lookup

    return lookup(root, rel)[1]


def git_head(root: Path) -> str | None:
    """The commit of ``root`` when it is the top of a git work tree, else None."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


