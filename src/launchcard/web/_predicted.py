"""Predicted performance on the web pages (``launchcard.predict``), always labelled and kept apart from
measured or published points.

- Performance pages: for every published (hardware, GPUs, parallelism, engine, workload) of a model, the
  plan is predicted over a ladder of concurrencies; the points feed ``create_app(predictions=...)``.
- Builder: the resolved command of the current selection predicted for the workload typed in the form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import Query

from launchcard.errors import LaunchcardError
from launchcard.web._memo import CurveMemo
from launchcard.web._refusal import refused, spell_findings

if TYPE_CHECKING:
    from launchcard.merge import BuildCache
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo
    from launchcard.web._builder import Selection

LADDER = (1, 4, 16, 64)  # concurrencies of a predicted curve, with the published ones
SOURCE = "launchcard.predict (step-level scheduler model; predicted, not measured)"
DEFAULT_WORKLOAD = {"isl": 1024, "osl": 256, "concurrency": 16}
MAX_TOKENS = 1_048_576
MAX_CONCURRENCY = 1024


def _parallel(text: str | None, gpus: int) -> tuple[int, int, bool]:
    """(TP, DP, EP) of a published parallelism cell such as ``TP4``, ``DP8 EP8`` or ``TP8 + EP``."""
    t = (text or "").upper()
    tp = re.search(r"TP\s*(\d+)", t)
    dp = re.search(r"DP\s*(\d+)", t)
    tp_n = int(tp.group(1)) if tp else (gpus if not dp else 1)
    dp_n = int(dp.group(1)) if dp else max(1, gpus // max(1, tp_n))
    if dp and tp and tp_n * dp_n > gpus:  # attention DP inside TP (SGLang's --dp with --tp): one TP group
        dp_n = 1
    return max(1, tp_n), max(1, dp_n), "EP" in t


def _group_key(p: dict[str, Any]) -> tuple[Any, ...] | None:
    """A published point's configuration to predict (hardware, GPUs, parallelism, engine, lengths, panel
    command, release), or None where it does not say its hardware, GPU count and lengths."""
    c = p.get("conditions") or {}
    hw, gpus, isl, osl = p.get("hardware"), c.get("gpus"), c.get("input_tokens"), c.get("output_tokens")
    if not (isinstance(hw, str) and isinstance(gpus, int) and isinstance(isl, int) and isinstance(osl, int)):
        return None
    flags = c.get("command")
    cmd = tuple(str(a) for a in flags) if isinstance(flags, list) and flags else ()
    return hw, gpus, c.get("parallelism"), c.get("engine") or "vllm", isl, osl, cmd, c.get("engine_version")


def _groups(points: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], set[int]]:
    """The published points' configurations (:func:`_group_key`), each with the concurrencies of its predicted
    curve: the ladder and the published ones."""
    groups: dict[tuple[Any, ...], set[int]] = {}
    for p in points:
        key = _group_key(p)
        if key is None:
            continue
        conc = (p.get("conditions") or {}).get("concurrency")
        groups.setdefault(key, set(LADDER)).update([conc] if isinstance(conc, int) and conc > 0 else [])
    return groups


def _beside(points: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], list[str]]:
    """Each configuration's published series, named as the chart names them (``web._perf``): two panel
    commands of one hardware and parallelism are two predicted curves, never one line."""
    out: dict[tuple[Any, ...], list[str]] = {}
    for p in points:
        key, c = _group_key(p), p.get("conditions") or {}
        name = f"{p.get('configuration')} · {c.get('engine')} {c.get('engine_version') or '?'}"
        if key is not None and p.get("configuration") and name not in out.setdefault(key, []):
            out[key].append(name)
    return out


def _curve(model: str, cfg: Path, group: tuple[Any, ...], concs: Sequence[int]) -> list[dict[str, Any]]:
    """One configuration's predicted points at ``concs`` (sorted), each predict's own run."""
    from launchcard.memory import Settings, load_arch
    from launchcard.predict import Workload, outside_json, predict, predict_launch

    try:
        precision = load_arch(cfg).quant
    except LaunchcardError:
        return []
    hw, gpus, par, engine, isl, osl, cmd, version = group
    tp, dp, ep = _parallel(par, gpus)
    engine = engine if engine in ("vllm", "sglang", "trtllm") else "vllm"
    # the launch `launchcard predict --config C --gpu HW` predicts for this point: the panel cell's own
    # SGLang command, or the parallelism cell as options (an SGLang point as an SGLang command with
    # SGLang's defaults, never a vLLM plan timed with SGLang's terms), with predict's refusals (context,
    # vLLM's start-up rules)
    server = ([*("python3", "-m", "sglang.launch_server"), *(model if a == "{{MODEL_NAME}}" else a
                                                           for a in cmd)] if engine == "sglang" and cmd
              else ["python3", "-m", "sglang.launch_server", "--model-path", model]
              if engine == "sglang" else None)
    over: dict[str, Any] = {} if cmd and engine == "sglang" else {"tp": tp, "dp": dp}
    if ep and not (cmd and engine == "sglang"):
        over["expert_parallel"] = True
    label = (f"{par or f'TP{tp}'} on {gpus} x {hw}, {engine}{' (its panel command)' if cmd else ''}, "
             f"checkpoint precision {precision.name if precision else 'as in config.json'}")
    out: list[dict[str, Any]] = []
    facts = None
    for n in concs:
        work = Workload(isl, osl, concurrency=n)  # predict's run: 10 x concurrency requests
        try:
            if facts is None:
                facts, r = predict_launch(cfg, work, Settings(), engine=engine, over=over, server=server,
                                          gpu=hw, model=model, version=version if engine != "vllm" else None)
            else:
                r = predict(facts, work)
        except LaunchcardError:
            if facts is None:
                break  # does not fit / unknown hardware / too long: no curve rather than a wrong one
            continue
        out.append({"configuration": label, "tokens_per_sec_per_user": round(r.output_tok_per_s_per_user, 2),
                    "tokens_per_sec_per_gpu": round(r.output_tok_per_s_per_gpu, 2), "input_tokens": isl,
                    "output_tokens": osl, "concurrency": n, "ttft_ms": round(r.ttft_ms_mean, 2),
                    "tpot_ms": round(r.tpot_ms_mean, 3), "source": SOURCE, "source_url": None,
                    # where the point lies outside the runs its coefficients were fitted on (the
                    # prediction's own domain findings)
                    "outside_calibration": outside_json(r.findings)})
    return out


def _build_cache() -> BuildCache | None:
    from launchcard.merge import BuildCache

    return BuildCache.open()


class CurveHook:
    """The ``create_app(predictions=...)`` function: model id -> predicted points beside its published ones, and
    :meth:`why_none`, why a model has none. Each curve is computed once for everything it reads (``memo``;
    default: in memory and in the build cache), so a page shown again, by another worker or after a restart,
    shows the figures first computed; the points returned are shared between calls: read them, never change
    them."""

    def __init__(self, published: Callable[[str], Sequence[dict[str, Any]]],
                 config_for: Callable[[str], Path | None], memo: CurveMemo | None = None) -> None:
        self.published, self.config_for = published, config_for
        self.kept = memo if memo is not None else CurveMemo(_build_cache)

    def __call__(self, model: str) -> list[dict[str, Any]]:
        cfg = self.config_for(model)
        if cfg is None:
            return []
        out: list[dict[str, Any]] = []
        published = self.published(model)
        beside = _beside(published)
        for group, concs in _groups(published).items():
            ns = tuple(sorted(concs))
            points = self.kept.get(model, cfg, (*group, ns), partial(_curve, model, cfg, group, ns))
            names = beside.get(group)
            out += ([{**p, "configuration": f"{p['configuration']}; beside {' / '.join(names)}", "beside": names}
                     for p in points] if names else points)
        return out

    def why_none(self, model: str) -> str:
        """Why ``model`` has no predicted point (a page says it rather than show no curve without a word)."""
        if self.config_for(model) is None:
            from launchcard.check import no_config_error

            return no_config_error(model, card=model).one_line()
        if not _groups(self.published(model)):
            return ("no published point names its hardware, GPU count and input/output lengths, so there is no "
                    "plan to predict beside it")
        return ("no published configuration could be predicted (a plan that does not fit, hardware the catalog "
                "does not know, or a workload longer than the context): no curve rather than a wrong one")


def prediction_hook(published: Callable[[str], Sequence[dict[str, Any]]],
                    config_for: Callable[[str], Path | None],
                    memo: CurveMemo | None = None) -> CurveHook:
    """The ``create_app(predictions=...)`` function (:class:`CurveHook`)."""
    return CurveHook(published, config_for, memo)


def predicted_note(hook: Callable[[str], Sequence[dict[str, Any]]] | None, model: str) -> str:
    """Why a performance page shows no predicted curve: no predictor attached, or the hook's own reason."""
    if hook is None:
        return "no predictor is attached to this server"
    if isinstance(hook, CurveHook):
        return hook.why_none(model)
    return "the server's predictions hook gave no point for this model"


def predicted_assumed(points: Sequence[dict[str, Any]]) -> list[str]:
    """The predicted points' domain findings, each cause once with how many points it concerns (a page's note)."""
    from launchcard.predict import outside_read, plans_outside

    return plans_outside([outside_read(p.get("outside_calibration") or ()) for p in points], noun="predicted points")


def workload_of(isl: int | None, osl: int | None, concurrency: int | None, dataset: str | None = None,
                endpoint: str | None = None) -> dict[str, Any]:
    """The builder's workload inputs, defaulted and clamped to sane bounds; ``dataset`` and ``endpoint`` as
    predict's ``--dataset`` (random: exact lengths; sharegpt: ShareGPT's lengths scaled to these means) and
    ``--endpoint`` (completions or chat)."""
    w: dict[str, Any] = {**DEFAULT_WORKLOAD, "dataset": "random", "endpoint": "completions"}
    for k, v, hi in (("isl", isl, MAX_TOKENS), ("osl", osl, MAX_TOKENS), ("concurrency", concurrency,
                                                                        MAX_CONCURRENCY)):
        if v is not None:
            w[k] = min(max(1, v), hi)
    if dataset is not None:
        w["dataset"] = dataset
    if endpoint is not None:
        w["endpoint"] = endpoint
    return w


def shared_url(selection_url: str, work: dict[str, Any]) -> str:
    """The builder's share link: the selection's URL and each workload input that is not its default (opened fresh,
    the page predicts the same workload); the selection's URL alone where every input is the default."""
    from urllib.parse import urlencode

    default = workload_of(None, None, None)
    typed = urlencode([(k, v) for k, v in work.items() if k in default and v != default[k]])
    return f"{selection_url}{'&' if '?' in selection_url else '?'}{typed}" if typed else selection_url


def plan_prediction(plan: ResolvedPlan, config: Path | None, work: dict[str, Any],
                    repo: RecipeRepo | None = None) -> dict[str, Any]:
    """Predicted TTFT/TPOT/throughput of ``plan``'s serving command under ``work`` (or why there is none): the one
    chain ``launchcard predict MODEL`` runs (``predict.predict_plan``: its verdict, refusals and figures; ``repo``:
    the recipes a resolved plan came from, for its verdict's recipe lines).  Where there is none, ``error`` says
    why and ``status`` is the answer of ``predict.json`` (``web._refusal``: 422 bad input, 409 a plan the
    predictor refuses; 404 no config.json on this server, which no query parameter can supply)."""
    out: dict[str, Any] = {"workload": work, "source": SOURCE, "error": None}
    from launchcard.predict import served_command

    try:  # a plan with no one server to time is said so before a missing config.json (as predict MODEL does)
        served_command(plan)
    except LaunchcardError as exc:
        return {**out, **refused(exc)}
    if config is None:
        from launchcard.check import no_config_error

        return {**out, "error": no_config_error(plan.model_id, card=plan.model).one_line(), "status": 404}
    from launchcard.memory import Settings
    from launchcard.predict import Workload, predict_plan

    try:
        # the one Workload predict builds from --dataset / --endpoint: its findings name the draw and the chat cost
        got = predict_plan(plan, config, Workload(
            work["isl"], work["osl"], concurrency=work["concurrency"],
            dataset=None if work.get("dataset", "random") == "random" else work["dataset"],
            endpoint=work.get("endpoint", "completions")).validate(), Settings(), recipes=repo)
    except LaunchcardError as exc:
        return {**out, **refused(exc)}
    said = got.to_json()
    if isinstance(said.get("verdict"), dict):  # a selection option named as the builder's query does
        said["verdict"] = {**said["verdict"], "findings": spell_findings(said["verdict"]["findings"])}
    return {**out, **said, "findings": [f.to_json() for f in got.prediction.findings if f.severity != "info"]}


def workload_query(isl: Annotated[int | None, Query(ge=1, le=MAX_TOKENS)] = None,
                   osl: Annotated[int | None, Query(ge=1, le=MAX_TOKENS)] = None,
                   concurrency: Annotated[int | None, Query(ge=1, le=MAX_CONCURRENCY)] = None,
                   dataset: Literal["random", "sharegpt"] | None = None,
                   endpoint: Literal["completions", "chat"] | None = None) -> dict[str, Any]:
    """The builder's workload inputs from the query string (a FastAPI dependency; another dataset or endpoint is
    refused by FastAPI with the choices)."""
    return workload_of(isl, osl, concurrency, dataset, endpoint)


def predicted_curves(published: Callable[[str], Sequence[dict[str, Any]]], recipes: Path) -> CurveHook:
    """The default ``predictions`` hook of ``create_app``: the checkpoint's config.json from the corpus ``hf/``
    next to the recipes (or sync's Hub snapshot); each curve computed once (:func:`prediction_hook`)."""
    from launchcard.check import corpus_config, synced_config_dirs

    return prediction_hook(published, lambda m: corpus_config(m, recipes, synced_config_dirs()))


def selection_prediction(repo: RecipeRepo, model: str, sel: Selection, work: dict[str, Any]) -> dict[str, Any]:
    """:func:`plan_prediction` of the builder selection's resolved plan."""
    from launchcard.check import corpus_config, synced_config_dirs
    from launchcard.resolve import resolve
    from launchcard.web._builder import choice_of

    try:
        plan = resolve(repo, choice_of(model, sel), provenance=False)
    except LaunchcardError as exc:
        return {"workload": work, "source": SOURCE, **refused(exc)}
    return plan_prediction(plan, corpus_config(plan.model_id, repo.root, synced_config_dirs()), work, repo)
