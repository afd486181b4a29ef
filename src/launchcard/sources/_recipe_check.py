"""Structural checks of recipe, strategy and taxonomy files.

The reference builder renders whatever it gets; a user needs to know when a
file cannot mean what it says.  Each check names the file, the line, the rule
and the fix.  Only fields the resolver reads are checked: unknown keys are
allowed (the upstream schema grows faster than any reader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launchcard.errors import RecipeError

if TYPE_CHECKING:
    from launchcard.sources.vllm_recipes import RecipeDoc

_SCALAR = (str, int, float, bool)
_TYPE_NAMES = {dict: "a mapping", list: "a list", str: "a string", int: "a number",
               float: "a number", bool: "true/false"}


def _where(doc: RecipeDoc, path: tuple[Any, ...]) -> str:
    line = doc.line(*path) if path else 1
    return f"{doc.file or doc.path}:{line or 1}"


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def _fail(doc: RecipeDoc, path: tuple[Any, ...], rule: str, fix: str) -> RecipeError:
    return RecipeError(f"{_dotted(path)}: {rule}", where=_where(doc, path), fix=fix)


def _type(doc: RecipeDoc, value: Any, path: tuple[Any, ...], *types: type) -> None:
    if value is None:
        return
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        want = " or ".join(dict.fromkeys(_TYPE_NAMES.get(t, t.__name__) for t in types))
        raise _fail(doc, path, f"must be {want}, got {type(value).__name__} {str(value)[:40]!r}",
                    f"write {_dotted(path)} as {want}")


def _arg_list(doc: RecipeDoc, value: Any, path: tuple[Any, ...]) -> None:
    _type(doc, value, path, list)
    for i, item in enumerate(value or []):
        if item is not None and (not isinstance(item, _SCALAR)):
            raise _fail(doc, path + (i,), f"argument must be a string, got {type(item).__name__}",
                        "quote each argument as its own list item")


def _env_map(doc: RecipeDoc, value: Any, path: tuple[Any, ...]) -> None:
    _type(doc, value, path, dict)
    for k, v in (value or {}).items():
        if v is not None and not isinstance(v, _SCALAR):
            raise _fail(doc, path + (k,), f"environment value must be a scalar, got {type(v).__name__}",
                        "quote the value as a string")


def _mapping_of_mappings(doc: RecipeDoc, value: Any, path: tuple[Any, ...]) -> dict[str, Any]:
    _type(doc, value, path, dict)
    for k, v in (value or {}).items():
        _type(doc, v, path + (k,), dict)
    return value or {}


def _overrides(doc: RecipeDoc, value: Any, path: tuple[Any, ...]) -> None:
    for key, block in _mapping_of_mappings(doc, value, path).items():
        block = block or {}
        _arg_list(doc, block.get("extra_args"), path + (key, "extra_args"))
        _env_map(doc, block.get("extra_env"), path + (key, "extra_env"))


def check_taxonomy(doc: RecipeDoc) -> None:
    data = doc.data
    _type(doc, data, (), dict)
    profiles = _mapping_of_mappings(doc, data.get("hardware_profiles"), ("hardware_profiles",))
    if not profiles:
        raise _fail(doc, (), "no hardware_profiles defined", "add hardware_profiles to taxonomy.yaml")
    for hw, prof in profiles.items():
        prof = prof or {}
        _type(doc, prof.get("gpu_count"), ("hardware_profiles", hw, "gpu_count"), int, float, str)
        _type(doc, prof.get("vram_gb"), ("hardware_profiles", hw, "vram_gb"), int, float)
    _mapping_of_mappings(doc, data.get("kv_offload"), ("kv_offload",))


def check_strategy(doc: RecipeDoc) -> None:
    data = doc.data
    _type(doc, data, (), dict)
    _type(doc, data.get("name"), ("name",), str)
    _arg_list(doc, data.get("vllm_args"), ("vllm_args",))
    _env_map(doc, data.get("env"), ("env",))
    for role in ("prefill", "decode"):
        block = data.get(role)
        _type(doc, block, (role,), dict)
        if isinstance(block, dict):
            _arg_list(doc, block.get("vllm_args"), (role, "vllm_args"))
            _env_map(doc, block.get("env"), (role, "env"))


def check_recipe(doc: RecipeDoc, known_strategies: set[str] | None = None) -> None:
    data = doc.data
    if not isinstance(data, dict):
        raise _fail(doc, (), f"a recipe must be a mapping, got {type(data).__name__}",
                    "start the file with keys such as meta:, model:, variants:")
    model = data.get("model")
    _type(doc, model, ("model",), dict)
    model = model or {}
    _type(doc, model.get("model_id"), ("model", "model_id"), str)
    _arg_list(doc, model.get("base_args"), ("model", "base_args"))
    _env_map(doc, model.get("base_env"), ("model", "base_env"))
    _type(doc, data.get("meta"), ("meta",), dict)
    _type(doc, (data.get("meta") or {}).get("hardware"), ("meta", "hardware"), dict)

    variants = _mapping_of_mappings(doc, data.get("variants"), ("variants",))
    for key, variant in variants.items():
        variant = variant or {}
        p = ("variants", key)
        _type(doc, variant.get("model_id"), p + ("model_id",), str)
        _arg_list(doc, variant.get("extra_args"), p + ("extra_args",))
        _env_map(doc, variant.get("extra_env"), p + ("extra_env",))
        _type(doc, variant.get("tp"), p + ("tp",), int, float, dict)
        _type(doc, variant.get("vram_minimum_gb"), p + ("vram_minimum_gb",), int, float)
        _type(doc, variant.get("supported_hardware"), p + ("supported_hardware",), list)
        _overrides(doc, variant.get("hardware_overrides"), p + ("hardware_overrides",))

    _overrides(doc, data.get("hardware_overrides"), ("hardware_overrides",))
    _check_features(doc, data, variants)
    _check_strategies(doc, data, known_strategies)


def _check_features(doc: RecipeDoc, data: dict[str, Any], variants: dict[str, Any]) -> None:
    features = _mapping_of_mappings(doc, data.get("features"), ("features",))
    for name, feat in features.items():
        feat = feat or {}
        p = ("features", name)
        _arg_list(doc, feat.get("args"), p + ("args",))
        _type(doc, feat.get("strategies"), p + ("strategies",), list)
        _mapping_of_mappings(doc, feat.get("hardware_overrides"), p + ("hardware_overrides",))
        if "modes" not in feat:
            continue
        modes = feat.get("modes")
        if not isinstance(modes, dict) or not modes:
            raise _fail(doc, p + ("modes",), "modes must be a non-empty mapping", "declare at least one mode")
        if "args" in feat:
            raise _fail(doc, p + ("args",), "a feature with modes must not also declare args",
                        "move the args into a mode")
        default = feat.get("default_mode")
        if default is not None and default not in modes:
            raise _fail(doc, p + ("default_mode",), f"default_mode {default!r} is not one of the modes "
                        f"({', '.join(map(str, modes))})", "name an existing mode")
        for mname, mode in modes.items():
            mp = p + ("modes", mname)
            _type(doc, mode, mp, dict)
            mode = mode or {}
            if not isinstance(mode.get("args"), list):
                raise _fail(doc, mp + ("args",), "each mode needs an args list", "add args: [...] to the mode")
            _arg_list(doc, mode.get("args"), mp + ("args",))
            mvars = mode.get("variants")
            _type(doc, mvars, mp + ("variants",), list)
            for v in mvars or []:
                if v not in variants:
                    raise _fail(doc, mp + ("variants",), f"names variant {v!r}, which the recipe does not define",
                                "use one of: " + ", ".join(map(str, variants)))
        for vkey in variants or {"default": {}}:
            if not any(_mode_available(m, vkey) for m in modes.values()):
                raise _fail(doc, p + ("modes",), f"variant {vkey!r} has no available mode",
                            "list that variant in a mode's variants, or drop the variants lists")
    for vkey, variant in (variants or {}).items():
        for fname, mname in ((variant or {}).get("default_modes") or {}).items():
            vp = ("variants", vkey, "default_modes", fname)
            feat = features.get(fname)
            if feat is None:
                raise _fail(doc, vp, f"feature {fname!r} does not exist", "name a feature of this recipe")
            modes = (feat or {}).get("modes")
            if not isinstance(modes, dict):
                raise _fail(doc, vp, f"feature {fname!r} has no modes", "remove this default_modes entry")
            if mname not in modes or not _mode_available(modes[mname], vkey):
                raise _fail(doc, vp, f"mode {mname!r} is not available for variant {vkey!r}",
                            "name an available mode")


def _mode_available(mode: Any, variant: str) -> bool:
    allowed = (mode or {}).get("variants")
    return not allowed or variant in allowed


def _check_strategies(doc: RecipeDoc, data: dict[str, Any], known: set[str] | None) -> None:
    compat = data.get("compatible_strategies")
    _type(doc, compat, ("compatible_strategies",), list)
    _type(doc, data.get("default_strategy"), ("default_strategy",), str)
    _type(doc, data.get("strategy_overrides"), ("strategy_overrides",), dict)
    _type(doc, data.get("strategy_hardware"), ("strategy_hardware",), dict)
    _type(doc, data.get("opt_in_features"), ("opt_in_features",), list)
    if known is None:
        return
    for i, name in enumerate(compat or []):
        if name not in known:
            raise _fail(doc, ("compatible_strategies", i), f"names strategy {name!r}, which does not exist",
                        _closest(str(name), known))
    default = data.get("default_strategy")
    if default is not None and default not in known:
        raise _fail(doc, ("default_strategy",), f"names strategy {default!r}, which does not exist",
                    _closest(str(default), known))


def _closest(value: str, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(value, sorted(known), n=2, cutoff=0.5)
    return ("did you mean " + " or ".join(close) + "?") if close else \
        "use one of: " + ", ".join(sorted(known))
