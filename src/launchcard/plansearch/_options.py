"""What a search may choose from: the model builds the sources offer, and the winner as a launchable plan.

A recipe offers variants (checkpoints, precisions) and features (speculative decoding); each variant is
resolved by :mod:`launchcard.resolve` exactly as ``launchcard resolve`` would, and its command's flags are
the base every candidate changes. A model with no recipe offers its checkpoint, and speculative decoding
when its config has MTP layers. The winner is the base plan with the searched flags replaced, each new
value credited to the search (rule and inputs) and the replaced one kept as overridden.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.errors import InputError, LaunchcardError
from launchcard.memory import vllm_flags
from launchcard.plansearch._types import Candidate, Option

if TYPE_CHECKING:
    from launchcard.card import LaunchCard
    from launchcard.plansearch._types import Slo
    from launchcard.predict import Workload
    from launchcard.resolve import ArgUnit, ResolvedPlan
    from launchcard.sources import Recipe
    from launchcard.sources.vllm_recipes import RecipeRepo

# each searched setting: the Settings field its vLLM flags set (memory.vllm_flags, the one table the memory
# settings are read by)
_FIELDS = {"tp": "tp", "pp": "pp", "dp": "dp", "ep": "expert_parallel", "kv": "kv_cache_dtype", "mns": "max_num_seqs",
           "mml": "max_model_len", "spec": "speculative_method"}
# SGLang's server arguments for them (captured parser spec, launchcard/data/flags/sglang-*.json)
_SGLANG_SEARCHED = {
    "--tp-size": "tp", "--pp-size": "pp", "--dp-size": "dp", "--max-running-requests": "mns",
    "--context-length": "mml", "--ep-size": "ep", "--expert-parallel-size": "ep", "--enable-ep-moe": "ep",
    "--speculative-algorithm": "spec", "--speculative-num-steps": "spec", "--speculative-eagle-topk": "spec",
    "--speculative-num-draft-tokens": "spec", "--speculative-draft-model-path": "spec", "--enable-dp-attention": "dpa",
    "--attn-dp-size": "dpa", "--attention-data-parallel-size": "dpa",
    "--chunked-prefill-size": "chunk", "--kv-cache-dtype": "kv",
}
# the flags a search decides (every spelling vLLM and SGLang read); the winner's command replaces them
SEARCHED = {**{flag: key for key, field in _FIELDS.items() for flag in vllm_flags(field)}, **_SGLANG_SEARCHED}
# each searched setting's flag per engine: vLLM's `vllm serve` names (memory's table); SGLang's in flag_names
FLAG_NAMES = {"vllm": {key: vllm_flags(field)[0] for key, field in _FIELDS.items()}}
# the speculative methods an SGLang plan is searched with: MTP from the checkpoint's own MTP layers
SGLANG_SPEC = frozenset({"mtp"})


@lru_cache(maxsize=4)
def flag_names(engine: str) -> dict[str, str]:
    """Each searched setting's flag in ``engine``'s names: vLLM's (``FLAG_NAMES``, memory's table) or SGLang's
    ``sglang.launch_server`` names from the table predict writes SGLang commands by (predict.SGLANG_FLAGS; its
    speculative flags are written by sglang_spec_flags). Read once, when a search first writes an SGLang plan:
    predict is not imported with the plan search's options."""
    if engine != "sglang":
        return FLAG_NAMES["vllm"]
    from launchcard.predict import SGLANG_EP_FLAG, SGLANG_FLAGS

    return {**{key: SGLANG_FLAGS[field] for key, field in _FIELDS.items() if field in SGLANG_FLAGS},
            "ep": SGLANG_EP_FLAG}


def sglang_spec_flags(method: str, tokens: int) -> list[tuple[str, str | None]]:
    """SGLang's flags for MTP speculative decoding of ``tokens`` draft tokens: ``--speculative-algorithm EAGLE``
    (the cookbook: "SGLang serves MTP through --speculative-algorithm EAGLE (upstream folds the older NEXTN
    spelling into EAGLE)", sglang-cookbook/GLM-5.3-Flash/GLM-5.3-Flash.mdx#L99), ``tokens`` steps, top-k 1 and
    steps + 1 draft tokens (its commands: 3/1/4, 5/1/6, same file #L186-L189, #L226-L229)."""
    if method not in SGLANG_SPEC:
        raise InputError(f"SGLang plans are searched with MTP speculative decoding only, not {method}",
                         where="--engine", fix="search it with --engine vllm")
    return [("--speculative-algorithm", "EAGLE"), ("--speculative-num-steps", str(tokens)),
            ("--speculative-eagle-topk", "1"), ("--speculative-num-draft-tokens", str(tokens + 1))]


def _mtp(config: str | Path) -> tuple[tuple[str, int], ...]:
    from launchcard.memory import load_arch

    return (("mtp", 1),) if load_arch(config).mtp_layers else ()


def checkpoint_option(model_id: str, config: str | Path, base_flags: tuple[str, ...] = ()) -> Option:
    """The checkpoint as it is: its own precision; MTP speculative decoding (1 token) when the config has MTP
    layers (vLLM's ``{"method": "mtp"}`` reads them). No source gives that speculative config: its source says
    so (``assumed``), and the plan's findings say it of the plans that run it."""
    spec = _mtp(config)
    raw = tuple(json.dumps({"method": m, "num_speculative_tokens": n}, separators=(",", ":")) for m, n in spec)
    source = tuple(f"--speculative-config {text}: assumed (no recipe offers speculative decoding here; the "
                   f"config.json has MTP layers, which vLLM's \"mtp\" method drafts with, and 1 draft token is "
                   f"launchcard's choice)" for text in raw)
    return Option(name="checkpoint", model_id=model_id, config=str(config), spec=spec, spec_config=raw,
                  spec_source=source, base_flags=_after_model(base_flags))


def derived_option(model_id: str, config: str | Path, gpu: str, engine: str = "vllm", *,
                   max_model_len: int | None = None, gpus_per_node: int | None = None,
                   ) -> tuple[Option, ResolvedPlan | None, list[str]]:
    """A model without a recipe as ``plan`` and ``sweep`` search it: the checkpoint with the flags of the plan
    launchcard derives for it on ``gpu`` (``check.derive_plan``: its engine's own serving flags, e.g. SGLang's
    ``--host``/``--port``), that plan (the base a winner is emitted from; None when no plan fits, said in the
    lines returned)."""
    from launchcard.check import derive_plan
    from launchcard.errors import NoFitError
    from launchcard.predict import served_command

    try:
        base = derive_plan(model_id, config, gpu, engine=engine, max_model_len=max_model_len,
                           gpus_per_node=gpus_per_node)
    except NoFitError:
        return checkpoint_option(model_id, config), None, ["the derived plan: no single plan fits (--emit "
                                                          "unavailable)"]
    # the server predict times (predict.served_command): the one choice of it
    return checkpoint_option(model_id, config, tuple(served_command(base).argv)), base, []


def _after_model(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The flags of a command: what follows ``vllm serve MODEL`` or SGLang's ``python3 -m sglang.launch_server``
    (or the whole argv when it is neither)."""
    if len(argv) >= 3 and argv[:2] == ("vllm", "serve"):
        return argv[3:]
    if len(argv) >= 3 and argv[1:3] == ("-m", "sglang.launch_server"):
        return argv[3:]
    return argv


def _spec_choices(recipe: Recipe) -> list[tuple[str, str | None]]:
    """(feature, mode) of each recipe feature whose args (its own, a hardware override's, a mode's) name a
    ``--speculative-config``: every mode of a modal one, its default first. Which of them turn speculative
    decoding on, and with what command, is the resolver's word (:func:`_spec_offers`)."""
    out: list[tuple[str, str | None]] = []
    for name, feat in recipe.features.items():
        blocks = [feat.args, *(b.args for b in feat.hardware_overrides.values())]
        modes = dict(feat.modes or {})
        for mode in modes.values():
            blocks += [mode.args, *(b.args for b in mode.hardware_overrides.values())]
        if not any(str(a).startswith(("--speculative-config", "--speculative_config")) for b in blocks
                   for a in (b or ())):
            continue
        if not modes:
            out.append((name, None))
            continue
        first = [feat.default_mode] if feat.default_mode in modes else []
        out += [(name, m) for m in dict.fromkeys([*first, *modes])]
    return out


def spec_words(flags: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """The ``--speculative-config`` units of a command's flags as it writes them: the JSON form, ``=`` form or
    the dotted ``--speculative-config.method mtp`` form (vLLM's argparse reads each)."""
    out: list[tuple[str, str | None]] = []
    for i, tok in enumerate(flags):
        name = tok.split("=", 1)[0]
        if name.replace("_", "-").startswith("--speculative-config") and name.startswith("--"):
            value = None if "=" in tok or i + 1 >= len(flags) or flags[i + 1].startswith("--") else flags[i + 1]
            out.append((tok, value))
    return out


def _spec_offers(repo: RecipeRepo, model: str, key: str, hardware: str, off: tuple[str, ...],
                 ) -> tuple[list[tuple[tuple[str, int], str, tuple[str, ...], tuple[str, str | None] | None, str]],
           list[str]]:
    """Each speculative decoding the recipe offers variant ``key`` on ``hardware``: the plan ``launchcard resolve``
    gives with that feature (and mode) on and the other speculative features off (``off``: the variant's other
    features), the one rule of which args a feature brings. Each as ((method, tokens), its speculative flags as
    text, the command's flags, (feature, mode), where), and a line for each offer not searched."""
    from launchcard.memory import settings_from_argv
    from launchcard.predict import served_command
    from launchcard.resolve import Choice, resolve

    doc = repo.recipe(model)
    recipe = doc.typed
    out: list[tuple[tuple[str, int], str, tuple[str, ...], tuple[str, str | None] | None, str]] = []
    skipped: list[str] = []
    for feat, mode in _spec_choices(recipe) if recipe is not None else []:
        shown = f"{feat}={mode}" if mode else feat
        try:
            plan = resolve(repo, Choice(model=model, variant=key, hardware=hardware, features=(*off, feat),
                                        feature_modes={feat: mode} if mode else {}))
            flags = _after_model(tuple(served_command(plan).argv))
        except LaunchcardError:  # not resolvable so (a prefill/decode-only feature ...): not searched
            continue
        if mode and plan.feature_modes.get(feat) != mode:  # the recipe gives another mode here: not this one
            continue
        s = settings_from_argv(list(flags))
        if not s.speculative_method:
            continue
        spec = (s.speculative_method, s.num_speculative_tokens)
        text = " ".join(t if v is None else f"{t} {v}" for t, v in spec_words(flags))
        same = next((c for k, _, _, c, _ in out if k == spec and c is not None), None)
        if same is not None:  # a candidate is one method and depth: the first offer of it is searched
            skipped.append(f"variant {key}: {shown} ({spec[0]} x{spec[1]}) is searched as "
                           f"{same[0]}{f'={same[1]}' if same[1] else ''}, which runs the same method and depth")
            continue
        out.append((spec, text, flags, (feat, mode), f"the recipe's {shown} ({doc.path})"))
    return out, skipped


def recipe_options(repo: RecipeRepo, model: str, hardware: str, recipes_root: Path,
                   config: str | Path | None = None) -> tuple[list[Option], dict[str, ResolvedPlan], list[str]]:
    """Each variant of ``model``'s recipe resolved on ``hardware``: the options, their base plans, and a line
    for each variant that could not be used (not resolvable there, or no config.json to plan it with).

    A variant's base plan has every speculative feature of the recipe off; each one it offers is searched with
    the command the resolver gives with it on (:func:`_spec_offers`), so a plan with speculative decoding is
    ``launchcard resolve --feature F`` (``--mode F=M``) with the searched flags replaced."""
    from launchcard.check import corpus_config
    from launchcard.memory import settings_from_argv
    from launchcard.predict import served_command
    from launchcard.resolve import Choice, resolve

    recipe = repo.recipe(model).typed
    if recipe is None:
        raise InputError(f"the recipe of {model} could not be read", where="--recipes",
                         fix="run launchcard resolve on it to see the problem")
    names = {f for f, _ in _spec_choices(recipe)}
    options: list[Option] = []
    plans: dict[str, ResolvedPlan] = {}
    skipped: list[str] = []
    for key in recipe.variants:
        try:
            plan = resolve(repo, Choice(model=model, variant=key, hardware=hardware))
            off = tuple(f for f in plan.features if f not in names)
            if off != plan.features:  # a speculative feature on by default: the base is the plan without it
                plan = resolve(repo, Choice(model=model, variant=key, hardware=hardware, features=off))
        except LaunchcardError as exc:
            skipped.append(f"variant {key}: not resolvable on {hardware} ({exc.rule})")
            continue
        try:
            cmd = served_command(plan)  # the server predict times (a prefill/decode plan has none: not searched)
        except LaunchcardError as exc:
            skipped.append(f"variant {key}: {exc.rule}")
            continue
        cfg = corpus_config(plan.model_id, recipes_root) or (config if key == "default" and config else None)
        if cfg is None:
            skipped.append(f"variant {key}: no config.json for {plan.model_id} (pass --config for the default "
                           "variant, or sync the checkpoint)")
            continue
        flags = _after_model(tuple(cmd.argv))
        s = settings_from_argv(list(flags))
        offers, left = _spec_offers(repo, model, key, hardware, off)
        skipped += left
        if s.speculative_method and (s.speculative_method, s.num_speculative_tokens) not in {o[0] for o in offers}:
            # the variant's own args turn it on (no feature): written onto the base's flags
            words = " ".join(t if v is None else f"{t} {v}" for t, v in spec_words(flags))
            offers.append(((s.speculative_method, s.num_speculative_tokens), words, (), None,
                           f"variant {key}'s own args ({repo.recipe(model).path})"))
        options.append(Option(name=key, model_id=plan.model_id, config=str(cfg), quantization=s.quantization,
                              spec=tuple(o[0] for o in offers), spec_config=tuple(o[1] for o in offers),
                              spec_flags=tuple(o[2] for o in offers), spec_choice=tuple(o[3] for o in offers),
                              spec_source=tuple(o[4] for o in offers), base_flags=flags, off_features=off))
        plans[key] = plan
    return options, plans, skipped


def spec_index(option: Option | None, c: Candidate) -> int | None:
    """Which of ``option``'s speculative offers candidate ``c`` runs (None: none, or not one offered)."""
    if option is None or not c.spec or (c.spec, c.spec_tokens) not in option.spec:
        return None
    return option.spec.index((c.spec, c.spec_tokens))


def candidate_flags(option: Option, c: Candidate) -> tuple[str, ...]:
    """The command flags candidate ``c`` changes: its speculative offer's own command (the resolver's, with the
    feature on) where it runs one that has one, else the option's base flags."""
    i = spec_index(option, c)
    if i is not None and i < len(option.spec_flags) and option.spec_flags[i]:
        return option.spec_flags[i]
    return option.base_flags


def sglang_spec_offers(card: LaunchCard, checkpoint: str, config: str | Path,
                       ) -> tuple[tuple[str, int, str, str], ...]:
    """The speculative decoding the card's SGLang commands (the SGLang cookbook's) run ``checkpoint`` with: each
    distinct set of ``--speculative-*`` flags, read by :func:`launchcard.predict.sglang_plan` as predict reads it
    (method, draft tokens per step: SGLang's own defaults where the command leaves the steps out), with the
    source line. Algorithms the step model does not read as a draft (anything but EAGLE, EAGLE3, NEXTN and a
    draft model's STANDALONE) are left out, and EAGLE without a draft path on a checkpoint without MTP layers."""
    import shlex

    from launchcard.memory import load_arch
    from launchcard.predict import sglang_model_traits, sglang_plan

    arch, _ = sglang_model_traits(config)
    mtp = load_arch(config).mtp_layers  # EAGLE without a draft path drafts with these (limits.draft_self_refusal)
    out: dict[str, tuple[str, int, str, str]] = {}
    for env in card.envs:
        if env.engine != "sglang" or env.checkpoint != checkpoint or not env.argv:
            continue
        argv = tuple(str(a) for a in env.argv)
        words: list[str] = []
        for i, tok in enumerate(argv):
            if tok.startswith("--speculative-"):
                words.append(tok)
                if "=" not in tok and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    words.append(argv[i + 1])
        algo = words[words.index("--speculative-algorithm") + 1].upper() \
            if "--speculative-algorithm" in words[:-1] else None
        if algo not in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE"):
            continue
        try:
            plan = sglang_plan(["python3", "-m", "sglang.launch_server", *words], gpu_memory_gib=None,
                               architecture=arch, mtp_layers=mtp)
        except LaunchcardError:  # what predict refuses (bad input) is not offered
            continue
        method, k = plan.settings.speculative_method, plan.settings.num_speculative_tokens
        if method and k and f"{method} {k}" not in out:  # the first command of each method and depth
            where = (env.evidence.url if env.evidence is not None else None) or str(env.source.path)
            out[f"{method} {k}"] = (method, k, shlex.join(words), where)
    return tuple(out.values())


def with_sglang_specs(option: Option, offers: tuple[tuple[str, int, str, str], ...]) -> Option:
    """``option`` offering the sources' SGLang speculative decoding (``offers`` of :func:`sglang_spec_offers`)
    besides the MTP of its config (written by :func:`sglang_spec_flags` when no source offers MTP itself)."""
    return replace(option, sglang_spec=tuple(offers))


def searched_flags(c: Candidate, option: Option | None = None, max_model_len: int | None = None,
                   engine: str = "vllm", release: str | None = None) -> list[tuple[str, str | None]]:
    """The flags (value or None for a switch) a candidate sets, in ``engine``'s names: TP, PP, DP, EP, KV dtype,
    the batch limit, the speculative config (the source's own JSON when it offers the method) and the context
    length when given. ``release``: the SGLang release whose captured parser the plan is checked at (None: none
    captured), which decides how DP attention is written (:func:`launchcard.limits.dp_attention_flags`)."""
    name = flag_names(engine)
    want: list[tuple[str, str | None]] = [(name["tp"], str(c.tp))]
    if c.pp > 1:
        want.append((name["pp"], str(c.pp)))
    if c.dp_attention and c.dp > 1:  # SGLang: the DP ranks run attention inside the TP group
        from launchcard.limits import dp_attention_flags

        want += dp_attention_flags(c.dp, release)
    elif c.dp > 1:
        want.append((name["dp"], str(c.dp)))
    if c.ep:  # SGLang: experts over the TP group, --ep-size equal to --tp-size (its parser's own advice)
        want.append((name["ep"], str(c.tp) if engine == "sglang" else None))
    if c.kv_cache_dtype != "auto":
        want.append((name["kv"], c.kv_cache_dtype))
    want.append((name["mns"], str(c.max_num_seqs)))
    if c.chunk:  # SGLang's chunk, when the search was given chunks to try (else SGLang's default for the GPU)
        want.append(("--chunked-prefill-size", str(c.chunk)))
    if max_model_len is not None:
        want.append((name["mml"], str(max_model_len)))
    offered = {(m, k): text for m, k, text, _ in (option.sglang_spec if option is not None else ())}
    if c.spec and engine == "sglang" and (c.spec, c.spec_tokens) in offered:  # the source's own flags
        import shlex

        words = shlex.split(offered[(c.spec, c.spec_tokens)])
        i = 0
        while i < len(words):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None
            want.append((words[i], value))
            i += 2 if value is not None else 1
    elif c.spec and engine == "sglang":
        want += sglang_spec_flags(c.spec, c.spec_tokens)
    elif c.spec:
        at = spec_index(option, c)
        if option is not None and at is not None and at < len(option.spec_flags) and option.spec_flags[at]:
            want += spec_words(option.spec_flags[at])  # the resolver's own words (JSON or dotted form)
            return want
        raw = json.dumps({"method": c.spec, "num_speculative_tokens": c.spec_tokens}, separators=(",", ":"))
        if option is not None and at is not None:  # the source's JSON (its draft model)
            raw = option.spec_config[at]
        want.append((name["spec"], raw))
    return want


_SWITCHES = frozenset({"--enable-expert-parallel", "--enable-ep-moe", "--enable-dp-attention"})


def with_flags(flags: tuple[str, ...], want: list[tuple[str, str | None]]) -> tuple[str, ...]:
    """``flags`` (a command's argv after the model) with every searched flag the candidate sets replaced by
    ``want``; the base's own ``--max-model-len`` stays unless ``want`` sets one."""
    drop = {f for f, k in SEARCHED.items() if k != "mml" or any(SEARCHED.get(w) == "mml" for w, _ in want)}
    out: list[str] = []
    i = 0
    while i < len(flags):
        tok = flags[i]
        name = tok.split("=", 1)[0]
        if name in drop or name.replace("_", "-").startswith("--speculative-config."):  # the dotted spec form
            takes_value = "=" not in tok and name not in _SWITCHES
            i += 2 if takes_value and i + 1 < len(flags) and not flags[i + 1].startswith("-") else 1
            continue
        out.append(tok)
        i += 1
    for flag, value in want:
        out += [flag] if value is None else [flag, value]
    return tuple(out)


def card_options(card: LaunchCard, known: set[str], corpus: Path) -> tuple[list[Option], list[str]]:
    """The checkpoints the model's launch card lists (every source's: other precisions, provider builds) that no
    option in ``known`` (model ids) serves, each as it is (its own config.json: precision, MTP layers), and a line
    for each that cannot be planned (no config.json in the corpus ``hf/``, the local Hub cache or a snapshot).
    They have no resolved command of their own: ``--emit`` writes such a winner as the plan launchcard derives
    from its config.json (``launchcard plan`` does)."""
    from launchcard.check import find_config, locate_config

    options: list[Option] = []
    skipped: list[str] = []
    for cp in card.checkpoints:
        repo = cp.repo or cp.name
        if not repo or repo in known:
            continue
        known.add(repo)
        cfg: str | Path | None = find_config(repo, [corpus / "hf"])
        if cfg is None:
            try:
                cfg = locate_config(repo)
            except LaunchcardError:
                cfg = None
        sources = ", ".join(sorted({str(pin.kind) for pin in cp.pins})) or "the card"
        if cfg is None:
            skipped.append(f"checkpoint {repo} ({cp.format or 'format unknown'}; listed by {sources}): no config.json "
                           "to plan with (sync the checkpoint or put its config.json under the corpus hf/)")
            continue
        opt = checkpoint_option(repo, cfg)
        options.append(replace(opt, name=repo))
    return options, skipped


def _unit(flag: str, value: str | None, origin: object, overrides: tuple[object, ...]) -> ArgUnit:
    from launchcard.resolve import ArgUnit

    return ArgUnit(flag=flag, value=value, origin=origin, overrides=overrides)  # type: ignore[arg-type]


_LAYOUT = frozenset({"tp", "pp", "dp", "ep", "dpa"})


def _pool_layout(argv: tuple[str, ...]) -> tuple[int, int]:
    """(TP, DP) a ``vllm serve`` command asks for (1 where it does not say)."""
    def value(*names: str) -> int:
        for i, tok in enumerate(argv[:-1]):
            if tok in names and argv[i + 1].isdigit():
                return int(argv[i + 1])
        return 1
    return value("--tensor-parallel-size", "-tp"), value("--data-parallel-size", "-dp")


def _spec_features_for(base: ResolvedPlan, c: Candidate, option: Option | None,
                       ) -> tuple[tuple[str, ...], dict[str, str]] | None:
    """The recipe features (and modes) the winner's plan is resolved with (None: ``base``'s own): the base's, every
    speculative feature off, and the one the winner runs on in its mode (:func:`_spec_offers`), so the plan's
    features (its facts, the artifacts' header) and the feature's own args and lines are those of what it runs."""
    if option is None or option.off_features is None or base.derived or base.engine != "vllm":
        return None
    i = spec_index(option, c)
    choice = option.spec_choice[i] if i is not None and i < len(option.spec_choice) else None
    want = option.off_features + ((choice[0],) if choice else ())
    modes = {choice[0]: choice[1]} if choice and choice[1] else {}
    if set(want) == set(base.features) and all(base.feature_modes.get(k) == v for k, v in modes.items()):
        return None
    return want, modes


def _modes(base: ResolvedPlan, features: tuple[str, ...] | None) -> dict[str, str]:
    """``base``'s feature modes for a plan resolved again with ``features`` (None: the recipe's defaults, as a
    prefill/decode plan was resolved before): those of features still on."""
    return {} if features is None else {k: v for k, v in base.feature_modes.items() if k in features}


def _pd_base(base: ResolvedPlan, c: Candidate, repo: RecipeRepo | None,
             features: tuple[str, ...] | None = None) -> ResolvedPlan:
    """The recipe's own prefill/decode plan (its ``pd_cluster`` strategy: NIXL KV transfer, ports, router) with
    pools of the winner's nodes, when its layout of each pool is the winner's (TP x DP); else why not, as bad
    input. launchcard writes no prefill/decode form of its own: a plan without such a strategy is refused."""
    from launchcard.resolve import Choice, resolve

    fix = "pass --no-disaggregation to search (and emit) aggregated plans only"
    if repo is None or base.derived:
        raise InputError(f"the winner is a prefill/decode plan and {base.model} has no recipe here: launchcard "
                         "writes prefill/decode pools only as a recipe's pd_cluster strategy lays them out",
                         where="--emit", fix=fix + ", or pass --recipes holding a recipe with pd_cluster")
    per_node = max(1, base.gpus_per_node)
    pools = {"prefill": (c.prefill_gpus, c.prefill_gpus // c.tp), "decode": (c.gpus - c.prefill_gpus, c.dp)}
    mode = "dep" if c.ep else "tp"
    pd_nodes = {role: {"nodes": gpus // per_node, "parallelism": mode} for role, (gpus, _) in pools.items()}
    try:
        plan = resolve(repo, Choice(model=base.model, variant=base.variant, hardware=base.hardware,
                                    strategy="pd_cluster", pd_nodes=pd_nodes, features=features,
                                    feature_modes=_modes(base, features)))
    except LaunchcardError as exc:
        raise InputError(f"the winner is a prefill/decode plan and the recipe's pd_cluster strategy cannot be "
                         f"resolved for it ({exc.rule})", where="--emit", fix=fix) from None
    for cmd in plan.commands:
        if cmd.role not in pools:
            continue
        tp, dp = _pool_layout(cmd.argv)
        want_dp = pools[cmd.role][1]
        if (tp, dp) != (c.tp, want_dp):
            raise InputError(f"the recipe's pd_cluster strategy lays the {cmd.role} pool out as TP {tp} x DP {dp}, "
                             f"the winner's is TP {c.tp} x DP {want_dp}: the emitters write the recipe's layouts "
                             "only", where="--emit", fix=fix)
    return plan


def emit_layout_refusal(base: ResolvedPlan, gpus: int, *, dp: int = 1) -> InputError | None:
    """Why an aggregated plan of ``gpus`` GPUs (``dp`` replicas) cannot be emitted on ``base``'s layout, else None:
    the emitters write the resolved plan's own nodes, and one multi-node replica (no data-parallel replicas across
    nodes).  The plan search uses every GPU it is given, so for a plan launchcard derives (no recipe pd_cluster to
    take a prefill/decode winner) ``plan --emit`` asks this before its search with the GPU count alone."""
    nodes = max(1, -(-gpus // max(1, base.gpus_per_node)))
    if nodes == max(1, base.node_count) and not (nodes > 1 and dp > 1):
        return None
    return InputError(f"a plan of {gpus} GPU(s) spans {nodes} node(s) of {base.gpus_per_node}"
                      f"{f' as {dp} replicas' if nodes > 1 and dp > 1 else ''}, the resolved plan "
                      f"{max(1, base.node_count)}: its launch layout is not one the emitters write", where="--emit",
                      fix="lower --gpus to one node's GPUs, or resolve the multi-node plan with launchcard emit")


def winner_plan(base: ResolvedPlan, c: Candidate, work: Workload, slo: Slo, option: Option | None = None,
                *, max_model_len: int | None = None, repo: RecipeRepo | None = None,
                release: str | None = None) -> ResolvedPlan:
    """``base`` with the searched flags of ``c`` (TP, PP, DP, EP, KV dtype, max-num-seqs, speculative config), and
    ``max_model_len`` when the search planned memory with one (``--max-model-len``); an SGLang winner in the flags
    of ``release``, the SGLang release it is checked at (:func:`searched_flags`).

    A prefill/decode winner is the recipe's own ``pd_cluster`` plan from ``repo`` (same variant and hardware,
    pools of the winner's nodes and layout) with the searched KV dtype, batch limit and speculative config in
    both pools' commands."""
    from launchcard.resolve import Choice, Input, Origin, resolve

    spec = _spec_features_for(base, c, option) if repo is not None else None
    features = spec[0] if spec is not None else None
    if c.mode != "aggregated":
        # a prefill/decode plan runs no speculative decoding: the recipe's features with every speculative one off
        off = option.off_features if option is not None and not base.derived else None
        base = _pd_base(base, c, repo, features if features is not None else off)
    else:
        if spec is not None and repo is not None:  # the recipe's speculative feature as the winner runs it
            base = resolve(repo, Choice(model=base.model, variant=base.variant, hardware=base.hardware,
                                        strategy=base.strategy, node_count=base.node_count, features=spec[0],
                                        feature_modes={**_modes(base, spec[0]), **spec[1]}))
        refused = emit_layout_refusal(base, c.gpus, dp=c.dp)
        if refused is not None:
            raise refused
    load = (f"concurrency {work.concurrency}" if work.concurrency is not None else f"rate {work.rate}/s")
    origin = Origin(layer="derived", key="plan_search",
                    derived="launchcard plan: the plan with the most predicted output tokens/s per GPU (then per "
                            "user) that meets the SLO",
                    inputs=(Input(name="gpu", value=f"{c.gpus} x {base.hardware}"),
                            Input(name="workload", value=f"isl {work.isl}, osl {work.osl}, {load}"),
                            Input(name="slo", value=slo.text())))
    want = searched_flags(c, option, max_model_len, base.engine, release)
    # the base plan's own --max-model-len stays unless the search planned memory with another
    searched = {f: k for f, k in SEARCHED.items() if max_model_len is not None or k != "mml"}
    if c.mode != "aggregated":  # the pools' layout is the recipe strategy's (checked equal): the rest is searched
        want = [(f, v) for f, v in want if SEARCHED[f] not in _LAYOUT]
        searched = {f: k for f, k in searched.items() if k not in _LAYOUT}
    commands = []
    for cmd in base.commands:
        if cmd.role == "router" or not cmd.units:  # type: ignore[comparison-overlap]
            commands.append(cmd)
            continue
        tail = sum(len(u.tokens) for u in cmd.units)
        prefix = cmd.argv[:len(cmd.argv) - tail]
        replaced: dict[str, tuple[object, ...]] = {}
        kept = []
        for u in cmd.units:
            if u.flag in searched:
                replaced.setdefault(SEARCHED[u.flag], ())
                replaced[SEARCHED[u.flag]] += (u.origin,)
            else:
                kept.append(u)
        units = kept + [_unit(f, v, origin, replaced.get(SEARCHED[f], ())) for f, v in want]
        argv = tuple(prefix) + tuple(t for u in units for t in u.tokens)
        commands.append(replace(cmd, argv=argv, units=tuple(units)))
    # the reference (golden) form records the recipe's own command, which this plan no longer is
    stale = ("argv", "command", "docker_argv", "env")
    kept_ref = {k: v for k, v in base.reference.items() if k not in stale}
    return replace(base, commands=tuple(commands), reference=kept_ref)
