"""Run every check against one endpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from launchcard.verify._types import CheckResult, Expect, VerifyReport

if TYPE_CHECKING:
    import httpx


def run_verify(endpoint: str, *, model: str | None = None, expect: Expect | None = None,
               timeout_s: float = 60.0, client: httpx.Client | None = None,
               transport: httpx.BaseTransport | None = None,
               on_check: Callable[[CheckResult], None] | None = None) -> VerifyReport:
    """Check an OpenAI-compatible endpoint; never raises for endpoint faults.

    Each request is bounded by ``timeout_s``; a check that cannot run says
    skipped and why.
    """
    import httpx

    from launchcard.verify._checks import Ctx, plan_checks, run_check

    own = client is None
    http = client or httpx.Client(transport=transport, timeout=timeout_s)
    ctx = Ctx(client=http, endpoint=endpoint.rstrip("/"), timeout_s=timeout_s, expect=expect or Expect(),
              model=model)
    results = []
    try:
        for name, fn, why_skip in plan_checks(ctx):
            result = run_check(name, fn, why_skip, ctx)
            results.append(result)
            if on_check is not None:
                on_check(result)
    finally:
        if own:
            http.close()
    return VerifyReport(endpoint=ctx.endpoint, model=ctx.model, max_model_len=ctx.max_model_len,
                        checks=tuple(results))
