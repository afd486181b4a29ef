"""The quantization rule of ``check_plan``: environment variables and flags for weights the checkpoint lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchcard.check._argv import read_argv
from launchcard.check._context import PlanContext, dedupe_roles, role_of
from launchcard.check._types import Finding

if TYPE_CHECKING:
    from launchcard.resolve import Command

_TRUE = {"1", "true", "yes", "on"}


def _family(name: str | None) -> str | None:
    n = (name or "").lower()
    for key, fam in (("nvfp4", "nvfp4"), ("mxfp4", "mxfp4"), ("mxfp8", "mxfp8"), ("fp4", "nvfp4"), ("fp8", "fp8")):
        if key in n:
            return fam  # a bare "fp4" (modelopt_fp4, the recipes' fp4) is NVIDIA's FP4 format
    if any(k in n for k in ("int4", "int8", "awq", "gptq", "w4a16", "w8a8", "bitsandbytes", "int2")):
        return "int"
    if "compressed-tensors" in n:
        return "compressed-tensors"
    return None


def _env_targets(name: str) -> set[str] | None:
    """Quantizations an environment variable is for, judged by its name; None = not quantization-specific."""
    n = name.upper()
    if any(k in n for k in ("KV", "ATTN", "ATTENTION", "CACHE")):
        return None
    if "NVFP4" in n:
        return {"nvfp4"}
    if "MXFP4" in n:
        return {"mxfp4"}
    if "FP4" in n:
        return {"nvfp4", "mxfp4"}
    if "MXFP8" in n:
        return {"mxfp8"}
    if "FP8" in n:
        return {"fp8", "mxfp8"}
    return None


def _checkpoint_quant(ctx: PlanContext) -> tuple[str | None, str, str]:
    """(family, label, evidence) of the checkpoint's weights: config.json first, else the recipe's precision."""
    cfg = ctx.cfg
    if cfg is not None:
        method = cfg.quant_method
        if method:
            return _family(method), method, cfg.field("quantization_config.quant_method")
        return None, "unquantized", cfg.field("no quantization_config")
    precision = ctx.variant.get("precision")
    if isinstance(precision, str) and precision:
        return _family(precision), precision, ctx.recipe_line("variants", ctx.plan.variant, "precision")
    return None, "", ""


def _env_line(ctx: PlanContext, cmd: Command, name: str) -> str:
    for entry in cmd.env_entries:
        if entry.name == name:
            ev = entry.origin.evidence
            if ev is not None and ev.path:
                return f"{ev.path}#L{ev.line} ({entry.origin.label()})" if ev.line else ev.path
            return f"{ctx.recipe_line()} ({entry.origin.label()})"
    if ctx.doc is not None:
        lines = getattr(getattr(ctx.doc, "loaded", None), "lines", {}) or {}
        hits = [(_place_rank(ctx, path), line, path) for path, line in lines.items() if path and path[-1] == name]
        hits = [h for h in hits if h[0] < 9]
        if hits:
            _, line, path = min(hits)
            return f"{ctx.doc.path}#L{line} ({'.'.join(str(p) for p in path[:-1])})"
    return ctx.recipe_line()


def _place_rank(ctx: PlanContext, path: tuple[object, ...]) -> int:
    """How likely a recipe path put an env var into this plan (0 best, 9 = another variant's block)."""
    parts = [str(p) for p in path]
    if len(parts) > 1 and parts[0] == "variants" and parts[1] != ctx.plan.variant:
        return 9
    for rank, key in enumerate((ctx.plan.hardware, ctx.plan.generation, ctx.plan.brand)):
        if key and key.lower() in (p.lower() for p in parts):
            return rank + 1
    return 5


def quantization_findings(ctx: PlanContext) -> list[Finding]:
    family, label, ck_ev = _checkpoint_quant(ctx)
    if not label:
        return []
    out: list[Finding] = []
    for cmd in ctx.commands:
        v = read_argv(cmd.argv)
        runtime = _family(v.quantization)
        have = {f for f in (family, runtime) if f}
        for name, value in cmd.env.items():
            targets = _env_targets(name)
            if targets is None or str(value).strip().lower() not in _TRUE or have & targets:
                continue
            if family == "compressed-tensors":
                continue  # the scheme inside compressed-tensors is not read here
            out.append(Finding(
                severity="warning", code="quant-env-mismatch", role=role_of(cmd),
                message=f"{name}={value} is for {'/'.join(sorted(targets)).upper()} weights, but checkpoint "
                        f"{ctx.plan.model_id} is {label}",
                evidence=f"{_env_line(ctx, cmd, name)}; checkpoint: {ck_ev}",
                fix=f"drop {name} for this variant (it belongs to a variant with {min(targets)} weights)"))
        # with config.json the engine's own rule judges the flag (check._limits.quant_override_findings: an error
        # where it refuses to start); without it, only the recipe's precision says the checkpoint's format
        if ctx.cfg is None and v.quantization and family and runtime and runtime != family \
                and family != "compressed-tensors":
            out.append(Finding(
                severity="warning", code="quant-flag-mismatch", role=role_of(cmd),
                message=f"--quantization {v.quantization} on a {label} checkpoint ({ctx.plan.model_id}); vLLM "
                        "refuses a method that differs from the checkpoint's unless one of its overrides takes it "
                        "(no config.json here to judge it by)",
                evidence=ck_ev, fix="drop --quantization (vLLM reads the method from the checkpoint)"))
    return dedupe_roles(out)
