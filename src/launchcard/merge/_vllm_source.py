"""The vLLM recipes as a registered source: one checkout, one extract per model it has a recipe for.

A recipe is not read document by document: each model's extract is its
recipe's facts plus the command the resolver picks for the chosen hardware
(:func:`launchcard.merge._vllm.recipe_extract`), so the adapter reads per model.
It lives in ``merge``, not ``sources``, because that extract needs the resolver
and the plan check, which sit above the sources (imports run one way).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.card import EngineEnv
from launchcard.errors import LaunchcardError, UnknownNameError
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
        from launchcard.sources.vllm_recipes import load_recipes

        self.repo = load_recipes(root, options.revision)
        self.options = options
        profiles = sorted(self.repo.profiles)
        if options.hardware is not None and options.hardware not in profiles:
            raise UnknownNameError("hardware", options.hardware, profiles, field="hardware",
                                   where=str(root / "taxonomy.yaml"))
        return True

    def models(self) -> Sequence[str]:
        return self.repo.model_ids() if self.repo is not None else ()

    def model_extract(self, model: str) -> ModelExtract | None:
        if self.repo is None or model not in self.models():
            return None
        x, gaps = recipe_extract(self.repo, model, hardware=self.options.hardware)
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
