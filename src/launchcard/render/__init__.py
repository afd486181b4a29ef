"""Human-readable renderings of a launch card."""

from launchcard.render._markdown import render_markdown

__all__ = ["render_markdown"]
