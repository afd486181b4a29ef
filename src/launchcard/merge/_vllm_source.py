"""The vLLM recipes as a registered source: one checkout, one extract per model it has a recipe for.

A recipe is not read document by document: each model's extract is its
recipe's facts plus the command the resolver picks for the chosen hardware
(:func:`launchcard.merge._vllm.recipe_extract`), so the adapter reads per model.
It lives in ``merge``, not ``sources``, because that extract needs the resolver
and the plan check, which sit above the sources (imports run one way).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.card import EngineEnv
from launchcard.errors import LaunchcardError, UnknownNameError
from launchcard.merge._cache import key_of
from launchcard.merge._vllm import recipe_extract, variant_env
from launchcard.sources import Adapter, Extract, ModelExtract, ReadOptions

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeRepo


class VllmRecipes(Adapter):
    kind = "vllm-recipes"
    folder = "vllm-recipes"

    def __init__(self) -> None:
        self.repo: RecipeRepo | None = None
        self.options = ReadOptions()

    def open(self, root: Path | None, options: ReadOptions) -> bool:
        if root is None or not (root / "models").is_dir():
            return False
        from launchcard.resolve import profile_id
        from launchcard.sources.vllm_recipes import load_recipes

        self.repo = load_recipes(root, options.revision)
        profiles = sorted(self.repo.profiles)
        if options.hardware is not None:
            # the one rule `resolve --hardware` and the web read a profile name by (`H100`, `nvidia_h100` = h100)
            pid = profile_id(profiles, options.hardware)
            if pid is None:
                raise UnknownNameError("hardware", options.hardware, profiles, field="hardware",
                                       where=str(root / "taxonomy.yaml"))
            options = dataclasses.replace(options, hardware=pid)
        self.options = options
        return True

    def model_key(self, model: str) -> str | None:
        """The recipe file's sha256, the shared files' (top-level files, strategies, KV stores), the revision and
        commit time the URLs carry, and the hardware asked for."""
        if self.repo is None:
            return None
        if model not in self.models():
            recipe = None  # no recipe: model_extract says nothing about this model
        else:
            try:
                recipe = hashlib.sha256((self.repo.root / "models" / f"{model}.yaml").read_bytes()).hexdigest()
            except OSError:
                return None  # unreadable: the build says so, every time
        return key_of("vllm-recipes", model, recipe, self._shared_key, self.repo.revision, self.repo.committed_at,
                      self.options.hardware)

    @functools.cached_property
    def _shared_key(self) -> str:
        assert self.repo is not None
        root = self.repo.root
        # every file at the top (taxonomy, platforms, SOURCES manifests, a sync snapshot's record) and every
        # strategy and KV-store file: whatever a recipe's resolution may read besides the recipe itself
        files = [*sorted(p for p in root.iterdir() if p.is_file()),
                 *(p for folder in ("strategies", "kv_store") for p in sorted((root / folder).glob("*.yaml")))]
        h = hashlib.sha256()
        for f in files:
            with contextlib.suppress(OSError):
                h.update(f"{f.relative_to(root)}\0".encode() + hashlib.sha256(f.read_bytes()).digest())
        return h.hexdigest()

    def models(self) -> Sequence[str]:
        return self.repo.model_ids() if self.repo is not None else ()

    def model_extract(self, model: str) -> ModelExtract | None:
        if self.repo is None or model not in self.models():
            return None
        x, gaps = recipe_extract(self.repo, model, hardware=self.options.hardware,
                                 configs=dict(self.options.configs))
        return ModelExtract(extract=x, gaps=tuple(gaps))

    def plan_envs(self, model: str, parts: Sequence[Extract], configs: Collection[str]) -> list[EngineEnv]:
        """The recipe's command for a variant whose checkpoint has a config.json here, when the default's has none."""
        recipe = next((x for x in parts if x.doc.kind == self.kind), None)
        if self.repo is None or recipe is None or not configs:
            return []
        envs = [e for e in recipe.envs if e.engine == "vllm" and e.role in ("single", "head")]
        if not envs or any((e.checkpoint or model) in configs for e in envs):
            return []
        try:
            env = variant_env(self.repo, model, set(configs), self.options.hardware or envs[0].hardware)
        except LaunchcardError:
            return []
        return [env] if env else []
