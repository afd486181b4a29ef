"""``launchcard serve``: the web catalog (FastAPI + Jinja2, server-rendered, JSON twin for every page).

Every HTML page has a twin at the same path plus ``.json`` holding exactly the
data the page renders; the HTML adds nothing but presentation.  The builder's
JavaScript only fetches the twin of the selection and swaps the resolved parts
in place, so the pages work without it.

Security: model ids, hardware ids and every query value are validated against
strict patterns before use (no path traversal, no open redirects: the server
never redirects to a URL it was given); all recipe strings are escaped by
Jinja2's autoescaping, recipe guides (Markdown) are rendered with raw HTML off
and then cleaned by ``nh3``; responses carry a Content-Security-Policy with
scripts from this origin only.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder as jsonable
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from launchcard.datadir import data_path
from launchcard.errors import LaunchcardError
from launchcard.web._builder import Selection, build, deploy, feature_problem, options
from launchcard.web._cache import OnceCache, ResponseCache
from launchcard.web._catalog import FACETS, SIZE_BUCKETS, SORTS, WebCatalog
from launchcard.web._catalog import Query as IndexQuery
from launchcard.web._perf import Predictions
from launchcard.web._predicted import (
    predicted_assumed,
    predicted_curves,
    predicted_note,
    shared_url,
    workload_of,
    workload_query,
)
from launchcard.web._refusal import query_line, status_of

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: the JSON documents the pages and the API return.

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_HW = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# a hardware name in a query (the builder's and the index's hardware=): what the CLI's --hardware reads by the same
# resolver (launchcard.resolve.profile_id / profile_for, the catalog's name_key: letters and digits, every other
# character a separator), in the characters accelerator names are written in: every catalog name and alias
# ("NVIDIA H100 80GB HBM3", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "AMD Instinct MI300X (192GB)") and what
# nvidia-smi / rocm-smi print
_HW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.,:()/+-]{0,127}$")
_REV = re.compile(r"^[0-9a-f]{7,40}$")
_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:=+-]{0,127}$")
_RULES = {_HW: "letters, digits and _ . - (at most 64)",
          _HW_NAME: "a letter or digit, then letters, digits, spaces and _ . , : ( ) / + - (at most 128)",
          _REV: "a hex commit id of 7 to 40 digits",
          _VALUE: "a letter or digit, then letters, digits and _ . : = + - (at most 128)"}
_NOT_MODELS = frozenset({"hardware", "static", "schemas", "docs"})  # first path parts that are not an org

SCHEMA_NAMES = ("web-index", "recipe-page", "web-hardware", "web-performance")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def _ok_id(org: str, name: str) -> str:
    if not (_ID.match(org) and _ID.match(name)) or ".." in org or ".." in name:
        raise HTTPException(404, "no such model")
    return f"{org}/{name}"


def _ok_value(value: str | None, what: str, pattern: re.Pattern[str] = _VALUE) -> str | None:
    if value is None or value == "":
        return None
    if not pattern.match(value):
        raise HTTPException(422, f"{what}: not a valid value (got {value[:80]!r}; use {_RULES[pattern]})")
    return value


def _hardware(value: str | None, profiles: Sequence[str] | None) -> str | None:
    """A ``hardware`` query value read as the CLI's ``--hardware`` reads it: the recipes profile it spells in any
    case or separators (:func:`launchcard.resolve.profile_id`), else as given (a hardware-catalog name the resolver
    maps, as for the CLI, or refuses)."""
    from launchcard.resolve import profile_id

    hw = _ok_value(value, "hardware", _HW_NAME)
    return (profile_id(profiles, hw) or hw) if hw is not None and profiles is not None else hw


class _Moved(Exception):
    """The id asked for differs from a known one only in letter case: answer with a redirect to ``path``
    (always built from a known id, never from a URL taken from the request)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _wants_json(path: str) -> bool:
    """JSON twins, schemas and the API description answer errors in JSON; every page route in HTML."""
    return path.endswith(".json") or path.startswith("/schemas/") or path.startswith("/docs")


def _closest(wanted: str, known: Sequence[str], n: int = 5) -> list[str]:
    """Known ids nearest to ``wanted`` (whole id, then the name part alone), for "did you mean"."""
    import difflib

    lower = {k.lower(): k for k in known}
    w = wanted.lower()
    hits = difflib.get_close_matches(w, list(lower), n=n, cutoff=0.5)
    name = w.rpartition("/")[2]
    by_name: dict[str, list[str]] = {}
    for k in lower:
        by_name.setdefault(k.rpartition("/")[2], []).append(k)
    for m in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.6):
        hits += [k for k in by_name[m] if k not in hits]
    hits += [k for k in lower if name and name in k and k not in hits]
    return [lower[h] for h in hits[:n]]


def create_app(catalog: Path | str | None = None, recipes: Path | None = None,
               benchmarks: Sequence[Path] = (), predictions: Predictions | None = None) -> FastAPI:
    """The web catalog over ``catalog`` (SQLite) and, for pages and the builder, a recipes checkout.

    ``benchmarks``: folders holding SGLang cookbook ``*-benchmarks.jsx`` files (a synced sglang
    ``docs/src/snippets/configs``); the corpus' ``sglang-cookbook/`` next to the recipes is always read.
    ``predictions``: the hook for predicted curves on the performance pages (see ``web._perf.Predictions``);
    without it the pages show measured and published points only.
    """
    from launchcard.web._perf import PerfIndex
    from launchcard.web._render import Renderer

    store = WebCatalog(catalog, recipes)
    by_lower = {m.lower(): m for m in {*store.models(), *store.recipe_ids}}
    hw_ids = sorted(store.repo.profiles) if store.repo is not None else None  # the recipes' hardware profiles
    cookbook = [recipes.parent / "sglang-cookbook"] if recipes is not None else []
    perf = PerfIndex([*cookbook, *benchmarks], cookbook, store.models())
    if predictions is None and recipes is not None:  # predicted curves beside the published points
        predictions = predicted_curves(perf.published, recipes)
    render = Renderer()
    app = FastAPI(title="launchcard", version="1", description=(
        "Launch cards of open-weight models: every value traced to its source line, a resolved command "
        "per hardware and strategy, and a verdict on whether it starts and fits. Every page has a JSON twin."))
    app.state.catalog = store
    app.add_middleware(ResponseCache, stale=store.stale, reload=store.reload)
    static = data_path("static")
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Launchcard-Worker"] = str(os.getpid())  # which worker process answered
        return response

    def known_model(org: str, name: str, route: str = "") -> str:
        """The model id of a route, checked: a case-insensitive match redirects (to the same ``route`` of
        the model), anything else is a 404."""
        model = _ok_id(org, name)
        if store.row(model) is not None or model in recipe_ids:
            return model
        canonical = by_lower.get(model.lower())
        if canonical is not None:
            raise _Moved(f"/{canonical}{route}")
        raise HTTPException(404, f"no model {model} in this catalog")

    @app.exception_handler(_Moved)
    def moved(request: Request, exc: _Moved) -> Response:
        from fastapi.responses import RedirectResponse

        query = request.url.query
        return RedirectResponse(exc.path + (f"?{query}" if query else ""), status_code=308)

    def error_response(request: Request, status: int, message: str) -> Response:
        path = request.url.path
        if _wants_json(path):
            return JSONResponse({"detail": message}, status_code=status)
        if "/files/" in path:
            return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")
        if path.endswith("/builder"):  # the builder's fragment: an inline message in the builder panel
            return HTMLResponse(render.page("_builder.html.j2", builder={"error": message}), status_code=status)
        parts = [p for p in path.split("/") if p]
        if status == 422 and len(parts) == 2 and parts[0] not in _NOT_MODELS:  # a model page, bad selection
            page = model_page_with_problem(parts[0], parts[1], message)
            if page is not None:
                return HTMLResponse(page, status_code=status)
        suggestions: list[str] = []
        if status == 404 and len(parts) >= 2 and parts[0] != "hardware":
            suggestions = _closest("/".join(parts[:2]), sorted({*store.models(), *recipe_ids}))
        elif status == 404 and parts[:1] == ["hardware"] and store.repo is not None:
            suggestions = [f"hardware/{h}" for h in _closest(parts[-1] if len(parts) > 1 else "",
                                                             sorted(store.repo.profiles))]
        return HTMLResponse(render.page("error.html.j2", status=status, message=message, suggestions=suggestions,
                                        query=parts[1] if len(parts) > 1 else ""), status_code=status)

    def model_page_with_problem(org: str, name: str, message: str) -> str | None:
        """The model page with ``message`` inline in its builder panel; None where the page has no builder
        (the plain error page then answers)."""
        try:
            model = known_model(org, name)
        except (HTTPException, _Moved):
            return None
        if store.repo is None or model not in recipe_ids:
            return None
        return model_html(model, Selection(), problem=message)

    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(request, exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e.get("loc", ())[1:]) or "request"
            problems.append(f"{loc}: {e.get('msg', 'invalid')} (got {e.get('input')!r})")
        if _wants_json(request.url.path):  # one line in ``detail``, as every other refusal; FastAPI's list beside it
            return JSONResponse({"detail": "; ".join(problems), "errors": jsonable(exc.errors())}, status_code=422)
        return error_response(request, 422, "; ".join(problems))

    def index_data(q: str, task: str | None, arch: str | None, size: str | None, precision: str | None,
                   hardware: str | None, hw_status: str | None, engine: str | None, source: str | None,
                   sort: str, page: int, per_page: int) -> dict[str, Any]:
        if sort not in SORTS:
            raise HTTPException(422, f"sort: use one of {', '.join(SORTS)}")
        if hw_status not in (None, "", "verified", "declared"):
            raise HTTPException(422, "hw_status: use verified or declared")
        sizes = [name for name, _ in SIZE_BUCKETS]
        if size not in (None, "", *sizes):
            raise HTTPException(422, f"size: use one of {', '.join(sizes)} (got {str(size)[:80]!r})")
        query = IndexQuery(q=q[:100], task=_ok_value(task, "task"), arch=_ok_value(arch, "arch"),
                           size=size or None,
                           precision=_ok_value(precision, "precision"), hardware=_hardware(hardware, hw_ids),
                           hw_status=hw_status or None, engine=_ok_value(engine, "engine"),
                           source=_ok_value(source, "source"), sort=sort, page=page, per_page=per_page)
        try:
            found = store.search(query)
        except LaunchcardError as exc:  # a text the catalog cannot search (a NUL): the store's line, naming q
            raise HTTPException(status_of(exc), query_line(exc)) from None
        return {"schema": "launchcard.web-index/v1", "total": found.total, "page": page, "per_page": per_page,
                "query": {"q": query.q, **query.selected(), "hw_status": query.hw_status, "sort": sort},
                "facets": found.counts, "models": [r.to_json() for r in found.rows]}

    schemas = data_path("schemas")

    @app.get("/schemas/{name}.json", summary="The published JSON Schema of a page's JSON twin")
    def schema(name: str) -> Response:
        if name not in SCHEMA_NAMES:
            raise HTTPException(404, "no such schema")
        return Response((schemas / f"{name}.schema.json").read_text(encoding="utf-8"), media_type="application/json")

    @app.get("/index.json", summary="All models, filtered (JSON twin of /)")
    def index_json(q: str = "", task: str | None = None, arch: str | None = None, size: str | None = None,
                   precision: str | None = None, hardware: str | None = None, hw_status: str | None = None,
                   engine: str | None = None, source: str | None = None, sort: str = "name",
                   page: Annotated[int, Query(ge=1, le=10_000)] = 1,
                   per_page: Annotated[int, Query(ge=1, le=200)] = 50) -> JSONResponse:
        return JSONResponse(index_data(q, task, arch, size, precision, hardware, hw_status, engine, source, sort,
                                       page, per_page))

    @app.get("/", response_class=HTMLResponse, summary="All models, filtered")
    def index(request: Request, q: str = "", task: str | None = None, arch: str | None = None,
              size: str | None = None, precision: str | None = None, hardware: str | None = None,
              hw_status: str | None = None, engine: str | None = None, source: str | None = None,
              sort: str = "name", page: Annotated[int, Query(ge=1, le=10_000)] = 1,
              per_page: Annotated[int, Query(ge=1, le=200)] = 50) -> HTMLResponse:
        data = index_data(q, task, arch, size, precision, hardware, hw_status, engine, source, sort, page, per_page)
        return HTMLResponse(render.page("index.html.j2", data=data, facets=FACETS,
                                        request_query=str(request.query_params)))

    def verified(model: str, rev: str | None) -> str | None:
        """The pinned revision, only when held (issue 20: an unverified ``?rev=`` is refused, not shown)."""
        try:
            return store.verified_revision(model, rev)
        except LookupError as exc:
            held = str(exc)
            raise HTTPException(404, f"revision {rev} of {model} is not held by this catalog or recipes checkout"
                                     + (f"; it holds {held}: drop ?rev= or use one of those" if held else
                                        "; it holds none: drop ?rev=")) from None

    def model_data(model: str, rev: str | None) -> dict[str, Any]:
        if store.row(model) is None and model not in recipe_ids:
            raise HTTPException(404, "no such model")
        page = store.page(model, verified(model, rev))
        if page is None:  # a model known from other sources only: the card is the page
            card = store.card(model)
            return {"schema": "launchcard.web-card/v1", "model": model,
                    "card": card.model_dump(mode="json", by_alias=True) if card else None}
        return page

    @app.get("/hardware/{hw}.json", summary="Which models declare, verify or fit a hardware profile")
    def hardware_json(hw: str) -> JSONResponse:
        return JSONResponse(hardware_data(hw, ".json"))

    def hardware_data(hw: str, route: str = "") -> dict[str, Any]:
        if hw != hw.lower() and _HW.match(hw.lower()) and store.repo is not None and hw.lower() in store.repo.profiles:
            raise _Moved(f"/hardware/{hw.lower()}{route}")
        if not _HW.match(hw):
            raise HTTPException(404, f"no hardware profile {hw!r}")
        prof = store.profile(hw)
        models, basis = store.hardware_view(hw)
        if prof is None and not any(models.values()):
            raise HTTPException(404, f"no hardware profile {hw!r}")
        note = None if prof is not None else (
            f"{hw} is named by a source but is not a profile of the recipes' taxonomy.yaml, so its GPU count and "
            "memory are unknown here, no recipe settings apply to it and no fit is judged.")
        # the models whose builder resolves on it (their default variant: what ?hardware= alone selects); the
        # others link to their page, not to a builder that refuses the hardware
        from launchcard.resolve import resolvable_hardware

        listed = sorted({m for ms in models.values() for m in ms})
        builder = [m for m in listed if repo is not None and m in recipe_ids
                   and hw in {c.profile for c in resolvable_hardware(repo, m)}] if prof is not None else []
        return {"schema": "launchcard.web-hardware/v1", "id": hw, "profile": prof, "models": models,
                "builder": builder, "fits_basis": basis, "note": note}

    @app.get("/hardware/{hw}", response_class=HTMLResponse, summary="Which models declare, verify or fit it")
    def hardware_page(hw: str) -> HTMLResponse:
        return HTMLResponse(render.page("hardware.html.j2", data=hardware_data(hw)))

    def perf_data(model: str) -> dict[str, Any]:
        if store.row(model) is None:
            raise HTTPException(404, "no such model")
        card = store.card(model)
        measured = [f.model_dump(mode="json") for f in card.facts if f.classification == "measured"] if card else []
        from launchcard.web._perf import charts, interactivity_charts, measured_runs

        published = perf.published(model)
        predicted = list(predictions(model)) if predictions is not None else []
        runs = measured_runs(measured)
        return {"schema": "launchcard.web-performance/v1", "model": model, "published": published,
                "measured": measured, "measured_runs": runs, "charts": charts(published), "errors": list(perf.errors),
                "interactivity": interactivity_charts(published, predicted, runs), "predicted": predicted,
                "predicted_assumed": predicted_assumed(predicted),
                "predicted_note": None if predicted else predicted_note(predictions, model),
                "note": "Each point keeps its source and the conditions it was measured under. Points from "
                        "different sources or workloads are not put on one chart and are not ranked."}

    @app.get("/{org}/{name}/performance.json", summary="Performance points with their conditions (JSON)")
    def performance_json(org: str, name: str) -> JSONResponse:
        return JSONResponse(perf_data(known_model(org, name, "/performance.json")))

    @app.get("/{org}/{name}/performance", response_class=HTMLResponse, summary="Performance points")
    def performance(org: str, name: str) -> HTMLResponse:
        return HTMLResponse(render.page("performance.html.j2", data=perf_data(known_model(org, name, "/performance"))))

    def selection(hardware: str | None = None, variant: str | None = None, strategy: str | None = None,
                  nodes: Annotated[int | None, Query(ge=1, le=64)] = None,
                  features: Annotated[list[str] | None, Query()] = None,
                  feature: Annotated[list[str] | None, Query()] = None,
                  no_feature: Annotated[list[str] | None, Query()] = None,
                  mode: Annotated[list[str] | None, Query()] = None, kv: str | None = None,
                  advanced: Annotated[list[str] | None, Query()] = None, rev: str | None = None) -> Selection:
        """The builder's selection from the query string: one declaration for every builder route."""
        modes: dict[str, str] = {}
        for m in mode or []:
            k, sep, v = m.partition("=")
            if not sep:
                raise HTTPException(422, f"mode: write FEATURE=MODE (got {m[:80]!r})")
            modes[_ok_value(k, "mode") or ""] = _ok_value(v, "mode") or ""
        if "" in (feature or ()):  # the form's marker before features= carried its whole set: say so, not guess
            raise HTTPException(422, "feature: an empty value names no feature (feature=NAME adds one to the recipe's "
                                     "defaults); the whole set of features is features=NAME per feature, features= "
                                     "alone for none")

        def names(values: list[str] | None, what: str) -> tuple[str, ...]:
            return tuple(dict.fromkeys(f for f in (_ok_value(x, what) for x in values or ()) if f))

        whole = None if features is None else names(features, "features")
        from launchcard.resolve import ADVANCED_PRESETS

        for a in advanced or []:  # resolve skips a name it has no preset for: said here, not dropped
            if a and a not in ADVANCED_PRESETS:
                raise HTTPException(422, f"advanced: unknown preset {a[:80]!r}; choose one of: "
                                         f"{', '.join(sorted(ADVANCED_PRESETS))}")
        return Selection(hardware=_hardware(hardware, hw_ids), variant=_ok_value(variant, "variant"),
                         strategy=_ok_value(strategy, "strategy"), nodes=nodes, features=whole,
                         added=names(feature, "feature"), removed=names(no_feature, "no_feature"), modes=modes,
                         kv=_ok_value(kv, "kv"),
                         advanced=tuple(a for a in (advanced or []) if _ok_value(a, "advanced")),
                         rev=_ok_value(rev, "rev", _REV))

    # One declaration of the builder's query parameters, shared by every builder route.
    from_query = Depends(selection)
    from_workload = Depends(workload_query)  # the builder's workload inputs (predicted performance)

    repo = store.repo
    recipe_ids = store.recipe_ids  # computed once by the read model
    # resolving is the page's main cost, emitting five targets the deploy section's: each built once per
    # selection, by one thread
    built: OnceCache[dict[str, Any]] = OnceCache(512)
    deployed: OnceCache[dict[str, Any]] = OnceCache(256)
    rendered: OnceCache[str] = OnceCache(256)

    def builder_model(model: str, sel: Selection) -> RecipeRepo:
        """The recipes of a builder route's model; 404 without one, 422 for features the resolver refuses (the
        CLI's exit 2 for the same --feature / --no-feature)."""
        if repo is None or model not in recipe_ids:
            raise HTTPException(404, "no recipe for this model")
        problem = feature_problem(repo, model, sel)
        if problem is not None:
            raise HTTPException(422, problem)
        return repo

    def answered(data: dict[str, Any]) -> dict[str, Any]:
        """``data`` of a builder result, or the refusal it carries as its HTTP answer (``web._refusal``: 422 for
        the CLI's exit 2, 409 for its exit 1), the line naming the query parameter."""
        if data.get("error"):
            raise HTTPException(data.get("status") or 422, data["error"])
        return data

    def builder_data(model: str, sel: Selection) -> dict[str, Any]:
        """The resolved selection (a refusal kept as ``error``/``status``, for the page to show inline)."""
        repo = builder_model(model, sel)

        rev = verified(model, sel.rev)

        def make() -> dict[str, Any]:
            data = build(repo, model, sel, revision=rev)
            data["options"] = options(repo, model, (data.get("resolved") or {}).get("variant") or sel.variant)
            query = sel.query()
            data["share_url"] = f"/{model}?{query}" if query else f"/{model}"
            data["deploy_url"] = f"/{model}/deploy?{query}" if query else f"/{model}/deploy"
            data["download_base"] = f"/{model}/files"
            return data

        return built.get((model, sel.query()), make)

    predicted: OnceCache[dict[str, Any]] = OnceCache(256)

    def predicted_data(model: str, sel: Selection, work: dict[str, Any]) -> dict[str, Any]:
        """The builder's predicted TTFT/TPOT/throughput for the selection's command and the typed workload."""
        repo = builder_model(model, sel)
        from launchcard.web._predicted import selection_prediction

        return predicted.get((model, sel.query(), tuple(sorted(work.items()))),
                             lambda: selection_prediction(repo, model, sel, work))

    def deploy_data(model: str, sel: Selection) -> dict[str, Any]:
        repo = builder_model(model, sel)
        return deployed.get((model, sel.query()), lambda: deploy(repo, model, sel))

    @app.get("/{org}/{name}/deploy", response_class=HTMLResponse,
             summary="The deploy files of a selection (shell, docker, compose, Kubernetes, Truss)")
    def deploy_page(org: str, name: str, sel: Selection = from_query) -> HTMLResponse:
        model = known_model(org, name, "/deploy")
        return HTMLResponse(render.page("deploy.html.j2", model=model, builder=answered(builder_data(model, sel)),
                                        deploy=answered(deploy_data(model, sel))))

    @app.get("/{org}/{name}/builder", response_class=HTMLResponse, summary="The builder's result (HTML fragment)")
    def builder_fragment(org: str, name: str, sel: Selection = from_query,
                         work: dict[str, Any] = from_workload) -> HTMLResponse:
        model = known_model(org, name, "/builder")
        # a refused selection is the fragment's inline error with the refusal's status; a refused prediction of
        # a plan that resolved is the prediction panel's inline note under the plan
        builder = answered(builder_data(model, sel))
        return HTMLResponse(render.page("_builder.html.j2", builder=builder, predicted=predicted_data(model, sel, work),
                                        share_url=shared_url(builder["share_url"], work)))

    @app.get("/{org}/{name}/predict.json", summary="The builder: predicted TTFT/TPOT/throughput of a selection")
    def predict_json(org: str, name: str, sel: Selection = from_query,
                     work: dict[str, Any] = from_workload) -> JSONResponse:
        model = known_model(org, name, "/predict.json")
        return JSONResponse({"schema": "launchcard.web-prediction/v1", "model": model, "selection": sel.query(),
                             **answered(predicted_data(model, sel, work))})

    @app.get("/{org}/{name}/files/{target}/{filename}", summary="Download one emitted file of a selection")
    def download(org: str, name: str, target: str, filename: str, sel: Selection = from_query) -> Response:
        if not (re.fullmatch(r"[a-z]+", target) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", filename)):
            raise HTTPException(404, "no such file for this selection")
        model = known_model(org, name, f"/files/{target}/{filename}")
        files = answered(deploy_data(model, sel)).get("files") or {}
        text = (files.get(target) or {}).get(filename)
        if not isinstance(text, str):
            raise HTTPException(404, "no such file for this selection")
        return Response(text, media_type="text/plain; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @app.get("/{org}/{name}/resolve.json", summary="The builder: resolve a selection (JSON)")
    def resolve_json(org: str, name: str, sel: Selection = from_query) -> JSONResponse:
        model = known_model(org, name, "/resolve.json")
        return JSONResponse({**answered(builder_data(model, sel)),
                             **{k: v for k, v in answered(deploy_data(model, sel)).items() if k != "error"}})

    @app.get("/{org}/{name}.json", summary="A model's page (JSON twin)")
    def model_json(org: str, name: str, rev: str | None = None) -> JSONResponse:
        return JSONResponse(model_data(known_model(org, name, ".json"), _ok_value(rev, "rev", _REV)))

    def model_html(model: str, sel: Selection, work: dict[str, Any] | None = None, problem: str | None = None) -> str:
        """The model page; ``problem``: a bad selection typed into the URL, shown in the builder panel over the
        default selection's form instead of the result."""
        data = model_data(model, sel.rev)
        builder = builder_data(model, sel) if store.repo is not None and "header" in data else None
        if builder is not None and problem is None and dataclasses.replace(sel, rev=None) != Selection():
            answered(builder)  # a selection typed that is refused: its status, the page over the default selection
        if builder is not None and problem is not None:
            builder = {**builder, "error": f"{problem}; the form shows the default selection"}
        work = work or workload_of(None, None, None)
        guess = predicted_data(model, sel, work) if builder is not None else None
        guide = None
        if store.repo is not None and "header" in data:
            raw = store.repo.recipe(model).data.get("guide")
            guide = render.markdown(raw) if isinstance(raw, str) else None
        return render.page("model.html.j2", data=data, builder=builder, guide=guide, model=model,
                           badges=store.release_badges(model), predicted=guess, workload=work,
                           share_url=shared_url(builder["share_url"], work) if builder and not builder.get("error")
                           else None)

    @app.get("/{org}/{name}", response_class=HTMLResponse, summary="A model's page with the command builder")
    def model_page(org: str, name: str, sel: Selection = from_query,
                   work: dict[str, Any] = from_workload) -> HTMLResponse:
        model = known_model(org, name)
        # rendered once: users arriving together at a new page wait for one render, not fifty
        return HTMLResponse(rendered.get((store.generation, model, sel.query(), tuple(sorted(work.items()))),
                                         lambda: model_html(model, sel, work)))

    def warm() -> None:
        """Pay the one-time costs (imports, flag specs, template compilation) before the first user does:
        one model page is built in full; the predicted curves of the performance pages (seconds of simulation
        where none is kept in the build cache) are computed in a background thread while the server answers
        (a request for a curve in progress waits for it rather than computing it again)."""
        for template in ("index.html.j2", "hardware.html.j2", "performance.html.j2"):
            render.env.get_template(template)
        first = min(recipe_ids & set(store.models()), default=None)
        if first is not None:
            model_html(first, Selection())
        if predictions is not None:
            import threading

            threading.Thread(target=warm_predictions, name="launchcard-predicted-curves", daemon=True).start()

    def warm_predictions() -> None:
        assert predictions is not None
        for model in perf.models():
            try:
                predictions(model)
            except Exception:  # noqa: BLE001 - a head start only: the page's own request meets and answers it
                continue

    app.state.warm = warm
    app.state.warm_predictions = warm_predictions
    return app
