"""A launch predicted as ``launchcard predict`` and the web's prediction panel predict it: the one chain from a
plan (or a server command, or options alone) to its figures.

The chain: the options given on top written into the launch in its engine's own flags; a resolved or derived
plan's verdict (``check.check_plan`` of that launch: a plan that will not start or does not fit gets no figure);
the workload's context checked against the served length in its engine's terms; the plan facts; vLLM's own
start-up refusals (as ``launchcard check`` and the plan search judge them); then :func:`predict`. The CLI and
the web call it, so both give one verdict, one refusal and one set of figures for one plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError, PredictError, SplitError

if TYPE_CHECKING:
    from launchcard.check import Verdict
    from launchcard.memory import Settings
    from launchcard.predict._facts import ServingFacts
    from launchcard.predict._figures import HardwareFigures
    from launchcard.predict._trtllm import TrtllmLaunch
    from launchcard.predict._types import Prediction, Workload
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo


@dataclass(frozen=True, slots=True)
class PlanPrediction:
    """A plan's prediction: the facts timed, the figures, the launch they time (its engine's words, the options
    given on top included) and the plan's verdict (None: a command or options, no resolved plan)."""

    facts: ServingFacts
    prediction: Prediction
    command: tuple[str, ...]
    verdict: Verdict | None = None

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object, as `launchcard predict --json` writes it
        return {"model": self.facts.model, "engine": self.facts.engine, "hardware": self.facts.hardware.id,
                "command": list(self.command), **self.prediction.to_json(),
                **({"verdict": self.verdict.to_json()} if self.verdict is not None else {})}


# the options an SGLang command takes them as (SGLang's server-argument names)
SGLANG_FLAGS = {"tp": "--tp-size", "pp": "--pp-size", "dp": "--dp-size", "kv_cache_dtype": "--kv-cache-dtype",
                "quantization": "--quantization", "max_num_seqs": "--max-running-requests",
                "max_num_batched_tokens": "--chunked-prefill-size", "max_model_len": "--context-length",
                "gpu_memory_utilization": "--mem-fraction-static"}
# expert parallelism, which SGLang sizes by a number (the TP group's, its parser's own advice), not a switch
SGLANG_EP_FLAG = "--ep-size"
# the options predict reads from a trtllm-serve --extra_llm_api_options file (predict._trtllm_options) that have
# no command-line option there
_TRTLLM_FILE_KEYS = {"kv_cache_dtype": "kv_cache_config: {dtype: ...}", "enforce_eager": "cuda_graph_config: null"}


def _without(words: Sequence[str], engine: str, flags: Sequence[str]) -> list[str]:
    """``words`` without the occurrences (any spelling, with their values) of the options ``flags`` set, as the
    engine's parser reads them: an option given on top replaces the command's own value instead of repeating
    the flag (the parser would keep the last one, but `launchcard check` warns of a flag given twice with two
    values, and the command named would read as two values)."""
    from launchcard.argv import parse_command

    cmd = parse_command(words, engine=engine)
    dests = {cmd.dest_of(f) for f in flags}
    skip: set[int] = set()
    for o in cmd.occurrences:
        if o.dest in dests and not o.parts:
            vals = 0 if "=" in words[o.index] or isinstance(o.value, bool) or o.value is None else (
                len(o.value) if isinstance(o.value, tuple) else 1)
            skip.update(range(o.index, o.index + 1 + vals))
    return [w for i, w in enumerate(words) if i not in skip]


def sglang_words(argv: Sequence[str], over: Mapping[str, Any]) -> list[str]:
    """The SGLang command predicted: ``argv`` with the options given on top, by SGLang's names, each replacing the
    command's own value."""
    from launchcard.argv import parse_command

    words = list(argv)
    for key, value in over.items():
        if key == "expert_parallel":
            tp = over.get("tp") or parse_command(words, engine="sglang").get_int("--tp-size", default=1) or 1
            words = [*_without(words, "sglang", [SGLANG_EP_FLAG]), SGLANG_EP_FLAG, str(tp)]
        elif key == "enforce_eager":
            words += [] if "--disable-cuda-graph" in words else ["--disable-cuda-graph"]
        elif key in SGLANG_FLAGS:
            words = [*_without(words, "sglang", [SGLANG_FLAGS[key]]), SGLANG_FLAGS[key], str(value)]
        else:
            raise InputError(f"--{key.replace('_', '-')} has no SGLang counterpart", where=f"--{key.replace('_', '-')}",
                             fix="leave it out of an SGLang plan")
    return words


def vllm_words(argv: Sequence[str], over: Mapping[str, Any], speculative_config: str | None = None) -> list[str]:
    """The ``vllm serve`` command predicted: the command's (or plan's) words with the options given on top, by the
    flags the memory settings are read from, each replacing the command's own value (what the user says ran
    wins)."""
    from launchcard.memory import vllm_flag

    out = list(argv)
    for key, value in over.items():
        flag = vllm_flag(key)
        if flag is not None and isinstance(value, bool):
            out += [] if flag in out else [flag]
        elif flag is not None:
            out = [*_without(out, "vllm", [flag]), flag, str(value)]
    if speculative_config:
        out = [*_without(out, "vllm", ["--speculative-config"]), "--speculative-config", speculative_config]
    return out


def trtllm_unstated(over: Mapping[str, Any]) -> None:
    """InputError for the first option given on top of a TensorRT-LLM plan (with a trtllm-serve --command or
    without) that trtllm-serve has no option for (serve.py at 00209af1 L388-591: no KV dtype, quantization or eager
    option): it would change the figures of a launch the command cannot state."""
    from launchcard.predict._trtllm import SETTING_OPTIONS

    for key, value in over.items():
        if key in SETTING_OPTIONS or key == "expert_parallel":
            continue
        # the option as typed: a switch given off is its --no- form (--no-deep-gemm was named --deep-gemm)
        flag = f"--{'no-' if value is False else ''}{key.replace('_', '-')}"
        where_set = _TRTLLM_FILE_KEYS.get(key)
        raise InputError(f"{flag} has no trtllm-serve option", where=flag,
                         fix=f"set `{where_set}` in the --extra_llm_api_options file the command names"
                         if where_set else "leave it out of a trtllm-serve plan")


def trtllm_words(argv: Sequence[str], over: Mapping[str, Any], tp: int, fraction: float | None = None,
                 chunked: bool = False) -> list[str]:
    """The ``trtllm-serve`` command predicted: the command's words with the options given on top (``tp``: the
    plan's, which an expert-parallel group spans; ``fraction``, ``chunked``: trtllm-serve's own options given on
    top)."""
    from launchcard.predict._trtllm import SETTING_OPTIONS, option_names

    # the command's own value of an option given on top is dropped under every name trtllm-serve takes for it
    # (--tp_size / --tensor_parallel_size, ...): the parser has no captured trtllm-serve spec to tie them together
    trtllm_unstated(over)
    out = list(argv)
    for key, value in over.items():
        if key in SETTING_OPTIONS:  # click keeps the last value given: the command's own is replaced
            out = [*_without(out, "trtllm", option_names(key)), SETTING_OPTIONS[key], str(value)]
        elif key == "expert_parallel":
            out = [*_without(out, "trtllm", option_names("ep")), "--ep_size", str(tp)]
    if fraction is not None:
        out = [*_without(out, "trtllm", option_names("kv_fraction")), "--kv_cache_free_gpu_memory_fraction",
               f"{fraction:g}"]
    return out + (["--enable_chunked_prefill"] if chunked and "--enable_chunked_prefill" not in out else [])


def with_options(plan: ResolvedPlan, over: Mapping[str, Any], speculative_config: str | None = None) -> ResolvedPlan:
    """``plan`` with the options given on top in each of its server commands, in its engine's flags (a plan timed
    as TensorRT-LLM: its vLLM form, which its options are read from)."""
    if not over and not speculative_config:
        return plan
    sglang = plan.engine == "sglang"
    return replace(plan, commands=tuple(
        replace(c, argv=tuple(sglang_words(c.argv, over) if sglang else vllm_words(c.argv, over, speculative_config)))
        for c in plan.commands))


def plan_verdict(plan: ResolvedPlan, config: Path, recipes: RecipeRepo | None = None,
                 version: str | None = None) -> Verdict:
    """The plan's verdict as ``resolve`` gives it (check_plan: will it start, fit, is it sized right); a plan that
    will not start or does not fit gets no figure (PredictError, exit 1). ``recipes``: the checkout a resolved
    plan came from (a derived plan has none).

    An SGLang plan's memory is not judged here: the memory planner's accounting is vLLM's (its share, its
    start-up KV check), and SGLang starts and sizes its pool by its own rules, which the prediction's facts
    apply (``sglang_command_facts``: its pool, or its own reason it cannot serve), as the plan search judges
    SGLang plans; the verdict says so in one finding instead of vLLM's memory lines."""
    from launchcard.check import Finding, Verdict, check_plan

    sglang = plan.engine == "sglang"
    verdict = check_plan(plan, config=config, engine_version=version, recipes=None if plan.derived else recipes,
                         memory=not sglang)
    if sglang:
        verdict = Verdict(tuple(
            Finding(severity="info", code="memory-sglang", role=f.role,
                    message="memory judged by SGLang's own rules, not vLLM's accounting: the prediction's "
                            "sglang-limits finding gives SGLang's static share and KV pool (a plan whose pool holds "
                            "no request gets no figure)", evidence=f.evidence, fix="")
            if f.code == "memory-not-planned" else f for f in verdict.findings))
    if not verdict.ok:
        first = verdict.errors[0]
        raise PredictError(f"{verdict.label}: {replace(first, fix='').one_line()}", where=str(plan.model_id),
                           fix=first.fix or "see `launchcard resolve` for the plan's verdict")
    return verdict


def predict_launch(config: Path, work: Workload, base: Settings, *, engine: str = "vllm",
                   over: Mapping[str, Any] | None = None, server: Sequence[str] | None = None,
                   served: Sequence[str] | None = None, trtllm: TrtllmLaunch | None = None, gpu: str | None = None,
                   hardware: HardwareFigures | None = None, model: str | None = None, version: str | None = None,
                   speculative_config: str | None = None, where: str | None = None) -> tuple[ServingFacts, Prediction]:
    """The facts and figures of one launch: an SGLang command (``server``, SGLang's defaults filled in), or
    ``base`` settings (read from the vLLM command ``served``, a trtllm-serve command or options alone) timed on
    ``engine``; ``over``: the options given on top (what the user says ran wins). Bad input is InputError (exit
    2); a launch that will not start, does not fit or cannot serve one request is PredictError (exit 1)."""
    from launchcard.predict._engine_rules import release_refusal
    from launchcard.predict._predict import (
        check_command_context,
        check_context,
        check_generates,
        predict,
        serving_facts,
    )

    over = dict(over or {})
    need = sum(work.longest())
    # a release older than the oldest predict times (vLLM before V1, SGLang / TensorRT-LLM before the oldest whose
    # rules are read): bad input, first
    too_old = release_refusal("sglang" if server is not None else engine,
                              version or (base.vllm_version if engine == "vllm" and server is None else None))
    if too_old:
        raise InputError(too_old[0], where="--engine-version", fix=too_old[1])
    if server is not None:
        if speculative_config or "cpu_kvcache_space_gib" in over:
            raise InputError("an SGLang plan takes SGLang's flags", where="--speculative-config" if speculative_config
                             else "--cpu-kvcache-space-gib",
                             fix="give them in --command (e.g. --speculative-algorithm EAGLE "
                                 "--speculative-num-steps 3)")
        if gpu is None:
            raise InputError("an SGLang plan needs the GPU it runs on", where="--gpu",
                             fix="pass --gpu NAME (e.g. h200)")
        from launchcard.predict._sglang import sglang_command_plan, sglang_serving_facts

        words = sglang_words(server, over)
        try:  # bad input first (exit 2), then what SGLang refuses to start (exit 1)
            plan = sglang_command_plan(words, config, gpu, version)
        except SplitError:  # DP-attention ranks that do not divide the TP group: said as `launchcard check` says it
            _refuse(config, words, gpu, version, where)
            raise
        except InputError as exc:  # a value given on top is named by the option typed (SGLang's flag in the rule)
            typed = next((f"--{k.replace('_', '-')}" for k in over if SGLANG_FLAGS.get(k) == exc.where), None)
            if typed is not None:
                raise InputError(exc.rule, where=typed, fix=exc.fix, field=exc.field) from None
            flag = exc.where or ""
            if where == "--command" and flag.startswith("--") and any(
                    w == flag or w.startswith(f"{flag}=") for w in words):  # a value the command typed
                raise in_command(exc, flag) from None
            raise
        check_command_context(words, config, need, version, name=model, mean=work.isl + work.osl)
        _refuse(config, words, gpu, version, where)  # SGLang's heads split, as `launchcard check` words it
        facts = _warned(sglang_serving_facts(config, plan, gpu=gpu, hardware=hardware, model=model), config, words,
                        gpu, version)
    else:
        from launchcard.memory import settings_from_argv

        s = replace(base, **over)
        if speculative_config:
            s = settings_from_argv(["--speculative-config", speculative_config], s)
        s = s.validate()  # bad input (exit 2) before what the engine refuses (exit 1)
        words = (vllm_words(served or ["vllm", "serve", str(config)], over, speculative_config)
                 if engine == "vllm" else [])  # the command predicted, in vLLM's flags: built once for both checks
        if engine == "vllm":
            _mtp_without_layers(config, words)
        check_generates(config, engine)
        # a TensorRT-LLM release is no vLLM release: vLLM's length rule by that number would be a guess
        check_context(config, s.max_model_len, need, version if engine == "vllm" else None,
                      name=model or str(config), engine=engine, mean=work.isl + work.osl)
        if engine == "vllm":  # what `launchcard check` and the plan search refuse is not predicted (exit 1), the
            # heads split before the memory planner's own check of it
            _refuse(config, words, gpu, version, where)
        elif engine == "trtllm":  # its heads split in the words vLLM's and SGLang's are said in (it was the memory
            # planner's line, naming predict's --tp for a trtllm-serve --tp_size)
            from launchcard.check import load_config, refuse_heads

            refuse_heads(load_config(config), s.tp, "trtllm", where=where)
        if engine == "trtllm" and version:  # the release the domain findings compare and the release rules read
            # (TrtllmLaunch.release; the memory plan is vLLM's accounting of the newest release, never of a
            # TensorRT-LLM number: bench/predict_heldout.py facts_for)
            from launchcard.predict._trtllm import TrtllmLaunch

            trtllm = replace(trtllm or TrtllmLaunch(), release=version)
        facts = serving_facts(config, s, gpu=gpu, hardware=hardware, engine=engine, model=model,
                              trtllm=trtllm)
        if engine == "vllm":  # what the command sets that no step reads is said, not dropped
            from launchcard.predict._engine_rules import untimed_vllm_flags
            from launchcard.predict._facts import facts_with

            untimed = untimed_vllm_flags(words)
            if untimed:
                facts = facts_with(facts, findings=(*facts.findings, *untimed))
            facts = _warned(facts, config, words, gpu, version)
    if work.acceptance is not None and not facts.spec_tokens:
        raise InputError(f"an acceptance rate ({work.acceptance:g}) applies to speculative decoding, which this plan "
                         "does not use", field="acceptance",
                         fix="drop --acceptance, or pass --speculative-config (or the server command's own)")
    if work.prefix_hit and facts.prefix_off:  # as --acceptance above: a share the plan's engine cannot use
        from launchcard.predict._prefix import prefix_off_error

        raise prefix_off_error(facts.prefix_off, work.prefix_hit)
    return facts, predict(facts, work)


def in_command(exc: InputError, flag: str) -> InputError:
    """A bad value of ``flag`` inside a ``--command``, said as every ``--command`` error is (the engines' parser
    refusals, trtllm-serve's options, the start-up refusals): at ``--command``, the flag as the command has it in
    the rule (``--mem-fraction-static 1.5`` was named at ``--mem-fraction-static``, ``--tensor-parallel-size 0`` at
    ``--tensor-parallel-size``: options predict does not take), in ``launchcard check``'s words of the flag
    (``--tp-size: must be >= 1 ...``); a rule that opens with the field's own name (``tp must be >= 1``) opens with
    the flag instead."""
    rule = exc.rule
    if not rule.startswith(f"{flag} "):
        head, _, rest = rule.partition(" ")
        said = (exc.where or "").removeprefix("argv ").lstrip("-")
        if rest and head in {said, said.replace("-", "_"), flag.lstrip("-")}:
            rule = f"{flag} {rest}"
        else:
            rule = f"{flag}: {rule}"  # as `launchcard check` says it of the flag
    return InputError(rule, where="--command", fix=exc.fix, field=exc.field)


def _mtp_without_layers(config: Path, words: Sequence[str]) -> None:
    """InputError when the vLLM launch ``words`` drafts with MTP without a draft "model" and the checkpoint has no
    MTP layers (:func:`launchcard.memory.spec_mtp_refusal`, the rule ``check`` and ``memory`` judge it by); it was
    timed as one MTP layer at an assumed acceptance."""
    from launchcard.argv import parse_command
    from launchcard.errors import LaunchcardError
    from launchcard.memory import load_arch, spec_mtp_refusal

    try:
        spec = parse_command(list(words)).get_json("--speculative-config")
    except LaunchcardError:  # unreadable: the settings already said so
        return
    if not isinstance(spec, dict) or not str(spec.get("method") or "").endswith("mtp"):
        return
    refused = spec_mtp_refusal(spec, load_arch(config).mtp_layers, str(config))
    if refused:
        raise InputError(refused[0], where="--speculative-config", fix=refused[1])


def _refuse(config: Path, argv: Sequence[str], gpu: str | None, version: str | None, where: str | None) -> None:
    """PredictError (exit 1, a plan that fails its check) when the engine refuses to start ``argv``
    (:func:`launchcard.check.refuse_unstartable`: vLLM's start-up rules, SGLang's heads split)."""
    from launchcard.check import load_config, refuse_unstartable
    from launchcard.hardware import find

    refuse_unstartable(load_config(config), argv, find(gpu) if gpu else None, version, where=where)


def _warned(facts: ServingFacts, config: Path, argv: Sequence[str], gpu: str | None,
            version: str | None) -> ServingFacts:
    """``facts`` with what `launchcard check` warns of in ``argv`` that the engine does without refusing it (a
    --quantization it swaps for the checkpoint's method: :func:`launchcard.check.startup_warnings`) as findings."""
    from launchcard.check import load_config, startup_warnings
    from launchcard.hardware import find
    from launchcard.predict._facts import facts_with
    from launchcard.predict._types import Finding

    said = startup_warnings(load_config(config), argv, find(gpu) if gpu else None, version)
    if not said:
        return facts
    return facts_with(facts, findings=(*facts.findings, *(Finding("warning", f.code, f"{f.message}; {f.fix}")
                                                           for f in said)))


def predict_plan(plan: ResolvedPlan, config: Path, work: Workload, base: Settings, *, engine: str | None = None,
                 over: Mapping[str, Any] | None = None, trtllm: TrtllmLaunch | None = None, gpu: str | None = None,
                 hardware: HardwareFigures | None = None, version: str | None = None,
                 recipes: RecipeRepo | None = None, speculative_config: str | None = None) -> PlanPrediction:
    """A resolved or derived plan predicted: its one served process (:func:`served_command`) with the options
    given on top, its verdict, then :func:`predict_launch`. ``engine`` trtllm: the plan's vLLM form launched by
    trtllm-serve (``trtllm``: that launch); an SGLang plan is timed as SGLang, a vLLM plan as vLLM by default."""
    from launchcard.memory import settings_from_argv
    from launchcard.predict._predict import served_command

    over = dict(over or {})
    cmd = served_command(plan)  # the one server the figures time (a prefill/decode plan has none)
    run_on = engine or "vllm"
    # a vLLM-form plan launched by trtllm-serve has no verdict: check_plan judges its `vllm serve` commands (vLLM's
    # start-up rules, memory accounting, image and parser registry), not the trtllm-serve launch the figures time
    verdict = (None if plan.engine != "sglang" and run_on == "trtllm"
               else plan_verdict(with_options(plan, over, speculative_config), config, recipes, version))
    gpu = gpu or plan.hardware
    if plan.engine == "sglang":
        words = sglang_words(cmd.argv, over)
        facts, p = predict_launch(config, work, base, engine="sglang", over=over, server=list(cmd.argv), gpu=gpu,
                                  hardware=hardware, model=plan.model_id, version=version,
                                  speculative_config=speculative_config)
        return PlanPrediction(facts, p, tuple(words), verdict)
    base = settings_from_argv(list(cmd.argv), base)
    if run_on == "trtllm":
        from launchcard.predict._trtllm import TrtllmLaunch, serve_words

        trtllm = trtllm or TrtllmLaunch()
        words = serve_words(plan.model_id, replace(base, **over), trtllm)
    else:
        words = vllm_words(cmd.argv, over, speculative_config)
    facts, p = predict_launch(config, work, base, engine=run_on, over=over, served=list(cmd.argv),
                              trtllm=trtllm if run_on == "trtllm" else None, gpu=gpu, hardware=hardware,
                              model=plan.model_id, version=version, speculative_config=speculative_config)
    return PlanPrediction(facts, p, tuple(words), verdict)
