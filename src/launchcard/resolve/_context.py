"""The derived values every resolution step reads (spec §2), computed once.

A :class:`Scope` is everything fixed by (recipe, variant, hardware, strategy):
the typed records picked out, the hardware profile, and a memo for the layers
that are the same for every case of that combination (the node count only
changes the parallelism tokens, which are part of a memo key where they matter).  Scopes
are cached on the repository, so a batch of cases pays for them once; a
:class:`Ctx` is one resolution over a scope, with its own warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from launchcard.sources import Recipe, Strategy, StrategyOverride, Variant, present
from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

T = TypeVar("T")
_NO_STRATEGY = Strategy(name="")


class Given(NamedTuple):
    """One input a computed value was computed from: its name and value, and the line holding it
    (``doc`` and ``path``), or no line for what the user chose or the builder's fixed rule gives."""

    name: str
    value: Any
    doc: RecipeDoc | None = None
    path: tuple[Any, ...] = ()


class Derivation(NamedTuple):
    """How a value was computed rather than written: the rule, in words, and its inputs."""

    rule: str
    inputs: tuple[Given, ...] = ()


class Src(NamedTuple):
    """Where a token came from: a layer, an entry of it, and a path in a file; or, for a value the
    builder computed (``derived``), the rule and the inputs it was computed from.

    A named tuple rather than a frozen dataclass: one is made per layer block on
    every resolution, and tuples are several times cheaper to build.
    """

    layer: str
    key: str | None
    doc: RecipeDoc | None
    path: tuple[Any, ...] = ()
    derived: Derivation | None = None

    def at(self, index: Any) -> Src:
        """The source of one item of this block (a list index or a mapping key)."""
        return Src(self.layer, self.key, self.doc, self.path + (index,), self.derived) if self.path else self


@dataclass(frozen=True, slots=True)
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
    prof = repo.hardware.profiles.get(hw)
    if prof is None:
        return Profile(hw, None, None, 1, None, False, True, False)
    return Profile(hw, prof.brand, prof.generation, prof.gpu_count, prof.vram_gb, prof.restricted, prof.scalable,
                   True)


def generations(repo: RecipeRepo, hw: str) -> tuple[str, ...]:
    prof = repo.hardware.profiles.get(hw)
    return prof.generations if prof is not None else ()


class Scope:
    """One (recipe, variant, hardware, strategy, node count) and its memoised layers."""

    __slots__ = (
        "doc",
        "memo",
        "prof",
        "recipe",
        "repo",
        "shared",
        "so",
        "strategy",
        "strategy_doc",
        "strategy_name",
        "variant",
        "variant_key",
    )

    def __init__(self, repo: RecipeRepo, doc: RecipeDoc, variant_key: str, prof: Profile,
                 strategy_name: str | None) -> None:
        self.repo = repo
        self.doc = doc
        self.recipe: Recipe = doc.recipe
        self.variant_key = variant_key
        self.variant: Variant = self.recipe.variant(variant_key)
        self.prof = prof
        self.strategy_name = strategy_name
        self.strategy: Strategy = repo.strategies.get(strategy_name or "") or _NO_STRATEGY
        self.strategy_doc: RecipeDoc | None = repo.strategy_docs.get(strategy_name or "")
        self.so: StrategyOverride = self.recipe.override(strategy_name)
        # key -> (value, warnings raised while computing it)
        self.memo: dict[Any, tuple[Any, tuple[str, ...]]] = {}
        # the same, for what does not depend on the strategy: shared by every scope of
        # (recipe, variant, hardware)
        self.shared: dict[Any, tuple[Any, tuple[str, ...]]] = {}


def scope_of(repo: RecipeRepo, doc: RecipeDoc, variant_key: str, hw: str, strategy: str | None) -> Scope:
    key = (doc.path, variant_key, hw, strategy)
    scope: Scope | None = repo.cache.get(key)
    if scope is None or scope.doc is not doc:
        prof = repo.cache.get(("profile", hw))
        if prof is None:
            prof = repo.cache[("profile", hw)] = profile_of(repo, hw)
        scope = repo.cache[key] = Scope(repo, doc, variant_key, prof, strategy)
        scope.shared = repo.cache.setdefault(("shared", doc.path, variant_key, hw), {})
    return scope


class Ctx:
    """One resolution: a scope plus the warnings this resolution collects."""

    __slots__ = (
        "credit",
        "doc",
        "node_count",
        "nodes_given",
        "prof",
        "recipe",
        "repo",
        "scope",
        "so",
        "strategy",
        "strategy_doc",
        "strategy_name",
        "variant",
        "variant_key",
        "warnings",
    )

    def __init__(self, scope: Scope, node_count: int, nodes_given: Given | None = None) -> None:
        self.scope = scope
        # where the node count came from (the user's --nodes, or the builder's default and why)
        self.nodes_given = nodes_given or Given("node count", node_count)
        self.credit = True  # build each token's credit (off for a batch of reference cases, which needs none)
        self.repo = scope.repo
        self.doc = scope.doc
        self.recipe = scope.recipe
        self.variant_key = scope.variant_key
        self.variant = scope.variant
        self.prof = scope.prof
        self.strategy_name = scope.strategy_name
        self.strategy = scope.strategy
        self.strategy_doc = scope.strategy_doc
        self.so = scope.so
        self.node_count = node_count
        self.warnings: list[str] = []

    @property
    def variant_path(self) -> tuple[str, ...]:
        return ("variants", self.variant_key)

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
    def deploy_type(self) -> str | None:
        return self.strategy.deploy_type

    @property
    def total_gpus(self) -> int:
        return self.prof.gpu_count * max(1, self.node_count)

    def memo(self, key: Any, compute: Callable[[], T], *, shared: bool = False) -> T:
        """``compute()`` once per scope (``shared``: once per recipe, variant and hardware, for what
        does not depend on the strategy); its warnings are replayed on every later use."""
        memo = self.scope.shared if shared else self.scope.memo
        hit = memo.get(key)
        if hit is not None and not hit[1]:
            return hit[0]  # type: ignore[no-any-return]
        if hit is None:
            outer, self.warnings = self.warnings, []
            try:
                value = compute()
            finally:
                raised, self.warnings = self.warnings, outer
            hit = memo[key] = (value, tuple(raised))
        for text in hit[1]:
            self.warn(text)
        result: T = hit[0]
        return result

    def gen_key(self, mapping: Mapping[str, Any]) -> str | None:
        """The generation key of ``mapping``, else ``nvidia`` on NVIDIA hardware."""
        if self.prof.gen is not None and present(mapping.get(self.prof.gen)):
            return self.prof.gen
        if self.prof.brand == "NVIDIA" and present(mapping.get("nvidia")):
            return "nvidia"
        return None

    def hw_key(self, mapping: Mapping[str, Any], *, brand: bool = True, default: bool = True) -> str | None:
        """Hardware-keyed lookup: exact id, generation, brand, ``default`` (spec §2)."""
        keys = [self.prof.hw, self.prof.gen]
        if brand:
            keys.append(self.prof.brand_key)
        if default:
            keys.append("default")
        for key in keys:
            if key is not None and present(mapping.get(key)):
                return key
        return None

    def gpu_count_given(self) -> Given:
        """The hardware's GPU count per node, as the taxonomy's profile writes it."""
        return Given(f"hardware_profiles.{self.hw}.gpu_count", self.prof.gpu_count, self.repo.taxonomy,
                     ("hardware_profiles", self.hw, "gpu_count"))

    def src(self, layer: str, key: str | None, *path: Any, doc: RecipeDoc | None = None) -> Src:
        return Src(layer, key, doc or self.doc, path)

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def context(repo: RecipeRepo, doc: RecipeDoc, variant: str, hw: str, strategy: str | None, node_count: int,
            nodes_given: Given | None = None) -> Ctx:
    return Ctx(scope_of(repo, doc, variant, hw, strategy), node_count, nodes_given)
