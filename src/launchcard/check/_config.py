"""The model's config.json: where it is, and the few fields the verdict's rules read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchcard.errors import InputError

# Any in this module: config.json as read (JSON values of every type).



@dataclass(frozen=True)
class ModelConfig:
    """What the rules need from a config.json, with the document it came from."""

    path: str  # shown as evidence
    raw: Mapping[str, Any]
    heads: int | None
    kv_heads: int | None
    layers: int | None
    experts: int | None
    mla: bool
    quant_method: str | None

    def field(self, name: str) -> str:
        """Evidence for one field: ``config.json path (num_attention_heads)``."""
        return f"{self.path} ({name})"


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    from launchcard.limits import text_config

    return text_config(cfg, "num_attention_heads")


def nested_key(cfg: Mapping[str, Any]) -> str | None:
    """The key of the nested language-model config the rules read (``text_config`` ...), None at the top."""
    text = _text(cfg)
    return None if text is cfg else next((k for k, v in cfg.items() if v is text), None)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def parse_config(raw: Mapping[str, Any], path: str) -> ModelConfig:
    text = _text(raw)
    heads = _int(text.get("num_attention_heads"))
    kv = _int(text.get("num_key_value_heads"))
    experts = next((_int(text.get(k))
                    for k in ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts")
                    if _int(text.get(k))), None)
    quant = raw.get("quantization_config") or text.get("quantization_config")
    method = str(quant.get("quant_method") or quant.get("format") or "") if isinstance(quant, Mapping) else ""
    if method == "modelopt" and isinstance(quant, Mapping):
        method = str(quant.get("quant_algo") or method)
    return ModelConfig(path=path, raw=raw, heads=heads, kv_heads=kv if kv is not None else heads,
                       layers=_int(text.get("num_hidden_layers")), experts=experts,
                       mla=bool(text.get("kv_lora_rank")), quant_method=method.lower() or None)


def load_config(path: str | Path) -> ModelConfig:
    from launchcard.jsonread import read_object

    p = Path(path)
    raw = read_object(p, "config.json", field="config")  # memory and predict read --config with it too
    text = _text(raw)
    # a size present but not positive: refused as memory and predict refuse the same file (memory._arch), not
    # read as absent (check said `ok` of a config with 0 attention heads)
    bad = [f"{k} = {text[k]}" for k in _SIZES if isinstance(text.get(k), int) and not isinstance(text.get(k), bool)
           and text[k] <= 0]
    if bad:
        raise InputError(f"config field(s) {', '.join(bad)} must be positive", where=f"--config {p}",
                         fix="pass the model's own config.json (these are sizes of the model)")
    return parse_config(raw, str(p))


_SIZES = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads")


def config_dirs(recipes_root: Path | None, extra: Sequence[str | Path] = ()) -> list[Path]:
    """Folders laid out ``<org>/<name>/config.json``: given ones, then the corpus ``hf/`` next to the recipes."""
    out = [Path(d) for d in extra]
    if recipes_root is not None:
        out.append(Path(recipes_root).parent / "hf")
    return out


def find_config(model_id: str, dirs: Sequence[Path]) -> Path | None:
    """``<dir>/<org>/<name>/config.json`` for the checkpoint the plan serves, first hit wins."""
    if not model_id or model_id.startswith(("/", ".")) or ".." in model_id.split("/"):
        return None
    for d in dirs:
        candidate = d / model_id / "config.json"
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # a name the file system cannot hold (ENAMETOOLONG, which is_file raises) is not there
            continue
    return None


def corpus_config(model_id: str, recipes_root: Path | None, extra: Sequence[str | Path] = ()) -> Path | None:
    """The checkpoint's config.json from the given folders or the corpus ``hf/`` next to the recipes."""
    return find_config(model_id, config_dirs(recipes_root, extra))


def no_config_error(model_id: str, *, card: str | None = None) -> InputError:
    """The one refusal of a prediction whose checkpoint ``model_id`` has no config.json at hand (:func:`corpus_config`
    found none): ``launchcard predict MODEL``'s (exit 2, on --config); with ``card`` (the page's model), the web's
    builder and performance page, which take no --config: its fix is the CLI's command for that model."""
    fix = "pass --config FILE (the checkpoint's Hugging Face config.json)"
    if card is None:
        return InputError(f"no config.json for {model_id}", where="--config", fix=fix)
    return InputError(f"no config.json for {model_id} (the checkpoint this plan serves) in this server's corpus hf/ "
                      "folder or sync snapshot",
                      fix=f"predict it with `launchcard predict {card} --config FILE` (the checkpoint's Hugging Face "
                          f"config.json), or add it to the corpus as hf/{model_id}/config.json")
