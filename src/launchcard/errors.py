"""One exception hierarchy for launchcard.

Every message follows the same shape so the CLI can print it on one line:
``<where>: <rule broken> (<bad value>); <fix>``.  ``where`` names a file and
line, a URL, or a command-line option.
"""

from __future__ import annotations


class LaunchcardError(Exception):
    """Base class: every error launchcard raises on bad input."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.where = where
        self.rule = message
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = self.rule
        if self.where:
            text = f"{self.where}: {text}"
        if self.fix:
            text = f"{text}; {self.fix}"
        return " ".join(text.split())


class SourceError(LaunchcardError):
    """A source document cannot be read or does not follow its format."""


class RecipeError(SourceError):
    """A vLLM recipe (or strategy/taxonomy file) is malformed."""


class ResolveError(LaunchcardError):
    """The requested resolution names something the recipes do not define."""


class InputError(LaunchcardError):
    """A command-line value or input file is wrong."""


class MemoryPlanError(LaunchcardError):
    """The memory planner cannot plan with the given settings."""


class EmitError(LaunchcardError):
    """A target cannot express the resolved plan."""


class EndpointError(LaunchcardError):
    """A live endpoint misbehaved (timeout, bad status, malformed stream): exit 1, the
    endpoint failed its check (2 stays for bad input)."""

    exit_code = 1


class CatalogError(LaunchcardError):
    """The SQLite catalog cannot be read or written."""
