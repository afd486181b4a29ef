"""The command builder: a selection from the URL in, the resolved launch and its explanation out.

The selection travels whole in the query string (hardware, variant, strategy,
nodes, features, modes, KV offload, advanced presets and the pinned recipe
revision), so a shared URL reproduces the same plan.  Features are spelled as
the CLI spells them: ``feature=X`` adds X to the recipe's defaults (``--feature``),
``no_feature=Y`` removes Y (``--no-feature``); the form's whole checkbox state is
``features=`` (with an empty marker, so "none checked" is expressible).  Resolution is the
library's own (``launchcard.resolve``); a selection the recipe does not allow
comes back as the resolver's one-line error with its HTTP status (``web._refusal``: 422 for
the CLI's exit 2), never as a server error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from launchcard.errors import LaunchcardError
from launchcard.web._refusal import query_line, refused, spell_findings

if TYPE_CHECKING:
    from launchcard.check import Verdict
    from launchcard.resolve import Origin, ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: recipe data (YAML values) and the JSON the builder page receives.


@dataclass(frozen=True, slots=True)
class Selection:
    hardware: str | None = None
    variant: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: tuple[str, ...] | None = None  # features=, the form's whole checkbox set; None: the recipe's defaults
    added: tuple[str, ...] = ()  # feature=: on in addition, as the CLI's --feature
    removed: tuple[str, ...] = ()  # no_feature=: off, as the CLI's --no-feature
    modes: Mapping[str, str] = field(default_factory=dict)
    kv: str | None = None
    advanced: tuple[str, ...] = ()
    rev: str | None = None

    def query(self) -> str:
        """The selection as a query string (stable order), for shareable URLs."""
        pairs: list[tuple[str, str]] = []
        for key in ("hardware", "variant", "strategy"):
            value = getattr(self, key)
            if value:
                pairs.append((key, value))
        if self.nodes:
            pairs.append(("nodes", str(self.nodes)))
        if self.features is not None:
            pairs += [("features", f) for f in self.features] or [("features", "")]
        pairs += [("feature", f) for f in self.added]
        pairs += [("no_feature", f) for f in self.removed]
        pairs += [("mode", f"{k}={v}") for k, v in sorted(self.modes.items())]
        if self.kv:
            pairs.append(("kv", self.kv))
        pairs += [("advanced", a) for a in self.advanced]
        if self.rev:
            pairs.append(("rev", self.rev))
        return urlencode(pairs)


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _hw_label(label: str, count: int) -> str:
    """A hardware option's name with its GPU count where the name does not say it (``RTX 4090 ×2``)."""
    if count > 1 and not re.search(rf"(?:\b{count}\s*[x×]|[x×]\s*{count})\b", label):
        return f"{label} ×{count}"
    return label


def options(repo: RecipeRepo, model: str, variant: str | None = None) -> dict[str, Any]:
    """Every choice the builder offers for ``model`` (hardware: those ``variant`` resolves on), from its recipe
    and the shared taxonomy."""
    from launchcard.resolve import ADVANCED_PRESETS, resolvable_hardware

    doc = repo.recipe(model)
    data = _d(doc.data)
    meta = _d(data.get("meta"))
    claims = _d(meta.get("hardware"))
    features = []
    for name, feat in _d(data.get("features")).items():
        feat = _d(feat)
        features.append({"name": name, "description": feat.get("description"),
                         "modes": [{"name": k, "label": _d(v).get("label") or k,
                                    "description": _d(v).get("description")}
                                   for k, v in _d(feat.get("modes")).items()],
                         "default_mode": feat.get("default_mode")})
    raw_profiles = _d(_d(repo.taxonomy.data).get("hardware_profiles"))  # display names are presentation only
    vkey = variant if variant is not None and variant in doc.recipe.variants else None
    # the resolver's own list: nothing offered fails to resolve
    choices = resolvable_hardware(repo, model, vkey)
    labels = {c.profile: _hw_label(str(_d(raw_profiles.get(c.profile)).get("display_name") or c.label),
                                   c.gpus_per_node) for c in choices}
    twice = {label for label in labels.values() if list(labels.values()).count(label) > 1}
    hardware = [{"id": c.profile, "label": f"{labels[c.profile]} ({c.profile})" if labels[c.profile] in twice
                 else labels[c.profile], "accelerator": c.accelerator, "brand": repo.profiles[c.profile].brand,
                 "status": claims.get(c.profile)} for c in choices]
    hardware.sort(key=lambda h: (h["status"] is None, h["id"]))
    return {
        # each variant's own hardware list (sorted ids), for the form to follow a variant chosen in it
        "variants": [{"id": k, "precision": _d(v).get("precision"), "model_id": _d(v).get("model_id"),
                      "description": _d(v).get("description"),
                      "hardware": sorted(c.profile for c in resolvable_hardware(repo, model, k))}
                     for k, v in _d(data.get("variants")).items()],
        "hardware": hardware,
        "strategies": [str(s) for s in data.get("compatible_strategies") or []],
        "features": features,
        "kv_offload": sorted(repo.kv_options),
        "advanced": sorted(ADVANCED_PRESETS),
    }


def _choice(model: str, sel: Selection) -> Any:
    from launchcard.resolve import Choice

    # with the form's whole set, a mode chosen for a feature that is not checked does not turn the feature on (a
    # page rendered without JavaScript sends the mode select of a box unchecked since; only the checkbox says
    # whether the feature is wanted)
    modes = dict(sel.modes) if sel.features is None else {
        k: v for k, v in sel.modes.items() if k in sel.features or k in sel.added}
    return Choice(model=model, variant=sel.variant, hardware=sel.hardware, strategy=sel.strategy,
                  node_count=sel.nodes, features=sel.features, extra_features=sel.added,
                  removed_features=sel.removed, feature_modes=modes, kv_offload=sel.kv, advanced=sel.advanced)


choice_of = _choice  # the one selection -> Choice mapping, for the builder's prediction (web._predicted)


def feature_problem(repo: RecipeRepo, model: str, sel: Selection) -> str | None:
    """The line refusing the selection's features (an unknown name, one both added and removed), the resolver's
    own (``resolve.check_features``: the CLI's exit 2) with the query parameter named; None when they are fine."""
    from launchcard.resolve import check_features

    doc = repo.recipe(model)
    try:
        check_features(_choice(model, sel), list(doc.recipe.features), doc.path)
    except LaunchcardError as exc:
        return query_line(exc)
    return None


def build(repo: RecipeRepo, model: str, sel: Selection, *, revision: str | None) -> dict[str, Any]:
    """The resolved plan for ``sel``: commands, per-flag explanation and provenance, verdict, client calls.

    The deploy files (five emitters) are built apart, by :func:`deploy`, when they are asked for.  A selection
    the resolver refuses has ``error`` (its line, the query parameter named) and ``status`` (``web._refusal``)."""
    from launchcard.resolve import resolve

    out: dict[str, Any] = {"model": model, "selection": sel.query(), "error": None}
    try:
        plan = resolve(repo, _choice(model, sel), provenance=True)
    except LaunchcardError as exc:
        return {**out, **refused(exc)}
    from launchcard.check import plan_facts

    out["verdict"], verdict = _verdict(repo, plan)
    out.update(_plan_json(repo, model, plan, sel, revision=revision))
    out["facts"] = plan_facts(plan, verdict).to_json()  # the same record resolve --json, emit and card read
    out["memory"], out["memory_note"] = _memory(repo, plan, verdict)
    return out


def deploy(repo: RecipeRepo, model: str, sel: Selection) -> dict[str, Any]:
    """The files of every emit target for ``sel`` (verdict in their headers) and each process's docker line."""
    from launchcard.emit import TARGETS, docker_argvs, emit, one_liner
    from launchcard.resolve import resolve

    try:
        plan = resolve(repo, _choice(model, sel), provenance=True)
    except LaunchcardError as exc:
        return {**refused(exc), "files": {}, "docker": []}
    _, verdict = _verdict(repo, plan)
    files: dict[str, Any] = {}
    for target in TARGETS:
        try:
            files[target] = emit(plan, target, card_name=model, verdict=verdict)
        except LaunchcardError as exc:
            files[target] = {"error": exc.one_line()}
    try:
        docker = [{"name": name, "text": one_liner(argv)} for name, argv, _, _ in docker_argvs(plan)]
    except LaunchcardError:
        docker = []  # the docker target's own error is shown with its files
    return {"error": None, "files": files, "docker": docker}


def _verdict(repo: Any, plan: Any) -> tuple[dict[str, Any], Verdict | None]:
    """The plan verdict (``launchcard.check``): ok / warning / error with every finding and its evidence."""
    from launchcard.check import check_plan, synced_config_dirs

    try:
        # the checkpoint's config.json from the corpus hf/ next to the recipes, else sync's Hub snapshot
        verdict = check_plan(plan, recipes=repo, config_search=synced_config_dirs())
    except LaunchcardError as exc:  # e.g. an unreadable config.json next to the recipes
        return {"ok": True, "exit_code": 0, "status": "unknown", "label": "unknown", "findings": [],
                "error": exc.one_line()}, None
    data = verdict.to_json()
    data["findings"] = spell_findings(data["findings"])  # a selection option named as the builder's query does
    data["summary"] = verdict.summary()
    data["counts"] = {s: sum(1 for f in verdict.findings if f.severity == s) for s in ("error", "warning", "info")}
    return data, verdict


_SERVING = ("single", "head", "prefill", "decode", "instance")


def _memory(repo: Any, plan: Any, verdict: Verdict | None) -> tuple[list[dict[str, Any]], str | None]:
    """Per-GPU memory of each serving role: the plans the verdict made (never planned a second time), or why
    there are none."""
    plans = list(verdict.memory_plans) if verdict is not None else []
    if not plans:
        why = next((f.message for f in (verdict.findings if verdict is not None else ())
                    if f.code in ("memory-not-checked", "memory-not-planned", "cpu-backend", "omni-not-sized")),
                   "memory not planned")
        return [], why
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for role, mp in plans:
        base = role.split("[")[0]
        if base not in _SERVING or base in seen:
            continue
        seen.add(base)
        out.append({"role": base, "gpu": mp.gpu, "gpu_count": mp.gpu_count, "fits": mp.fits,
                    "config": f"hf/{plan.model_id}/config.json", "vllm_version": mp.vllm_version,
                    "kv_cache_tokens": mp.kv_cache_tokens, "max_model_len": mp.max_model_len,
                    "max_concurrency": mp.max_concurrency, "breakdown": mp.breakdown.model_dump(mode="json"),
                    "problems": list(mp.problems), "warnings": list(mp.warnings)})
    return out, None


def _pin(url: str | None, revision: str | None) -> str | None:
    """The recipe URL at ``revision`` (in place of HEAD or the manifest's commit)."""
    if url and revision:
        return re.sub(r"/blob/(?:HEAD|[0-9a-f]{40})/", f"/blob/{revision}/", url, count=1)
    return url


def _plan_json(repo: RecipeRepo, model: str, plan: ResolvedPlan, sel: Selection, *,
               revision: str | None) -> dict[str, Any]:
    from launchcard.argv import parse_command
    from launchcard.clients import ClientTarget, calls_markdown, capabilities_from_argv, client_calls, guide_control
    from launchcard.explain import explain_argv, recipe_flag_descriptions
    from launchcard.resolve import command_blocks

    data = _d(repo.recipe(model).data)
    # only the selected mode of each feature describes its flags (an MTP --speculative-config is not DFlash's)
    descriptions, where = recipe_flag_descriptions(_d(data.get("features")), dict(plan.feature_modes))
    blocks = command_blocks(plan)
    commands = []
    for i, cmd in enumerate(plan.commands):
        notes = explain_argv(cmd.argv, engine=plan.engine, recipe=descriptions, recipe_where=where)
        origin = {u.flag: u.origin for u in cmd.units if u.flag}
        flags = []
        for n in notes:
            o = origin.get(n.flag)
            flags.append({"flag": n.flag, "value": n.value, "what": n.what, "what_source": n.source,
                          "cited": n.cited, "value_what": n.value_what, "value_source": n.value_source,
                          "value_cited": n.value_cited, "value_url": n.value_url,
                          "layer": o.label() if o else None, **_credit_json(o, revision)})
        env = [{"name": e.name, "value": cmd.env_str.get(e.name), "layer": e.origin.label(),
                **_credit_json(e.origin, revision)} for e in cmd.env_entries]
        known = {e["name"] for e in env}
        env += [{"name": k, "value": v, "layer": None, **_credit_json(None, revision)}
                for k, v in cmd.env_str.items() if k not in known]
        title, text = blocks[i]
        commands.append({"role": cmd.role, "node_rank": cmd.node_rank, "title": title, "text": text,
                         "argv": list(cmd.argv), "env": cmd.env_str, "env_rows": env, "flags": flags})
    router = None
    if plan.router is not None:
        title, text = blocks[-1]
        router = {"title": title, "text": text, "install": plan.router.install, "port": plan.router.port}
    first = plan.commands[0]
    served = parse_command(first.argv).get_str("--served-model-name") or plan.model_id
    guide = data.get("guide")
    caps = capabilities_from_argv(first.argv, images="multimodal" in (_d(data.get("meta")).get("tasks") or []),
                                  control=guide_control(guide if isinstance(guide, str) else None))
    port = first.port or 8000
    calls = client_calls(ClientTarget(f"http://localhost:{port}/v1", str(served)), caps)
    kv_off = any(w.startswith(f"KV offload {sel.kv} ") for w in plan.warnings) if sel.kv else True
    return {
        "resolved": {
            "variant": plan.variant,
            "hardware": plan.hardware,
            "strategy": plan.strategy,
            "nodes": plan.node_count,
            "features": list(plan.features),
            "modes": dict(plan.feature_modes),
            "kv": None if kv_off else sel.kv,
            "advanced": list(sel.advanced),
            "deploy_type": plan.deploy_type,
            "docker_image": plan.docker_image,
        },
        # every process's command with its environment, titled when there are several (what Copy copies)
        "command": blocks[0][1] if len(blocks) == 1 else "\n\n".join(f"# {t}\n{x}" for t, x in blocks),
        "commands": commands,
        "router": router,
        "warnings": list(plan.warnings),
        "clients": [
            {"name": c.name, "lang": c.lang, "title": c.title, "reads": c.reads, "code": c.code} for c in calls
        ],
        "clients_markdown": calls_markdown(calls),
    }


def _credit_json(o: Origin | None, revision: str | None) -> dict[str, Any]:
    """The resolver's credit of one argument (never re-derived here): the line holding the value, the line
    naming the flag where different, or the rule and inputs of a computed value."""
    if o is None:
        return {"evidence_url": None, "flag_url": None, "credit": None, "derived": None, "inputs": []}
    return {"evidence_url": _pin(o.evidence.url, revision) if o.evidence else None,
            "flag_url": _pin(o.flag_evidence.url, revision) if o.flag_evidence else None,
            "credit": o.credit(), "derived": o.derived,
            "inputs": [{"name": i.name, "value": i.value,
                        "evidence_url": _pin(i.evidence.url, revision) if i.evidence else None} for i in o.inputs]}

