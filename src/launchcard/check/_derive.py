"""A plan for a model no recipe covers: derived by launchcard from the model's own files and the hardware catalog.

    plan = derive_plan("org/model", config_path, "h100")                  # vLLM
    plan = derive_plan("org/model", config_path, "h100", engine="sglang")  # SGLang
    verdict = check_plan(plan, config=config_path)                       # the same check as a recipe plan

Every choice is an argument whose origin is ``derived`` with the rule and the inputs it read, or an
``assumed``/``derived`` note on the plan (which the verdict shows as a finding), so nothing is guessed:

* parallelism - the smallest TP x PP on one node of the hardware whose weights, activations and the KV cache
  of one request of the requested context fit (the memory planner, the same search as ``smallest-plan``);
* dtype and quantization - from config.json (``torch_dtype``/``dtype``, ``quantization_config``): the engines
  read them from the checkpoint, so no flag is written and the note says what they will read;
* parsers - only a parser the model's own files name *and* the engine's captured parser registry holds;
  otherwise none, said as an ``assumed`` note (a parser is never guessed from the model's name);
* chat template - present in tokenizer_config.json / chat_template.jinja, or a warning that chat requests
  need ``--chat-template``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.check._config import ModelConfig, load_config
from launchcard.check._locate import model_folder_file
from launchcard.errors import InputError, NoFitError

if TYPE_CHECKING:
    from launchcard.hardware import Accelerator
    from launchcard.resolve import ArgUnit, Assumption, EnvEntry, Input, ResolvedPlan

# Any in this module: config.json / tokenizer_config.json values of every type.

DERIVED_LABEL = "derived by launchcard (no recipe)"
ENGINES = ("vllm", "sglang")
_MODEL_FILES = ("config.json", "tokenizer_config.json", "generation_config.json")
_PARSER_KEYS = {"tool_call_parser": ("tool_call_parser", "tool_parser"), "reasoning_parser": ("reasoning_parser",)}


def derive_plan(model: str, config: str | Path, hardware: str, *, engine: str = "vllm",
                max_model_len: int | None = None, engine_version: str | None = None,
                gpus_per_node: int | None = None) -> ResolvedPlan:
    """A checked-ready :class:`ResolvedPlan` for ``model`` on ``hardware`` (catalog profile or name): one node
    when one holds it, else (vLLM) TP across each node's GPUs and PP across the fewest nodes that do, in the
    recipes' multi-node TP x PP form.

    Raises InputError (exit 2) for a bad engine, hardware or config, NoFitError (exit 1) when no plan fits
    (the message names the smallest plan that would).  ``gpus_per_node`` is the user's node size; it replaces
    the catalog profile's (and the one-GPU assumption for an accelerator that has no profile)."""
    from launchcard.resolve import Command, Origin, ResolvedPlan

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} for a derived plan", where="--engine",
                         fix=f"use one of: {', '.join(ENGINES)}")
    cfg = load_config(config)
    hw_key, acc, per_node, hw_notes, hw_inputs = _hardware(hardware, gpus_per_node)
    arch, mplan_inputs, tp, pp, nodes, weights = _size(cfg, acc, per_node, max_model_len, engine_version,
                                                       hw_inputs, engine)
    path = Path(cfg.path)
    notes = [*hw_notes, *_checkpoint_notes(cfg, engine), *_modality_notes(cfg), *_template_notes(path, model)]
    parsers, parser_notes = _parsers(path, model, engine)
    notes += parser_notes
    if engine == "sglang":
        notes.append(_note("derived", "the SGLang plan's TP x PP is chosen with the memory planner's vLLM accounting "
                                      "(SGLang's own pool sizing differs in detail); resolve and check judge its "
                                      "memory the same way, predict and plan by SGLang's own pool rules",
                           "memory planner", "run launchcard verify/bench against the endpoint to confirm"))
    where = ("on one node" if nodes == 1 else
             f"over the fewest nodes ({nodes}): TP over each node's GPUs, PP across nodes")
    size_origin = Origin(
        layer="derived", key="parallelism",
        derived=(f"smallest TP x PP {where} (TP dividing the attention heads and suiting the KV heads) whose "
                 f"weights ({weights:.1f} GiB/GPU), activations and the KV cache of one request of the context fit"),
        inputs=tuple(mplan_inputs))
    commands = []
    for rank in range(nodes):
        units = _units(engine, model, tp, pp, max_model_len, parsers, size_origin,
                       node=(nodes, rank) if nodes > 1 else None)
        envs = _node_env(nodes) if nodes > 1 else ()
        commands.append(Command(role="single" if nodes == 1 else ("head" if rank == 0 else "worker"),
                                node_rank=None if nodes == 1 else rank,
                                argv=command_prefix(engine, model) + tuple(t for u in units for t in u.tokens),
                                env={e.name: e.value for e in envs}, units=tuple(units), env_entries=envs,
                                port=8000))
    image, image_note = _image(engine, acc)
    notes.append(image_note)
    return ResolvedPlan(
        model=model, model_id=model, variant="derived", hardware=hw_key, strategy=None,
        node_count=nodes, deploy_type="single_node" if nodes == 1 else "multi_node", docker_image=image,
        brand=acc.vendor, generation=acc.arch or None, gpus_per_node=per_node, commands=tuple(commands),
        assumed=tuple(notes), derived=DERIVED_LABEL, engine=engine, reference={"arch": arch.model_type})


_MULTI_NODE_FORM = "vllm-recipes strategies/multi_node_tp_pp.yaml (the recipes builder's multi-node TP x PP form)"


def _node_env(nodes: int) -> tuple[EnvEntry, ...]:
    from launchcard.resolve import EnvEntry, Input, Origin

    origin = Origin(layer="derived", key="multi_node", derived="the network interface NCCL and Gloo use between "
                                                               "nodes, a placeholder set at deploy time",
                    inputs=(Input(name=_MULTI_NODE_FORM, value="GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME"),
                            Input(name="nodes", value=str(nodes))))
    return tuple(EnvEntry(name=n, value="$IFACE_NAME", origin=origin)
                 for n in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"))


# -- hardware ------------------------------------------------------------------------------------------

def _hardware(name: str, gpus_per_node: int | None = None,
              ) -> tuple[str, Accelerator, int, list[Assumption], list[Input]]:
    """(key, accelerator, GPUs per node, notes, inputs): a catalog profile, or an accelerator name mapped onto
    its one profile (several: an error naming them; none: one GPU, said as an ``assumed`` note); a node size
    the user gives (``--gpus-per-node``) replaces either."""
    from launchcard.hardware import catalog
    from launchcard.resolve import Input

    cat = catalog()
    prof = cat.profile(name)
    notes: list[Assumption] = []
    if prof is None:
        if not cat.candidates(name):
            import difflib

            close = difflib.get_close_matches(name.strip().lower(), list(cat.profiles), n=4, cutoff=0.4)
            raise InputError(f"unknown hardware {name!r}: neither a node profile nor an accelerator of the hardware "
                             "catalog", where="--hardware",
                             fix=f"close matches: {', '.join(dict.fromkeys([*close, *cat.closest(name, 3)])) or 'none'}"
                                 f"; profiles: {', '.join(list(cat.profiles)[:8])} ...")
        acc = cat.find(name, where="--hardware")
        mapped = [p for p in cat.profiles.values() if p.accelerator.id == acc.id]
        if gpus_per_node is not None:  # the user's node: no catalog profile to choose or assume
            mapped = []
        if len(mapped) > 1:
            raise InputError(f"hardware {name!r} ({acc.id}) comes in several node sizes: "
                             + ", ".join(f"{p.id} ({p.per_node} GPU(s))" for p in mapped), where="--hardware",
                             fix="pass one of those profile ids")
        prof = mapped[0] if mapped else None
        if prof is not None and name.strip().lower() != prof.id:
            notes.append(_note("assumed", f"--hardware {name!r} is the {acc.name}; planned on the catalog's node "
                                          f"profile {prof.id} ({prof.per_node} per node)",
                               "hardware catalog (data/hardware.yaml profiles)", f"pass --hardware {prof.id}"))
    if gpus_per_node is not None:
        acc = prof.accelerator if prof is not None else acc
        key, per_node = (prof.id if prof is not None else acc.id), gpus_per_node
        node_input = Input(name="--gpus-per-node (your node)", value=f"{acc.id} x {gpus_per_node}")
    elif prof is not None:
        key, acc, per_node = prof.id, prof.accelerator, prof.per_node
        node_input = Input(name=f"hardware catalog profiles.{prof.id}", value=f"{acc.id} x {per_node}")
    else:
        key, per_node = acc.id, 1
        notes.append(_note("assumed", f"{name!r} is the {acc.name} ({acc.id}); the hardware catalog has no node "
                                      "profile for it, so the plan is sized for one GPU",
                           "hardware catalog (data/hardware.yaml profiles)",
                           "pass --gpus-per-node N for your node, or name a profile of the catalog "
                           "(e.g. h100, h200, b200)"))
        node_input = Input(name=f"hardware catalog {acc.id}", value="no node profile: 1 GPU")
    if acc.kind == "cpu":
        raise InputError(f"{name!r} is a CPU profile; derived plans size GPUs", where="--hardware",
                         fix="plan the CPU backend with launchcard memory --config FILE --gpu " + acc.id)
    mem = Input(name=f"hardware catalog {acc.id}.memory_gib ({acc.source('memory_gib') or 'no source'})",
                value=f"{acc.memory_gib:g}")
    return key, acc, per_node, notes, [node_input, mem]


# -- sizing -----------------------------------------------------------------------------------------------

def _size(cfg: ModelConfig, acc: Accelerator, per_node: int, max_model_len: int | None, version: str | None,
          hw_inputs: list[Input], engine: str) -> tuple[Any, list[Input], int, int, int, float]:
    """(arch, inputs, TP, PP, nodes, weights GiB per GPU) of the smallest plan on one node that fits, else (vLLM,
    a node profile of several GPUs) TP = the node's GPUs and PP = the fewest nodes that fit."""
    from launchcard.check._sizing import smallest_fit
    from launchcard.memory import Settings, arch_from_config, plan_memory
    from launchcard.resolve import Input

    arch = arch_from_config(dict(cfg.raw), where=cfg.path)
    settings = Settings(max_model_len=max_model_len, vllm_version=version)
    best = smallest_fit(arch, settings, acc, acc.memory_gib, max_gpus=per_node, tp_first=True)
    if best is None:  # what the smallest plan would be across nodes, for the message
        best = smallest_fit(arch, settings, acc, acc.memory_gib)
    context = max_model_len or arch.max_position_embeddings
    ctx_name = "--max-model-len (your choice)" if max_model_len else _context_name(cfg)
    nodes = 1
    if best is not None and best[0] * best[1] > per_node and engine == "vllm" and per_node > 1:
        best, nodes = _across_nodes(arch, settings, acc, per_node)
    if best is None or best[0] * best[1] > per_node * nodes:
        smallest = "none up to 128 GPUs" if best is None else f"TP {best[0]} x PP {best[1]} = {best[0] * best[1]} GPUs"
        raise NoFitError(
            f"no parallelism on one {acc.id} node ({per_node} GPU(s), {acc.memory_gib:g} GiB each) holds the weights "
            f"and one request of {context:,} tokens; smallest that fits: {smallest}" if context else
            f"no parallelism on one {acc.id} node ({per_node} GPU(s), {acc.memory_gib:g} GiB each) holds the weights "
            f"and one request of the context (the config gives no max_position_embeddings; --max-model-len sets "
            f"it); smallest that fits: {smallest}",
            where=f"--hardware {acc.id}",
            fix="pass a shorter --max-model-len, hardware with more memory per node, or a quantized checkpoint"
                + (f"; if your {acc.id} nodes hold more than {per_node} GPU(s), say how many with --gpus-per-node N"
                   if best is not None and best[0] * best[1] > per_node else "")
                + ("" if engine == "vllm" else " (derived SGLang plans are single-node; --engine vllm spans nodes)"))
    tp, pp = best
    mplan = plan_memory(arch, replace(settings, tp=tp, pp=pp), gpu=acc)
    inputs = [*_shape_inputs(cfg, arch),
              Input(name=f"memory planner weights at TP {tp} x PP {pp} (GiB/GPU)",
                    value=f"{mplan.weights_gib_per_gpu:.2f}"),
              Input(name=ctx_name, value=str(context) if context else "unknown"),
              *hw_inputs]
    return arch, inputs, tp, pp, nodes, mplan.weights_gib_per_gpu


def _context_name(cfg: ModelConfig) -> str:
    """Where the served context came from: the config's own max_position_embeddings, or (absent) its class's."""
    from launchcard.check._config import nested_key

    prefix = nested_key(cfg.raw)
    text = cfg.raw.get(prefix) if prefix else cfg.raw
    key = f"{prefix}.max_position_embeddings" if prefix else "max_position_embeddings"
    held = isinstance(text, Mapping) and text.get("max_position_embeddings") is not None
    return f"{cfg.path} ({key}{'' if held else ' absent: the config class default, see the assumed notes'})"


def _shape_inputs(cfg: ModelConfig, arch: Any) -> list[Input]:
    """The heads, KV heads and layers the parallelism was sized on, each named as the config.json spells it
    (``text_config.`` when nested); a value the config does not hold says where it came from instead (MLA's one
    latent KV head from ``kv_lora_rank``, a default of the config class)."""
    from launchcard.check._config import nested_key
    from launchcard.resolve import Input

    prefix = nested_key(cfg.raw)
    text = cfg.raw.get(prefix) if prefix else cfg.raw
    text = text if isinstance(text, Mapping) else cfg.raw
    where = f"{prefix}." if prefix else ""

    def read(key: str, value: int, absent: str) -> Input:
        if text.get(key) == value:
            return Input(name=f"{cfg.path} {where}{key}", value=str(value))
        return Input(name=f"{cfg.path} {where}{key} ({absent})", value=str(value))

    kv = (Input(name=f"{cfg.path} {where}kv_lora_rank (MLA: one latent KV head, replicated on every TP rank)",
                value=str(arch.kv_lora_rank))
          if arch.kv_lora_rank else read("num_key_value_heads", arch.num_kv_heads,
                                         "absent: as many as the attention heads"))
    return [read("num_attention_heads", arch.num_heads, "as the memory planner read it"), kv,
            read("num_hidden_layers", arch.num_layers, "as the memory planner read it")]


def _across_nodes(arch: Any, settings: Any, acc: Accelerator, per_node: int) -> tuple[tuple[int, int] | None, int]:
    """((TP, PP), nodes): TP = the node's GPUs (it must suit the heads), PP = the fewest nodes up to the recipes
    builder's limit whose plan fits; (None, 1) when none does."""
    from launchcard.check._hardware import MAX_NODES
    from launchcard.memory import fits_with

    kv = max(1, arch.num_kv_heads)
    if arch.num_heads % per_node or not (kv % per_node == 0 or per_node % kv == 0):
        return None, 1
    for nodes in range(2, min(MAX_NODES, arch.num_layers) + 1):
        try:
            if fits_with(arch, replace(settings, tp=per_node, pp=nodes), acc, acc.memory_gib):
                return (per_node, nodes), nodes
        except Exception:  # noqa: BLE001 - a layout the planner cannot plan is simply not the answer
            continue
    return None, 1


# -- arguments ---------------------------------------------------------------------------------------------

def command_prefix(engine: str, model: str) -> tuple[str, ...]:
    """What every command of a derived plan starts with; the recipes' plans keep ``vllm serve MODEL`` out of their
    credited units in the same way (the model is what was asked for, the entry point the engine's)."""
    return ("vllm", "serve", model) if engine == "vllm" else ("python3", "-m", "sglang.launch_server")


def _units(engine: str, model: str, tp: int, pp: int, max_model_len: int | None, parsers: dict[str, tuple[str, str]],
           size: Any, *, node: tuple[int, int] | None = None) -> list[ArgUnit]:
    from launchcard.resolve import ArgUnit, Input, Origin

    asked = Origin(layer="derived", key="model", derived="the model asked for", inputs=(Input(name="MODEL",
                                                                                              value=model),))
    user = Origin(layer="user", key="max_model_len")
    out: list[ArgUnit] = []
    if engine == "vllm":  # the units are the arguments after ``vllm serve MODEL`` (see :func:`command_prefix`)
        out += [ArgUnit(flag="--tensor-parallel-size", value=str(tp), origin=size)]
        if pp > 1:
            out.append(ArgUnit(flag="--pipeline-parallel-size", value=str(pp), origin=size))
        if node is not None:
            out += _node_units(*node)
        if max_model_len:
            out.append(ArgUnit(flag="--max-model-len", value=str(max_model_len), origin=user))
        names = {"tool_call_parser": "--tool-call-parser", "reasoning_parser": "--reasoning-parser"}
    else:
        out += [ArgUnit(flag="--model-path", value=model, origin=asked),
                ArgUnit(flag="--tp-size", value=str(tp), origin=size)]
        if pp > 1:
            out.append(ArgUnit(flag="--pp-size", value=str(pp), origin=size))
        if max_model_len:
            out.append(ArgUnit(flag="--context-length", value=str(max_model_len), origin=user))
        from launchcard.flagspec import shipped_spec

        spec = shipped_spec("sglang", None)
        host = Origin(layer="derived", key="serving",
                      derived="SGLang listens on 127.0.0.1 and port 30000 by default; a container's published port "
                              "and launchcard's verify/emit use 0.0.0.0:8000, as vLLM does",
                      inputs=(Input(name=f"sglang {spec.version} captured spec --host default", value="127.0.0.1"),
                              Input(name=f"sglang {spec.version} captured spec --port default", value="30000")))
        out += [ArgUnit(flag="--host", value="0.0.0.0", origin=host), ArgUnit(flag="--port", value="8000",
                                                                               origin=host)]
        names = {"tool_call_parser": "--tool-call-parser", "reasoning_parser": "--reasoning-parser"}
    for kind, (value, where) in parsers.items():
        origin = Origin(layer="derived", key=kind, derived=f"the model's own files name the {kind.replace('_', ' ')} "
                                                           f"and the engine's parser registry holds it",
                        inputs=(Input(name=where, value=value),))
        if kind == "tool_call_parser" and engine == "vllm":
            out.append(ArgUnit(flag="--enable-auto-tool-choice", origin=origin))
        out.append(ArgUnit(flag=names[kind], value=value, origin=origin))
    return out


def _node_units(nodes: int, rank: int) -> list[ArgUnit]:
    """``--nnodes N --node-rank R --master-addr $HEAD_IP`` (+ ``--headless`` on a follower), as the recipes'
    multi-node TP x PP strategy writes them."""
    from launchcard.resolve import ArgUnit, Input, Origin

    form = Input(name=_MULTI_NODE_FORM, value="--nnodes/--node-rank/--master-addr/--headless")

    def origin(rule: str) -> Origin:
        return Origin(layer="derived", key="multi_node", derived=rule, inputs=(form, Input(name="nodes",
                                                                                            value=str(nodes))))

    out = [ArgUnit(flag="--nnodes", value=str(nodes), origin=origin("the node count the plan needs")),
           ArgUnit(flag="--node-rank", value=str(rank), origin=origin(f"this command's node rank (0 = head) of "
                                                                       f"{nodes} nodes")),
           ArgUnit(flag="--master-addr", value="$HEAD_IP",
                   origin=origin("placeholder: the head node's address (node rank 0), set at deploy time"))]
    if rank > 0:
        out.append(ArgUnit(flag="--headless", origin=origin("a follower (node rank > 0) runs without the API "
                                                            "server")))
    return out


def _image(engine: str, acc: Accelerator) -> tuple[str, Assumption]:
    """The engine's published image for the accelerator's brand, as the recipes builder picks it (vLLM) or the
    SGLang cookbook names it (its CUDA image only); a brand neither names gets the CUDA image, said so."""
    from launchcard.resolve import accelerator_brand_key, builder_default_image

    pin = "pass --image IMAGE@sha256:DIGEST to pin the release you tested"
    key = accelerator_brand_key(acc.vendor, acc.kind)
    if engine == "vllm" and acc.vendor == "Intel" and acc.kind == "gpu":
        key, image = "intel xpu", "vllm/vllm-openai-xpu:latest"
    elif engine == "vllm" and (acc.vendor in ("NVIDIA", "AMD", "Google") or acc.kind == "cpu"):
        image = builder_default_image(key) or "vllm/vllm-openai:latest"
    else:
        image = "vllm/vllm-openai:latest" if engine == "vllm" else "lmsysorg/sglang:latest"
        if acc.vendor != "NVIDIA":
            source = ("the recipes builder names no image for it" if engine == "vllm"
                      else "the SGLang cookbook's install step names only its CUDA image")
            return image, _note("assumed", f"container image {image} is a CUDA build: {source}, so it will not "
                                           f"run on the {acc.name}", f"hardware catalog {acc.id} (vendor "
                                           f"{acc.vendor}, kind {acc.kind})",
                                f"pass --image with the engine's build for {acc.vendor} {acc.kind}s")
    where = (f"the recipes builder's default {key.upper() if key != 'intel xpu' else 'Intel XPU'} image (resolution "
             "spec: docker_image)" if engine == "vllm"
             else "the SGLang cookbook's install step (docker pull lmsysorg/sglang:latest)")
    return image, _note("derived", f"container image {image}: the engine's published image ({where})", where, pin)


# -- the model's own files ---------------------------------------------------------------------------------

def _note(code: str, message: str, evidence: str, fix: str) -> Assumption:
    from launchcard.resolve import Assumption

    return Assumption(code=code, message=message, evidence=evidence, fix=fix)


def _native_class(raw: Mapping[str, Any]) -> tuple[str, str] | None:
    """(architecture, where vLLM defines it) for the config's first architecture vLLM's captured model registry
    holds (``launchcard.limits`` table, every registered class with its source line), else None."""
    from launchcard.limits import source, table

    registry = table().get("pp_support") or {}
    for arch in raw.get("architectures") or []:
        entry = registry.get(str(arch))
        if isinstance(entry, Mapping) and entry.get("source"):
            return str(arch), f"{source()} {entry['source']}"
    return None


def _checkpoint_notes(cfg: ModelConfig, engine: str = "vllm") -> list[Assumption]:
    raw = cfg.raw
    text = raw.get("text_config") if isinstance(raw.get("text_config"), Mapping) else {}
    dtype = raw.get("torch_dtype") or raw.get("dtype") or (text or {}).get("torch_dtype") or (text or {}).get("dtype")
    out = []
    if dtype:
        out.append(_note("derived", f"dtype {dtype}: read by the engine from the checkpoint (--dtype auto), so no "
                                    "flag is written", cfg.field("torch_dtype"), "pass --dtype to override it"))
    else:
        out.append(_note("assumed", "config.json states no torch_dtype: the engine picks its default for the "
                                    "architecture", cfg.field("torch_dtype"), "pass --dtype"))
    if cfg.quant_method:
        out.append(_note("derived", f"quantization {cfg.quant_method}: read by the engine from the checkpoint's "
                                    "quantization_config, so no --quantization flag is written",
                         cfg.field("quantization_config.quant_method"), "none needed"))
    else:
        out.append(_note("derived", "unquantized checkpoint (no quantization_config): weights in the stated dtype",
                         cfg.field("quantization_config"), "none needed"))
    native = _native_class(raw) if engine == "vllm" else None
    if raw.get("auto_map") and native is not None:
        out.append(_note("derived", f"config.json has auto_map (custom model code), but vLLM implements {native[0]} "
                                    "natively, so no --trust-remote-code is needed",
                         f"{cfg.field('auto_map')}; {native[1]} (model registry captured from the engine)",
                         "none needed"))
    elif raw.get("auto_map"):
        out.append(_note("assumed", f"config.json has auto_map (custom model code); unless the engine implements "
                                    f"{', '.join(map(str, raw.get('architectures') or [])) or 'the architecture'} "
                                    "natively it needs --trust-remote-code, which launchcard does not add for you",
                         cfg.field("auto_map"), "add --trust-remote-code once you trust the repository's code"))
    return out


def _read_json(path: Path | None) -> Mapping[str, Any] | None:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, Mapping) else None


def _template_notes(config: Path, model: str) -> list[Assumption]:
    tok_path = model_folder_file(config, "tokenizer_config.json", model)
    jinja = model_folder_file(config, "chat_template.jinja", model) or model_folder_file(config, "chat_template.json",
                                                                                        model)
    if jinja is not None:
        try:
            text = jinja.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        return [_note("derived", "chat template: the model ships one (the engine applies it to chat requests)",
                      str(jinja), "none needed"), *_tools_note(text, str(jinja))]
    tok = _read_json(tok_path)
    if tok is None:
        return [_note("assumed", "chat template not checked: no tokenizer_config.json next to config.json or in the "
                                 "local caches", f"{config.parent}/tokenizer_config.json",
                      "put tokenizer_config.json next to config.json (hf download MODEL tokenizer_config.json)")]
    template = tok.get("chat_template")
    if template:
        # a string, or a list of {"name", "template"} (named templates such as "tool_use")
        text = template if isinstance(template, str) else json.dumps(template)
        return [_note("derived", "chat template: tokenizer_config.json has chat_template (the engine applies it)",
                      f"{tok_path} (chat_template)", "none needed"),
                *_tools_note(text, f"{tok_path} (chat_template)")]
    return [_warn(f"{tok_path} has no chat_template and the model ships no chat_template.jinja: "
                               "/v1/chat/completions will be refused; completions work",
                               f"{tok_path} (chat_template)", "pass --chat-template FILE (vLLM) or "
                                                              "--chat-template NAME (SGLang)")]


def _tools_note(template: str, where: str) -> list[Assumption]:
    """The template renders a ``tools`` list: tool calls are possible, but which parser reads them back is
    something the engine needs named (the next note says whether the model's files name one)."""
    if "tools" not in template:
        return []
    return [_note("derived", "the chat template renders the request's tools, so the model can be asked for tool "
                             "calls; the engine returns them as tool_calls only with --enable-auto-tool-choice and "
                             "the parser for the model's format", where,
                  "add --enable-auto-tool-choice --tool-call-parser NAME when the model card names its parser")]


def _modality_notes(cfg: ModelConfig) -> list[Assumption]:
    """An image/audio encoder in config.json: what the server takes besides text (for verify --expect vision)."""
    out = []
    for key, what in (("vision_config", "images"), ("audio_config", "audio")):
        if isinstance(cfg.raw.get(key), Mapping):
            out.append(_note("derived", f"multimodal: config.json has {key}, so the server takes {what} as well as "
                                        "text (its encoder's weights are in the memory plan)", cfg.field(key),
                             "launchcard verify --expect vision checks image input" if what == "images"
                             else "none needed"))
    return out


def _warn(message: str, evidence: str, fix: str) -> Assumption:
    """A note the verdict shows as a warning (``selection-replaced`` is the plan note code that warns)."""
    return _note("selection-replaced", message, evidence, fix)


def _parsers(config: Path, model: str, engine: str) -> tuple[dict[str, tuple[str, str]], list[Assumption]]:
    """Parsers the model's own files name that the engine's captured registry holds (never a name guessed)."""
    from launchcard.flagspec import shipped_spec

    spec = shipped_spec(engine, None)
    registries: dict[str, tuple[str, ...]] = {}
    for kind, flag in (("tool_call_parser", "--tool-call-parser"), ("reasoning_parser", "--reasoning-parser")):
        names = tuple(spec.registries.get(kind) or ())
        if not names:
            opt = spec.by_flag.get(flag) if hasattr(spec, "by_flag") else None
            names = tuple(getattr(opt, "choices", None) or ())
        registries[kind] = names
    found: dict[str, tuple[str, str]] = {}
    for name in _MODEL_FILES:
        path = config if name == "config.json" else model_folder_file(config, name, model)
        data = _read_json(path)
        if data is None:
            continue
        for kind, keys in _PARSER_KEYS.items():
            for key in keys:
                value = data.get(key)
                if kind not in found and isinstance(value, str) and value in registries[kind]:
                    found[kind] = (value, f"{path} ({key})")
    notes = []
    for kind in _PARSER_KEYS:
        if kind not in found:
            label = kind.replace("_", " ")
            notes.append(_note("assumed", f"no {label}: the model's files name none that {engine} {spec.version}'s "
                                          f"registry holds, and launchcard does not guess one from the model's name",
                               f"{config.parent} ({', '.join(_MODEL_FILES)}); {engine} {spec.version} captured "
                               f"{kind} registry",
                               f"add --{kind.replace('_', '-')} NAME if the model card names one"))
    return found, notes
