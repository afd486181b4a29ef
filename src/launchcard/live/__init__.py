"""Run a resolved command locally: start, wait for health, read facts, stop."""

from launchcard.live._card import record_facts, with_measured
from launchcard.live._process import alive, spawn, stop_group
from launchcard.live._spec import (
                                   DEFAULT_READY_TIMEOUT_S,
                                   DEFAULT_STATE,
                                   LaunchSpec,
                                   ServerState,
                                   port_from_argv,
)
from launchcard.live._startup import parse_startup_log, read_startup_facts
from launchcard.live._up import (
                                   UpResult,
                                   check_not_running,
                                   start_server,
                                   stop_server,
                                   up,
                                   wait_foreground,
                                   wait_healthy,
)

__all__ = [
    "DEFAULT_READY_TIMEOUT_S", "DEFAULT_STATE", "LaunchSpec", "ServerState", "UpResult", "alive", "check_not_running",
    "parse_startup_log", "port_from_argv", "read_startup_facts", "record_facts", "spawn",
    "start_server", "stop_group", "stop_server", "up", "wait_foreground", "wait_healthy", "with_measured",
]
