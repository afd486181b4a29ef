"""One exception hierarchy for launchcard.

Every message follows the same shape so the CLI can print it on one line:
``<where>: <rule broken> (<bad value>); <fix>``.  ``where`` names a file and
line or a URL; the library never names a command-line flag.  ``field`` says
which input was wrong (``"corpus"``, ``"catalog"``, ``"hardware"``, ``"model"``...):
the CLI maps it to its own flag (see ``launchcard.cli._errors``).
"""

from __future__ import annotations

from collections.abc import Iterable


class LaunchcardError(Exception):
    """Base class: every error launchcard raises on bad input."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None,
                 field: str | None = None) -> None:
        self.where = where
        self.rule = message
        self.fix = fix
        self.field = field
        super().__init__(self.one_line())

    def one_line(self, where: str | None = None) -> str:
        """The message on one line; ``where`` replaces the error's own location (the CLI adds its flag)."""
        text = self.rule
        where = where or self.where
        if where:
            text = f"{where}: {text}"
        if self.fix:
            text = f"{text}; {self.fix}"
        return " ".join(text.split())

    def named(self, name: str | None) -> str:
        """:meth:`one_line` with the input that was wrong named first: ``name`` is how the surface spells
        ``field`` (the CLI's flag, the web's query parameter), put before the error's own location."""
        where = self.where
        if name and not (where or "").startswith(name):
            where = f"{name} {where}" if where else name
        return self.one_line(where)


class SourceError(LaunchcardError):
    """A source document cannot be read or does not follow its format."""


class RecipeError(SourceError):
    """A vLLM recipe (or strategy/taxonomy file) is malformed."""


class ResolveError(LaunchcardError):
    """The requested resolution names something the recipes do not define."""


class InputError(LaunchcardError):
    """A command-line value or input file is wrong."""


class ArgvError(InputError):
    """A launch command gives a flag a value its engine would not read (a TP of ``four``)."""


class MemoryPlanError(LaunchcardError):
    """The memory planner cannot plan with the given settings."""


class NoFitError(MemoryPlanError):
    """No plan launchcard may derive fits the hardware (a plan that fails its check: exit 1)."""

    exit_code = 1


class SplitError(MemoryPlanError):
    """The plan splits the model as it cannot be split (TP not dividing the attention heads, more pipeline stages
    than layers): a plan that fails its check (exit 1), as ``check``, ``plan`` and ``predict`` say of the same
    split."""

    exit_code = 1


class EmitError(LaunchcardError):
    """A target cannot express the resolved plan."""


class EndpointError(LaunchcardError):
    """A live endpoint misbehaved (timeout, bad status, malformed stream): exit 1, the
    endpoint failed its check (2 stays for bad input)."""

    exit_code = 1


class SyncError(LaunchcardError):
    """A source could not be brought up to date from upstream (its previous snapshot is kept): exit 1."""

    exit_code = 1


# The one wording of the fact that a plan's engine refuses to start it or its memory does not hold it (every memory
# problem is a start-up refusal too: vLLM stops at its KV check, or cannot load the weights): check's verdict, memory's
# text, predict's refusal and the plan search's rejection say it alike
NOT_STARTED = "will not start or does not fit"


class PredictError(LaunchcardError):
    """The plan cannot serve the workload at all (no KV room for one request, a plan that does not fit): exit 1,
    the plan failed its check; no figure is given that could be mistaken for a prediction."""

    exit_code = 1


class CatalogError(LaunchcardError):
    """The SQLite catalog cannot be read or written."""


class UnknownNameError(InputError):
    """A name (model id, hardware id, capture id) that is not among the known ones; the closest are suggested."""

    def __init__(self, what: str, value: str, known: list[str], *, where: str | None = None,
                 field: str | None = None, fix: str | None = None) -> None:
        self.value = value
        self.known = known
        super().__init__(f"unknown {what} {value!r}", where=where, field=field,
                         fix=fix or suggest(value, known, what))


class UnknownModelError(UnknownNameError):
    def __init__(self, model: str, known: list[str], *, where: str | None = None) -> None:
        super().__init__("model", model, known, where=where, field="model")


def canonical_name(value: str, known: Iterable[str]) -> str | None:
    """The known name ``value`` denotes: itself, else the one equal to it ignoring case (model ids, as the Hub
    treats them); None when there is none or several differ only by case."""
    names = list(known)
    if value in names:
        return value
    hits = [k for k in names if k.lower() == value.lower()]
    return hits[0] if len(hits) == 1 else None


def suggest(value: str, known: list[str], what: str) -> str:
    """``did you mean A, B?`` — case-insensitive close matches, then names containing the value's last part."""
    import difflib

    by_lower: dict[str, str] = {}
    for k in known:
        by_lower.setdefault(k.lower(), k)
    close = [by_lower[c] for c in difflib.get_close_matches(value.lower(), list(by_lower), n=3, cutoff=0.6)]
    if not close:
        tail = value.lower().split("/")[-1]
        close = [k for k in known if tail and tail in k.lower()][:3]
    if close:
        return "did you mean " + ", ".join(close) + "?"
    return f"{len(known)} {what}s are known" if known else f"no {what}s are known"
