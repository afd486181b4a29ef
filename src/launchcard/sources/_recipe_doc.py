"""One parsed YAML file of the vLLM recipes repository, with its provenance.

Its own module so that the recipe checker (:mod:`._recipe_check`), which the
loader (:mod:`.vllm_recipes`) calls, can name it without importing the loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from launchcard.sources._recipe_types import Recipe
from launchcard.yamlread import LoadedYaml

if TYPE_CHECKING:
    from launchcard.card import Evidence

REPO_URL = "https://github.com/vllm-project/recipes"


@dataclass(frozen=True)
class RecipeDoc:
    """One YAML file of the recipes repository, parsed."""

    path: str  # repository-relative, e.g. models/zai-org/GLM-5.3-Flash.yaml
    sha256: str
    revision: str | None
    loaded: LoadedYaml
    file: str = ""  # where it was read, for error messages
    typed: Recipe | None = None  # the typed recipe (model files only)
    committed_at: datetime | None = None  # time of ``revision`` when known (a synced snapshot)

    @property
    def data(self) -> Any:
        """The raw YAML value (wire data: provenance readers only; the resolver reads ``recipe``)."""
        return self.loaded.value

    @property
    def recipe(self) -> Recipe:
        if self.typed is None:
            raise TypeError(f"{self.path} is not a model recipe")
        return self.typed

    def line(self, *path: Any) -> int | None:
        return self.loaded.line(*path)

    def install_notes(self) -> list[tuple[str, str, int | None]]:
        """``(mode, note, line)`` for ``model.install.docker.note`` and ``model.install.pip.note``: the version and
        image notes the recipes site shows beside each install tab and the resolver leaves out of the command
        (shared/docs/vllm-recipes-resolution.md sections 1.2 and 9).  Whitespace is collapsed."""
        model = self.data.get("model") if isinstance(self.data, dict) else None
        install = model.get("install") if isinstance(model, dict) else None
        out: list[tuple[str, str, int | None]] = []
        for mode in ("docker", "pip"):
            block = install.get(mode) if isinstance(install, dict) else None
            note = block.get("note") if isinstance(block, dict) else None
            if isinstance(note, str) and note.strip():
                out.append((mode, " ".join(note.split()), self.line("model", "install", mode, "note")))
        return out

    def url(self, line: int | None = None) -> str:
        rev = self.revision or "HEAD"
        anchor = f"#L{line}" if line else ""
        return f"{REPO_URL}/blob/{rev}/{self.path}{anchor}"

    def evidence(self, *path: Any) -> Evidence:
        from launchcard.card import Evidence  # pydantic: only when provenance is asked

        line = self.line(*path) if path else None
        return Evidence(kind="vllm-recipes", url=self.url(line), path=self.path, line=line,
                        revision=self.revision, sha256=self.sha256, committed_at=self.committed_at)
