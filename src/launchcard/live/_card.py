"""Put measured facts on a model's card in the catalog (a new capture)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from launchcard.card import Fact, LaunchCard
from launchcard.errors import CatalogError


def with_measured(card: LaunchCard, facts: Sequence[Fact]) -> LaunchCard:
    """The card with ``facts`` added; an older measured fact of the same name
    and scope is replaced, declared and derived facts are kept."""
    new = {(f.name, f.scope) for f in facts}
    kept = tuple(f for f in card.facts if not (f.classification == "measured" and (f.name, f.scope) in new))
    return card.model_copy(update={"facts": kept + tuple(facts)})


def record_facts(model: str, facts: Sequence[Fact], *, catalog: Path | str | None = None,
                 captured_by: str = "launchcard") -> int:
    """Store a new capture of ``model``'s card carrying ``facts``; its id.

    Starts from the latest capture when there is one, else an empty card.
    """
    from launchcard.store import Catalog

    with Catalog(catalog) as cat:
        try:
            base = cat.latest(model)
        except CatalogError:
            base = LaunchCard(model=model)
        card = with_measured(base, facts).model_copy(
            update={"captured_at": datetime.now(UTC), "captured_by": captured_by})
        return cat.add([card])[0]
