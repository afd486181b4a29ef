"""Check a live OpenAI-compatible endpoint feature by feature."""

from launchcard.verify._run import run_verify
from launchcard.verify._sse import DONE, parse_sse, sse_event
from launchcard.verify._tools import WEATHER_TOOL
from launchcard.verify._types import (
    CHAT_PROMPT,
    TOOL_PROMPT,
    CheckEvidence,
    CheckResult,
    Expect,
    VerifyReport,
)

__all__ = ["CHAT_PROMPT", "DONE", "TOOL_PROMPT", "WEATHER_TOOL", "CheckEvidence", "CheckResult", "Expect",
           "VerifyReport", "parse_sse", "run_verify", "sse_event"]
