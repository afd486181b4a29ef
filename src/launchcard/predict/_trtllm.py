"""TensorRT-LLM's launch: what ``trtllm-serve`` sets and what its PyTorch backend does with it.

Read from NVIDIA/TensorRT-LLM at 00209af1 (tensorrt_llm/commands/serve.py, lines as there; the file index holds
one version of it and the repository is too large to fetch whole, so the tags 1.0.0 / 1.2.0rc1 / 1.2.0rc5 the
held-out runs name are not read, and each rule below says where it was):

- ``serve``'s options (L388-591) and ``get_llm_args`` (L89-173): ``--free_gpu_memory_fraction`` /
  ``--kv_cache_free_gpu_memory_fraction`` (default 0.9, L497-503 and L107) becomes
  ``KvCacheConfig(free_gpu_memory_fraction=...)`` (L125-126); ``--enable_chunked_prefill`` (a flag, default off,
  L575-579 and L114) the LLM's ``enable_chunked_prefill`` (L170); ``--max_batch_size`` / ``--max_num_tokens`` /
  ``--max_seq_len`` BuildConfig's defaults (2048 / 8192 / the model's; L440-459, L94-100); ``--tp_size``,
  ``--pp_size``, ``--ep_size`` (L460-483); ``--backend`` pytorch by default (L412-419; ``launch_server`` reads it
  from the LLM arguments, L187, L199-201); ``--config`` / ``--extra_llm_api_options`` (L521-530) a YAML file whose
  keys replace what the options set (``yaml.safe_load`` then ``update_llm_args_with_extra_dict``, L646-650): read
  by :mod:`._trtllm_options` where found from the working directory, else the command is predicted with the
  options as written and says so (finding ``trtllm-options-file``).
- the KV pool (tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator, read at d8ae02ca; ``_cal_max_tokens`` /
  ``_cal_max_memory`` keep the formula in the later stored versions): after loading the weights the engine runs
  dummy requests of ``max_num_tokens`` (``estimate_max_tokens``, L204-243), empties torch's cache and reads the
  device's used memory with ``torch.cuda.mem_get_info``; what torch has not allocated is ``extra_cost`` and the peak
  is torch's peak plus it (L250-253); the pool is ``fraction x (device memory - peak + the estimation run's own
  temporary KV)`` (L111-112; ``fraction`` 0.9 where KvCacheConfig leaves None, L94-98): a share of what is *free*,
  where vLLM's ``gpu_memory_utilization`` is a share of the whole device.  ``extra_cost`` is read device-wide, so
  it holds the process's CUDA context too, which vLLM's profile (and so the memory planner's non-torch figure)
  leaves in its baseline: :data:`._engine_rules.CUDA_CONTEXT_GIB` is taken from the pool beside that figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError
from launchcard.predict._engine_rules import CUDA_CONTEXT_GIB, TRTLLM_TOKENS_PER_BLOCK
from launchcard.predict._engine_rules import TRTLLM_KV_FRACTION as KV_FRACTION
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from collections.abc import Sequence

    from launchcard.hardware import Accelerator
    from launchcard.memory import Arch, EngineWords, MemoryPlan, Settings

SOURCE = "NVIDIA/TensorRT-LLM 00209af1 tensorrt_llm/commands/serve.py"


@dataclass(frozen=True, slots=True)
class TrtllmLaunch:
    """What a trtllm-serve launch sets beyond the plan's shape (TP/PP/EP, batch and token limits, context)."""

    kv_fraction: float = KV_FRACTION
    chunked_prefill: bool = False
    options_file: str | None = None  # --extra_llm_api_options / --config: the file named
    backend: str = "pytorch"
    findings: tuple[Finding, ...] = field(default=())
    # the capacity scheduler: GUARANTEED_NO_EVICT (trtllm-serve's SchedulerConfig) unless an options file's
    # scheduler_config says MAX_UTILIZATION
    no_evict: bool = True
    # an options file's cuda_graph_config: the batch sizes captured (None: the default CudaGraphConfig) and whether
    # a batch is padded up to the next of them (enable_padding)
    graph_sizes: tuple[int, ...] | None = None
    graph_padding: bool = False
    kv_max_tokens: int | None = None  # an options file's kv_cache_config.max_tokens
    # an options file's kv_cache_config.enable_block_reuse (KvCacheConfig's default True, llm_args.py): false, the
    # prefix cache is off (predict._prefix)
    block_reuse: bool = True
    # an options file's kv_cache_config.tokens_per_block (KvCacheConfig's default 32): the KV block the capacity
    # scheduler reserves in (ServingFacts.reserve_block)
    tokens_per_block: int = TRTLLM_TOKENS_PER_BLOCK
    # the TensorRT-LLM release launched, as stated (--engine-version, a page's): the release ServingFacts.release
    # holds and the release rules read (the MXFP4 MoE backend Hopper runs, predict._mxfp4); None: not stated
    release: str | None = None

    def validate(self) -> TrtllmLaunch:
        if not 0 < self.kv_fraction <= 1:
            raise InputError(f"the KV cache's free GPU memory fraction must be in (0, 1] ({self.kv_fraction:g})",
                             field="kv_cache_free_gpu_memory_fraction",
                             fix="pass a fraction such as 0.9 (trtllm-serve's default)")
        return self


# What trtllm-serve does with every streamed token, which no launchcard stage times (gpu:trtllm has no API-server
# stage: nothing of TensorRT-LLM's server was measured): its OpenAI server builds each response in its own process
# (--num_postprocess_workers default 0, commands/serve.py at 00209af1 L504-509, get_llm_args L108), one response per
# request every iteration (the LLM API's stream_interval default 1: "Set this to a larger value when the batch size is
# large, which helps reduce the streaming overhead", tensorrt_llm/llmapi/llm_args.py as the file index stores it, no
# commit named; the API reference says "Defaults to 1"), and TensorRT-LLM
# names that per-response detokenization and OpenAI-object building as host work that can leave the GPU idle when many
# requests stream at once ("Host Overhead Optimization" / "Support Stream Interval",
# docs/source/blogs/tech_blog/blog8_Scaling_Expert_Parallelism_in_TensorRT-LLM_part2.md at 38134b13).  Said where a
# run streams to more requests at once than gpu:trtllm's calibration runs had (predict._domain's batch finding): the
# runs fold whatever that path cost at their batches into the fitted terms, and beyond them it is not extrapolated
RESPONSE_PATH_NOTE = ("; trtllm-serve also builds every streamed response (detokenization, OpenAI objects) in its one "
                      "server process each iteration at its defaults (--num_postprocess_workers 0, stream_interval 1; "
                      "neither is read here), host work TensorRT-LLM's own tech blog 8 names as leaving the GPU idle "
                      "when many requests stream at once: not timed, so TPOT and throughput at this batch are likely "
                      "optimistic")


# TensorRT-LLM is built for NVIDIA GPUs alone: "TensorRT LLM supports the full spectrum of NVIDIA GPU architectures"
# (Blackwell, Hopper, Ada Lovelace, Ampere; NVIDIA/TensorRT-LLM docs/source/supported-hardware.md L1-7 at 8f2e263c)
SUPPORTED_HARDWARE = "NVIDIA/TensorRT-LLM docs/source/supported-hardware.md L3-7 at 8f2e263c"


def platform_refusal(acc: Accelerator | None, where: str = "--gpu") -> None:
    """InputError (exit 2) for a TensorRT-LLM plan on a catalog accelerator that is not an NVIDIA GPU (an AMD or
    Intel GPU, a TPU, an NPU, a CPU): trtllm-serve does not run there, so no figure is timed for it (they were,
    with a finding that the set was calibrated on NVIDIA only).  Measured figures without a catalog entry are
    not judged.  ``where``: the option that named the accelerator (``predict MODEL --hardware mi300x`` was told
    of --gpu, an option it did not type)."""
    if acc is None or (acc.vendor == "NVIDIA" and acc.kind == "gpu"):
        return
    raise InputError(f"TensorRT-LLM runs on NVIDIA GPUs only ({SUPPORTED_HARDWARE}); {acc.id} is "
                     f"{acc.vendor or 'another vendor'}'s {acc.kind.upper()}", where=where,
                     fix=f"time this accelerator with --engine vllm or --engine sglang, or pass an NVIDIA GPU to "
                         f"{where}")


def planned_settings(s: Settings) -> Settings:
    """The settings a TensorRT-LLM plan's memory is planned with: its KV pool is sized after a dry run of dummy
    contexts of max_num_tokens (_util.py create_dummy_context_requests), so without a budget of its own the
    activations the planner charges are a step of trtllm-serve's default max_num_tokens."""
    if s.max_num_batched_tokens is not None:
        return s
    from launchcard.predict._engine_rules import TRTLLM_MAX_NUM_TOKENS

    return replace(s, max_num_batched_tokens=TRTLLM_MAX_NUM_TOKENS)


def ep_refusal(arch: Arch, s: Settings) -> tuple[str, str] | None:
    """TensorRT-LLM's refusal of an --ep_size that does not divide the routed experts
    (launchcard.limits.TRTLLM_EP_RULE); None where it starts.  Its expert-parallel group is the TP group (the one
    read_serve_command and serve_words model), DP-sized where the planner has one."""
    from launchcard.limits import ep_experts_refusal

    if not arch.is_moe or not s.expert_parallel:
        return None
    return ep_experts_refusal("trtllm", arch.num_experts, s.tp * s.dp, "--ep_size")


def trtllm_terms() -> EngineWords:
    """The planner's vLLM-worded context and KV-dtype defaults as a trtllm-serve launch states them
    (memory.assumption_as; its length rule: _check_trtllm_context's docstring)."""
    from launchcard.memory import EngineWords

    return EngineWords(context_flag="--max_seq_len",
                       context_rule="; trtllm-serve infers its own from the config (_torch/models/modeling_utils.py "
                                    "infer_max_seq_len), by rules not compared here",
                       kv_given="no KV dtype given:", kv_default="",
                       kv_advice="; what TensorRT-LLM's KvCacheConfig dtype \"auto\" picks is not compared here: "
                                 "set kv_cache_config: {dtype: fp8} in an --extra_llm_api_options file to plan FP8")


def free_gib(plan: MemoryPlan) -> float:
    """The memory TensorRT-LLM's estimate finds free on one GPU: the device's less the weights and the estimation
    run's peak (its activations and ``extra_cost``, what the device holds outside torch's allocations: the memory
    planner's non-torch figure, vLLM's profile of what a step adds past its baseline, and the CUDA context that
    baseline already held, :data:`CUDA_CONTEXT_GIB`)."""
    b = plan.breakdown
    return b.gpu_memory_gib - b.weights_gib - b.activation_peak_gib - b.non_torch_gib - CUDA_CONTEXT_GIB


def pool_bytes_per_token(plan: MemoryPlan, full: float, sliding: float) -> float:
    """The KV bytes one token takes in TensorRT-LLM's pool on one GPU (``full``, ``sliding``: the bytes a token has
    in the full-attention and the sliding-window layers, memory.kv_read_split).  Without
    ``kv_cache_config.max_attention_window`` the PyTorch KVCacheManager sizes one window, ``max_seq_len``, for every
    layer (tensorrt_llm/_torch/pyexecutor/resource_manager.py KVCacheManager.__init__, "Determine
    max_attention_window_vec": ``[max_seq_len]`` when None, at NVIDIA/TensorRT-LLM 001541ba and in every stored
    version read), so it is not VSWA and a sliding layer pools every token as a full one does; the model file only
    hands its window to the attention kernel (_torch/models/modeling_gpt_oss.py AttentionBlock:
    ``attention_window_size=self.sliding_window``), and PR #5722 that would have set the windows from the HF config
    was closed unmerged.  The memory planner's figure (vLLM's hybrid manager: one layer group's page) stands for
    models without sliding layers; an options file's max_attention_window is not read (predicted as if absent)."""
    return full + sliding if sliding > 0 else plan.kv_bytes_per_token_per_gpu


def kv_tokens(plan: MemoryPlan, fraction: float, per_token: float | None = None) -> int:
    """TensorRT-LLM's KV pool in tokens per GPU: ``fraction`` of :func:`free_gib` over a token's KV bytes
    (``per_token``: :func:`pool_bytes_per_token`; None: the memory planner's) (the activations are the memory
    planner's profile of a step of the plan's token budget, vLLM's, not TensorRT-LLM's own dry run)."""
    per = plan.kv_bytes_per_token_per_gpu if per_token is None else per_token
    return max(0, int(fraction * free_gib(plan) * 2**30 / per)) if per > 0 else 0


def kv_finding(plan: MemoryPlan, launch: TrtllmLaunch, tokens: int, per_token: float | None = None) -> Finding:
    b = plan.breakdown
    given = "the launch's" if launch.kv_fraction != KV_FRACTION else "trtllm-serve's default"
    every = ("" if per_token is None or per_token == plan.kv_bytes_per_token_per_gpu else
             f" at {per_token:,.0f} B a token, every layer's KV at full length (no max_attention_window: the "
             "KVCacheManager sizes one window, max_seq_len, for the sliding-window layers too)")
    return Finding("assumed", "kv-pool",
                   f"TensorRT-LLM's KV pool: {launch.kv_fraction:g} ({given} free_gpu_memory_fraction) of the "
                   f"{free_gib(plan):.1f} GiB a {b.gpu_memory_gib:g} GiB GPU has left after {b.weights_gib:.1f} GiB "
                   f"of weights, {b.activation_peak_gib:.1f} GiB of activations, {b.non_torch_gib:.2f} GiB non-torch "
                   f"memory and the {CUDA_CONTEXT_GIB:g} GiB CUDA context: {tokens:,} tokens{every} "
                   "(pyexecutor/_util.py KvCacheCreator: a share of the memory left free, not of the device, which "
                   "it reads device-wide, context included; the activations and non-torch memory are the memory "
                   "planner's estimate of a step of max_num_tokens, not TensorRT-LLM's own dry run; the context is "
                   "an H200 measurement)"
                   + (f"; the options file's kv_cache_config.max_tokens {launch.kv_max_tokens:,} is the smaller"
                      if launch.kv_max_tokens is not None and tokens == launch.kv_max_tokens else ""))


# trtllm-serve's options (serve.py at 00209af1 L388-591), by every name it accepts: the Settings field each sets, or the
# launch's own; ``None``: an option that does not change the prediction (network, logging, parsers, tokenizer)
_VALUED = {
    "--tp_size": "tp", "--tensor_parallel_size": "tp", "--pp_size": "pp", "--pipeline_parallel_size": "pp",
    "--ep_size": "ep", "--moe_expert_parallel_size": "ep", "--max_batch_size": "max_num_seqs",
    "--max_num_tokens": "max_num_batched_tokens", "--max_seq_len": "max_model_len",
    "--free_gpu_memory_fraction": "kv_fraction", "--kv_cache_free_gpu_memory_fraction": "kv_fraction",
    "--extra_llm_api_options": "options_file", "--config": "options_file", "--backend": "backend",
    "--max_beam_width": "beam", "--cp_size": "cp", "--context_parallel_size": "cp",
    **{k: None for k in ("--host", "--port", "--log_level", "--tokenizer", "--custom_tokenizer", "--revision",
                         "--reasoning_parser", "--tool_parser", "--num_postprocess_workers", "--gpus_per_node",
                         "--chat_template", "--otlp_traces_endpoint", "--media_io_kwargs", "--custom_module_dirs",
                         "--metadata_server_config_file", "--server_role", "--disagg_cluster_uri",
                         "--moe_cluster_parallel_size", "--cluster_size")},
}
_FLAGS = {"--enable_chunked_prefill": "chunked", "--trust_remote_code": None,
          "--fail_fast_on_attention_window_too_large": None}
# every option read_serve_command reads (modelled, or known not to change the prediction): the held-out extractor
# lists any other as unmodelled (bench/heldout_extract.py)
OPTIONS_READ = frozenset(_VALUED) | frozenset(_FLAGS)


# the Settings fields a trtllm-serve option states, by the option's first name in ``_VALUED`` (the command
# serve_words writes and predict's options given on top of a trtllm-serve command)
SETTING_OPTIONS = {"tp": "--tp_size", "pp": "--pp_size", "max_num_seqs": "--max_batch_size",
                   "max_num_batched_tokens": "--max_num_tokens", "max_model_len": "--max_seq_len"}


def option_names(field: str) -> tuple[str, ...]:
    """Every name trtllm-serve accepts for the option that sets ``field`` (a ``_VALUED`` value: "tp", "ep",
    "kv_fraction", ...): an option given on top replaces the command's own under any of them."""
    return tuple(name for name, f in _VALUED.items() if f == field)


def serve_words(model: str, settings: Settings, launch: TrtllmLaunch) -> list[str]:
    """The ``trtllm-serve`` command that launches a plan (memory-planner ``settings`` and its launch): the options
    :func:`read_serve_command` reads, each by its first name in ``_VALUED``, so the command reads back as this plan;
    a limit the plan leaves to the engine (None) is left out, as is a launch default."""
    opt = SETTING_OPTIONS
    words = ["trtllm-serve", model, opt["tp"], str(settings.tp)]
    if settings.pp > 1:
        words += [opt["pp"], str(settings.pp)]
    if settings.expert_parallel and settings.tp > 1:
        words += ["--ep_size", str(settings.tp)]  # the planner's expert-parallel group is the TP group
    for key in ("max_num_seqs", "max_num_batched_tokens", "max_model_len"):
        value = getattr(settings, key)
        if value is not None:
            words += [opt[key], str(value)]
    if launch.kv_fraction != KV_FRACTION:
        words += ["--kv_cache_free_gpu_memory_fraction", f"{launch.kv_fraction:g}"]
    if launch.chunked_prefill:
        words.append("--enable_chunked_prefill")
    if launch.options_file:
        words += ["--extra_llm_api_options", launch.options_file]
    return words


def _int(flag: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise InputError(f"trtllm-serve {flag} takes a positive integer ({value!r})", where="--command",
                         fix=f"write {flag} N")
    return int(value)


def read_serve_command(words: Sequence[str], base_dir: Path | None = None) -> tuple[dict[str, Any], TrtllmLaunch]:
    """A ``trtllm-serve MODEL ...`` command (its words from ``trtllm-serve`` on; ``trtllm-serve serve`` too) as
    memory-planner settings (tp, pp, expert_parallel, max_num_seqs, max_num_batched_tokens, max_model_len) and the
    launch's own facts.  An option trtllm-serve does not have, or one this reader cannot model, is refused.  An
    ``--extra_llm_api_options`` file found relative to ``base_dir`` is read (:mod:`._trtllm_options`); otherwise it
    is named in an ``assumed`` finding."""
    i = next((k for k, w in enumerate(words) if w.endswith("trtllm-serve")), None)
    if i is None:
        raise InputError("not a trtllm-serve command", where="--command", fix="pass `trtllm-serve MODEL ...`")
    rest = list(words[i + 1:])
    if rest[:1] == ["serve"]:
        rest = rest[1:]
    over: dict[str, Any] = {}
    own: dict[str, Any] = {}
    k = 0
    model_seen = False
    while k < len(rest):
        word = rest[k]
        flag, eq, value = word.partition("=")
        if not flag.startswith("--"):
            if model_seen:
                raise InputError(f"trtllm-serve takes one model argument ({word!r} is a second)", where="--command",
                                 fix="quote the command so that only trtllm-serve's own words are in it")
            model_seen = True
            k += 1
            continue
        if flag in _FLAGS:
            name = _FLAGS[flag]
            if name is not None:
                own[name] = True
            k += 1
            continue
        if flag not in _VALUED:
            raise InputError(f"trtllm-serve has no option {flag} that launchcard reads", where="--command",
                             fix=f"drop {flag}, or pass the plan with --engine trtllm and its options")
        if not eq:
            if k + 1 >= len(rest):
                raise InputError(f"trtllm-serve {flag} needs a value", where="--command", fix=f"write {flag} VALUE")
            value = rest[k + 1]
            k += 1
        k += 1
        dest = _VALUED[flag]
        if dest is None:
            continue
        if dest in ("tp", "pp", "max_num_seqs", "max_num_batched_tokens", "max_model_len"):
            over[dest] = _int(flag, value)
        elif dest in ("ep", "beam", "cp"):
            own[dest] = _int(flag, value)
        elif dest == "kv_fraction":
            try:
                own[dest] = float(value)
            except ValueError:
                raise InputError(f"trtllm-serve {flag} takes a fraction ({value!r})", where="--command",
                                 fix=f"write {flag} 0.9") from None
            if not 0 < own[dest] <= 1:  # nan and inf too
                raise InputError(f"trtllm-serve {flag} must be in (0, 1] ({value})", where="--command",
                                 fix=f"write {flag} 0.9 (trtllm-serve's default)")
        else:
            own[dest] = value
    if not model_seen:
        raise InputError("trtllm-serve needs its MODEL argument (none given)", where="--command",
                         fix="write trtllm-serve MODEL [options]")
    if own.get("beam", 1) > 1 or own.get("cp", 1) > 1:
        name = "--max_beam_width" if own.get("beam", 1) > 1 else "--cp_size"
        raise InputError(f"trtllm-serve {name} above 1 is not modelled (beam search / context parallelism)",
                         where="--command", fix=f"drop {name}")
    ep = own.get("ep")
    if ep is not None and ep > 1:
        tp = over.get("tp", 1)
        if ep != tp:  # the planner's expert parallelism spans the TP group (vLLM's rule)
            raise InputError(f"trtllm-serve --ep_size {ep} with --tp_size {tp}: only an expert-parallel group of "
                             "the whole TP group is modelled", where="--command", fix=f"pass --ep_size {tp}")
        over["expert_parallel"] = True
    backend = str(own.get("backend", "pytorch"))
    if backend != "pytorch":
        raise InputError(f"trtllm-serve --backend {backend} is not modelled (the PyTorch backend's rules are)",
                         where="--command", fix="drop --backend (pytorch is trtllm-serve's default)")
    found: list[Finding] = []
    launch = TrtllmLaunch(kv_fraction=float(own.get("kv_fraction", KV_FRACTION)),
                          chunked_prefill=bool(own.get("chunked", False)),
                          options_file=own.get("options_file")).validate()
    if launch.options_file and base_dir is not None and (base_dir / launch.options_file).is_file():
        from launchcard.predict._trtllm_options import read_options_file

        over, fields, read = read_options_file(base_dir / launch.options_file, over)
        return over, replace(launch, findings=(*launch.findings, *read), **fields).validate()
    if launch.options_file:
        found.append(Finding("assumed", "trtllm-options-file",
                             f"--extra_llm_api_options {launch.options_file} is not here to read: its keys replace "
                             "what the command's options set (serve.py update_llm_args_with_extra_dict), so the KV "
                             "fraction, cuda_graph_config, scheduler_config, max_num_tokens and chunked prefill are "
                             "predicted as the options and trtllm-serve's defaults give them (run from the folder "
                             "that holds the file to read it)"))
    return over, replace(launch, findings=tuple(found))
