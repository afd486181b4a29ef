"""Engine settings that move memory, and how to read them off a vLLM argv.

The resolved ``vllm serve`` command is the source of truth: planning from its
own argv means the plan describes exactly what will be launched.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from launchcard.errors import InputError
from launchcard.flagspec import release_numbers

GiB = 1024**3

# the newest vLLM release whose memory accounting this planner read; a newer one (the default release included,
# flagspec.default_release) is planned with this one's accounting and says so (_model.account)
MEMORY_READ_UNTIL = (0, 32)

# Accepted values, as vLLM's own argument parser takes them.
# dtype: vllm/config/model.py ModelDType (0.32, unchanged since 0.6).
DTYPES = frozenset({"auto", "half", "float16", "bfloat16", "float", "float32"})
# kv-cache-dtype: vllm/config/cache.py CacheDType (0.32) plus names earlier releases took.
KV_CACHE_DTYPES = frozenset({
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "ultraquant_4bit",
    "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
})
# quantization: vllm/model_executor/layers/quantization/__init__.py QuantizationMethods (0.32)
# plus methods earlier releases accepted (bitsandbytes, gguf, marlin, ... removed since).
QUANTIZATION_METHODS = frozenset({
    "awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8",
    "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors",
    "experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8", "online",
    "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only", "nvfp4_per_token", "mxfp8",
    # earlier releases
    "bitsandbytes", "gguf", "marlin", "gptq_marlin_24", "aqlm", "deepspeedfp", "tpu_int8", "ipex", "hqq",
    "ptpc_fp8", "petit_nvfp4", "rtn", "bitblas", "gptq_bitblas", "qqq", "squeezellm", "fp4", "nvfp4",
    # the captured parser specs' --quantization choices (data/flags/vllm-*.json): auto-round 0.10.2-0.14.1,
    # cpu_awq 0.12.0-0.22.1, cpu_gptq 0.12.0-0.13.0; lut_b_moe, mxfp4_hadamard32, w4afp8 0.34.0
    "auto-round", "cpu_awq", "cpu_gptq", "lut_b_moe", "mxfp4_hadamard32", "w4afp8",
})
# --speculative-config "method": vllm/config/speculative.py SpeculativeMethod (0.32.0 L38-83: MTPModelTypes,
# EagleModelTypes, NgramGPUTypes, DSparkModelTypes; a pydantic Literal, so another name stops the server at start-up),
# with every name the captured parser specs' SpeculativeConfig.method takes (data/flags/vllm-*.json, 0.10.2-0.34.0:
# 0.34.0 adds nemotron3_5_transcribe_mtp, step5_mtp; tests/test_memory.py checks the union). 0.11.0's (L32-35) too.
SPECULATIVE_METHODS = frozenset({
    "ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "custom_class", "eagle", "eagle3",
    "extract_hidden_states", "dflash", "ngram_gpu", "dspark", "deepseek_mtp", "dots3_note_mtp", "mimo_mtp",
    "mimo_v2_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp", "ernie_mtp", "nemotron_h_mtp",
    "exaone_moe_mtp", "exaone4_5_mtp", "qwen3_next_mtp", "qwen4_exp_mtp", "qwen3_5_mtp", "longcat_flash_mtp",
    "bailing_hybrid_v3_mtp", "minimax_m3_mtp", "bailing_hybrid_mtp", "mtp", "kimi_k3_mtp", "pangu_ultra_moe_mtp",
    "step3p5_mtp", "hy_v3_mtp", "hy_v4_mtp", "gemma4_mtp", "inkling_mtp", "glm5_next_mtp",
    "nemotron3_5_transcribe_mtp", "step5_mtp",
})
STR_METHOD_FROM = (0, 34)
# the methods vLLM runs with no draft "model": the target's own MTP layers (every *_mtp name becomes "mtp") and
# the model-free proposers; any other method without "model" raises "num_speculative_tokens was provided but
# without speculative model" (0.32.0 SpeculativeConfig.__post_init__ L1141-1190; 0.11.0 L214-240 takes only the
# MTP names and ngram, a subset)
DRAFTLESS_METHODS = frozenset(m for m in SPECULATIVE_METHODS if m.endswith("_mtp")) | {
    "mtp", "dspark", "ngram", "ngram_gpu", "suffix", "extract_hidden_states"}


def speculative_refusal(spec: dict[str, Any], version: tuple[int, int]) -> tuple[str, str] | None:
    """(message, fix) where vLLM ``version``'s SpeculativeConfig refuses a ``--speculative-config`` at start-up: a
    method outside :data:`SPECULATIVE_METHODS` (before :data:`STR_METHOD_FROM`), or a drafted one without its
    "model" (:data:`DRAFTLESS_METHODS`); None otherwise.  The one wording ``memory`` / ``predict`` (bad input) and
    ``check`` (an error finding) give."""
    method = spec.get("method")
    if method is None:
        return None
    return unknown_method_refusal(method, version) or draftless_refusal(spec)


def unknown_method_refusal(method: object, version: tuple[int, int]) -> tuple[str, str] | None:
    """:func:`speculative_refusal`'s first rule: a method name vLLM ``version``'s SpeculativeConfig does not take."""
    # 0.34.0's SpeculativeConfig.method is `SpeculativeMethod | str | None` beside a new custom_method (its
    # captured spec): another name is not refused by its parser there, so only releases before it are judged
    known = method in SPECULATIVE_METHODS | {"[ngram]"} if isinstance(method, str) else False
    if not known and (not isinstance(method, str) or version < STR_METHOD_FROM):
        return (f"unknown speculative method {method!r} (vLLM's SpeculativeConfig refuses it at start-up)",
                'give one of vLLM\'s methods, e.g. "ngram", "mtp", "eagle3" (with its "model"), "draft_model" (with '
                'its "model")')
    return None


def draftless_refusal(spec: dict[str, Any]) -> tuple[str, str] | None:
    """:func:`speculative_refusal`'s second rule: a drafted method without its draft "model"."""
    method = spec.get("method")
    if method is None:
        return None
    if not spec.get("model") and method not in DRAFTLESS_METHODS | {"[ngram]"}:
        return (f"method {method!r} without a draft \"model\": vLLM refuses it at start-up (\"num_speculative_tokens "
                "was provided but without speculative model\")",
                f'add the draft checkpoint, e.g. {{"method": "{method}", "model": "ORG/DRAFT", '
                '"num_speculative_tokens": 3}, or use "mtp" / "ngram"')
    return None


def spec_mtp_refusal(spec: object, mtp_layers: int, config: str) -> tuple[str, str] | None:
    """:func:`mtp_refusal` of a parsed ``--speculative-config`` (its "method" and draft "model"): the one reading
    ``memory``, ``predict`` (bad input) and ``check`` (an error finding) give it; None for what is no JSON object."""
    if not isinstance(spec, dict):
        return None
    method = spec.get("method")
    return mtp_refusal(method if isinstance(method, str) else None, spec.get("model"), mtp_layers, config)


def mtp_refusal(method: str | None, draft_model: object, mtp_layers: int, config: str) -> tuple[str, str] | None:
    """(message, fix) where vLLM drafts with MTP (``mtp`` or a ``*_mtp`` name, no draft model: the target's own MTP
    layers) on a checkpoint ``config`` with none: vLLM then takes the target as the draft, whose model type is no
    MTP type, and raises "Unsupported speculative method: 'mtp'" (0.32.0 vllm/config/speculative.py
    SpeculativeConfig.__post_init__, L1147-1160 then the method chain L1326-1389); None otherwise."""
    if not method or not (method == "mtp" or method.endswith("_mtp")) or draft_model or mtp_layers > 0:
        return None
    return (f"speculative method {method!r} drafts with the checkpoint's own MTP layers, and {config} has none (no "
            "num_nextn_predict_layers / mtp_num_hidden_layers): vLLM refuses it at start-up (\"Unsupported "
            "speculative method\")",
            'name a draft: {"method": "eagle3", "model": "ORG/DRAFT", ...}, {"method": "ngram", ...}, or drop '
            "--speculative-config")


@dataclass(frozen=True)
class Settings:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    expert_parallel: bool = False
    # vLLM's MoE layers without expert parallelism are tensor-parallel over the whole TP x DP group (the experts of
    # a rank = 1/(tp x dp) of each; see memory._weights.moe_split); False: over ``tp`` only (TensorRT-LLM's and
    # SGLang's calibration rows, bench/predict_accuracy.py, whose rules were not read)
    moe_dp_flat: bool = True
    # SGLang's MoE tensor parallelism under DP attention (--ep-size below --tp-size): every expert is split over the
    # TP group (0.5.6.post2 layers/moe/fused_moe_triton/layer.py L178-190), planned as expert parallelism over it
    # (``expert_parallel``) at the exact share, experts / group per rank: no rank holds more (vLLM's uneven EP
    # placement, limits.VLLM_EP_RULE, is not SGLang's)
    moe_tp_group: bool = False
    dcp: int = 1
    max_model_len: int | None = None  # None = the model's max_position_embeddings
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float | None = None  # None = the release's default (see ``utilization``)
    max_num_seqs: int | None = None  # None = vLLM's default for the GPU
    max_num_batched_tokens: int | None = None
    enforce_eager: bool = False
    speculative_method: str | None = None
    num_speculative_tokens: int = 0
    quantization: str | None = None  # runtime --quantization
    dtype: str = "auto"
    block_size: int | None = None
    enable_prefix_caching: bool | None = None
    language_model_only: bool = False
    vllm_version: str | None = None
    device: str = "cuda"  # "cpu": the KV pool is VLLM_CPU_KVCACHE_SPACE
    cpu_kvcache_space_gib: float | None = None
    # FlashInfer's top-k/top-p sampler in use: vLLM's sampler (and its dummy start-up pass) runs
    # FlashInfer's kernel instead of the PyTorch sort path ("Using FlashInfer for top-p &
    # top-k sampling" in the log).  None: not stated (planned without it; where the release
    # would use it whenever the package is installed, memory._kernels decides what follows)
    flashinfer_sampler: bool | None = None
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: vLLM then starts with a --max-model-len above the model's derived maximum
    allow_long_max_model_len: bool = False
    # CUDA graph capture as the launch sets it (None: the release's default, see predict's ServingFacts.graph_tokens):
    # --max-cudagraph-capture-size / compilation_config.max_cudagraph_capture_size, the captured sizes
    # (--cuda-graph-sizes / compilation_config.cudagraph_capture_sizes), and whether the launch turns graphs off
    # without --enforce-eager (compilation_config.cudagraph_mode NONE, or an optimization level without graphs)
    max_cudagraph_capture_size: int | None = None
    cudagraph_capture_sizes: tuple[int, ...] | None = None
    cudagraphs_off: bool = False
    # --scheduler-reserve-full-isl (vLLM 0.19+, default True): admit a request only when its whole prompt's KV fits
    # (None: the release's behaviour)
    scheduler_reserve_full_isl: bool | None = None
    # --async-scheduling / --no-async-scheduling (None: the release's default; predict.vllm_async_scheduling)
    async_scheduling: bool | None = None
    # the MXFP4 MoE backend the launch states: "marlin" (VLLM_MXFP4_USE_MARLIN=1, --moe-backend marlin) or "triton"
    # (--moe-backend triton, or triton_kernels installed by hand before 0.12); None: the release's default
    # (predict._mxfp4.sm90_vllm_backend)
    mxfp4_backend: str | None = None
    # (intermediate, hidden) multiples the engine rounds MXFP4 experts up to when it allocates them (per rank); None:
    # vLLM's (memory._weights.VLLM_MXFP4_PAD).  An SGLang plan sets its own (memory._sglang_mxfp4.sglang_mxfp4_pad)
    mxfp4_pad: tuple[int, int] | None = None
    # why the engine converts the checkpoint's MXFP4 experts to BF16 weights at load ("": it keeps them MXFP4): SGLang
    # below its MXFP4 runners (memory._sglang_mxfp4.sglang_mxfp4_runner); the experts are then planned at 2 bytes a
    # parameter, allocated at ``mxfp4_pad`` (memory._weights.effective_quant)
    mxfp4_upcast: str = ""
    # whether vLLM can run DeepGEMM for block-scaled FP8 GEMMs: False where the deep_gemm package is not installed
    # (the vllm wheel does not require it) or the launch sets VLLM_USE_DEEP_GEMM=0 (vllm/utils/deep_gemm.py
    # is_deep_gemm_supported, 0.11.0 L23-30): its dense block GEMMs then run CUTLASS (predict._cutlass_block);
    # None: not stated (assumed installed, as vLLM's own image has it)
    deep_gemm: bool | None = None
    # whether the node's GPUs reach each other peer-to-peer (False: `nvidia-smi topo -p2p r` shows NS, or vLLM logs
    # "Custom allreduce is disabled because your platform lacks GPU P2P capability"; predict --no-gpu-p2p); None: the
    # catalog GPU's link decides.  Without it vLLM's custom all-reduce allocates nothing (_model.non_torch_gib)
    gpu_p2p: bool | None = None
    # the TP group the LM head, dense MLPs and shared experts split over when it is not ``tp`` (the attention's):
    # SGLang's DP attention on its DeepSeek model file (attention over --tp-size / --dp-size, those over the whole
    # --tp-size, the embedding whole on every rank; predict._sglang); None: they split over ``tp``
    dense_tp: int | None = None
    # the parts that do not follow ``dense_tp`` (predict._sglang_layout.deepseek_dense reads them from the command and
    # release): "mlp" and "shared_experts" whole on every rank (--moe-dense-tp-size 1; an all-to-all MoE backend),
    # "embed" and "lm_head" over the attention's ``tp`` (0.5.9's embedding; --enable-dp-lm-head)
    dense_local: tuple[str, ...] = ()

    def validate(self) -> Settings:
        for name in ("tp", "pp", "dp", "dcp"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be >= 1 ({getattr(self, name)})", where=f"--{name}",
                                 fix="use a positive integer")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise InputError(
                f"gpu-memory-utilization must be in (0, 1] ({self.gpu_memory_utilization})",
                where="--gpu-memory-utilization", fix="pass a fraction such as 0.9",
            )
        for opt, value, allowed in (("--dtype", self.dtype, DTYPES),
                                    ("--kv-cache-dtype", self.kv_cache_dtype, KV_CACHE_DTYPES)):
            if str(value).lower() not in allowed:
                raise InputError(f"unknown {opt[2:]} ({value!r})", where=opt,
                                 fix=f"use one of {', '.join(sorted(allowed))}")
        if self.quantization is not None and self.quantization.lower() not in QUANTIZATION_METHODS | {"none"}:
            raise InputError(f"unknown quantization method ({self.quantization!r})", where="--quantization",
                             fix="use a vLLM method such as fp8, awq, gptq, compressed-tensors, mxfp4, modelopt")
        if self.mxfp4_backend not in (None, "marlin", "triton"):
            raise InputError(f"unknown MXFP4 MoE backend ({self.mxfp4_backend!r})", where="--mxfp4-backend",
                             fix="use marlin or triton")
        if self.max_model_len is not None and self.max_model_len < 1:
            raise InputError(f"max-model-len must be >= 1 ({self.max_model_len})", where="--max-model-len",
                             fix="pass a token count")
        # vLLM refuses these at start-up (SchedulerConfig.max_num_seqs / max_num_batched_tokens ge=1, as the
        # captured parser specs record them; CacheConfig.block_size gt=0, 0.32.0 vllm/config/cache.py L74): a 0
        # was planned as the default and a negative budget as a smaller one, a plan vLLM never starts
        for flag, count in (("max-num-seqs", self.max_num_seqs), ("block-size", self.block_size),
                            ("max-num-batched-tokens", self.max_num_batched_tokens)):
            if count is not None and count < 1:
                raise InputError(f"{flag} must be >= 1 ({count}; vLLM refuses it at start-up)", where=f"--{flag}",
                                 fix=f"pass a positive count, or leave --{flag} out for vLLM's default")
        if self.cpu_kvcache_space_gib is not None and not (math.isfinite(self.cpu_kvcache_space_gib * GiB)
                                                           and self.cpu_kvcache_space_gib >= 0):
            raise InputError(f"VLLM_CPU_KVCACHE_SPACE must be a number of GiB >= 0 ({self.cpu_kvcache_space_gib})",
                             where="--cpu-kvcache-space-gib", fix="pass the GiB the server is given, e.g. 40")
        return self

    @property
    def version(self) -> tuple[int, int]:
        return parse_version(self.vllm_version)

    @property
    def utilization(self) -> float:
        """``--gpu-memory-utilization`` as given, else the release's default."""
        if self.gpu_memory_utilization is not None:
            return self.gpu_memory_utilization
        return default_utilization(self.version)


# CacheConfig.gpu_memory_utilization's default, as the captured parser specs record it
# (launchcard/data/flags/vllm-0.19.1.json: 0.9; vllm-0.20.2.json and later: 0.92).
UTILIZATION_092_FROM = (0, 20)


def default_utilization(version: tuple[int, int]) -> float:
    return 0.92 if version >= UTILIZATION_092_FROM else 0.9


def parse_version(text: str | None) -> tuple[int, int]:
    """``v0.20.0`` / ``0.26.1rc1.dev608+g99a10304d`` -> (0, 20) / (0, 26): the release line
    (``flagspec.release_numbers``; a pre-release of 0.26 carries 0.26's code, so it counts as 0.26 on purpose); none
    given: the one default release every surface takes (:func:`launchcard.flagspec.default_release`, the newest
    captured)."""
    if not text:
        return default_vllm()
    nums = release_numbers(str(text))
    if nums is None:
        raise InputError(f"unreadable vLLM version ({text!r})", fix="use a form like 0.19.0", field="engine_version")
    return _release_line(nums)


def _release_line(nums: tuple[int, ...]) -> tuple[int, int]:
    """(major, minor) of ``flagspec.release_numbers``' numbers (``(1,)`` is 1.0)."""
    major, minor = (*nums, 0)[:2]
    return major, minor


@lru_cache(maxsize=1)
def default_vllm() -> tuple[int, int]:
    """(major, minor) of the vLLM release taken when none is given (:func:`launchcard.flagspec.default_release`)."""
    from launchcard.flagspec import default_release

    nums = release_numbers(default_release("vllm"))
    return _release_line(nums) if nums else MEMORY_READ_UNTIL


# Settings field -> the flags that set it, in every spelling readers meet (vLLM's own
# aliases come from its captured parser; --tp/--pp/--dp are launchcard memory's).
_INT = {"tp": ("--tensor-parallel-size", "-tp", "--tp"), "pp": ("--pipeline-parallel-size", "-pp", "--pp"),
        "dp": ("--data-parallel-size", "-dp", "--dp"), "dcp": ("--decode-context-parallel-size", "-dcp", "--dcp"),
        "max_num_seqs": ("--max-num-seqs",), "max_num_batched_tokens": ("--max-num-batched-tokens",),
        "block_size": ("--block-size",)}
_STR = {"kv_cache_dtype": ("--kv-cache-dtype",), "quantization": ("--quantization", "-q"), "dtype": ("--dtype",)}
_BOOL = {"expert_parallel": ("--enable-expert-parallel",), "enforce_eager": ("--enforce-eager",),
         "scheduler_reserve_full_isl": ("--scheduler-reserve-full-isl",),
         "async_scheduling": ("--async-scheduling",),
         "enable_prefix_caching": ("--enable-prefix-caching",), "language_model_only": ("--language-model-only",)}


# the fields settings_from_argv reads with rules of their own (a length, a share, a speculative JSON)
_OWN = {"max_model_len": ("--max-model-len",), "gpu_memory_utilization": ("--gpu-memory-utilization",),
        "speculative_method": ("--speculative-config",), "num_speculative_tokens": ("--speculative-config",)}


def vllm_flags(name: str) -> tuple[str, ...]:
    """Every spelling of the ``vllm serve`` flag that sets the Settings field ``name`` (vLLM's own first), empty
    for a field no flag sets: the one table ``settings_from_argv`` reads by, written the other way."""
    for table in (_INT, _STR, _BOOL, _OWN):
        if name in table:
            return table[name]
    return ()


def vllm_flag(name: str) -> str | None:
    """The ``vllm serve`` flag that sets the Settings field ``name`` (vLLM's own spelling), None for a field no
    flag sets (:func:`vllm_flags`)."""
    return next(iter(vllm_flags(name)), None)


def _len_value(raw: str, opt: str) -> int | None:
    """A token count as vLLM reads it: ``128k`` = 128000, ``128K`` = 131072; ``auto``/-1 = the model's own."""
    from launchcard.flagspec import human_readable_int_or_auto

    try:
        value = human_readable_int_or_auto(raw)
    except ValueError:
        raise InputError(f"not a token count ({raw!r})", where=f"argv {opt}",
                         fix="use an integer such as 32768 (k = 1000, K = 1024, or auto)") from None
    return None if value == -1 else value


def settings_from_argv(argv: list[str] | tuple[str, ...], base: Settings | None = None) -> Settings:
    """The memory-relevant settings of a resolved ``vllm serve`` argv (bare flags are read as vLLM's).

    Read through the shared argv model (last occurrence wins, ``_``/``-`` and
    aliases as vLLM reads them).  Flags that do not touch memory are ignored;
    a bad value of one that does raises.
    """
    from launchcard.argv import parse_command

    s = base or Settings()
    cmd = parse_command(argv, engine="vllm")
    updates: dict[str, Any] = {}  # Any: values of several Settings fields
    for name, flags in _INT.items():
        value = cmd.get_int(*flags)
        if value is not None:
            updates[name] = value
    for name, flags in _STR.items():
        occ = cmd.last(*flags)
        text = cmd.get_str(*flags)
        if occ is not None and text is None:
            raise InputError("flag has no value", where=f"argv {occ.written}", fix="give the flag a value")
        if text is not None:
            updates[name] = text
    for name, flags in _BOOL.items():
        flag = cmd.get_bool(*flags)
        if flag is not None:
            updates[name] = flag
    occ = cmd.last("--max-model-len")
    if occ is not None:
        raw = cmd.get_str("--max-model-len")
        if raw is None:
            raise InputError("flag has no value", where=f"argv {occ.written}", fix="give the flag a value")
        length = _len_value(raw, occ.written)
        if length is not None:
            updates["max_model_len"] = length
    util = cmd.get_float("--gpu-memory-utilization")
    if util is not None:
        updates["gpu_memory_utilization"] = util
    spec = cmd.get_json("--speculative-config")
    spec_occ = cmd.last("--speculative-config")
    if spec is not None and spec_occ is not None:
        where = f"argv {spec_occ.written}"
        if not isinstance(spec, dict):
            raise InputError(f"bad value ({spec!r}: not an object)", where=where, fix="fix the flag's value")
        if not spec.get("method") and not spec.get("model"):
            # vLLM then drafts with the target's own MTP layers when its config has them and otherwise refuses
            # ("num_speculative_tokens was provided but without speculative model": vllm/config/speculative.py
            # SpeculativeConfig.__post_init__, the `self.model is None and self.num_speculative_tokens is not None`
            # branch, in every stored release read; the MTP condition varies by release): launchcard does not
            # infer it, and never assumes a draft
            raise InputError(f"{spec!r} names neither a method nor a draft model: vLLM infers the method from the "
                             "target's config (MTP layers) or refuses, and launchcard does not guess it", where=where,
                             fix='give "method" (e.g. {"method": "mtp", "num_speculative_tokens": 1}, "ngram", or '
                                 '"eagle3" with its "model")')
        refused = speculative_refusal(spec, s.version)
        if refused:
            raise InputError(refused[0], where=where, fix=refused[1])
        try:
            # a draft model without a method: its name, which vLLM reads first ("eagle-" / "eagle3" in it; else
            # the draft's config), and the prediction names the draft cost it does not count (draft-cost)
            updates["speculative_method"] = str(spec.get("method") or spec.get("model"))
            updates["num_speculative_tokens"] = int(spec.get("num_speculative_tokens") or 1)
        except (TypeError, ValueError) as exc:
            raise InputError(f"bad value ({spec!r}: {exc})", where=where, fix="fix the flag's value") from None
        given = spec.get("num_speculative_tokens")
        # vLLM's SpeculativeConfig.num_speculative_tokens is Field(gt=0) and __post_init__ raises "Expected
        # num_speculative_tokens to be greater than zero" (vllm/config/speculative.py): 0 or less is refused, not 1
        if given is not None and (isinstance(given, bool) or not isinstance(given, int) or given <= 0):
            raise InputError(f"num_speculative_tokens must be a whole number greater than 0 ({given!r}; vLLM refuses "
                             "it)", where=where, fix='give e.g. {"method": "ngram", "num_speculative_tokens": 3}')
    updates.update(_cudagraph_settings(cmd, s.version, _one_size_is_top(s.vllm_version)))
    backend = _mxfp4_backend(cmd)
    if backend is not None:
        updates["mxfp4_backend"] = backend
    if _deep_gemm_off(cmd):
        updates["deep_gemm"] = False
    return replace(s, **updates).validate()


def _deep_gemm_off(cmd: Any) -> bool:
    """Whether a vLLM launch turns DeepGEMM off: ``VLLM_USE_DEEP_GEMM`` in its environment read as vllm/envs.py
    reads it (``bool(int(value))``, default 1: 0.11.0 vllm/envs.py L1148-1149)."""
    raw = dict(cmd.env).get("VLLM_USE_DEEP_GEMM")
    if raw is None or not str(raw).strip():
        return False
    try:
        return not bool(int(str(raw)))
    except ValueError:
        raise InputError(f"VLLM_USE_DEEP_GEMM is not an integer ({raw!r}): vLLM reads it as bool(int(value)) and "
                         "stops at start-up", where="VLLM_USE_DEEP_GEMM", fix="set it to 1 or 0") from None


def _mxfp4_backend(cmd: Any) -> str | None:
    """The MXFP4 MoE backend a vLLM launch asks for (``cmd``: a ParsedCommand): ``--moe-backend marlin|triton``
    (0.19+, KernelConfig.moe_backend), else ``VLLM_MXFP4_USE_MARLIN`` in its environment, read as vllm/envs.py
    reads it (``bool(int(value))``, 0.11.2 L1101-1103): 1 -> "marlin"; 0 or unset -> None (the release's choice)."""
    flag = cmd.get_str("--moe-backend")
    if flag in ("marlin", "triton"):
        return str(flag)
    raw = dict(cmd.env).get("VLLM_MXFP4_USE_MARLIN")
    if raw is None or not str(raw).strip():
        return None
    try:
        on = bool(int(str(raw)))
    except ValueError:
        raise InputError(f"VLLM_MXFP4_USE_MARLIN is not an integer ({raw!r}): vLLM reads it as bool(int(value)) and "
                         "stops at start-up", where="VLLM_MXFP4_USE_MARLIN", fix="set it to 1 or 0") from None
    return "marlin" if on else None


def _one_size_is_top(text: str | None) -> bool:
    """Whether one --cuda-graph-sizes value is the largest of a generated list in vLLM ``text`` (SchedulerConfig's,
    through 0.11.0: 0.11.0 vllm/config/__init__.py L593-597) rather than a list of one size (0.11.1 on, vLLM PR
    #26016); a release named without its patch level ("0.11") is read as 0.11.1 and later, as the newest is."""
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(text or "").strip())
    if not m:
        return False  # no release stated: the newest's rule
    release = (int(m[1]), int(m[2]), int(m[3]) if m[3] is not None else 1)
    return release < (0, 11, 1)


def _cudagraph_settings(cmd: Any, version: tuple[int, int], one_is_top: bool = False) -> dict[str, Any]:
    """The CUDA graph capture a vLLM argv sets (``cmd``: a ParsedCommand), as Settings fields.

    --cuda-graph-sizes (SchedulerConfig through 0.11.0, ``one_is_top``: one value N = sizes 1, 2, 4, 8, 16, ... N;
    several = those sizes, vLLM 0.10.2 vllm/config/__init__.py L3652-3660, 0.11.0 L593-599; from 0.11.1 an alias of
    compilation_config.cudagraph_capture_sizes, 0.11.2 vllm/engine/arg_utils.py L1743-1754);
    --max-cudagraph-capture-size (0.11.1+); --compilation-config / -O.x keys of the same names and cudagraph_mode;
    an optimization level without graphs: -O0 in every release (0.10.2 config/__init__.py L3389-3395 and 0.11.2
    config/vllm.py L465-472: graphs only at compilation level 3; 0.12.0 config/vllm.py OPTIMIZATION_LEVEL_00
    cudagraph_mode NONE), -O1 / -O2 too before 0.12 (compilation levels without vLLM's compile)."""
    out: dict[str, Any] = {}
    comp = cmd.get_json("--compilation-config")
    occ = cmd.last("--compilation-config")
    where = f"argv {occ.written}" if occ is not None else "argv --compilation-config"
    if isinstance(comp, int) and not isinstance(comp, bool):  # -O 3 / --compilation-config 3: a level (0.10-0.11)
        comp = {"level": comp}
    if comp is not None and not isinstance(comp, dict):
        raise InputError(f"bad value ({comp!r}: not an object)", where=where, fix="fix the flag's value")
    comp = comp or {}
    sizes: Any = comp.get("cudagraph_capture_sizes")
    top: Any = comp.get("max_cudagraph_capture_size")
    raw_sizes = cmd.get_list("--cuda-graph-sizes")
    if raw_sizes:
        try:
            listed = [int(x) for part in raw_sizes for x in str(part).replace(",", " ").split()]
        except ValueError:
            raise InputError(f"not a list of batch sizes ({' '.join(raw_sizes)!r})", where="argv --cuda-graph-sizes",
                             fix="pass sizes such as 1 2 4 8") from None
        if len(listed) == 1 and one_is_top:
            top, sizes = listed[0], None
        else:
            sizes = listed
    flag_top = cmd.get_int("--max-cudagraph-capture-size")
    if flag_top is not None:
        top = flag_top
    if sizes is not None:
        try:
            out["cudagraph_capture_sizes"] = tuple(sorted({int(x) for x in sizes}))
        except (TypeError, ValueError):
            raise InputError(f"bad cudagraph_capture_sizes ({sizes!r})", where=where,
                             fix="a list of batch sizes such as [1, 2, 4, 8]") from None
    if top is not None:
        if not isinstance(top, int) or isinstance(top, bool) or top < 0:
            raise InputError(f"bad max_cudagraph_capture_size ({top!r})", where=where,
                             fix="a number of tokens such as 512")
        out["max_cudagraph_capture_size"] = top
    mode = str(comp.get("cudagraph_mode") or "").upper()
    level = cmd.try_int("--optimization-level")
    comp_level = comp.get("level", comp.get("mode"))
    off = mode == "NONE" or level == 0 or (version < (0, 12) and level in (1, 2))
    if isinstance(comp_level, int) and not isinstance(comp_level, bool) and version < (0, 12) and comp_level != 3:
        off = True
    if off:
        out["cudagraphs_off"] = True
    return out


_SETTINGS_FIELDS = frozenset(f.name for f in fields(Settings))
_FIELD_COUNT = len(_SETTINGS_FIELDS)


def settings_with(s: Settings, **changes: Any) -> Settings:
    """``dataclasses.replace(s, **changes)`` without the generated ``__init__``: the same record, field for field
    (a plan search derives ~2,000 Settings a cold search; replace's keyword call was ~20 us of each).  Valid only
    while Settings has no ``__post_init__`` and only init fields (tests/test_memory_settings_with.py fails
    otherwise: then go back to replace).  Only the fields are copied: anything else in the instance dict (what a
    ``functools.cached_property`` stores there, derived from the original's fields) stays behind, as replace
    leaves it."""
    unknown = changes.keys() - _SETTINGS_FIELDS
    if unknown:
        raise TypeError(f"Settings has no field {', '.join(sorted(unknown))}")
    new = object.__new__(Settings)
    state = new.__dict__  # a frozen dataclass refuses setattr, not its instance dict
    old = s.__dict__
    state.update(old if len(old) == _FIELD_COUNT else {name: old[name] for name in _SETTINGS_FIELDS})
    state.update(changes)
    return new
