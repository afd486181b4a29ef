"""YAML values of recipe, strategy and taxonomy files → typed records, checked on the way.

This is the one place that knows the files' structure: every field the resolver
reads is converted here, and a value of the wrong type stops with one error
naming the file, the line, the rule, the bad value and the fix.  Unknown keys
are allowed (the upstream schema grows faster than any reader).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from launchcard.errors import RecipeError
from launchcard.sources._recipe_types import (
    ArgList,
    ArgsBlock,
    Companion,
    EnvMap,
    Feature,
    HwBlock,
    HwProfile,
    ImageSpec,
    KvOption,
    KvRouter,
    Meta,
    MinGpus,
    Mode,
    ModelBlock,
    Omni,
    OmniTask,
    Recipe,
    RoleOverride,
    Scalar,
    Strategy,
    StrategyOverride,
    StrategyRole,
    Taxonomy,
    TpSpec,
    Variant,
)

if TYPE_CHECKING:
    from launchcard.sources._recipe_doc import RecipeDoc

T = TypeVar("T")
Path = tuple[Any, ...]
_NUM = (int, float)
_SCALAR = (str, int, float, bool)
_TYPE_NAMES = {dict: "a mapping", list: "a list", str: "a string", int: "a number",
               float: "a number", bool: "true/false"}


def _dotted(path: Path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


class _Conv:
    """Converts one document; every reader names the path it reads for the error message."""

    def __init__(self, doc: RecipeDoc) -> None:
        self.doc = doc

    def fail(self, path: Path, rule: str, fix: str) -> RecipeError:
        line = self.doc.line(*path) if path else 1
        return RecipeError(f"{_dotted(path)}: {rule}", where=f"{self.doc.file or self.doc.path}:{line or 1}", fix=fix)

    def typed(self, value: Any, path: Path, *types: type) -> Any:
        """``value`` when it is None or one of ``types`` (bool is not a number), else an error."""
        if value is None:
            return None
        ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
        if not ok:
            want = " or ".join(dict.fromkeys(_TYPE_NAMES.get(t, t.__name__) for t in types))
            raise self.fail(path, f"must be {want}, got {type(value).__name__} {str(value)[:40]!r}",
                            f"write {_dotted(path)} as {want}")
        return value

    def str_(self, m: Mapping[str, Any], key: str, path: Path) -> str | None:
        value: str | None = self.typed(m.get(key), path + (key,), str)
        return value

    def num(self, m: Mapping[str, Any], key: str, path: Path) -> int | float | None:
        value: int | float | None = self.typed(m.get(key), path + (key,), int, float)
        return value

    def scalar(self, m: Mapping[str, Any], key: str, path: Path) -> Scalar | None:
        value: Scalar | None = self.typed(m.get(key), path + (key,), *_SCALAR)
        return value

    def flag(self, m: Mapping[str, Any], key: str, path: Path) -> bool | None:
        value: bool | None = self.typed(m.get(key), path + (key,), bool)
        return value

    def mapping(self, value: Any, path: Path) -> dict[Any, Any]:
        found: dict[Any, Any] | None = self.typed(value, path, dict)
        return found if found is not None else {}

    def sub(self, m: Mapping[str, Any], key: str, path: Path) -> dict[Any, Any]:
        return self.mapping(m.get(key), path + (key,))

    def strs(self, m: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...] | None:
        items = self.typed(m.get(key), path + (key,), list)
        if items is None:
            return None
        for i, item in enumerate(items):
            self.typed(item, path + (key, i), str, int, float)
        return tuple(str(i) if not isinstance(i, str) else i for i in items if i is not None)

    def args(self, m: Mapping[str, Any], key: str, path: Path) -> ArgList | None:
        items = self.typed(m.get(key), path + (key,), list)
        if items is None:
            return None
        for i, item in enumerate(items):
            if item is not None and not isinstance(item, _SCALAR):
                raise self.fail(path + (key, i), f"argument must be a string, got {type(item).__name__}",
                                "quote each argument as its own list item")
        return tuple(items)

    def env(self, m: Mapping[str, Any], key: str, path: Path) -> EnvMap | None:
        found = self.typed(m.get(key), path + (key,), dict)
        if found is None:
            return None
        for k, v in found.items():
            if v is not None and not isinstance(v, _SCALAR):
                raise self.fail(path + (key, k), f"environment value must be a scalar, got {type(v).__name__}",
                                "quote the value as a string")
        return {str(k): v for k, v in found.items()}

    def keyed(self, m: Mapping[str, Any], key: str, path: Path,
              read: Callable[[dict[Any, Any], Path], T], *, keep_null: bool = False) -> dict[str, T]:
        """A mapping of mappings.  Null entries are dropped (hardware-keyed maps: they behave as
        absent) or, with ``keep_null``, read as empty (named entries: the name still counts)."""
        out: dict[str, T] = {}
        p = path + (key,)
        for k, v in self.mapping(m.get(key), p).items():
            block = self.typed(v, p + (k,), dict)
            if block is not None or keep_null:
                out[str(k)] = read(block or {}, p + (k,))
        return out

    def scalars(self, m: Mapping[str, Any], key: str, path: Path) -> dict[str, Scalar]:
        return self.scalar_map(m.get(key), path + (key,))

    def scalar_map(self, value: Any, p: Path) -> dict[str, Scalar]:
        """A mapping of scalars (null entries dropped)."""
        out: dict[str, Scalar] = {}
        for k, v in self.mapping(value, p).items():
            value = self.typed(v, p + (k,), *_SCALAR)
            if value is not None:
                out[str(k)] = value
        return out

    # -- shared blocks ---------------------------------------------------------------
    def hw_block(self, m: dict[Any, Any], path: Path) -> HwBlock:
        return HwBlock(self.args(m, "extra_args", path), self.env(m, "extra_env", path),
                       self.str_(m, "docker_image", path), self.str_(m, "model_id", path))

    def hw_blocks(self, m: Mapping[str, Any], path: Path) -> dict[str, HwBlock]:
        return self.keyed(m, "hardware_overrides", path, self.hw_block)

    def args_blocks(self, m: Mapping[str, Any], path: Path) -> dict[str, ArgsBlock]:
        return self.keyed(m, "hardware_overrides", path, lambda b, p: ArgsBlock(self.args(b, "args", p)))

    def companion(self, m: Mapping[str, Any], path: Path) -> Companion | None:
        found = self.typed(m.get("companion"), path + ("companion",), dict)
        if found is None:
            return None
        p = path + ("companion",)
        return Companion(self.str_(found, "command", p), self.str_(found, "label", p),
                         self.str_(found, "description", p))

    def image(self, m: Mapping[str, Any], path: Path) -> ImageSpec | None:
        value = self.typed(m.get("docker_image"), path + ("docker_image",), str, dict)
        if isinstance(value, dict):
            for k, v in value.items():
                inner = self.typed(v, path + ("docker_image", k), str, dict)
                for kk, vv in (inner.items() if isinstance(inner, dict) else ()):
                    self.typed(vv, path + ("docker_image", k, kk), str)
        image: ImageSpec | None = value
        return image

    def tp(self, m: Mapping[str, Any], path: Path) -> TpSpec | None:
        value = self.typed(m.get("tp"), path + ("tp",), int, float, dict)
        if isinstance(value, dict):
            for k, v in value.items():
                self.typed(v, path + ("tp", k), int, float)
        spec: TpSpec | None = value
        return spec


# -- taxonomy and strategies -------------------------------------------------------------------

def check_taxonomy(doc: RecipeDoc) -> Taxonomy:
    c = _Conv(doc)
    data = c.mapping(doc.data, ())
    if not c.sub(data, "hardware_profiles", ()):
        raise c.fail((), "no hardware_profiles defined", "add hardware_profiles to taxonomy.yaml")

    def profile(m: dict[Any, Any], p: Path) -> HwProfile:
        count = c.typed(m.get("gpu_count"), p + ("gpu_count",), int, float, str)
        gen = c.typed(m.get("generation"), p + ("generation",), str, list)
        gens = tuple(g for g in gen if isinstance(g, str)) if isinstance(gen, list) else ((gen,) if gen else ())
        return HwProfile(c.str_(m, "brand", p), gens, int(count) if isinstance(count, _NUM) else 1,
                         c.num(m, "vram_gb", p), m.get("restricted") is True, m.get("scalable") is not False)

    def kv(m: dict[Any, Any], p: Path) -> KvOption:
        return KvOption(c.args(m, "args", p), c.env(m, "env", p), c.strs(m, "strategies", p),
                        m.get("requires_opt_in") is True, c.strs(m, "brands", p), c.companion(m, p),
                        c.str_(m, "install", p))

    return Taxonomy(c.keyed(data, "hardware_profiles", (), profile), c.keyed(data, "kv_offload", (), kv))


def check_strategy(doc: RecipeDoc, default_name: str) -> Strategy:
    c = _Conv(doc)
    data = c.mapping(doc.data, ())

    def role(name: str) -> StrategyRole:
        m, p = c.sub(data, name, ()), (name,)
        return StrategyRole(c.args(m, "vllm_args", p), c.env(m, "env", p), c.str_(m, "parallelism", p),
                            c.num(m, "tp", p), c.str_(m, "parallel_flag", p))

    router_raw = c.typed(data.get("router"), ("router",), dict)
    router = None
    if router_raw is not None:
        router = KvRouter(c.str_(router_raw, "policy", ("router",)), c.str_(router_raw, "install", ("router",)),
                          c.typed(router_raw.get("port"), ("router", "port"), int))
    vllm = c.sub(data, "vllm", ())
    pd = c.sub(data, "pd", ())
    pd_args = {r: a for r in ("prefill", "decode")
               if (a := c.args(c.sub(pd, r, ("pd",)), "args", ("pd", r))) is not None}
    return Strategy(
        name=c.str_(data, "name", ()) or default_name, deploy_type=c.str_(data, "deploy_type", ()),
        vllm_args=c.args(data, "vllm_args", ()), env=c.env(data, "env", ()),
        parallel_flag=c.str_(data, "parallel_flag", ()), parallelism=c.str_(data, "parallelism", ()),
        prefill=role("prefill"), decode=role("decode"), router=router, router_raw=router_raw,
        store_vllm_args=c.args(vllm, "vllm_args", ("vllm",)), store_env=c.env(vllm, "env", ("vllm",)),
        store_install={k: v for k, v in c.scalars(vllm, "install", ("vllm",)).items() if isinstance(v, str)},
        store_port=c.scalar(vllm, "port", ("vllm",)), pd_args=pd_args,
        master_command=c.str_(c.sub(data, "mooncake_master", ()), "command", ("mooncake_master",)),
        store_command=c.str_(c.sub(data, "mooncake_store_config", ()), "command", ("mooncake_store_config",)),
        default_instances=c.num(data, "default_instances", ()),
    )


# -- recipes -----------------------------------------------------------------------------------

def check_recipe(doc: RecipeDoc, known_strategies: set[str] | None = None) -> Recipe:
    c = _Conv(doc)
    data = doc.data
    if not isinstance(data, dict):
        raise c.fail((), f"a recipe must be a mapping, got {type(data).__name__}",
                     "start the file with keys such as meta:, model:, variants:")
    m, mp = c.sub(data, "model", ()), ("model",)
    model = ModelBlock(
        model_id=c.str_(m, "model_id", mp), base_args=c.args(m, "base_args", mp), base_env=c.env(m, "base_env", mp),
        docker_image=c.image(m, mp), nightly_required=bool(c.flag(m, "nightly_required", mp)),
        min_vllm_version=c.scalar(m, "min_vllm_version", mp),
        context_length=c.typed(m.get("context_length"), mp + ("context_length",), int),
        architecture=c.str_(m, "architecture", mp), parameter_count=c.scalar(m, "parameter_count", mp),
        active_parameters=c.scalar(m, "active_parameters", mp))
    meta_m = c.sub(data, "meta", ())
    meta = Meta(c.scalars(meta_m, "hardware", ("meta",)), c.str_(meta_m, "default_hardware", ("meta",)),
                tuple(t for t in (c.typed(meta_m.get("tasks"), ("meta", "tasks"), list) or []) if t is not None))
    variants = c.keyed(data, "variants", (), lambda v, p: _variant(c, v, p), keep_null=True)
    features = c.keyed(data, "features", (), lambda f, p: _feature(c, f, p, variants), keep_null=True)
    _check_default_modes(c, variants, features)
    compat = c.strs(data, "compatible_strategies", ()) or ()
    default_strategy = c.str_(data, "default_strategy", ())
    if known_strategies is not None:
        for i, name in enumerate(compat):
            if name not in known_strategies:
                raise c.fail(("compatible_strategies", i), f"names strategy {name!r}, which does not exist",
                             _closest(name, known_strategies))
        if default_strategy is not None and default_strategy not in known_strategies:
            raise c.fail(("default_strategy",), f"names strategy {default_strategy!r}, which does not exist",
                         _closest(default_strategy, known_strategies))
    opt_in = c.sub(data, "hardware_opt_in_features", ())
    recipe = Recipe(
        meta=meta, model=model, variants=variants, features=features,
        opt_in_features=c.strs(data, "opt_in_features", ()) or (),
        hardware_opt_in_features={str(k): c.strs(opt_in, k, ("hardware_opt_in_features",)) or () for k in opt_in},
        compatible_strategies=compat, default_strategy=default_strategy,
        strategy_hardware=c.keyed(data, "strategy_hardware", (), c.scalar_map),
        strategy_min_gpus=_min_gpus(c, data),
        strategy_overrides=c.keyed(data, "strategy_overrides", (), lambda s, p: _override(c, s, p)),
        hardware_overrides=c.hw_blocks(data, ()),
        kv_offload_support=c.scalars(data, "kv_offload_support", ()),
        kv_cache_strategy_hardware=c.keyed(data, "kv_cache_strategy_hardware", (), c.scalar_map),
        omni=_omni(c, data))
    # Checked last, so a wrong type elsewhere is reported at its own line first.  Without a
    # checkpoint the reference would print ``vllm serve unknown``: never a useful command.
    if not model.model_id:
        where = mp + ("model_id",) if "model_id" in m else (mp if "model" in data else ())
        raise c.fail(where, "the recipe names no checkpoint (model.model_id is missing or empty)",
                     "add model: with model_id: org/Name")
    return recipe


def _variant(c: _Conv, v: dict[Any, Any], p: Path) -> Variant:
    ph = c.typed(v.get("precision_hardware"), p + ("precision_hardware",), dict)
    precision_hw = None
    if ph is not None:
        precision_hw = (c.str_(ph, "brand", p + ("precision_hardware",)),
                        c.str_(ph, "generation", p + ("precision_hardware",)))
    modes = {k: val for k, val in c.scalars(v, "default_modes", p).items() if isinstance(val, str)}
    return Variant(
        model_id=c.str_(v, "model_id", p), precision=c.str_(v, "precision", p), precision_hardware=precision_hw,
        extra_args=c.args(v, "extra_args", p), extra_env=c.env(v, "extra_env", p), tp=c.tp(v, p),
        vram_minimum_gb=c.num(v, "vram_minimum_gb", p), supported_hardware=c.strs(v, "supported_hardware", p),
        hardware_overrides=c.hw_blocks(v, p), default_modes=modes, docker_image=c.image(v, p),
        min_vllm_version=c.scalar(v, "min_vllm_version", p))


def _feature(c: _Conv, f: dict[Any, Any], p: Path, variants: Mapping[str, Variant]) -> Feature:
    base = Feature(c.args(f, "args", p), c.strs(f, "strategies", p), c.companion(f, p), c.args_blocks(f, p),
                   None, c.str_(f, "default_mode", p), c.scalars(f, "hardware", p))
    if "modes" not in f:
        return base
    raw = f.get("modes")
    if not isinstance(raw, dict) or not raw:
        raise c.fail(p + ("modes",), "modes must be a non-empty mapping", "declare at least one mode")
    if "args" in f:
        raise c.fail(p + ("args",), "a feature with modes must not also declare args", "move the args into a mode")
    if base.default_mode is not None and base.default_mode not in raw:
        raise c.fail(p + ("default_mode",), f"default_mode {base.default_mode!r} is not one of the modes "
                     f"({', '.join(map(str, raw))})", "name an existing mode")
    modes: dict[str, Mode] = {}
    for name, mode in raw.items():
        mp = p + ("modes", name)
        body = c.mapping(mode, mp)
        args = c.args(body, "args", mp)
        if args is None:
            raise c.fail(mp + ("args",), "each mode needs an args list", "add args: [...] to the mode")
        allowed = c.strs(body, "variants", mp)
        for v in allowed or ():
            if v not in variants:
                raise c.fail(mp + ("variants",), f"names variant {v!r}, which the recipe does not define",
                             "use one of: " + ", ".join(map(str, variants)))
        modes[str(name)] = Mode(args, allowed, c.scalars(body, "hardware", mp), c.args_blocks(body, mp))
    for vkey in list(variants) or ["default"]:
        if not any(_mode_available(m, vkey) for m in modes.values()):
            raise c.fail(p + ("modes",), f"variant {vkey!r} has no available mode",
                         "list that variant in a mode's variants, or drop the variants lists")
    return Feature(None, base.strategies, base.companion, base.hardware_overrides, modes, base.default_mode,
                   base.hardware)


def _mode_available(mode: Mode, variant: str) -> bool:
    return not mode.variants or variant in mode.variants


def _check_default_modes(c: _Conv, variants: Mapping[str, Variant], features: Mapping[str, Feature]) -> None:
    for vkey, variant in variants.items():
        for fname, mname in variant.default_modes.items():
            vp = ("variants", vkey, "default_modes", fname)
            feat = features.get(fname)
            if feat is None:
                raise c.fail(vp, f"feature {fname!r} does not exist", "name a feature of this recipe")
            if feat.modes is None:
                raise c.fail(vp, f"feature {fname!r} has no modes", "remove this default_modes entry")
            if mname not in feat.modes or not _mode_available(feat.modes[mname], vkey):
                raise c.fail(vp, f"mode {mname!r} is not available for variant {vkey!r}", "name an available mode")


def _override(c: _Conv, s: dict[Any, Any], p: Path) -> StrategyOverride:
    def role(name: str) -> RoleOverride:
        m, rp = c.sub(s, name, p), p + (name,)
        return RoleOverride(c.args(m, "extra_args", rp), c.args(m, "vllm_args", rp), c.env(m, "env", rp),
                            c.hw_blocks(m, rp), c.str_(m, "parallelism", rp), c.num(m, "tp", rp),
                            c.str_(m, "parallel_flag", rp))

    router = c.sub(s, "router", p)
    return StrategyOverride(
        extra_args=c.args(s, "extra_args", p), vllm_args=c.args(s, "vllm_args", p), env=c.env(s, "env", p),
        extra_env=c.env(s, "extra_env", p), hardware_overrides=c.hw_blocks(s, p), prefill=role("prefill"),
        decode=role("decode"), tp=c.tp(s, p), pool_modes=c.strs(s, "pool_modes", p) or (),
        router_intra_dp=c.scalar(router, "intra_node_data_parallel_size", p + ("router",)))


def _min_gpus(c: _Conv, data: Mapping[str, Any]) -> MinGpus | None:
    raw = c.typed(data.get("strategy_min_gpus"), ("strategy_min_gpus",), int, float, dict)
    if isinstance(raw, dict):
        for k, v in raw.items():
            inner = c.typed(v, ("strategy_min_gpus", k), int, float, dict)
            for kk, vv in (inner.items() if isinstance(inner, dict) else ()):
                c.typed(vv, ("strategy_min_gpus", k, kk), int, float)
    found: MinGpus | None = raw
    return found


def _omni(c: _Conv, data: Mapping[str, Any]) -> Omni | None:
    o = c.typed(data.get("omni"), ("omni",), dict)
    if o is None:
        return None
    tasks = []
    for i, t in enumerate(c.typed(o.get("tasks"), ("omni", "tasks"), list) or []):
        tp = ("omni", "tasks", i)
        if isinstance(t, str):
            tasks.append(OmniTask(id=t))
            continue
        body = c.mapping(t, tp)
        tasks.append(OmniTask(c.str_(body, "id", tp), c.str_(body, "key", tp), c.str_(body, "model_id", tp),
                              c.args(body, "extra_args", tp), c.hw_blocks(body, tp)))
    return Omni(tuple(tasks), c.scalar(o, "port", ("omni",)), c.str_(o, "serve_binary", ("omni",)))


def _closest(value: str, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(value, sorted(known), n=2, cutoff=0.5)
    return ("did you mean " + " or ".join(close) + "?") if close else \
        "use one of: " + ", ".join(sorted(known))
