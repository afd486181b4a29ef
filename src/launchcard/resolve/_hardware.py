"""``--hardware`` in the one hardware vocabulary: catalog names onto the recipes' profiles.

The recipes builder knows hardware as taxonomy profiles (``h100`` = an 8-GPU H100
node).  Users name accelerators as the hardware catalog does (``NVIDIA H100 80GB
HBM3``, ``rtx-4090``, ``l40s``).  A name resolves exactly (case and separators
aside) to a profile, or to the one profile the catalog maps its accelerator to;
an accelerator the catalog knows but the recipes have no settings for is an
error that says which GPUs the recipe covers and which commands plan the other.

:func:`resolvable_hardware` is what every chooser (the web builder, emit's
provider targets) lists: the hardware this recipe and variant resolve on.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from launchcard.errors import ResolveError
from launchcard.resolve._defaults import hardware_reasons, usable_hardware
from launchcard.sources import Recipe
from launchcard.sources.vllm_recipes import RecipeRepo


@dataclass(frozen=True)
class HardwareChoice:
    """One hardware option a recipe resolves on."""

    profile: str  # the taxonomy profile id ``resolve --hardware`` takes
    accelerator: str | None  # its hardware-catalog id (None: the catalog has no entry for the profile)
    gpus_per_node: int
    label: str  # the catalog's display name, else the profile id


def resolvable_hardware(repo: RecipeRepo, model: str, variant: str | None = None) -> tuple[HardwareChoice, ...]:
    """Every hardware profile ``model`` (``variant``, default: the recipe's default) resolves on, in
    taxonomy order, each with its catalog accelerator: the one list choosers should offer."""
    from launchcard.hardware import catalog

    recipe = repo.recipe(model).recipe
    variants = recipe.variants
    vkey = variant or ("default" if "default" in variants or not variants else next(iter(variants)))
    out = []
    for pid in usable_hardware(repo, recipe, vkey):
        prof = catalog().profile(pid)
        acc = prof.accelerator if prof is not None else None
        out.append(HardwareChoice(profile=pid, accelerator=acc.id if acc else None,
                                  gpus_per_node=repo.profiles[pid].gpu_count or (prof.per_node if prof else 1),
                                  label=acc.name if acc else pid))
    return tuple(out)


def profile_id(profiles: Iterable[str], name: str) -> str | None:
    """The recipes profile id ``name`` spells: itself, or the one equal to it in the hardware catalog's name key
    (any case, separators and vendor words: ``H100``, ``nvidia_h100`` -> ``h100``); None otherwise (a catalog name
    :func:`profile_for` maps through the accelerator, or an unknown one).  The CLI's ``--hardware`` and the web's
    ``hardware`` query read names by this one rule."""
    from launchcard.hardware import name_key

    ids = list(profiles)
    if name in ids:
        return name
    key = name_key(name)
    return next((pid for pid in ids if name_key(pid) == key), None)


def profile_for(repo: RecipeRepo, recipe: Recipe, model: str, variant: str, name: str) -> tuple[str, str | None]:
    """(taxonomy profile id, note) for a ``--hardware`` name; the note says how a catalog name was mapped.

    Raises ResolveError for an unknown or ambiguous name, or an accelerator the recipes do not cover."""
    from launchcard.hardware import catalog, name_key

    profiles = repo.hardware.profiles
    pid = profile_id(profiles, name)
    if pid is not None:
        return pid, None
    key = name_key(name)
    cat = catalog()
    hits = cat.candidates(name)
    if len(hits) > 1:
        which = ", ".join(f"{a.id} ({a.memory_gib:g} GiB)" for a in hits)
        raise ResolveError(f"ambiguous hardware {name!r}: the hardware catalog has {which}", where="--hardware",
                           fix="name one of them")
    covered = usable_hardware(repo, recipe, variant)
    if not hits:
        close = difflib.get_close_matches(key, [name_key(p) for p in profiles], n=3, cutoff=0.5)
        by_key = {name_key(p): p for p in profiles}
        near = [by_key[c] for c in close] + [i for i in cat.closest(name, 3) if i not in close]
        raise ResolveError(f"unknown hardware {name!r}: neither a recipes profile nor a hardware-catalog name",
                           where="--hardware",
                           fix=f"close matches: {', '.join(dict.fromkeys(near)) or 'none'}; "
                               f"{model} covers {', '.join(covered) or 'no hardware'}")
    acc = hits[0]
    mapped = [pid for pid in profiles if (p := cat.profile(pid)) is not None and p.accelerator.id == acc.id]
    usable = [pid for pid in mapped if pid in covered]
    if len(usable) == 1:
        pid = usable[0]
        return pid, (f"--hardware {name!r} is the {acc.name} ({acc.id}); the recipes know it as profile {pid} "
                     f"({profiles[pid].gpu_count} per node)")
    if usable:
        raise ResolveError(f"hardware {name!r} ({acc.id}) is offered in several node sizes: "
                           + ", ".join(f"{p} ({profiles[p].gpu_count} GPU(s))" for p in usable),
                           where="--hardware", fix="pass one of those profile ids")
    why = ("the taxonomy defines no profile for it" if not mapped else
           "; ".join(f"profile {p}: {'; '.join(hardware_reasons(repo, recipe, variant, p))}" for p in mapped))
    raise ResolveError(
        f"{model} has no settings for the {acc.name} ({acc.id}, hardware catalog): {why}; the recipe covers "
        f"{', '.join(covered) or 'no hardware'}", where="--hardware", fix=_plan_elsewhere(acc.id))


def _plan_elsewhere(gpu: str) -> str:
    return (f"resolve on a covered profile, or plan {gpu} without the recipe's settings: launchcard memory "
            f"--config config.json --gpu {gpu} --tp N (memory), launchcard check -- vllm serve MODEL ... (flags)")


def not_usable_fix(repo: RecipeRepo, recipe: Recipe, variant: str, hw: str) -> str:
    """The fix for a profile the recipe marks unusable: the covered ones, and the commands that plan ``hw``."""
    return f"usable: {', '.join(usable_hardware(repo, recipe, variant)) or 'none'}; " + _plan_elsewhere(hw)


__all__ = ["HardwareChoice", "hardware_reasons", "not_usable_fix", "profile_for", "resolvable_hardware"]
