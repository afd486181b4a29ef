"""What to launch, and what a launch left behind (the state file `down` reads)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import Field

from launchcard import atomicfile
from launchcard.card import Fact, Frozen
from launchcard.errors import InputError

DEFAULT_STATE = Path(".launchcard") / "up.json"
DEFAULT_READY_TIMEOUT_S = 600


class LaunchSpec(Frozen):
    """One process to start: argv and env exactly as resolved."""

    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 8000
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"


class ServerState(Frozen):
    """A running server started by `launchcard up`."""

    pid: int = Field(gt=1)  # a server `up` spawned (its own session); never 1 (init) nor 0/-1 (a whole group)
    endpoint: str
    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)
    log: str
    started_at: datetime
    ready_seconds: float | None = None
    facts: tuple[Fact, ...] = ()

    def save(self, path: Path) -> None:
        """Write atomically (:func:`launchcard.atomicfile.write_text`) so a reader never sees half a state file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        atomicfile.write_text(path, self.model_dump_json(indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ServerState:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("no server state file", where=str(path),
                             fix="start one with `launchcard up` or pass --state") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable server state ({exc})", where=str(path),
                             fix="delete it and start the server again") from None
        from pydantic import ValidationError

        try:
            return cls.model_validate(raw)
        except ValidationError as exc:  # a state file edited or written by something else: `down` must not guess
            first = exc.errors()[0]
            field = ".".join(str(x) for x in first.get("loc", ())) or "(document)"
            raise InputError(f"not a `launchcard up` state file ({field}: {first.get('msg', 'invalid')})",
                             where=str(path), fix="delete it and start the server again") from None


def port_from_argv(argv: tuple[str, ...] | list[str], default: int = 8000) -> int:
    """The --port the server will listen on (vLLM's default 8000); the last --port wins, as in argparse."""
    from launchcard.argv import parse_command

    port = parse_command(argv).get_int("--port")
    return default if port is None else port
