"""Ask vLLM (the 0.32 CPU wheel, in-process) the questions ``tests/test_limits_engine.py`` asks launchcard.

Run by that test with the vLLM venv's Python: ``python limits_engine_probe.py QUESTIONS_JSON``; prints
one JSON line of answers.  Nothing is re-implemented here: the answers are what vLLM's own
``CudaPlatform.get_attn_backend_cls`` (with the compute capability set), ``check_if_supports_dtype``,
``SchedulerConfig`` and ``ParallelConfig`` say.  The CPU wheel lacks GPU kernels, so a backend that
needs them is invalid here: the engine can refuse more here than on a GPU, never less.
"""

import contextlib
import json
import sys
import types

# vllm/platforms/cuda.py imports the CUDA extension at the top; the selection code it runs is Python
sys.modules.setdefault("vllm._C_stable_libtorch", types.ModuleType("vllm._C_stable_libtorch"))

import torch  # noqa: E402
from vllm.platforms import cuda as vcuda  # noqa: E402
from vllm.platforms.interface import DeviceCapability  # noqa: E402
from vllm.v1.attention.backends.registry import AttentionBackendEnum  # noqa: E402
from vllm.v1.attention.selector import AttentionSelectorConfig  # noqa: E402

empty = torch.empty
torch.empty = lambda *a, **k: empty(*a, **{x: v for x, v in k.items() if x != "device"})
for enum in AttentionBackendEnum:  # CUTLASS_MLA allocates a CUDA workspace when its module loads
    # a backend the CPU wheel cannot load is invalid to the selector too (it catches ImportError)
    with contextlib.suppress(Exception):
        enum.get_class()
torch.empty = empty

from vllm.config import ParallelConfig, SchedulerConfig, VllmConfig, set_current_vllm_config  # noqa: E402

P = vcuda.CudaPlatform
_ctx = set_current_vllm_config(VllmConfig())
_ctx.__enter__()
questions = json.loads(sys.argv[1])
out = {"kv": [], "bf16": None}
for cap, kv, mla, sparse in questions["kv"]:
    major, minor = (int(p) for p in cap.split("."))
    P.get_device_capability = classmethod(lambda cls, device_id=0, c=(major, minor): DeviceCapability(*c))
    sel = AttentionSelectorConfig(head_size=576 if mla else 128, dtype=torch.bfloat16, kv_cache_dtype=kv,
                                  block_size=None, use_mla=mla, use_sparse=sparse)
    try:
        got = P.get_attn_backend_cls(None, sel)
        out["kv"].append([cap, kv, mla, sparse, "ok", got.rsplit(".", 1)[-1]])
    except ValueError as e:
        out["kv"].append([cap, kv, mla, sparse, "refused", str(e)[:300]])
    except Exception as e:  # noqa: BLE001 - a backend's own check needing a GPU: no answer for this question
        out["kv"].append([cap, kv, mla, sparse, "error", f"{type(e).__name__}: {str(e)[:200]}"])
P.get_device_capability = classmethod(lambda cls, device_id=0: DeviceCapability(7, 5))
P.get_device_name = classmethod(lambda cls, device_id=0: "NVIDIA T4 16GB")
try:
    P.check_if_supports_dtype(torch.bfloat16)
except ValueError as e:
    out["bf16"] = str(e)

out["scheduler"] = {}
for name, kw in questions["scheduler"].items():
    try:
        SchedulerConfig(is_encoder_decoder=False, **kw)
        out["scheduler"][name] = None
    except Exception as e:  # noqa: BLE001 - pydantic wraps the ValueError
        out["scheduler"][name] = str(e)
# ParallelConfig refuses EPLB on the CPU platform first; the questions are about a CUDA GPU
from vllm.config import parallel as vparallel  # noqa: E402

vparallel.current_platform.is_cuda_alike = lambda: True
out["parallel"] = {}
for name, kw in questions["parallel"].items():
    try:
        ParallelConfig(**kw)
        out["parallel"][name] = None
    except Exception as e:  # noqa: BLE001 - pydantic wraps the ValueError
        out["parallel"][name] = str(e)
if questions.get("model"):  # ModelConfig.verify_with_parallel_config on the tiny model, its heads changed
    import pathlib
    import shutil
    import tempfile

    from vllm.config import ModelConfig
    from vllm.model_executor.models.registry import ModelRegistry

    ask = questions["model"]
    out["model"] = {}
    work = pathlib.Path(tempfile.mkdtemp())
    for i, one in enumerate(ask["configs"]):
        shutil.copytree(ask["path"], work / str(i))
        cfg = json.loads((work / str(i) / "config.json").read_text())
        cfg.update(one["overrides"])
        (work / str(i) / "config.json").write_text(json.dumps(cfg))
        mc = ModelConfig(model=str(work / str(i)))
        for name, kw in one["cases"].items():
            try:
                mc.verify_with_parallel_config(ParallelConfig(**kw))
                out["model"][name] = None
            except Exception as e:  # noqa: BLE001 - ValueError / NotImplementedError, as vLLM raises them
                out["model"][name] = str(e)
    out["pp"] = {arch: ModelRegistry.is_pp_supported_model([arch], mc) for arch in ask["pp_archs"]}
    shutil.rmtree(work, ignore_errors=True)
print(json.dumps(out))
