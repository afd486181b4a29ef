"""``launchcard predict``: how fast a plan serves a workload (TTFT, TPOT, throughput) and what bounds it."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    AcceptanceOpt,
    ConcurrencyOpt,
    DatasetOpt,
    EndpointOpt,
    FeatureOpt,
    HardwareFiguresOpt,
    HardwareOpt,
    IslOpt,
    JsonOpt,
    KvOpt,
    ModeOpt,
    Mxfp4BackendOpt,
    NodesOpt,
    NoFeatureOpt,
    NoGpuP2pOpt,
    NumRequestsOpt,
    OslOpt,
    PlanOptions,
    PrefixHitOpt,
    RangeRatioOpt,
    RateOpt,
    RecipesOpt,
    RevisionOpt,
    StrategyOpt,
    VariantOpt,
    cpu_kv_option,
    has_recipe,
    no_cpu_product,
    number,
    open_recipes,
    plan_and_config,
    workload_json,
    workload_lengths,
)
from launchcard.cli._options import hardware_figures as read_figures
from launchcard.errors import InputError, LaunchcardError

if TYPE_CHECKING:
    from launchcard.memory import Settings
    from launchcard.predict import Finding, TrtllmLaunch


@app.command()
def predict(
    model: Annotated[str | None, typer.Argument(help="Recipe id (with --recipes): predict its resolved command.")]
    = None,
    recipes: RecipesOpt = None,
    revision: RevisionOpt = None,
    variant: VariantOpt = None,
    hardware: HardwareOpt = None,
    strategy: StrategyOpt = None,
    nodes: NodesOpt = None,
    feature: FeatureOpt = None,
    no_feature: NoFeatureOpt = None,
    mode: ModeOpt = None,
    kv_offload: KvOpt = None,
    config: Annotated[str | None, typer.Option("--config", help="The model's config.json, its folder or a cached Hub "
                                                                "id (recipe mode: default <corpus>/hf/ORG/NAME/"
                                                                "config.json; a model with no recipe: the plan is "
                                                                "derived from it).")] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="Accelerator from the hardware catalog.")] = None,
    gpus_per_node: Annotated[int | None, typer.Option("--gpus-per-node", min=1)] = None,
    tp: Annotated[int | None, typer.Option("--tp", "--tensor-parallel-size", min=1)] = None,
    pp: Annotated[int | None, typer.Option("--pp", "--pipeline-parallel-size", min=1)] = None,
    dp: Annotated[int | None, typer.Option("--dp", "--data-parallel-size", min=1)] = None,
    ep: Annotated[bool, typer.Option("--ep", "--enable-expert-parallel")] = False,
    quantization: Annotated[str | None, typer.Option("--quantization")] = None,
    kv_cache_dtype: Annotated[str | None, typer.Option("--kv-cache-dtype")] = None,
    max_num_seqs: Annotated[int | None, typer.Option("--max-num-seqs", min=1)] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option("--max-num-batched-tokens", min=1)] = None,
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", min=1)] = None,
    gpu_memory_utilization: Annotated[float | None, typer.Option(
        "--gpu-memory-utilization", click_type=number("--gpu-memory-utilization", "0.9"))] = None,
    enforce_eager: Annotated[bool, typer.Option("--enforce-eager")] = False,
    speculative_config: Annotated[str | None, typer.Option("--speculative-config", help="JSON, as for vllm serve.")]
    = None,
    engine: Annotated[str, typer.Option("--engine", help="vllm, sglang or trtllm (scheduling policy, "
                                                         "overhead terms).")] = "vllm",
    kv_free_fraction: Annotated[float | None, typer.Option(
        "--kv-cache-free-gpu-memory-fraction",
        click_type=number("--kv-cache-free-gpu-memory-fraction", "0.9"),
        help="TensorRT-LLM: the share of the memory left free after weights and activations its KV cache takes "
             "(trtllm-serve's default 0.9).")] = None,
    enable_chunked_prefill: Annotated[bool, typer.Option(
        "--enable-chunked-prefill", help="TensorRT-LLM: prefill prompts in chunks (trtllm-serve's "
                                         "--enable_chunked_prefill; off by default).")] = False,
    command: Annotated[str | None, typer.Option("--command", help="A server command to predict as written: "
                                                                  "`vllm serve ...`, `python -m "
                                                                  "sglang.launch_server ...` (SGLang's own defaults "
                                                                  "filled in) or `trtllm-serve ...`; needs --config "
                                                                  "and --gpu.")] = None,
    engine_version: Annotated[str | None, typer.Option("--engine-version", help="The timed engine's release: vLLM's "
                                                                                 "for its memory accounting and "
                                                                                 "defaults; SGLang's for its parser "
                                                                                 "and defaults; TensorRT-LLM's for "
                                                                                 "the calibration-domain findings "
                                                                                 "only (never read as vLLM's).")
                                  ] = None,
    flashinfer_sampler: Annotated[bool | None, typer.Option(
        "--flashinfer-sampler/--no-flashinfer-sampler",
        help="Whether vLLM samples with FlashInfer's kernel (memory: see `launchcard memory --help`).")] = None,
    mxfp4_backend: Mxfp4BackendOpt = None,
    deep_gemm: Annotated[bool | None, typer.Option(
        "--deep-gemm/--no-deep-gemm",
        help="Whether vLLM can run DeepGEMM (the deep_gemm package installed; the vllm wheel does not require "
             "it): without it block-scaled FP8 GEMMs run CUTLASS's blockwise kernel (as with VLLM_USE_DEEP_GEMM=0)."
    )] = None,
    hardware_figures: HardwareFiguresOpt = None,
    cpu_kvcache_space_gib: Annotated[float | None, typer.Option(
        "--cpu-kvcache-space-gib", click_type=number("--cpu-kvcache-space-gib", "40"),
        help="VLLM_CPU_KVCACHE_SPACE (CPU backend).")] = None,
    no_gpu_p2p: NoGpuP2pOpt = False,
    isl: IslOpt = None,
    osl: OslOpt = None,
    dataset: DatasetOpt = None,
    concurrency: ConcurrencyOpt = None,
    rate: RateOpt = None,
    num_requests: NumRequestsOpt = None,
    prefix_hit: PrefixHitOpt = 0.0,
    acceptance: AcceptanceOpt = None,
    range_ratio: RangeRatioOpt = 0.0,
    endpoint: EndpointOpt = "completions",
    as_json: JsonOpt = False,
) -> None:
    """Predict TTFT, TPOT and throughput of a plan under a workload, with what bounds each phase."""
    from launchcard.memory import Settings
    from launchcard.predict import Workload, prediction_to_text

    no_cpu_product(gpu)
    work = Workload(*workload_lengths(isl, osl, None, 0), concurrency=concurrency, rate=rate,
                    num_requests=num_requests, prefix_hit=prefix_hit, acceptance=acceptance, range_ratio=range_ratio,
                    dataset=dataset, endpoint=endpoint)
    if concurrency is None and rate is None:
        work = replace(work, concurrency=1)
    isl, osl = workload_lengths(isl, osl, dataset, work.validate().requests())
    work = replace(work, isl=isl, osl=osl).validate()
    base = Settings(vllm_version=engine_version, flashinfer_sampler=flashinfer_sampler,
                    mxfp4_backend=mxfp4_backend, deep_gemm=deep_gemm).validate()
    title = ""
    verdict: Any = None  # a resolved or derived plan's verdict (check_plan), as resolve, emit and the web give it
    launched: list[str] | None = None  # the launch predicted, as the engine is started (None: options alone)
    trt_launch = None
    config_path: Path | None = None
    server: list[str] | None = None  # an SGLang command: read with SGLang's rules, not as vLLM flags
    served: list[str] | None = None  # a vLLM command given or resolved (None: the plan of the options alone)
    if command is not None:
        from launchcard.argv import parse_command

        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise InputError(f"the command does not parse as shell words ({exc})", where="--command",
                             fix="quote the command as one shell argument") from None
        if model is not None or config is None:
            raise InputError("--command needs --config (the model's config.json) and no MODEL argument",
                             where="--command", fix="pass --config FILE --gpu GPU --command '...'")
        found = "trtllm" if any(w.endswith("trtllm-serve") for w in words) else parse_command(words).engine
        if engine != "vllm" and found in ("vllm", "sglang", "trtllm") and engine != found:
            # the launcher names the engine: a vllm serve command timed with SGLang's or TensorRT-LLM's terms (or
            # the reverse) is no launch at all
            raise InputError(f"--engine {engine} with a {found} command: the command's launcher names its engine",
                             where="--engine", fix=f"drop --engine (or pass --engine {found})")
        if found == "trtllm":
            from launchcard.predict import read_serve_command

            # an --extra_llm_api_options file is read where the command would find it (relative to here)
            trt_over, trt_launch = read_serve_command(words, base_dir=Path.cwd())
            base, engine = replace(base, **trt_over), "trtllm"
        elif found == "sglang":
            _refused_flags(words, engine_version, "sglang")
            server, engine = words, "sglang"
        elif found == "vllm":
            _refused_flags(words, engine_version)
            base, served = _command_settings(words, base), words
        else:
            raise InputError(f"not a vLLM, SGLang or trtllm-serve command ({' '.join(words[:3])} ...)",
                             where="--command", fix="pass `vllm serve MODEL ...`, `python -m sglang.launch_server "
                                                    "...` or `trtllm-serve MODEL ...`")
        title, launched = command, words
    elif engine == "sglang" and model is None:
        server = ["python3", "-m", "sglang.launch_server"]  # SGLang's defaults, the options below on top
    if engine != "vllm":
        # --engine-version is the timed engine's own release: an SGLang or TensorRT-LLM release read as vLLM's picked
        # vLLM's memory accounting by that number (trtllm 0.10.2: vLLM 0.10's activations) and was said as vLLM's
        from launchcard.flagspec import release_numbers

        if engine_version is not None and release_numbers(engine_version) is None:
            who = "SGLang" if engine == "sglang" else "TensorRT-LLM"
            raise InputError(f"unreadable {who} version ({engine_version!r})", where="--engine-version",
                             fix="use a release such as " + ("0.5.6.post2" if engine == "sglang" else "1.0.0rc3"))
        base = replace(base, vllm_version=None)
    if engine == "trtllm" and (gpu or hardware):  # bad input (exit 2) said of the option that named the GPU
        from launchcard.hardware import find
        from launchcard.predict import platform_refusal

        named_by = "--gpu" if gpu is not None else "--hardware"
        platform_refusal(find(gpu or hardware or "", where=named_by), where=named_by)
    plan: Any = None  # a resolved or derived plan (MODEL): predicted with its verdict, as the web's panel
    recipe_default = False  # the GPU timed is the plan's own hardware: neither --gpu nor --hardware typed
    if model is None:  # what selects a recipe's plan has no plan to select from: it was dropped silently
        selector = next((flag for flag, v in (("--variant", variant), ("--strategy", strategy), ("--nodes", nodes),
                                           ("--feature", feature), ("--no-feature", no_feature), ("--mode", mode),
                                           ("--kv-offload", kv_offload), ("--revision", revision)) if v), None)
        if selector is not None:
            raise InputError(f"{selector} selects from a recipe's plans, and no MODEL is given", where=selector,
                             fix=f"pass MODEL (with --recipes) to resolve a recipe, or drop {selector}")
    if model is not None:
        from launchcard.check import corpus_config

        if recipes is None and config is None:
            raise InputError("a recipe id needs the recipes", where="--recipes",
                             fix="pass --recipes DIR, or --config (a plan derived without a recipe), or leave MODEL "
                                 "out and give --config and --gpu")
        recipe = has_recipe(recipes, revision, model)
        _one_accelerator(gpu, hardware)
        # the plan is resolved (a recipe's) or derived (no recipe) for the GPU predicted on, as `plan MODEL --gpu`
        # resolves it: a recipe left at its default hardware (gpt-oss-120b: TP 1 on an H200) and timed on another
        # GPU gave a verdict of one GPU beside the figures of another
        options = PlanOptions.from_cli(model, recipes, revision=revision, variant=variant,
                                       hardware=hardware or gpu, strategy=strategy, nodes=nodes,
                                       feature=feature, no_feature=no_feature, mode=mode, kv_offload=kv_offload)
        # no recipe: the plan launchcard derives (sized for --max-model-len); its vLLM command is what is predicted
        # --engine sglang: the SGLang plan launchcard derives (its flags, its defaults), not a vLLM plan timed
        # with SGLang's terms; trtllm keeps the vLLM-form plan its options are read from
        try:
            plan, config_path = plan_and_config(options, config, max_model_len=None if recipe else max_model_len,
                                                gpus_per_node=None if recipe else gpus_per_node,
                                                engine="sglang" if engine == "sglang" else "vllm")
        except LaunchcardError as exc:
            if hardware is None and gpu is not None and exc.where == "--hardware":
                exc.where = "--gpu"  # the hardware the user named is --gpu's: name the option typed
                exc.args = (exc.one_line(),)
            raise
        recipe_default = gpu is None and hardware is None
        gpu = gpu or plan.hardware
        from launchcard.predict import served_command

        served_command(plan)  # a plan with no one server to time (omni, prefill/decode) is refused before a config
        # is asked for: `predict Qwen/Qwen-Image` said "pass --config FILE", and with one, that it is not predicted
        config_path = config_path or (corpus_config(plan.model_id, recipes) if recipes is not None else None)
        if config_path is None:
            from launchcard.check import no_config_error

            raise no_config_error(plan.model_id)
    elif config is None:
        raise InputError("no plan given", where="--config",
                         fix="pass MODEL --recipes DIR, or --config config.json --gpu GPU [--tp N ...]")
    else:
        from launchcard.check import locate_config
        from launchcard.hardware import find

        config_path = locate_config(config)
        _one_accelerator(gpu, hardware)
        if gpu is None and hardware is not None:
            # no recipe to resolve: --hardware names the accelerator timed, as it does with MODEL (it was dropped,
            # and predict said "no hardware given" to a user who gave it)
            gpu = find(hardware, where="--hardware").id
    over: dict[str, Any] = {k: v for k, v in {
        "tp": tp, "pp": pp, "dp": dp, "quantization": quantization, "kv_cache_dtype": kv_cache_dtype,
        "max_num_seqs": max_num_seqs, "max_num_batched_tokens": max_num_batched_tokens,
        "max_model_len": max_model_len, "gpu_memory_utilization": gpu_memory_utilization,
        "cpu_kvcache_space_gib": cpu_kvcache_space_gib,
        "mxfp4_backend": mxfp4_backend,
        "deep_gemm": deep_gemm}.items() if v is not None}  # what the user says ran wins over the command
    if ep:
        over["expert_parallel"] = True
    if enforce_eager:
        over["enforce_eager"] = True
    trt_launch = _trtllm_launch(engine, trt_launch, kv_free_fraction, enable_chunked_prefill, gpu_memory_utilization)
    if engine == "trtllm":  # with a trtllm-serve --command or without: the options it cannot state, refused alike
        from launchcard.predict import trtllm_unstated

        trtllm_unstated(over)
    if speculative_config and engine == "vllm" and (plan is None or plan.engine != "sglang"):
        # the option is judged as the command's flag would be (its JSON keys by the release's captured spec)
        _refused_flags(["vllm", "serve", "m", "--speculative-config", speculative_config], engine_version,
                       where="--speculative-config")
    if engine != "sglang" and (plan is None or plan.engine != "sglang"):
        # the options typed are bad input (exit 2) on every form, before a plan's verdict (exit 1) reads them
        # as flags of its command: `predict MODEL --gpu-memory-utilization 1.5` exited 1, `--config` 2 (SGLang's
        # plans read them in SGLang's terms: its own rules, in predict._sglang)
        typed = replace(base, **over).validate()
        cpu_kv_option(cpu_kvcache_space_gib, gpu)
        if plan is None:  # a TP wider than a node is bad input: said before the engine's refusals (exit 1)
            _node_tp(typed.tp, typed.tp * typed.pp * typed.dp, gpus_per_node, gpu, options=True,  # refusals first
                     where="--command" if command is not None and tp is None else "--tp",
                     flag="--tp_size" if engine == "trtllm" else "--tensor-parallel-size")
    try:
        hw = read_figures(gpu, hardware_figures, no_gpu_p2p)
        if hw is None and gpu is not None:  # nothing to time against is bad input, said before what the engine
            # refuses (exit 1): gpt-oss on a T4 said its MXFP4 refusal first; plan's rule (SearchSpace.validate)
            from launchcard.hardware import find
            from launchcard.predict import HardwareFigures

            HardwareFigures.from_accelerator(find(gpu)).require_flops()
    except LaunchcardError as exc:
        if not (recipe_default and exc.field == "gpu" and not plan.derived):
            raise
        # the hardware came from the plan (Qwen/QwQ-32B runs on xeon6 only), not from an option typed: it was said
        # of --gpu; --hardware is the option that picks a plan's hardware (as when --hardware xeon6 is typed)
        raise InputError(exc.rule, where=exc.where, field="hardware",
                         fix=f"{exc.fix} ({plan.hardware} is the recipe's default hardware; --hardware names the "
                             "hardware a recipe is resolved on)") from None
    if plan is not None:  # the one chain the web's prediction panel runs too (predict.predict_plan)
        from launchcard.predict import predict_plan

        repo = None if plan.derived or recipes is None else open_recipes(recipes, revision)
        result = predict_plan(plan, config_path, work, base, engine=engine, over=over, trtllm=trt_launch, gpu=gpu,
                              hardware=hw, version=engine_version, recipes=repo,
                              speculative_config=speculative_config)
        facts, p, verdict = result.facts, result.prediction, result.verdict
        launched = list(result.command)
        title = f"{plan.model_id} on {plan.hardware}: {shlex.join(launched)}"  # as plan prints a command
    else:
        from launchcard.predict import predict_launch, sglang_words, trtllm_words, vllm_words

        if launched is not None:  # the options given on top are part of the launch predicted, in its engine's flags
            given = launched
            if server is not None:
                launched = sglang_words(launched, over)
            elif engine == "trtllm":
                launched = trtllm_words(launched, over, replace(base, **over).tp, kv_free_fraction,
                                        enable_chunked_prefill)
            else:
                launched = vllm_words(launched, over, speculative_config)
            if launched != given:
                title = shlex.join(launched)
        facts, p = predict_launch(config_path, work, base, engine=engine, over=over, server=server, served=served,
                                  trtllm=trt_launch, gpu=gpu, hardware=hw, model=model, version=engine_version,
                                  speculative_config=speculative_config,
                                  where="--command" if command is not None else None)
    from launchcard.predict import Finding

    node = _node_tp(facts.tp, facts.gpus, gpus_per_node, gpu, options=plan is None,
                    where="--tp" if tp is not None else "--command" if command is not None else "--gpus-per-node",
                    flag={"sglang": "--tp-size", "trtllm": "--tp_size"}.get(facts.engine, "--tensor-parallel-size"))
    said: list[Finding] = [node] if node is not None else []
    if model is None and command is None and not (tp or pp or dp):
        said.append(Finding("assumed", "parallelism", "no --tp/--pp/--dp given: the plan as given is "
                                                      "TP 1 x PP 1 x DP 1 (pass MODEL --hardware GPU --config ... to "
                                                      "predict the plan launchcard derives, the smallest that fits)"))
    if concurrency is None and rate is None:  # the figures rest on this load: said, as every default is
        said.append(Finding("assumed", "arrivals", "no --concurrency or --rate given: one client in a closed loop "
                                                   "(--concurrency 1, each request sent when the last one ended); "
                                                   "pass --concurrency C or --rate R for your traffic"))
    if said:
        p = replace(p, findings=(*said, *p.findings))
    if as_json:
        import json

        typer.echo(json.dumps({"model": facts.model, "engine": facts.engine, "hardware": facts.hardware.id,
                               "command": launched, "workload": workload_json(work),
                               **p.to_json(),
                               **({"verdict": verdict.to_json()} if verdict is not None else {})}, indent=2))
    else:
        typer.echo(prediction_to_text(p, title=title))
        if verdict is not None:  # its info findings are the prediction's own assumptions, said above
            typer.echo("\n".join(verdict.lines(info=False)))


def _trtllm_launch(engine: str, launch: TrtllmLaunch | None, fraction: float | None, chunked: bool,
                   utilization: float | None = None) -> TrtllmLaunch | None:
    """A TensorRT-LLM plan's launch (a trtllm-serve command's, else trtllm-serve's defaults), the options given
    on the command line over it; these options on another engine's plan are refused, as vLLM's memory share is
    on a TensorRT-LLM plan (its KV pool is a share of the memory left free: the option changed no figure, or
    refused the plan with vLLM's start-up check)."""
    if engine == "trtllm" and utilization is not None:
        raise InputError("--gpu-memory-utilization is vLLM's share of the device; TensorRT-LLM sizes its KV pool "
                         "as a share of the memory left free", where="--gpu-memory-utilization",
                         fix="pass --kv-cache-free-gpu-memory-fraction F (trtllm-serve's default 0.9)")
    if engine != "trtllm":
        if fraction is not None or chunked:
            raise InputError("--kv-cache-free-gpu-memory-fraction and --enable-chunked-prefill are TensorRT-LLM's",
                             where="--kv-cache-free-gpu-memory-fraction" if fraction is not None
                             else "--enable-chunked-prefill",
                             fix="pass --engine trtllm or a trtllm-serve --command (vLLM: --gpu-memory-utilization)")
        return None
    from launchcard.predict import TrtllmLaunch

    out = launch or TrtllmLaunch()
    if fraction is not None:
        out = replace(out, kv_fraction=fraction)
    if chunked:
        out = replace(out, chunked_prefill=True)
    try:
        return out.validate()
    except InputError as exc:
        raise InputError(exc.rule, where="--kv-cache-free-gpu-memory-fraction", fix=exc.fix) from None


def _node_tp(tp: int, gpus: int, gpus_per_node: int | None, gpu: str | None, *, options: bool,
             where: str = "--tp", flag: str = "--tensor-parallel-size") -> Finding | None:
    """InputError when ``tp`` is more GPUs than a node has, unless it spans whole nodes of the catalog's link
    domain with a network figure between them: the recipes' multi-node TP (``multi_node_tp``:
    ``--tensor-parallel-size 16 --nnodes 2`` on 8-GPU H100 nodes), which ``predict MODEL --strategy multi_node_tp``
    predicts and whose collectives the step model times hierarchically (the link inside a domain, the network
    between: ``predict._cost._all_reduce``).  It was refused as soon as the node size was given.

    ``options``: the plan of options (``--config --gpu``, a ``--command``), whose node is ``--gpus-per-node``,
    else the catalog's node profile as ``plan`` and ``sweep`` take it (``mi300x --tp 16`` is refused: 8 GPUs a
    node).  An accelerator the catalog has no node profile for (``l40s``, ``a100_80gb``): the plan the user typed
    is timed as one node of its GPUs, sharing the accelerator's scale-up link, and the returned ``assumed``
    finding says so (``--gpu l40s --tp 16`` was timed that way with no word said).  ``plan`` refuses there
    instead: it chooses the layout, and the node size bounds the layouts it may choose.  A MODEL's plan was sized
    on its resolved node (its verdict says ``exceeds-node``); only a node size given is applied to it here."""
    from launchcard.hardware import find, node_profile
    from launchcard.predict import Finding

    per_node = gpus_per_node
    if options and gpu is not None and per_node is None and gpus > 1:
        per_node = node_profile(gpu)  # hardware.node_size's rule, without its refusal (plan's)
        if per_node is None:
            acc = find(gpu).id
            return Finding("assumed", "node-size",
                           f"the hardware catalog has no node profile for {acc}: the plan's {gpus} GPUs are timed "
                           f"as one node, all sharing its scale-up link; pass --gpus-per-node N if they span nodes")
    if per_node is None or tp <= per_node:
        return None
    if tp % per_node == 0 and gpu is not None:
        accel = find(gpu)
        link = accel.link
        if link.domain == per_node and link.scale_out_gbit:
            return None
        if link.domain and tp <= link.domain and link.domain > (node_profile(gpu) or 0):
            # a scale-up domain wider than the catalog's node (GB200 / GB300 NVL72: trays of 4 GPUs, one NVLink
            # domain of 72): a TP of whole nodes inside it runs over that link, as the step model times it
            # (_cost._all_reduce: one level while the group fits the domain)
            return Finding("info", "node-size",
                           f"tensor parallel size {tp} spans {tp // per_node} nodes of {per_node} {accel.id} GPUs "
                           f"inside one {link.kind or 'scale-up'} domain of {link.domain} (the hardware catalog's "
                           "link domain): its collectives are timed over that link")
    node, more = ("", "") if gpus_per_node else (f" (the hardware catalog's node profile for {gpu})",
                                                 "; pass --gpus-per-node N if your nodes hold more")
    # said of the option the TP came from: --tp typed, the command's own flag, or the node size given against a
    # recipe's (or derived) plan (it named --tp, an option the user had not typed)
    what = {"--command": f"the command's {flag} {tp}",
            "--gpus-per-node": f"the plan's tensor parallel size {tp}"}.get(where, f"tensor parallel size {tp}")
    lower = {"--command": f"lower the command's {flag}", "--gpus-per-node": "pass --tp N (at most the node's GPUs) "
             "on top of the plan, or the --gpus-per-node your nodes hold"}.get(where, "lower --tp")
    raise InputError(f"{what} exceeds the {per_node} GPUs of a node{node}", where=where,
                     fix=f"{lower} (use --pp across nodes; a TP of whole nodes is timed where the catalog gives "
                         f"the node's link domain and the network between nodes){more}")


def _command_settings(words: list[str], base: Settings) -> Settings:
    """The settings of a ``vllm serve`` --command; a bad value is said at ``--command`` naming the flag typed in it
    (:func:`launchcard.predict.in_command`, as every --command error; ``--tp`` was named for
    ``--tensor-parallel-size 0``: predict's own option, not the command's)."""
    from launchcard.memory import settings_from_argv, vllm_flag
    from launchcard.predict import in_command

    try:
        return settings_from_argv(words, base)
    except InputError as exc:
        said = (exc.where or "").removeprefix("argv ")
        flag = vllm_flag(said.removeprefix("--").replace("-", "_")) or said
        if not flag.startswith("--"):
            raise
        raise in_command(exc, flag) from None


def _one_accelerator(gpu: str | None, hardware: str | None) -> None:
    """A MODEL plan is resolved on ``--hardware`` and timed on ``--gpu``: both given, they must name one
    accelerator of the catalog (the verdict and the figures are then about the same GPU)."""
    if gpu is None or hardware is None:
        return
    from launchcard.hardware import find

    if find(gpu).id != find(hardware, where="--hardware").id:  # an unknown name is said of the option it came in
        raise InputError(f"--gpu {gpu} and --hardware {hardware} name different accelerators: the plan would be "
                         f"resolved on {hardware} and timed on {gpu}", where="--gpu",
                         fix="pass one of them (--hardware alone for a recipe's profile, or --gpu alone)")


def _refused_flags(words: list[str], version: str | None, engine: str = "vllm", where: str = "--command") -> None:
    """A vLLM or SGLang command the release's own parser refuses (an unknown flag, a bad choice or type) is not
    predicted: the captured parser spec of ``version`` (the newest without one; a release launchcard holds no spec
    of is not judged) names the first problem, as the plan search judges its SGLang candidates
    (plansearch._startup._sglang_refusal)."""
    from launchcard.flagspec import shipped_index, version_key

    if version is not None and not any(version_key(v) == version_key(version) for v in shipped_index()[engine]):
        return
    # ... and a key a JSON config class forbids (extra="forbid": `--speculative-config '{"bogus": 1}'` is a
    # ValidationError when vLLM builds SpeculativeConfig; `launchcard check` says so, predict timed it), or a key's
    # value of the wrong type, outside its Literal (`{"model": ["a"]}`: the same ValidationError) or outside its
    # declared bounds (`{"prompt_lookup_max": 0}`, `Field(ge=1)`: predict timed it); a flag's own bounds stay the
    # memory planner's words
    # (not the speculative method's name: the memory planner's rule says it, in the words check gives it too)
    from launchcard.check import said_by_limits
    from launchcard.flags import check_argv

    bad = next((f for f in check_argv(words, engine, version) if f.severity == "error" and (
        f.stage == "argparse" or (f.stage == "startup" and not said_by_limits(f.flag, f.rule) and (
            f.rule == "bad-config-key" or (f.rule in ("bad-config-value", "out-of-range") and "." in f.flag))))),
               None)
    if bad is not None:
        shown = f"{bad.flag} {bad.value}" if bad.value is not None else bad.flag
        who = "SGLang" if engine == "sglang" else "vLLM"
        when = "parser" if bad.stage == "argparse" else "start-up config check"
        raise InputError(f"{who}'s {when} refuses {shown}: {bad.message} ({bad.evidence})", where=where,
                         fix=bad.fix)

