"""``launchcard memory``: will it start, how long a context, how many requests."""

from __future__ import annotations

from pathlib import Path

import typer

from launchcard.cli._app import app
from launchcard.cli._options import JsonOpt, cpu_kv_option


@app.command()
def memory(
    config: str = typer.Option(..., "--config", help="The model's config.json: a file, its folder, or a Hub repo id "
                                                     "cached on this machine (never downloaded)."),
    safetensors_index: Path | None = typer.Option(None, "--safetensors-index",
                                                  help="model.safetensors.index.json for exact weight bytes."),
    gpu: str | None = typer.Option(None, "--gpu",
                                   help="Accelerator from the hardware catalog: id, alias, the name vLLM/torch print "
                                        "('NVIDIA H100 80GB HBM3', 'AMD Instinct MI308X') or a recipes profile "
                                        "(rtx_5090_2x), matched whole (case and separators aside: a100-40 is no "
                                        "name); a CPU entry (xeon6) plans vLLM's CPU backend per NUMA node."),
    gpu_memory_gib: float | None = typer.Option(None, "--gpu-memory-gib",
                                                help="Device memory as reported, in GiB (overrides --gpu)."),
    tp: int = typer.Option(1, "--tp", "--tensor-parallel-size"),
    pp: int = typer.Option(1, "--pp", "--pipeline-parallel-size"),
    dp: int = typer.Option(1, "--dp", "--data-parallel-size"),
    enable_expert_parallel: bool = typer.Option(False, "--enable-expert-parallel"),
    dcp: int = typer.Option(1, "--dcp", "--decode-context-parallel-size"),
    dtype: str = typer.Option("auto", "--dtype"),
    quantization: str | None = typer.Option(None, "--quantization", help="Runtime quantization (e.g. fp8)."),
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype"),
    max_model_len: int | None = typer.Option(None, "--max-model-len"),
    gpu_memory_utilization: float | None = typer.Option(
        None, "--gpu-memory-utilization", help="Default: the release's (0.92 since vLLM 0.20, 0.9 before)."),
    max_num_seqs: int | None = typer.Option(None, "--max-num-seqs"),
    max_num_batched_tokens: int | None = typer.Option(None, "--max-num-batched-tokens"),
    block_size: int | None = typer.Option(None, "--block-size"),
    enforce_eager: bool = typer.Option(False, "--enforce-eager"),
    speculative_config: str | None = typer.Option(None, "--speculative-config", help="JSON, as for vllm serve."),
    vllm_version: str | None = typer.Option(None, "--vllm-version",
                                            help="Accounting of this vLLM release (default: latest modelled)."),
    device: str = typer.Option("cuda", "--device", help="cuda, or cpu (KV pool = --cpu-kvcache-space-gib)."),
    cpu_kvcache_space_gib: float | None = typer.Option(None, "--cpu-kvcache-space-gib",
                                                       help="VLLM_CPU_KVCACHE_SPACE for --device cpu."),
    allow_long_max_model_len: bool = typer.Option(
        False, "--allow-long-max-model-len",
        help="The server runs with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vLLM then accepts a --max-model-len above the "
             "length it derives from the config)."),
    flashinfer_sampler: bool | None = typer.Option(
        None, "--flashinfer-sampler/--no-flashinfer-sampler",
        help="Whether vLLM samples with FlashInfer's top-k/top-p kernel (the flashinfer package installed, and "
             "VLLM_USE_FLASHINFER_SAMPLER=1 from vLLM 0.11.1). Not given: planned without it, and a plan that fits "
             "only with it is 'cannot decide', not refused."),
    json_out: JsonOpt = False,
) -> None:
    """Plan GPU memory: weights, KV cache, tokens and concurrency per GPU."""
    from launchcard.errors import InputError
    from launchcard.memory import Settings, load_arch, plan_memory, plan_to_json, plan_to_text, settings_from_argv

    if gpu is None and gpu_memory_gib is None and device != "cpu":
        raise InputError("no GPU given", where="--gpu", fix="pass --gpu NAME (e.g. h100) or --gpu-memory-gib X")
    if device not in ("cuda", "cpu"):
        raise InputError(f"unknown device ({device!r})", where="--device", fix="use cuda or cpu")
    if gpu is not None:
        from launchcard.hardware import find

        try:
            acc = find(gpu)
        except InputError as exc:  # this command also plans a GPU the catalog lacks, by its memory
            from launchcard.hardware import catalog

            hits = catalog().candidates(gpu)  # a bare "cpu": another CPU is planned by its NUMA node's memory
            other = ("or, another CPU: --device cpu --gpu-memory-gib X (its NUMA node's memory)"
                     if hits and all(a.is_cpu for a in hits) else "or give --gpu-memory-gib X")
            raise InputError(exc.rule, where=exc.where, field=exc.field, fix=f"{exc.fix}; {other}") from None
        if device != "cpu":
            cpu_kv_option(cpu_kvcache_space_gib, acc.id)  # as predict says it
    base = Settings(
        tp=tp, pp=pp, dp=dp, expert_parallel=enable_expert_parallel, dcp=dcp, dtype=dtype,
        quantization=quantization, kv_cache_dtype=kv_cache_dtype, max_model_len=max_model_len,
        gpu_memory_utilization=gpu_memory_utilization, max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens, block_size=block_size, enforce_eager=enforce_eager,
        vllm_version=vllm_version, device=device, cpu_kvcache_space_gib=cpu_kvcache_space_gib,
        allow_long_max_model_len=allow_long_max_model_len, flashinfer_sampler=flashinfer_sampler,
    )
    if speculative_config:
        base = settings_from_argv(["--speculative-config", speculative_config], base)
    from launchcard.check import locate_config

    config_path = locate_config(config)
    arch = load_arch(config_path, safetensors_index)
    if speculative_config:  # MTP without MTP layers: vLLM refuses it, as predict and check say (bad input)
        import json

        from launchcard.errors import InputError
        from launchcard.memory import spec_mtp_refusal

        refused = spec_mtp_refusal(json.loads(speculative_config), arch.mtp_layers, str(config_path))
        if refused:
            raise InputError(refused[0], where="--speculative-config", fix=refused[1])
    plan = plan_memory(arch, base.validate(), gpu=gpu, gpu_memory_gib=gpu_memory_gib)
    if json_out:
        typer.echo(plan_to_json(plan))
    else:
        from launchcard.cli._console import console as make_console

        make_console().print(plan_to_text(plan))
    if not plan.fits:
        raise typer.Exit(1)  # a plan that does not fit is a plan failure, not bad input
