"""Fleet sweeps: the best plan of many models x GPU types x workloads, on a local process pool or on Ray.

A workload takes the load as ``launchcard predict`` does (one :class:`~launchcard.predict.Workload`, validated by
it): ``concurrency`` (closed loop), ``rate`` (Poisson; ``inf`` sends every request at once), both (Poisson with at
most ``concurrency`` in flight), and optionally ``num_requests``, ``range_ratio``, ``prefix_hit``, ``dataset``
(``sharegpt``: each request's lengths as vllm bench serve's ShareGPT sampler sends them, scaled to ``isl``/``osl``;
an ``isl`` or ``osl`` left out is the dataset's own mean, as ``predict --dataset`` takes it)
and ``endpoint`` (``completions``, the default, or ``chat``: predict's ``--endpoint``).
A sweep file (YAML) lists the models (each with its config.json), the GPU types with a count each, and the
workloads with their SLO; every combination is one task, a plain picklable record, and its answer one JSON
row computed by :func:`run_task` alone, so a process pool and a Ray cluster give the same rows.

    models:
      - {id: openai/gpt-oss-120b, config: hf/openai/gpt-oss-120b/config.json}   # relative to the file
    gpus:
      - {gpu: h100, count: 8}
    workloads:
      - {name: chat, isl: 1024, osl: 256, concurrency: 64, endpoint: chat, slo: "ttft=2000,tpot=40"}
      - {name: burst, isl: 1024, osl: 256, rate: inf, num_requests: 500, range_ratio: 0.2, slo: "ttft=60000"}
      - {name: sharegpt, isl: 220, osl: 200, rate: inf, dataset: sharegpt, slo: "ttft=30000"}
    max_num_seqs: [16, 64, 256]      # optional: the batch limits searched (SGLang: --max-running-requests)
    engines: [vllm, sglang]          # optional (default [vllm]): each engine's plans, as `plan --engine` searches
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError, LaunchcardError

if TYPE_CHECKING:
    from launchcard.predict import Workload


@dataclass(frozen=True, slots=True)
class SweepTask:
    """One search of a sweep: a model on a number of GPUs of one type, under one workload and SLO."""

    model: str
    config: str
    gpu: str
    gpus: int
    gpus_per_node: int
    workload: str  # its name
    isl: int
    osl: int
    concurrency: int | None
    rate: float | None
    slo: str
    max_num_seqs: tuple[int, ...] | None = None
    where: str | None = None  # the workload entry's file:line, so a failing row names the line to change
    num_requests: int | None = None
    range_ratio: float = 0.0
    prefix_hit: float = 0.0
    engine: str = "vllm"
    dataset: str | None = None
    endpoint: str = "completions"

    def load(self) -> Workload:
        """The task's workload, as ``launchcard predict`` builds it from the same values."""
        from launchcard.predict import Workload

        return Workload(self.isl, self.osl, concurrency=self.concurrency, rate=self.rate,
                        num_requests=self.num_requests, range_ratio=self.range_ratio, prefix_hit=self.prefix_hit,
                        dataset=self.dataset, endpoint=self.endpoint)


def _fail(where: str, rule: str, fix: str) -> InputError:
    return InputError(rule, where=where, fix=fix, field="sweep")


def _positive_int(value: object, where: str, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise _fail(where, f"{name} must be a positive integer ({value!r})", f"write {name}: 8")
    return value


def load_sweep(path: str | Path) -> list[SweepTask]:
    """The tasks of a sweep file, every model x GPU type x workload; bad input names the file and line."""
    from launchcard.hardware import find, node_size
    from launchcard.memory import load_arch
    from launchcard.predict import HardwareFigures
    from launchcard.yamlread import load_yaml

    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the sweep file ({exc.strerror})", where=str(p),
                         fix="pass the path of a sweep YAML file", field="sweep") from None
    doc = load_yaml(data, str(p))
    top = doc.value
    if not isinstance(top, dict):
        raise _fail(f"{p}:1", "a sweep file is a mapping with models, gpus and workloads",
                    "see `launchcard sweep --help`")

    def at(*key: Any) -> str:
        return f"{p}:{doc.line(*key) or 1}"

    def known(entry: dict[str, Any], keys: tuple[str, ...], *where: Any) -> None:
        """A key the sweep does not read is a typo whose value would be dropped (``cout: 8`` ran 1 GPU)."""
        unknown = sorted(str(k) for k in set(entry) - set(keys))
        if unknown:
            raise _fail(at(*where, unknown[0]), f"unknown key {unknown[0]!r}", f"use {', '.join(keys)}")

    known(top, ("models", "gpus", "workloads", "max_num_seqs", "engines"))

    def items(name: str) -> list[dict[str, Any]]:
        value = top.get(name)
        if not isinstance(value, list) or not value:
            raise _fail(at(name), f"{name} must be a non-empty list of mappings", f"add {name}: [- {{...}}]")
        for i, v in enumerate(value):  # the bad entry's own line, not the list's (a 40-row list named line 5)
            if not isinstance(v, dict):
                raise _fail(at(name, i), f"{name} entry {i + 1} is not a mapping ({str(v)[:40]!r})",
                            f"write each entry of {name} as {{key: value, ...}}")
        return value

    models = []
    for i, m in enumerate(items("models")):
        known(m, ("id", "config"), "models", i)
        mid, cfg = m.get("id"), m.get("config")
        if not isinstance(mid, str) or not mid.strip() or not isinstance(cfg, str):
            raise _fail(at("models", i), "a model needs id and config (its config.json)",
                        "write {id: ORG/NAME, config: path/to/config.json}")
        cpath = (p.parent / cfg).resolve()
        if not cpath.is_file():
            raise _fail(at("models", i, "config"), f"config {cfg!r} is not a file", "give the config.json path "
                                                                                     "(relative to the sweep file)")
        try:  # a config every search of this model would refuse: said once, at its own line, with its path
            load_arch(cpath)
        except LaunchcardError as exc:
            raise _fail(at("models", i, "config"), f"config {cfg!r}: {exc.rule}",
                        exc.fix or "give the model's config.json") from None
        if (mid, str(cpath)) in models:  # the same search twice: two identical rows, one of them a typo
            raise _fail(at("models", i), f"model {mid} with config {cfg!r} is listed twice",
                        "give each model once")
        models.append((mid, str(cpath)))
    gpus = []
    for i, g in enumerate(items("gpus")):
        known(g, ("gpu", "count", "gpus_per_node"), "gpus", i)
        name = g.get("gpu")
        if not isinstance(name, str):
            raise _fail(at("gpus", i), "a GPU entry needs gpu: NAME", "write {gpu: h100, count: 8}")
        try:
            acc = find(name, where=at("gpus", i, "gpu"))
        except LaunchcardError as exc:
            raise _fail(at("gpus", i, "gpu"), exc.rule, exc.fix or "use a hardware catalog name") from None
        if acc.is_cpu:  # every row of it would fail alike, located at a workload's line: said here, once
            raise _fail(at("gpus", i, "gpu"), f"{name!r} is a CPU profile; a sweep searches the plans launchcard "
                                              "derives, which size GPUs",
                        "drop the entry (a CPU's backend is planned by `launchcard memory` on its profile)")
        try:  # no bandwidth or FLOP/s to time against: every row of it would fail alike (plan's rule), said here
            HardwareFigures.from_accelerator(acc).require_flops()
        except InputError as exc:
            raise _fail(at("gpus", i, "gpu"), exc.rule, "add the figure with its source to data/hardware.yaml, or "
                        "drop the entry (a sweep reads no measured figures file: one machine's are not every "
                        "type's)") from None
        count = _positive_int(g.get("count", 1), at("gpus", i, "count"), "count")
        given = g.get("gpus_per_node")
        given = None if given is None else _positive_int(given, at("gpus", i, "gpus_per_node"), "gpus_per_node")
        try:
            per = node_size(name, count, given, fix="add gpus_per_node: N")
        except InputError as exc:
            raise _fail(at("gpus", i), exc.rule, exc.fix or "add gpus_per_node: N") from None
        entry = (acc.id, count, per)
        if entry in gpus:  # h100 and H100 are one GPU: named by its catalog id, as plan and predict name it
            raise _fail(at("gpus", i), f"{count} x {acc.id} is listed twice ({name!r} names {acc.id})",
                        "give each GPU type and count once")
        gpus.append(entry)
    works: list[tuple[str, str, Workload, str]] = []
    for i, w in enumerate(items("workloads")):
        work = _workload(w, i, at)
        if any(work[1] == other[1] for other in works):  # rows and their JSON are told apart by the name
            raise _fail(at("workloads", i), f"workload name {work[1]!r} is used twice", "give each workload its own "
                                                                                          "name")
        works.append(work)
    mns = top.get("max_num_seqs")
    limits = None
    if mns is not None:
        if not isinstance(mns, list) or not mns:
            raise _fail(at("max_num_seqs"), "max_num_seqs must be a list of batch limits", "write [16, 64, 256]")
        limits = tuple(sorted({_positive_int(v, at("max_num_seqs"), "max_num_seqs") for v in mns}))
    engines = _engines(top.get("engines"), at)
    return [SweepTask(model=mid, config=cfg, gpu=g, gpus=n, gpus_per_node=per, workload=wn, isl=w.isl, osl=w.osl,
                      concurrency=w.concurrency, rate=w.rate, slo=slo, max_num_seqs=limits, where=wat,
                      num_requests=w.num_requests, range_ratio=w.range_ratio, prefix_hit=w.prefix_hit, engine=e,
                      dataset=w.dataset, endpoint=w.endpoint)
            for mid, cfg in models for g, n, per in gpus for wat, wn, w, slo in works for e in engines]


# the engines a sweep searches plans of (launchcard plan --engine: vLLM's and SGLang's flags and serving rules)
SWEEP_ENGINES = ("vllm", "sglang")


def _engines(value: object, at: Callable[..., str]) -> tuple[str, ...]:
    if value is None:
        return ("vllm",)
    if not isinstance(value, list) or not value:
        raise _fail(at("engines"), "engines must be a list of engine names", "write engines: [vllm, sglang]")
    for i, e in enumerate(value):
        if e not in SWEEP_ENGINES:
            raise _fail(at("engines", i), f"unknown engine {e!r}", f"use {' or '.join(SWEEP_ENGINES)}")
    return tuple(dict.fromkeys(str(e) for e in value))


# a workload entry's keys: the Workload field each sets (the names are the same), and an example for the fix
_LOAD_KEYS = {"concurrency": "concurrency: 64", "rate": "rate: 4 (or inf: every request at once)",
              "num_requests": "num_requests: 500", "range_ratio": "range_ratio: 0.2", "prefix_hit": "prefix_hit: 0.5",
              "dataset": "dataset: sharegpt", "endpoint": "endpoint: chat (or completions, the default)"}


def _workload(w: dict[str, Any], i: int, at: Callable[..., str]) -> tuple[str, str, Workload, str]:
    """One workload entry: (its file:line, name, the validated Workload, its SLO text)."""
    from launchcard.plansearch._types import Slo
    from launchcard.predict import MAX_REQUESTS, Workload

    unknown = sorted(set(w) - {"name", "isl", "osl", "slo", *_LOAD_KEYS})
    if unknown:
        raise _fail(at("workloads", i, unknown[0]), f"unknown workload key {unknown[0]!r}",
                    f"use name, isl, osl, slo, {', '.join(_LOAD_KEYS)}")
    slo = w.get("slo")
    if slo is None:
        raise _fail(at("workloads", i), "a workload needs slo: \"ttft=MS,tpot=MS\"", "add slo")
    if not isinstance(slo, str):  # there, of another type (a number, a mapping): said as such, not as missing
        raise _fail(at("workloads", i, "slo"), f"slo must be text \"ttft=MS,tpot=MS\" ({slo!r})",
                    'write slo: "ttft=MS,tpot=MS", e.g. slo: "ttft=2000,tpot=50" (either may be left out)')
    try:
        Slo.parse(slo)
    except InputError as exc:
        raise _fail(at("workloads", i, "slo"), exc.rule, 'write slo: "ttft=MS,tpot=MS", e.g. slo: '
                                                         '"ttft=2000,tpot=50" (either may be left out)') from None
    dataset = w.get("dataset")
    if dataset is not None and not isinstance(dataset, str):
        raise _fail(at("workloads", i, "dataset"), f"dataset must be a name ({dataset!r})", "write dataset: sharegpt")
    # with a dataset, a length left out is the dataset's own mean (as predict and plan take --dataset alone)
    own = {k for k in ("isl", "osl") if dataset is not None and k not in w}
    isl = 1024 if "isl" in own else _positive_int(w.get("isl"), at("workloads", i, "isl"), "isl")
    osl = 256 if "osl" in own else _positive_int(w.get("osl"), at("workloads", i, "osl"), "osl")
    conc, num = w.get("concurrency"), w.get("num_requests")
    if conc is not None:
        conc = _positive_int(conc, at("workloads", i, "concurrency"), "concurrency")
    if num is not None:
        num = _positive_int(num, at("workloads", i, "num_requests"), "num_requests")
    fractions = {}
    for key in ("rate", "range_ratio", "prefix_hit"):
        value = w.get(key, None if key == "rate" else 0.0)
        if isinstance(value, str) and key == "rate" and value.strip().lower() in ("inf", ".inf", "infinity"):
            value = math.inf  # YAML's .inf is read as a float already; "inf" as text means the same
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _fail(at("workloads", i, key), f"{key} must be a number ({value!r})", f"write {_LOAD_KEYS[key]}")
        fractions[key] = None if value is None else float(value)
    if conc is None and fractions["rate"] is None:
        raise _fail(at("workloads", i), "a workload needs concurrency, rate or both",
                    "write concurrency: C (closed loop), rate: R (Poisson), both (Poisson with at most C in flight) "
                    "or rate: inf (every request at once)")
    api = w.get("endpoint", "completions")
    if not isinstance(api, str):
        raise _fail(at("workloads", i, "endpoint"), f"endpoint must be a name ({api!r})",
                    f"write {_LOAD_KEYS['endpoint']}")
    load = Workload(isl, osl, concurrency=conc, rate=fractions["rate"], num_requests=num,
                    range_ratio=fractions["range_ratio"] or 0.0, prefix_hit=fractions["prefix_hit"] or 0.0,
                    dataset=dataset, endpoint=api)
    try:  # what predict refuses of a workload (too many requests to simulate ...) is this entry's error
        load.validate()
    except InputError as exc:
        key = exc.field if exc.field in _LOAD_KEYS else "concurrency" if conc is not None else "rate"
        fix = f"write {_LOAD_KEYS[key]}"
        if exc.field in ("concurrency", "rate", "num_requests") and "simulates" in exc.rule:
            fix = (f"write num_requests: N with N at most {MAX_REQUESTS:,} (without it a sweep simulates 10 x "
                   "concurrency requests, 1,000 at rate inf, or 10 s of arrivals)")
            key = "num_requests" if num is not None else key
        raise _fail(at("workloads", i, key), exc.rule, fix) from None
    try:
        Slo.parse(slo).check(load)
    except InputError as exc:
        raise _fail(at("workloads", i, "slo"), exc.rule, 'drop tpot from slo (e.g. slo: "ttft=2000"), or raise '
                                                         "osl") from None
    if own and dataset is not None:
        from launchcard.predict import dataset_means

        mean_isl, mean_osl = dataset_means(dataset, load.requests())
        load = replace(load, isl=mean_isl if "isl" in own else isl, osl=mean_osl if "osl" in own else osl)
    return at("workloads", i), str(w.get("name") or f"workload{i + 1}"), load, slo


def run_task(task: SweepTask) -> dict[str, Any]:
    """One task's row (deterministic: no timings), whatever process or node runs it."""
    from launchcard.plansearch._options import derived_option
    from launchcard.plansearch._search import search
    from launchcard.plansearch._types import MAX_NUM_SEQS, SearchSpace, Slo

    load = task.load()
    # the workload as predict --json and plan --json give it (one shape under one key), named as the file names it
    row: dict[str, Any] = {"model": task.model, "engine": task.engine, "gpu": task.gpu, "gpus": task.gpus,
                           "workload": {"name": task.workload, **load.to_json()}, "slo": task.slo}
    try:
        # the option `plan` searches for the same checkpoint (the derived plan's flags), so a row is its answer
        option, _, _ = derived_option(task.model, task.config, task.gpu, task.engine,
                                      gpus_per_node=task.gpus_per_node)
        space = SearchSpace(model=task.model, gpu=task.gpu, gpus=task.gpus, gpus_per_node=task.gpus_per_node,
                            options=(option,), engine=task.engine,
                            max_num_seqs=task.max_num_seqs or MAX_NUM_SEQS)
        r = search(space, load, Slo.parse(task.slo))
    except LaunchcardError as exc:
        # the search's own location is a CLI option (--isl ...); in a sweep it is the workload entry's line, and
        # the fix is in the entry's keys
        where = f"{task.where} (workload {task.workload!r})" if task.where else None
        fix = exc.fix
        for flag, key in (("--isl/--osl", "isl/osl"), ("--concurrency", "concurrency"), ("--rate", "rate")):
            fix = fix.replace(flag, key) if fix and where else fix
        at = where or exc.where
        line = " ".join(f"{f'{at}: ' if at else ''}{exc.rule}{f'; {fix}' if fix else ''}".split())
        return {**row, "status": "error", "error": line, "winner": None}
    best = r.winner
    # no plan predicted at all (none fits, none passes the engine's checks): not an SLO miss, and said so
    status = "ok" if best else ("no plan meets the SLO" if r.closest else "no plan can run")
    return {**row, "status": status, "candidates": len(r.outcomes),
            "meeting_slo": r.meeting, "meeting_slo_runs": len(r.ranked),  # as plan --json counts them
            "winner": ({**best.to_json(), "command": list(cmd) if (cmd := r.commands.get(best.candidate)) else None}
                       if best else None),
            "closest": r.closest[0].to_json() if (r.closest and not best) else None,
            "pareto": [o.to_json() for o in r.pareto], "rejected_by_reason": r.rejected_by_reason(),
            # the search's own findings: what the figures assume (outside the calibrated domain, acceptance, ...)
            "findings": list(r.findings)}


Progress = Callable[[int, int], None]


def run_sweep(tasks: Sequence[SweepTask], *, workers: int | None = None, ray: str | None = None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Every task's row, in task order: on a local process pool (``workers`` processes, default the CPUs) or,
    with ``ray`` (``auto``: the running cluster, else a local one; or a cluster address), on Ray."""
    if ray is not None and ray != "auto" and workers is not None:
        # a running cluster's CPUs are its own: ray.init refuses num_cpus when it connects to one (ray-project/ray
        # python/ray/_private/worker.py, init: "When connecting to an existing cluster, num_cpus and num_gpus must
        # not be provided"), so --workers would size nothing there
        raise InputError(f"--workers sizes the local process pool or the local cluster --ray auto starts, not the "
                         f"running cluster of --ray {ray} (its CPUs are its own)", where="--workers",
                         fix="leave --workers out (every CPU of the cluster runs searches), or use --ray auto")
    if ray is not None:
        return _on_ray(tasks, ray, workers, progress)
    import multiprocessing
    import os

    n = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
    rows: list[dict[str, Any] | None] = [None] * len(tasks)
    # spawn: a fresh interpreter per worker (the web app calls this from threads; fork would copy their locks).
    # A Pool, not a ProcessPoolExecutor: leaving the block (Ctrl-C, an error) terminates the workers at once,
    # where an executor would first finish every search still queued
    with multiprocessing.get_context("spawn").Pool(n, initializer=_ignore_interrupt) as pool:
        for done, (i, row) in enumerate(pool.imap_unordered(_indexed, list(enumerate(tasks))), 1):
            rows[i] = row
            if progress:
                progress(done, len(tasks))
    return [r for r in rows if r is not None]


def _indexed(job: tuple[int, SweepTask]) -> tuple[int, dict[str, Any]]:
    return job[0], run_task(job[1])


def _ignore_interrupt() -> None:
    """A worker leaves Ctrl-C (sent to the whole process group by a terminal) to the parent, which ends it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _on_ray(tasks: Sequence[SweepTask], address: str, workers: int | None,
            progress: Progress | None) -> list[dict[str, Any]]:
    import importlib
    import logging

    try:
        ray: Any = importlib.import_module("ray")  # optional extra launchcard[ray]; untyped for mypy
    except ImportError:
        raise InputError("Ray is not installed", where="--ray",
                         fix="pip install 'launchcard[ray]', or leave --ray out (local process pool)") from None
    started = not ray.is_initialized()
    if started:
        opts: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
        try:
            if address == "auto":
                try:
                    ray.init(address="auto", **opts)
                except ConnectionError:  # no running cluster: a local one with ``workers`` CPUs
                    ray.init(num_cpus=workers, **opts)
            else:
                ray.init(address=address, **opts)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise InputError(f"cannot reach the Ray cluster {address!r} ({str(exc).splitlines()[0]})",
                             where="--ray", fix="pass auto, or the address `ray start --head` printed") from None
    try:
        remote = ray.remote(num_cpus=1)(run_task)
        refs = [remote.remote(t) for t in tasks]
        rows: list[dict[str, Any]] = []
        for i, ref in enumerate(refs, 1):
            rows.append(ray.get(ref))
            if progress:
                progress(i, len(tasks))
        return rows
    finally:
        if started:
            ray.shutdown()
