"""Options shared by several commands, each declared once (help included), and the plan request they make.

A command parses its options, builds one :class:`PlanOptions` (or passes a path), calls
one library function and formats the result; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.predict import HardwareFigures, Workload
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo

RecipesOpt = Annotated[Path | None, typer.Option("--recipes", help="A checkout of vllm-project/recipes.",
                                                    envvar="LAUNCHCARD_RECIPES")]
WebUrlOpt = Annotated[str | None, typer.Option("--web-url", envvar="LAUNCHCARD_WEB_URL", help=(
    "Base URL of the web catalog, for each card's performance link (default: the path /ORG/MODEL/performance)."))]
RevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--revision",
        help="Recipes revision for evidence URLs "
        "(default: the checkout's git HEAD, else each file's SOURCES.md commit).",
    ),
]
VariantOpt = Annotated[str | None, typer.Option("--variant", help="Variant key (default: default).")]
HardwareOpt = Annotated[str | None, typer.Option("--hardware", help="Hardware profile id, e.g. h100.")]
StrategyOpt = Annotated[str | None, typer.Option("--strategy", help="Serving strategy, e.g. single_node_tp.")]
NodesOpt = Annotated[int | None, typer.Option("--nodes", min=1, help="Node count (multi-node strategies).")]
FeatureOpt = Annotated[list[str] | None, typer.Option("--feature", help=(
    "Turn on a feature in addition to the recipe's default features (repeatable); the web's feature= is the same."))]
NoFeatureOpt = Annotated[list[str] | None, typer.Option("--no-feature", help=(
    "Turn off one of the recipe's default features (repeatable); the web's no_feature= is the same. A feature given "
    "to both --feature (or --mode) and --no-feature is an error."))]
ModeOpt = Annotated[list[str] | None, typer.Option("--mode", help="FEATURE=MODE for a modal feature.")]
KvOpt = Annotated[str | None, typer.Option("--kv-offload", help="KV offload option or kv_store id.")]
TaskOpt = Annotated[str | None, typer.Option("--task", help="Omni task id or key.")]
CatalogOpt = Annotated[
    str | None,
    typer.Option("--catalog", help="Catalog: a SQLite file, or a postgresql://USER@HOST/DB URL (default: "
                 "$LAUNCHCARD_CATALOG, else the user data dir)."),
]
CorpusOpt = Annotated[
    Path | None,
    typer.Option("--corpus", help="Corpus folder holding vllm-recipes/, sglang-cookbook/, providers/, dynamo/, hf/."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
# the workload of a prediction or plan search (predict, plan): one declaration of each option
IslOpt = Annotated[int | None, typer.Option("--isl", help="Input tokens per request (default 1024; with --dataset "
                                                          "their mean, default the dataset's own).")]
OslOpt = Annotated[int | None, typer.Option("--osl", help="Output tokens per request (default 256; with --dataset "
                                                          "their mean, default the dataset's own).")]
DatasetOpt = Annotated[str | None, typer.Option(
    "--dataset", "--dataset-name", help="sharegpt: each request's prompt and output lengths as vllm bench serve "
                                        "--dataset-name sharegpt sends them (ShareGPT's first turns, max_tokens = "
                                        "the first reply's length), scaled to mean --isl/--osl when given.")]
ConcurrencyOpt = Annotated[int | None, typer.Option(
    "--concurrency", "--max-concurrency", help="Clients in a closed loop; with --rate, the most requests in flight "
                                               "(vllm bench serve --max-concurrency: the rest wait in the client).")]


class Number(click.ParamType):  # type: ignore[type-arg]
    """A number option read by :func:`launchcard.predict.read_number`: finite, or infinity as the word ``inf``
    where ``infinity`` says the option takes it (``--rate``); ``1e400`` and ``nan`` are refused in one line."""

    name = "number"

    def __init__(self, option: str, fix: str, *, infinity: bool = False) -> None:
        self.option, self.fix, self.infinity = option, fix, infinity

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):  # a default
            return value
        from launchcard.predict import read_number

        return read_number(str(value), where=self.option, fix=self.fix, infinity=self.infinity)


def number(option: str, example: str) -> Number:
    return Number(option, f"pass a finite number, e.g. {option} {example}")


RateOpt = Annotated[float | None, typer.Option(
    "--rate", "--request-rate", help="Poisson arrivals, requests/s; inf: every request sent at once (vllm bench "
                                     "serve's default).",
    click_type=Number("--rate", "pass requests/s such as --rate 4, or --rate inf to send every request at once",
                      infinity=True))]
NumRequestsOpt = Annotated[int | None, typer.Option("--num-requests", "--num-prompts", help="Requests in the run "
                                                    "(default 10 x concurrency; 1000 with --rate inf alone; 10 s of "
                                                    "arrivals, at least 32, with a finite --rate alone).")]
RangeRatioOpt = Annotated[float, typer.Option("--random-range-ratio", click_type=number("--random-range-ratio", "0.5"),
                                              help="Each request's input and output "
                                              "lengths uniform in [L(1-R), L(1+R)] around --isl/--osl (vllm bench "
                                              "serve's random dataset); 0: exact lengths.")]
EndpointOpt = Annotated[str, typer.Option("--endpoint", help="Where the client sends requests: completions (vllm bench "
                                         "serve's default: --backend openai, /v1/completions) or chat (--backend "
                                         "openai-chat, /v1/chat/completions: the server renders the chat template; "
                                         "its measured extra cost is added).")]
PrefixHitOpt = Annotated[float, typer.Option("--prefix-hit", click_type=number("--prefix-hit", "0.5"),
                                             help="Share of each prompt in the prefix cache.")]
AcceptanceOpt = Annotated[float | None, typer.Option("--acceptance", click_type=number("--acceptance", "0.7"),
                                                     help="Per-token draft acceptance rate "
                                                                         "(speculative decoding).")]
# the hardware a prediction or plan search times against (predict, plan): one declaration of each option
Mxfp4BackendOpt = Annotated[str | None, typer.Option(
    "--mxfp4-backend", help="The MXFP4 MoE kernel vLLM ran for gpt-oss on a Hopper GPU (marlin or triton), where "
                            "the release's default is not what ran: e.g. triton_kernels installed by hand before "
                            "0.12 (default: the release's own wheel and image; the command's "
                            "VLLM_MXFP4_USE_MARLIN / --moe-backend).")]
HardwareFiguresOpt = Annotated[Path | None, typer.Option(
    "--hardware-figures", help="Measured bandwidth/FLOP/s JSON (bench/measure_cpu.py) instead of the catalog's.")]
NoGpuP2pOpt = Annotated[bool, typer.Option(
    "--no-gpu-p2p", help="The node's GPUs have no peer-to-peer access (nvidia-smi topo -p2p r: NS; vLLM logs "
                         "'Custom allreduce is disabled because your platform lacks GPU P2P capability'): "
                         "collectives go through host memory over each GPU's PCIe link.")]


def hardware_figures(gpu: str | None, figures_file: Path | None, no_gpu_p2p: bool) -> HardwareFigures | None:
    """The figures ``--hardware-figures`` / ``--no-gpu-p2p`` ask for (None: the catalog's figures of ``gpu`` as
    they are), read and checked once for predict and plan alike."""
    from launchcard.predict import HardwareFigures

    acc = None
    if figures_file and gpu is not None:
        from launchcard.hardware import find

        acc = find(str(gpu))
    # a file without a kind is the accelerator --gpu names (it was read as a CPU and refused as '--device cpu')
    hw = HardwareFigures.from_file(figures_file, acc.kind if acc else "cpu") if figures_file else None
    if hw is not None and acc is not None and hw.kind != acc.kind:
        raise InputError(f"the file's kind {hw.kind!r} is not the kind of --gpu {acc.id} ({acc.kind!r})",
                         where=str(figures_file), field="hardware_figures",
                         fix=f"write kind: {acc.kind} in the file (or leave it out), or name the accelerator it "
                             "measured with --gpu")
    if gpu is None and hw is None:
        raise InputError("no hardware given", where="--gpu", fix="pass --gpu NAME (e.g. h100) or --hardware-figures")
    if no_gpu_p2p:
        from launchcard.hardware import find

        hw = hw.without_p2p(str(figures_file)) if hw else HardwareFigures.from_accelerator(
            find(str(gpu))).without_p2p()
    return hw


def no_cpu_product(gpu: str | None) -> None:
    """A name that denotes several of the catalog's CPU entries (a bare ``cpu``) is refused with their ids and the
    way to time another CPU: its own measured figures (never a catalog CPU's by likeness); said first by predict."""
    from launchcard.hardware import catalog, find

    hits = catalog().candidates(gpu) if gpu is not None else ()
    if len(hits) < 2 or not all(a.is_cpu for a in hits):
        return
    try:
        find(str(gpu))
    except InputError as exc:
        raise InputError(exc.rule, where=exc.where, field=exc.field,
                         fix=f"{exc.fix}; another CPU: drop --gpu and pass --hardware-figures FILE, its own measured "
                             "figures (bench/measure_cpu.py)") from None


def workload_lengths(isl: int | None, osl: int | None, dataset: str | None, requests: int) -> tuple[int, int]:
    """The mean lengths a workload is built with: as given; else with ``--dataset`` that dataset's own means over
    the run's ``requests``; else 1024 / 256."""
    if dataset is not None and (isl is None or osl is None):
        from launchcard.predict import DATASETS, dataset_means

        if dataset not in DATASETS:
            raise InputError(f"unknown dataset {dataset!r}", where="--dataset",
                             fix=f"pass one of: {', '.join(DATASETS)} (or leave it out for exact lengths)")
        own = dataset_means(dataset, requests)
        return own[0] if isl is None else isl, own[1] if osl is None else osl
    # `is None`, not `or`: an --isl/--osl of 0 is the user's (refused by Workload.validate), not the default
    return 1024 if isl is None else isl, 256 if osl is None else osl


def workload_json(work: Workload) -> dict[str, Any]:
    """The workload a prediction or plan search ran, as ``predict --json`` and ``plan --json`` say it."""
    return work.to_json()


def parse_pairs(values: list[str] | None, *, flag: str, shape: str, example: str,
                empty_value: bool = False) -> dict[str, str]:
    """``NAME=VALUE`` options (``--env``, ``--mode``, ``--revision SRC=REV`` ...), the last one per name winning.

    One bad item is one line naming the option, the expected shape and an example.
    """
    out: dict[str, str] = {}
    for raw in values or []:
        name, sep, value = raw.partition("=")
        name, value = name.strip(), value.strip() if not empty_value else value
        if not sep or not name or (not value and not empty_value):
            raise InputError(f"{flag} expects {shape}, got {raw!r}", where=flag, fix=f"write e.g. {flag} {example}")
        out[name] = value
    return out


def parse_modes(values: list[str] | None) -> dict[str, str]:
    return parse_pairs(values, flag="--mode", shape="FEATURE=MODE", example="spec_decoding=mtp")


def checked_revision(recipes: Path | None, revision: str | None, model: str | None = None) -> str | None:
    """``--revision`` as the full revision the recipes checkout holds (an abbreviation of it counts).

    Evidence links are pinned to the revision.  One the checkout does not hold (its git HEAD, the commit
    ``launchcard sync`` recorded, or the SOURCES.md commit of the model's file) is the user's word: it is kept
    (a page reproduced at an upstream commit whose file is the same bytes) and said on stderr to be
    unverified, with the revision the checkout does hold; pages name it as taken from ``--revision``."""
    if revision is None:
        return None
    from launchcard.gitref import REF_RULE, is_ref_name

    if not is_ref_name(revision):  # pinned into every evidence URL: blob/REVISION/path
        raise InputError(f"not a git revision ({revision!r}): {REF_RULE}", where="--revision",
                         fix="give the recipes commit the evidence links should name, or leave --revision out (the "
                             "checkout's own)")
    if recipes is None or not (Path(recipes) / "models").is_dir():
        return revision
    from launchcard.sources import provenance_lookup as lookup
    from launchcard.sources.vllm_recipes import load_recipes

    root = Path(recipes)
    own = load_recipes(root).revision
    files = sorted((root / "models").rglob("*.yaml"))
    if model:  # a page or card of one model pins that model's file: its own commit is the one held
        mine = [f for f in files if f.relative_to(root / "models").with_suffix("").as_posix().lower()
                == model.lower()]
        files = mine or files
    held = {own} if own else {rev for f in files if (rev := lookup(root, f.relative_to(root).as_posix())[1])}
    if not held:
        return revision
    # an abbreviation is at least 4 hex digits (git's minimum_abbrev) and names one commit
    match = sorted(h for h in held if h.lower() == revision.lower() or (
        len(revision) >= 4 and h.lower().startswith(revision.lower())))
    if len(match) > 1:
        raise InputError(f"ambiguous abbreviation {revision!r}: this recipes checkout holds "
                         f"{', '.join(m[:12] for m in match)}", where="--revision",
                         fix="give more digits of the commit meant")
    if match:
        return match[0]
    shown = ", ".join(sorted(h[:12] for h in held)[:3]) + (" ..." if len(held) > 3 else "")
    line = (f"launchcard: warning: --revision {revision} is not verified: this recipes checkout holds "
            f"{shown}; evidence links are pinned to {revision[:12]} on your word (the bytes read are the "
            "checkout's)")
    if line not in WARNED:  # a command opens the checkout more than once (resolve, its verdict, --check): one line
        WARNED.add(line)
        typer.echo(line, err=True)
    return revision


# the warnings this command printed (cli.main empties it before each command)
WARNED: set[str] = set()


def open_recipes(recipes: Path | None, revision: str | None) -> RecipeRepo:
    from launchcard.sources.vllm_recipes import load_recipes

    if recipes is None:
        raise InputError(
            "no recipes directory given",
            where="--recipes",
            fix="pass --recipes DIR (a checkout of vllm-project/recipes) or set LAUNCHCARD_RECIPES",
        )
    # One process, one command: resolve, its verdict, --check and --explain share one opened checkout
    # (each open re-reads the taxonomy and strategies and asks git for HEAD).
    revision = checked_revision(recipes, revision)
    key = (str(recipes), revision)
    repo = _OPENED.get(key)
    if repo is None:
        repo = _OPENED[key] = load_recipes(recipes, revision)
    return repo


_OPENED: dict[tuple[str, str | None], RecipeRepo] = {}


@dataclass(frozen=True)
class PlanOptions:
    """What a command asks the resolver for: MODEL plus the shared resolve options, as typed values."""

    model: str
    recipes: Path | None
    revision: str | None = None
    variant: str | None = None
    hardware: str | None = None
    strategy: str | None = None
    nodes: int | None = None
    features: tuple[str, ...] = ()
    no_features: tuple[str, ...] = ()
    modes: dict[str, str] = field(default_factory=dict)
    kv_offload: str | None = None
    task: str | None = None
    provenance: bool = True

    @classmethod
    def from_cli(
        cls,
        model: str,
        recipes: Path | None,
        *,
        revision: str | None = None,
        variant: str | None = None,
        hardware: str | None = None,
        strategy: str | None = None,
        nodes: int | None = None,
        feature: list[str] | None = None,
        no_feature: list[str] | None = None,
        mode: list[str] | None = None,
        kv_offload: str | None = None,
        task: str | None = None,
        provenance: bool = True,
    ) -> PlanOptions:
        """From the raw option values typer gives (lists may be None; ``--mode`` still FEATURE=MODE text)."""
        return cls(
            model=model,
            recipes=recipes,
            revision=revision,
            variant=variant,
            hardware=hardware,
            strategy=strategy,
            nodes=nodes,
            features=tuple(feature or ()),
            no_features=tuple(no_feature or ()),
            modes=parse_modes(mode),
            kv_offload=kv_offload,
            task=task,
            provenance=provenance,
        )


def build_plan(options: PlanOptions) -> ResolvedPlan:
    """Resolve with ``options``; defaults are what the recipes builder picks.  ``--feature`` adds to the recipe's
    default features and ``--no-feature`` removes from them, as the web's ``feature=`` / ``no_feature=`` do: the
    resolver's ``selected_features`` reads both (and refuses an unknown name or one both added and removed)."""
    from launchcard.resolve import Choice, resolve

    o = options
    repo = open_recipes(o.recipes, o.revision)
    if o.task:
        _omni_task(repo, o.model, o.task)
    choice = Choice(
        model=o.model,
        variant=o.variant,
        hardware=o.hardware,
        strategy=o.strategy,
        node_count=o.nodes,
        extra_features=o.features,
        removed_features=o.no_features,
        feature_modes=dict(o.modes),
        kv_offload=o.kv_offload,
        omni_task=o.task,
    )
    return resolve(repo, choice, provenance=o.provenance)


def _omni_task(repo: RecipeRepo, model: str, task: str) -> None:
    """--task is for omni recipes only."""
    data = repo.recipe(model).data
    data = data if isinstance(data, dict) else {}
    tasks = (data.get("meta") or {}).get("tasks") if isinstance(data.get("meta"), dict) else None
    if "omni" not in (tasks or []):
        raise InputError(
            f"--task {task!r} is for omni recipes; {model} is not one (tasks: "
            f"{', '.join(map(str, tasks or [])) or 'none'})",
            where="--task",
            fix="drop --task",
        )


ConfigOpt = Annotated[str | None, typer.Option(
    "--config", help="The model's config.json: a file, its folder, or a Hub repo id cached on this machine (the "
                     "Hugging Face cache or `launchcard sync`'s Hub snapshots; never downloaded). Judges topology and "
                     "memory; for a model with no recipe, the plan is derived from it.")]
EngineOpt = Annotated[str, typer.Option("--engine", help="Engine of a derived plan (no recipe): vllm or sglang.")]
MaxModelLenOpt = Annotated[int | None, typer.Option(
    "--max-model-len", min=1, help="Derived plan (no recipe): the context to size for (default: the model's "
                                   "max_position_embeddings).")]
GpusPerNodeOpt = Annotated[int | None, typer.Option(
    "--gpus-per-node", min=1, help="Derived plan (no recipe): GPUs in one of your nodes (default: the hardware "
                                   "catalog's node profile; an accelerator without one is planned as 1 GPU).")]


def has_recipe(recipes: Path | None, revision: str | None, model: str) -> bool:
    """Whether ``--recipes`` is given and holds a recipe for ``model``."""
    if recipes is None:
        return False
    return open_recipes(recipes, revision).holds(model)


def plan_and_config(options: PlanOptions, config: str | None, *, engine: str = "vllm",
                    max_model_len: int | None = None, engine_version: str | None = None,
                    gpus_per_node: int | None = None) -> tuple[ResolvedPlan, Path | None]:
    """The plan ``options`` ask for and the config.json that judges it.

    A model with a recipe resolves as the recipes builder does (``--config`` then only judges it); a model
    with none, or ``--engine sglang``, gets a plan derived by launchcard from its config.json (``--config``, else
    the model id looked up in the local caches) and the hardware catalog."""
    from launchcard.check import locate_config

    cfg = locate_config(config) if config else None
    o = options
    if engine == "vllm" and has_recipe(o.recipes, o.revision, o.model):
        if gpus_per_node is not None:
            raise InputError("--gpus-per-node sizes a plan derived by launchcard; a recipe's hardware profile "
                             "fixes its node size", where="--gpus-per-node",
                             fix="pick the recipe's profile with --hardware (and --nodes), or drop --gpus-per-node")
        if max_model_len is not None:  # it derived a plan instead, dropping the recipe (its TP, its parsers) unsaid
            raise InputError(f"--max-model-len sizes a plan derived by launchcard; {o.model} has a recipe, whose "
                             "command is the recipes builder's", where="--max-model-len",
                             fix="drop --max-model-len (predict MODEL --max-model-len times the recipe's command "
                                 "with it)")
        return build_plan(o), cfg
    recipe_only = [name for name, value in (("--variant", o.variant), ("--strategy", o.strategy), ("--nodes", o.nodes),
                                            ("--feature", o.features), ("--no-feature", o.no_features),
                                            ("--mode", o.modes), ("--kv-offload", o.kv_offload), ("--task", o.task))
                   if value]
    if recipe_only:
        raise InputError(f"{', '.join(recipe_only)} choose(s) among a recipe's settings; a plan derived by launchcard "
                         f"(no recipe{' used' if has_recipe(o.recipes, o.revision, o.model) else ''}) has none",
                         where=recipe_only[0], fix="drop them, or resolve a model that has a recipe")
    if o.hardware is None and o.recipes is not None and not has_recipe(o.recipes, o.revision, o.model):
        # a mistyped recipe id lands here first: said as the recipe it is not, with the close names
        raise InputError(f"no recipe for {o.model!r}, and a plan derived by launchcard (no recipe) needs the "
                         "hardware to size it for", where="MODEL",
                         fix=f"name a recipe ({_close_recipes(o)}), or pass --hardware PROFILE (e.g. h100) to derive "
                             "one from the model's config.json")
    if o.hardware is None:
        raise InputError("a derived plan (no recipe) needs the hardware to size it for", where="--hardware",
                         fix="pass --hardware PROFILE, e.g. h100, h200, b200")
    if cfg is None and o.recipes is not None:  # the checkpoint's config.json from the corpus next to the recipes,
        from launchcard.check import corpus_config  # where a recipe plan's verdict and the plan search read it

        cfg = corpus_config(o.model, o.recipes)
    if cfg is None:
        try:
            cfg = locate_config(o.model, where="MODEL")
        except InputError as exc:
            if o.recipes is None:
                raise
            if has_recipe(o.recipes, o.revision, o.model):  # an SGLang plan of a recipe model: its config is missing
                raise InputError(f"{exc.rule}; an --engine {engine} plan is derived from the checkpoint's config.json "
                                 "(the recipe's vLLM flags are not carried over)", where="--config",
                                 fix=f"pass --config FILE; {exc.fix}") from None
            # both ways failed: the resolver's "no recipe" line (close names) and how to get the config
            raise InputError(f"no recipe for {o.model!r} and {exc.rule}", where="MODEL",
                             fix=f"{exc.fix}; or name a recipe ({_close_recipes(o)})") from None
    from launchcard.check import derive_plan

    return derive_plan(o.model, cfg, o.hardware, engine=engine, max_model_len=max_model_len,
                       engine_version=engine_version, gpus_per_node=gpus_per_node), cfg


def _close_recipes(o: PlanOptions) -> str:
    from launchcard.errors import LaunchcardError

    try:
        build_plan(o)
    except LaunchcardError as exc:
        return exc.fix or "launchcard resolve --cases lists none"
    return "it resolves"


def given_configs(model: str, config: str | None) -> dict[str, Path]:
    """``--config`` for ``model`` as the corpus build takes it (checkpoint id -> config.json)."""
    if config is None:
        return {}
    from launchcard.check import locate_config

    return {model: locate_config(config)}


def cpu_kv_option(space: float | None, gpu: str | None) -> None:
    """InputError when ``--cpu-kvcache-space-gib`` (VLLM_CPU_KVCACHE_SPACE, read by vLLM's CPU backend only) is
    given for a GPU (``memory`` and ``predict``): it was silently ignored."""
    from launchcard.errors import InputError
    from launchcard.hardware import find

    if space is not None and gpu is not None and find(gpu).kind != "cpu":
        raise InputError(f"--cpu-kvcache-space-gib sizes vLLM's CPU backend KV cache; {find(gpu).id} is a GPU, whose "
                         "KV pool is what --gpu-memory-utilization leaves", where="--cpu-kvcache-space-gib",
                         fix="drop it, or pass a CPU entry such as --gpu xeon6")
