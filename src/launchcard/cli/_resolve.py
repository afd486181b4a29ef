from launchcard.cli._app import app  # noqa: F401
