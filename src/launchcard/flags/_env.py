"""Judge the environment variables a launch command sets against the release's captured registry."""

from __future__ import annotations

from launchcard.flags._close import closest
from launchcard.flags._finding import ENV, ERROR, STARTUP, WARNING, Finding, spec_ev
from launchcard.flags._successors import no_successor, successor
from launchcard.flagspec import FlagSpec, version_key


def check_env(env: dict[str, str], spec: FlagSpec, shipped: bool = True) -> list[Finding]:
    """Environment variables the release does not read (``VLLM_*`` against its captured ``vllm.envs`` registry)."""
    prefix = _ENV_PREFIX.get(spec.engine)
    if prefix is None:
        return []
    from launchcard.flags._ranges import env_ranges

    if not spec.envs:
        return _env_without_registry(env, spec, prefix) if shipped else []

    ranges = env_ranges(spec.engine) if shipped else {}
    out: list[Finding] = []
    for name, value in env.items():
        entry = spec.envs.get(name)
        if entry is not None and entry.get("deprecated"):
            use = entry.get("replaced_by")
            out.append(Finding(WARNING, "deprecated-env", name, f"deprecated in {spec.engine} {spec.version}",
                               f"use {use} instead" if use else "drop it", stage=ENV, value=str(value),
                               evidence=spec_ev(spec, f"envs.{name}.deprecated")))
            continue
        if entry is not None:
            choices = entry.get("choices")
            if choices and str(value).lower() not in {str(c).lower() for c in choices}:
                out.append(Finding(ERROR, "bad-env-value", name, f"{value!r} is not one of {spec.engine}'s choices",
                                   "choose from: " + ", ".join(map(str, choices)), stage=STARTUP, value=str(value),
                                   evidence=spec_ev(spec, f"envs.{name}.choices")))
            continue
        if not name.startswith(prefix):
            continue
        r = ranges.get(name)
        removed = r.where_removed(spec.version) if r else None
        added = r.where_added(spec.version) if r else None
        ev = spec_ev(spec, "envs (vllm.envs.environment_variables)")
        if r is not None and removed is not None:
            s = successor(spec.engine, name)
            use = s.render(str(value)) if s is not None and s.use else None
            fix = f"use {use} instead" if use else f"drop it; {s.several(str(value))}" if s is not None \
                and s.per_value else "drop it"
            if use and s is not None and s.flag and (s.flag not in spec.envs if s.is_env()
                                                     else s.flag not in spec.by_flag):
                fix += (f" (named by {spec.engine} {s.evidence.get('release', '')}; "
                        f"not {'read' if s.is_env() else 'accepted'} by {spec.engine} {spec.version} either)")
            out.append(Finding(WARNING, "removed-env", name,
                               f"{spec.engine} {spec.version} no longer reads it "
                               f"(removed in {removed}; read in {r.span()})"
                               + ("" if use or (s is not None and s.per_value) else f"; {no_successor(spec.engine)}"),
                               fix, stage=ENV, value=str(value),
                               evidence=f"{s.quote()}; {ev}" if s is not None else ev))
        elif r is not None and added is not None:
            out.append(Finding(WARNING, "too-new-env", name,
                               f"not yet read by {spec.engine} {spec.version} (added in {added})",
                               f"use {spec.engine} >= {added} or drop it", stage=ENV, value=str(value), evidence=ev))
        else:
            close = closest(name, spec.envs, cutoff=0.8)
            out.append(Finding(WARNING, "unknown-env", name,
                               f"{spec.engine} {spec.version} does not read this variable "
                               "(not in any captured release)",
                               f"did you mean {close}?" if close else "drop it or check its spelling",
                               stage=ENV, value=str(value), evidence=ev))
    return out


_ENV_PREFIX = {"vllm": "VLLM_", "sglang": "SGLANG_"}


def _env_without_registry(env: dict[str, str], spec: FlagSpec, prefix: str) -> list[Finding]:
    """A release whose variable registry was not captured (SGLang 0.5.23): a variable the captured registries
    stopped reading before it is still reported, with the releases that show it and the gap said."""
    from launchcard.flags._ranges import env_ranges

    ranges = env_ranges(spec.engine)
    out: list[Finding] = []
    for name, value in env.items():
        r = ranges.get(name) if name.startswith(prefix) else None
        if r is None or r.removed_in is None or version_key(r.removed_in) > version_key(spec.version):
            continue
        later = [v for v in r.captured if version_key(v) >= version_key(r.removed_in)]
        s = successor(spec.engine, name)
        use = s.render(str(value)) if s is not None and s.use else None
        seen = f"{later[0]}..{later[-1]}" if len(later) > 1 else later[0]
        out.append(Finding(
            WARNING, "removed-env", name,
            f"{spec.engine} stopped reading it in {r.removed_in} (not read by the captured registries of {seen}; "
            f"read in {r.span()}); {spec.engine} {spec.version}'s registry was not captured"
            + ("" if use or (s is not None and s.per_value) else f"; {no_successor(spec.engine)}"),
            f"use {use} instead" if use else f"drop it; {s.several(str(value))}" if s is not None and s.per_value
            else "drop it", stage=ENV, value=str(value),
            evidence=(f"{s.quote()}; " if s is not None else "") + f"{spec.engine} specs {seen}: envs"))
    return out
