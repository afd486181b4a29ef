"""Check a live OpenAI-compatible endpoint feature by feature."""

from launchcard.verify._run import run_verify
from launchcard.verify._sse import DONE, parse_sse, sse_event
from launchcard.verify._types import (
    CheckEvidence,
    CheckResult,
    Expect,
    VerifyReport,
)

__all__ = ["DONE", "CheckEvidence", "CheckResult", "Expect",
           "VerifyReport", "parse_sse", "run_verify", "sse_event"]
