"""What the verdict reads off a launch command: parallelism and memory flags.

A thin view over the one argv model (:mod:`launchcard.argv`), so the verdict,
memory, merge, emit and live all read a repeated or abbreviated flag the same
way (the last occurrence wins, as in argparse).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from launchcard.argv import DP_FLAGS, PP_FLAGS, TP_FLAGS, ParsedCommand, parse_command
from launchcard.errors import ArgvError

# vLLM's names first, then SGLang's (``--tp-size`` ...) for commands of other sources.
_INT_FLAGS = {
    "tp": TP_FLAGS,
    "pp": PP_FLAGS,
    "dp": (*DP_FLAGS, "--dp-size", "--dp"),
    "dp_local": ("--data-parallel-size-local", "-dpl"),
    "dcp": ("--decode-context-parallel-size", "-dcp"),
    "nnodes": ("--nnodes",),
    "node_rank": ("--node-rank",),
}
_STR_FLAGS = {
    "max_model_len": ("--max-model-len",),
    "quantization": ("--quantization", "-q"),
    "kv_cache_dtype": ("--kv-cache-dtype",),
}


@dataclass(frozen=True)
class ArgvView:
    """What the verdict needs from one command; None = the flag is absent (vLLM's default applies)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    dp_local: int | None = None
    dcp: int = 1
    nnodes: int = 1
    node_rank: int | None = None
    expert_parallel: bool = False
    headless: bool = False
    max_model_len: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    speculative_config: str | None = None
    unreadable: tuple[str, ...] = ()  # flags whose value is not a number (e.g. "$DP_SIZE")
    # SGLang --enable-dp-attention: the --dp-size ranks run attention inside the TP group, one server of TP x PP
    # GPUs (--dp-size divides --tp-size, server_args.py:1568-1574), not DP replicas of their own GPUs
    dp_attention: bool = False
    dp_flag: str = "--dp-size"  # the SGLang flag that states the DP-attention ranks (--attn-dp-size from 0.5.22)
    # an SGLang command's expert-parallel group (--ep-size; --tp-size under a --moe-a2a-backend), read as predict
    # reads it (launchcard.limits.sglang_ep_size); None for a vLLM command, whose group is TP x DP
    moe_ep: int | None = None

    @property
    def world(self) -> int:
        """GPUs of one engine replica: TP x PP (across its nodes when --nnodes > 1)."""
        return self.tp * self.pp

    @property
    def local_dp(self) -> int:
        """Data-parallel replicas this process starts on its own node, each on GPUs of its own (SGLang's DP
        attention ranks share the TP group's: none beyond it)."""
        if self.dp_attention:
            return 1
        if self.dp_local is not None:
            return self.dp_local
        return self.dp

    @property
    def gpus_on_node(self) -> int:
        """GPUs this process (with its engine children) occupies on its own node."""
        per_replica = self.world // self.nnodes if self.nnodes > 1 and self.world % self.nnodes == 0 else (
            self.world if self.nnodes <= 1 else -(-self.world // self.nnodes))
        return per_replica * self.local_dp

    @property
    def ep_size(self) -> int:
        """Expert-parallel group size: an SGLang command's ``moe_ep``; vLLM's TP x DP when --enable-expert-parallel
        is on, else 1."""
        if self.moe_ep is not None:
            return self.moe_ep
        return self.tp * self.dp if self.expert_parallel else 1


def _str(cmd: ParsedCommand, names: Sequence[str]) -> str | None:
    try:
        return cmd.get_str(*names)
    except ArgvError:  # a switch given where a value belongs: the flag checker reports that
        return None


def read_argv(argv: Sequence[str]) -> ArgvView:
    """Read the flags of one command; unreadable numbers (``$DP_SIZE``) are listed, never guessed."""
    try:
        cmd = parse_command(argv)
    except ArgvError as exc:
        return ArgvView(unreadable=(exc.one_line(),))
    ints: dict[str, int | None] = {}
    bad: list[str] = []
    for field, names in _INT_FLAGS.items():
        occ = cmd.last(*names)
        value = cmd.try_int(*names)
        if occ is not None and value is None:
            bad.append(f"{occ.written} {_str(cmd, names)}")
        ints[field] = value
    spec: str | None = None
    if cmd.has("--speculative-config"):
        try:
            raw = cmd.get_json("--speculative-config")
            spec = json.dumps(raw) if not isinstance(raw, str) else raw
        except ArgvError:
            spec = _str(cmd, ("--speculative-config",))
    view = ArgvView(
        tp=ints["tp"] or 1, pp=ints["pp"] or 1, dp=ints["dp"] or 1, dp_local=ints["dp_local"],
        dcp=ints["dcp"] or 1, nnodes=ints["nnodes"] or 1, node_rank=ints["node_rank"],
        expert_parallel=bool(_bool(cmd, "--enable-expert-parallel")), headless=bool(_bool(cmd, "--headless")),
        max_model_len=_str(cmd, _STR_FLAGS["max_model_len"]), quantization=_str(cmd, _STR_FLAGS["quantization"]),
        kv_cache_dtype=_str(cmd, _STR_FLAGS["kv_cache_dtype"]), speculative_config=spec,
        unreadable=tuple(bad),
        dp_attention=cmd.engine == "sglang" and bool(_bool(cmd, "--enable-dp-attention")),
    )
    if cmd.engine == "sglang":
        from launchcard.limits import sglang_ep_size

        view = replace(view, moe_ep=sglang_ep_size(cmd.try_int("--ep-size"), _str(cmd, ("--moe-a2a-backend",)),
                                                   view.tp))
    attn_dp = cmd.try_int("--attn-dp-size") if cmd.engine == "sglang" else None
    if attn_dp is not None and attn_dp > 1:
        # SGLang 0.5.22+ spelling of --dp-size N --enable-dp-attention (0.5.23 arg_groups/parallel_hook.py L52-57
        # reads the old one as it): the same ranks inside the TP group
        view = replace(view, dp=attn_dp, dp_attention=True, dp_flag="--attn-dp-size")
    return view


def _bool(cmd: ParsedCommand, flag: str) -> bool | None:
    try:
        return cmd.get_bool(flag)
    except ArgvError:
        return None


def speculative_model(view: ArgvView) -> str | None:
    """The separate draft model a ``--speculative-config`` names, if any."""
    if not view.speculative_config:
        return None
    try:
        spec = json.loads(view.speculative_config)
    except ValueError:
        return None
    model = spec.get("model") if isinstance(spec, dict) else None
    return str(model) if model else None
