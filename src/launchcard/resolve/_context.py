"""The derived values every resolution step reads (spec §2), computed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

def present(value: Any) -> bool:
    """The reference's "present": not null/undefined (0 and "" count as present)."""
    return value is not None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Src:
    """Where a token came from: a layer, an entry of it, and a path in a file."""

    layer: str
    key: str | None
    doc: RecipeDoc | None
    path: tuple[Any, ...] = ()


@dataclass
class Profile:
    hw: str
    brand: str | None
    gen: str | None
    gpu_count: int
    vram_gb: float | None
    restricted: bool
    scalable: bool
    known: bool

    @property
    def brand_key(self) -> str | None:
        return self.brand.lower() if isinstance(self.brand, str) else None


def profile_of(repo: RecipeRepo, hw: str) -> Profile:
    prof = repo.profiles.get(hw)
    known = isinstance(prof, dict)
    prof = prof if known else {}
    gen = prof.get("generation")
    if isinstance(gen, list):
        gen = gen[0] if gen else None
    count = prof.get("gpu_count")
    gpu_count = count if isinstance(count, (int, float)) and not isinstance(count, bool) else 1
    vram = prof.get("vram_gb")
    return Profile(
        hw=hw,
        brand=prof.get("brand"),
        gen=gen,
        gpu_count=int(gpu_count),
        vram_gb=vram if isinstance(vram, (int, float)) else None,
        restricted=prof.get("restricted") is True,
        scalable=prof.get("scalable") is not False,
        known=known,
    )


def generations(repo: RecipeRepo, hw: str) -> list[str]:
    gen = (repo.profiles.get(hw) or {}).get("generation")
    if isinstance(gen, list):
        return [g for g in gen if isinstance(g, str)]
    return [gen] if isinstance(gen, str) else []


@dataclass
class Ctx:
    """One resolution: recipe, variant, hardware, strategy and the derived values."""

    repo: RecipeRepo
    doc: RecipeDoc
    variant_key: str
    prof: Profile
    strategy_name: str | None
    node_count: int
    warnings: list[str] = field(default_factory=list)

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    @property
    def model(self) -> dict[str, Any]:
        return as_dict(self.data.get("model"))

    @property
    def variants(self) -> dict[str, Any]:
        return as_dict(self.data.get("variants"))

    @property
    def variant(self) -> dict[str, Any]:
        v = self.variants.get(self.variant_key)
        return v if isinstance(v, dict) else {}

    @property
    def variant_path(self) -> tuple[str, ...]:
        return ("variants", self.variant_key)

    @property
    def strategy(self) -> dict[str, Any]:
        return as_dict(self.repo.strategies.get(self.strategy_name or ""))

    @property
    def strategy_doc(self) -> RecipeDoc | None:
        return self.repo.strategy_docs.get(self.strategy_name or "")

    @property
    def so(self) -> dict[str, Any]:
        return as_dict(as_dict(self.data.get("strategy_overrides")).get(self.strategy_name or ""))

    @property
    def so_path(self) -> tuple[str, ...]:
        return ("strategy_overrides", self.strategy_name or "")

    @property
    def hw(self) -> str:
        return self.prof.hw

    @property
    def gen(self) -> str | None:
        return self.prof.gen

    @property
    def is_nvidia(self) -> bool:
        return self.prof.brand == "NVIDIA"

    @property
    def deploy_type(self) -> str | None:
        return self.strategy.get("deploy_type")

    @property
    def total_gpus(self) -> int:
        return self.prof.gpu_count * max(1, self.node_count)

    def gen_key(self, mapping: Any) -> str | None:
        """The generation key of ``mapping``, else ``nvidia`` on NVIDIA hardware."""
        m = as_dict(mapping)
        if self.gen is not None and present(m.get(self.gen)):
            return self.gen
        if self.is_nvidia and present(m.get("nvidia")):
            return "nvidia"
        return None

    def hw_key(self, mapping: Any, *, brand: bool = True, default: bool = True) -> str | None:
        """Hardware-keyed lookup: exact id, generation, brand, ``default`` (spec §2)."""
        m = as_dict(mapping)
        keys = [self.hw, self.gen]
        if brand:
            keys.append(self.prof.brand_key)
        if default:
            keys.append("default")
        for key in keys:
            if key is not None and present(m.get(key)):
                return key
        return None

    def src(self, layer: str, key: str | None, *path: Any, doc: RecipeDoc | None = None) -> Src:
        return Src(layer, key, doc or self.doc, tuple(path))

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
