"""A trtllm-serve ``--extra_llm_api_options`` (``--config``) YAML file, read as TensorRT-LLM reads it.

trtllm-serve loads the file with ``yaml.safe_load`` and lays its keys over the LLM arguments its options built
(commands/serve.py ``serve`` -> ``update_llm_args_with_extra_dict``, NVIDIA/TensorRT-LLM 00209af1 L646-650), so a
key here replaces the command's option (``llm_args | llm_args_dict``, llmapi/llm_utils.py: a mapping such as
``kv_cache_config`` replaces the command's whole, the fields it leaves out at their defaults).  The keys read are
the LLM API's (tensorrt_llm/llmapi/llm_args.py): ``kv_cache_config`` (``free_gpu_memory_fraction``; ``max_tokens``,
whose pool is the smaller of the two by that field's own description; ``dtype``; ``enable_block_reuse``, the prefix
cache; ``tokens_per_block``, the block the capacity scheduler reserves in), ``enable_chunked_prefill``,
``max_num_tokens``, ``max_batch_size``, ``max_seq_len``, the parallel sizes,
``scheduler_config.capacity_scheduler_policy`` and ``cuda_graph_config`` (``null``: no CUDA graphs; ``batch_sizes``
or ``max_batch_size``, with ``CudaGraphConfig``'s own size list for the latter, and ``enable_padding``).  Keys that
change nothing predicted (logging, post-processing workers) pass silently; every other key is named in one
``assumed`` finding as not modelled.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from launchcard.errors import SourceError
from launchcard.predict._engine_rules import TRTLLM_KV_FRACTION
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from pathlib import Path

_SILENT = {"print_iter_log", "num_postprocess_workers", "trust_remote_code", "enable_iter_perf_stats",
           "return_perf_metrics", "garbage_collection_gen0_threshold"}
_SIZES = {"max_num_tokens": "max_num_batched_tokens", "max_batch_size": "max_num_seqs", "max_seq_len": "max_model_len",
          "tensor_parallel_size": "tp", "pipeline_parallel_size": "pp"}


def graph_batch_sizes(max_batch_size: int, padding: bool) -> tuple[int, ...]:
    """CudaGraphConfig's generated batch sizes for ``max_batch_size`` (llmapi/llm_args.py
    ``_generate_cuda_graph_batch_sizes``: 1, 2, 4 and multiples of 8 to 128 with padding, else 1-31, 32, 64, 128;
    powers of two from 256 below the maximum; the maximum itself).  Powers of two run to ceil(log2 maximum) in the
    CudaGraphConfig versions the file index holds; its pre-1.0 version at fcd3f316 (the PyTorch arguments'
    cuda_graph_batch_sizes) took floor, which differs only for a maximum above 256 that is no power of two, and its
    2026 version at 00043967 pads in steps of 64 past 128 instead.  No line is given: the index names no commit for
    its 1.0-1.2 era versions, and the repository is too large to fetch whole."""
    sizes = [1, 2, 4, *range(8, 129, 8)] if padding else [*range(1, 32), 32, 64, 128]
    sizes += [2**i for i in range(8, math.ceil(math.log2(max_batch_size)))] if max_batch_size > 1 else []
    out = sorted({b for b in sizes if b <= max_batch_size})
    if not out or out[-1] != max_batch_size:
        out.append(max_batch_size)
    return tuple(out)


class _Doc:
    def __init__(self, path: Path) -> None:
        from launchcard.yamlread import load_yaml

        self.where = str(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read the options file ({exc.strerror})", where=self.where,
                              fix="pass a readable --extra_llm_api_options file") from None
        self.doc = load_yaml(data, self.where)
        if not isinstance(self.doc.value, dict):
            raise SourceError("an --extra_llm_api_options file is a mapping of LLM arguments", where=f"{self.where}:1",
                              fix="write key: value lines (e.g. kv_cache_config: {free_gpu_memory_fraction: 0.8})")

    def bad(self, path: tuple[str, ...], want: str, value: Any) -> SourceError:
        line = self.doc.line(*path) or 1
        return SourceError(f"{'.'.join(path)} must be {want} ({value!r})", where=f"{self.where}:{line}",
                           fix=f"give {'.'.join(path)} as {want}")

    def int_(self, path: tuple[str, ...], value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.bad(path, "a positive integer", value)
        return value

    def bool_(self, path: tuple[str, ...], value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.bad(path, "true or false", value)
        return value


def read_options_file(path: Path, over: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[Finding]]:
    """``over`` (memory-planner settings) with the options file's keys laid over it, the launch's fields the file
    sets (``TrtllmLaunch``'s names) and what the reading found."""
    d = _Doc(path)
    over = dict(over)
    new: dict[str, Any] = {}
    skipped: list[str] = []
    for key, value in d.doc.value.items():
        if key in _SILENT:
            continue
        if key in _SIZES:
            over[_SIZES[key]] = d.int_((key,), value)
        elif key == "backend":
            # launch_server reads llm_args["backend"] after the file is laid over it (serve.py at 00209af1 L187): the
            # file switches the backend as --backend does, and only the PyTorch backend's rules are modelled
            if value != "pytorch":
                raise d.bad((key,), "pytorch (the backend whose rules are modelled)", value)
        elif key == "moe_expert_parallel_size":
            if value is not None and d.int_((key,), value) > 1:
                over["expert_parallel"] = True
        elif key == "enable_chunked_prefill":
            new["chunked_prefill"] = d.bool_((key,), value)
        elif key in ("kv_cache_config", "scheduler_config") and not isinstance(value, dict):
            raise d.bad((key,), "a mapping", value)  # TensorRT-LLM builds its config from the mapping's keys
        elif key == "kv_cache_config":
            # the file's kv_cache_config replaces the command's whole KvCacheConfig (a top-level dict union), so
            # a fraction it leaves out is KvCacheConfig's default, not --kv_cache_free_gpu_memory_fraction
            new["kv_fraction"] = TRTLLM_KV_FRACTION
            for k, v in value.items():
                if k == "free_gpu_memory_fraction":
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
                        raise d.bad((key, k), "a fraction in (0, 1]", v)
                    new["kv_fraction"] = float(v)
                elif k == "max_tokens" and v is not None:
                    new["kv_max_tokens"] = d.int_((key, k), v)
                elif k == "enable_block_reuse":
                    new["block_reuse"] = d.bool_((key, k), v)
                elif k == "tokens_per_block":
                    new["tokens_per_block"] = d.int_((key, k), v)
                elif k == "dtype" and v in ("fp8", "auto"):
                    if v == "fp8":
                        over["kv_cache_dtype"] = "fp8"
                else:
                    skipped.append(f"{key}.{k}")
        elif key == "scheduler_config":
            for k, v in value.items():
                if k == "capacity_scheduler_policy" and v in ("GUARANTEED_NO_EVICT", "MAX_UTILIZATION"):
                    new["no_evict"] = v == "GUARANTEED_NO_EVICT"
                else:
                    skipped.append(f"{key}.{k}")
        elif key == "cuda_graph_config":
            if value is None:
                over["cudagraphs_off"] = True
            elif isinstance(value, dict):
                padding = d.bool_((key, "enable_padding"), value.get("enable_padding", False))
                sizes = value.get("batch_sizes")
                if sizes is not None:
                    if not isinstance(sizes, list) or not sizes:
                        raise d.bad((key, "batch_sizes"), "a list of batch sizes", sizes)
                    got = tuple(sorted({d.int_((key, "batch_sizes"), b) for b in sizes}))
                    top = value.get("max_batch_size") or 0
                    if top and top != got[-1]:  # CudaGraphConfig's validator refuses the pair (llm_args.py)
                        raise d.bad((key, "max_batch_size"), f"max(batch_sizes) {got[-1]} or left out", top)
                else:
                    top = value.get("max_batch_size") or 0
                    got = graph_batch_sizes(d.int_((key, "max_batch_size"), top) if top else 128, padding)
                new["graph_sizes"], new["graph_padding"] = got, padding
                skipped += [f"{key}.{k}" for k in value if k not in ("enable_padding", "batch_sizes",
                                                                     "max_batch_size")]
            else:
                raise d.bad((key,), "a mapping or null", value)
        else:
            skipped.append(key)
    found = [Finding("info", "trtllm-options-file",
                     f"--extra_llm_api_options {path.name} read: its keys replace the command's options "
                     "(serve.py update_llm_args_with_extra_dict)")]
    if skipped:
        found.append(Finding("assumed", "trtllm-options-file",
                             f"{path.name}: not modelled, predicted as if absent: {', '.join(skipped)}"))
    return over, new, found
