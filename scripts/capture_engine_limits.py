"""Capture what vLLM's quantization methods accept, from the engine itself: ``python scripts/capture_engine_limits.py``.

Runs in the vLLM environment (default ``.cache/vllm-venv``, vLLM 0.32.0 CPU): for every
name in ``vllm.model_executor.layers.quantization.QUANTIZATION_METHODS`` it asks the
method's config class for ``get_supported_act_dtypes()`` and ``get_min_capability()``,
the two values ``VllmConfig._get_quantization_config`` compares with ``--dtype`` and the
GPU's compute capability before vLLM starts (it raises "... is not supported for
quantization method ..." / "... is not supported for the current GPU").  A method whose
act dtypes depend on the checkpoint (an instance method) records ``null``.

It also captures, from the same engine:

* the KV-cache dtypes each attention backend lists (``supported_kv_cache_dtypes``), whether it
  overrides ``supports_kv_cache_dtype``, whether it is an MLA / sparse backend, and which
  compute capabilities its ``supports_compute_capability`` accepts (for the capabilities
  of the NVIDIA GPUs in ``data/hardware.yaml``); and the backends each platform tries, in
  the engine's own priority functions (``vllm/platforms/cuda.py`` per capability and
  attention kind; ``vllm/platforms/rocm.py`` with and without AITER).  A backend the CPU
  wheel cannot import (a CUDA-only extension, FlashInfer) is read from its module source
  instead and its capability stays null ("cannot decide").  When no backend takes a
  ``--kv-cache-dtype``, vLLM raises "No valid attention backend found ...".
* the file, line and wording (the f-string as written, ``{expr}`` placeholders kept) of
  each other start-up ``raise`` that ``launchcard.limits`` judges (see ``_RULES``);
* for every architecture in vLLM's model registry, whether its class implements ``SupportsPP``
  (``ModelConfig.verify_with_parallel_config`` refuses ``--pipeline-parallel-size`` > 1 otherwise;
  null where the CPU wheel cannot import the model's module), whether vLLM runs it with its pooling runner
  (``pooling``: the class sets ``is_pooling_model``; predict and plan refuse it), and where a model package under
  ``vllm/models/`` gives a layer its own attention backend (``own_attention``: KV dtypes not judged);
  ``--only pp_support`` refreshes just this part;
* each platform's ``supported_quantization`` list (``vllm/platforms/*.py``, read from the source with ``ast``:
  the GPU-only platforms are not imported) and the sentence ``Platform.verify_quantization`` raises for a
  method not in it (an empty list refuses nothing; a platform defined outside the wheel, e.g. TPU's
  ``tpu_inference``, is recorded as ``external``).  ``--only platform_quantization`` refreshes just this part.

Writes ``src/launchcard/data/engine_limits/vllm-<version>.json`` with each value's source
file and line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / ".cache" / "vllm-venv" / "bin" / "python"

# rule id -> (engine module, a phrase on one line of the raise's message): the raise is located by it
_RULES = {
    "max_num_batched_tokens_below_len": ("vllm.config.scheduler", "smaller than max_model_len"),
    "max_num_batched_tokens_below_seqs": ("vllm.config.scheduler", "be greater than or equal to max_num_seqs"),
    "long_prefill_over_len": ("vllm.config.scheduler", "than the max_model_len"),
    "bfloat16_capability": ("vllm.platforms.cuda", "Bfloat16 is only supported on GPUs"),
    "eplb_platform": ("vllm.config.parallel", "Expert parallelism load balancing is only supported on"),
    "eplb_needs_ep": ("vllm.config.parallel", "enable_expert_parallel must be True to use EPLB"),
    "eplb_needs_parallel": ("vllm.config.parallel", "EPLB requires tensor, prefill-context, or data parallelism"),
    "redundant_experts_without_eplb": ("vllm.config.parallel", "but EPLB is not"),
    "dp_local_over_dp": ("vllm.config.parallel", "must be <= data_parallel_size"),
    "dcp_divides_tp": ("vllm.config.parallel", "must be divisible by dcp_size"),
    "nvfp4_kv_mla": ("vllm.config.vllm", "nvfp4 KV cache is not supported with MLA"),
    "pp_unsupported": ("vllm.config.model", "Pipeline parallelism is not supported for this model"),
    "dcp_needs_tp_over_kv_heads": ("vllm.config.model", "Decode context parallelism for GQA/MQA requires"),
    "dcp_over_max": ("vllm.config.model", "exceeds the maximum"),
    "dcp_q_per_kv": ("vllm.config.model", "query heads per KV head"),
    "kv_no_backend_cuda": ("vllm.platforms.cuda", "No valid attention backend found for"),
    "kv_no_backend_rocm": ("vllm.platforms.rocm", "No valid attention backend found for"),
}

# one reader of a raise's message, shared by the probes (each runs in the engine's interpreter)
_WORDS = r'''
def words(node):
    """The message as the engine writes it: literal parts kept, each {expression} as its source."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return words(node.left) + words(node.right)
    return "{" + ast.unparse(node) + "}"
'''

_RULES_PROBE = r'''
import ast, importlib, inspect, json, sys, types
sys.modules.setdefault("vllm._C_stable_libtorch", types.ModuleType("vllm._C_stable_libtorch"))
import torch
_props = torch.cuda.get_device_properties
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(gcnArchName="gfx942")
import vllm
root = vllm.__path__[0].rsplit("/vllm", 1)[0] + "/"

''' + _WORDS + r'''
out = {}
for rule, (modname, needle) in json.loads(sys.argv[1]).items():
    mod = importlib.import_module(modname)
    path = inspect.getsourcefile(mod)
    tree = ast.parse(open(path).read())
    hit = [n for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc is not None
           and needle in ast.get_source_segment(open(path).read(), n)]
    node = hit[0]
    call = node.exc
    text = words(call.args[0]) if isinstance(call, ast.Call) and call.args else ast.unparse(call)
    out[rule] = {"where": f"{path.replace(root, '')}:{node.lineno}", "wording": text,
                 "raises": ast.unparse(call.func) if isinstance(call, ast.Call) else ast.unparse(call)}
print(json.dumps(out))
'''

_PROBE = r'''
import inspect, json, sys
import vllm
from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS, get_quantization_config
import vllm.config.vllm as vc
root = vllm.__path__[0].rsplit("/vllm", 1)[0] + "/"
src = inspect.getsource(vc)
line = next(i for i, t in enumerate(src.splitlines(), 1) if "is not supported for quantization" in t)
cap_line = next(i for i, t in enumerate(src.splitlines(), 1) if "is not supported for the current GPU" in t)
out = {}
for name in QUANTIZATION_METHODS:
    cls = get_quantization_config(name)
    entry = {"class": cls.__name__}
    fn = cls.get_supported_act_dtypes
    try:
        entry["act_dtypes"] = sorted(str(d).replace("torch.", "") for d in fn())
    except TypeError:
        entry["act_dtypes"] = None  # depends on the checkpoint's config
    entry["min_capability"] = cls.get_min_capability()
    f = inspect.getsourcefile(fn) or ""
    entry["source"] = f"{f.replace(root, '')}:{inspect.getsourcelines(fn)[1]}"
    out[name] = entry
print(json.dumps({"engine": "vllm", "version": vllm.__version__.split("+")[0], "methods": out,
                  "dtype_rule": f"vllm/config/vllm.py:{line}", "capability_rule": f"vllm/config/vllm.py:{cap_line}"}))
'''


_INERT = r'''
import importlib, importlib.abc, importlib.machinery, sys, types
# the CUDA extension vllm/platforms/cuda.py imports at the top
sys.modules.setdefault("vllm._C_stable_libtorch", types.ModuleType("vllm._C_stable_libtorch"))


class _Inert(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None})


class _InertFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Inert stand-ins for the packages named in ``_LACKING`` (what the CPU wheel lacks)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in _LACKING:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _Inert(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass
'''


_KV_PROBE = _INERT + r'''
import ast, inspect, json, re, textwrap, typing
# The CPU wheel lacks what the GPU backends import at load time (the flashinfer package, flash-attn
# entry points, a CUDA workspace tensor).  The values read here (priority lists,
# supported_kv_cache_dtypes, is_mla/is_sparse, supports_compute_capability) are plain Python, so
# those imports get inert stand-ins.
_LACKING = ("flashinfer",)
sys.meta_path.insert(0, _InertFinder())
import vllm
from vllm.config.cache import CacheDType
from vllm.platforms import cuda as vcuda
import torch
_props = torch.cuda.get_device_properties
# rocm.py reads the GPU's gfx name at import (amdsmi, else torch.cuda); its priority lists do not use it
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(gcnArchName="gfx942")
from vllm.platforms import rocm as vrocm
torch.cuda.get_device_properties = _props
from vllm.platforms.interface import DeviceCapability
from vllm.v1.attention.backend import AttentionBackend
from vllm.v1.attention.backends.registry import AttentionBackendEnum
root = vllm.__path__[0].rsplit("/vllm", 1)[0] + "/"
caps = sys.argv[1].split(",")

def rel(path):
    return path.replace(root, "")


def where(owner, fn):
    return f"{rel(inspect.getsourcefile(owner))}:{inspect.getsourcelines(fn)[1]}"

def line_of(mod, needle):
    src = inspect.getsource(mod).splitlines()
    return next(i for i, t in enumerate(src, 1) if needle in t)

def static_class(enum):
    """The backend's class read from its module's source (when the CPU wheel cannot import it)."""
    modname, clsname = enum.value.rsplit(".", 1)
    path = root + modname.replace(".", "/") + ".py"
    tree = ast.parse(open(path).read())
    out = {"file": rel(path), "imported": False}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == clsname:
            for st in node.body:
                tgt = (st.target if isinstance(st, ast.AnnAssign)
                       else st.targets[0] if isinstance(st, ast.Assign) else None)
                if isinstance(tgt, ast.Name) and tgt.id == "supported_kv_cache_dtypes":
                    try:
                        out["kv_dtypes"] = list(ast.literal_eval(st.value)); out["line"] = st.lineno
                    except ValueError:
                        pass
                if isinstance(st, ast.FunctionDef) and st.name == "supports_kv_cache_dtype":
                    out["kv_override"] = f"{rel(path)}:{st.lineno}"
                if isinstance(st, ast.FunctionDef) and st.name in ("is_mla", "is_sparse"):
                    ret = [s for s in st.body if isinstance(s, ast.Return)]
                    if ret and isinstance(ret[0].value, ast.Constant):
                        out[st.name[3:]] = bool(ret[0].value.value)
            bases = [ast.unparse(b) for b in node.bases]
            # an MLA backend derives from MLACommonBackend (is_mla True, is_sparse False unless it says otherwise)
            out.setdefault("mla", any("MLA" in b for b in bases))
            out.setdefault("sparse", False)
    return out

def load(enum):
    """The backend class, with inert stand-ins for names a CUDA-only module would define."""
    import torch
    empty = torch.empty
    torch.empty = lambda *a, **k: empty(*a, **{x: v for x, v in k.items() if x != "device"})
    try:
        for _ in range(12):
            try:
                return enum.get_class()
            except ImportError as e:
                m = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(e))
                if not m:
                    raise
                setattr(importlib.import_module(m.group(2)), m.group(1), lambda *a, **k: None)
        return enum.get_class()
    finally:
        torch.empty = empty


def backend(enum):
    try:
        cls = load(enum)
    except Exception as e:  # not importable in the CPU wheel (CUDA-only extension, flashinfer, a CUDA tensor at import)
        out = static_class(enum); out["import_error"] = f"{type(e).__name__}: {str(e)[:120]}"
        return out
    owner = next(c for c in cls.__mro__ if "supported_kv_cache_dtypes" in c.__dict__)
    f = inspect.getsourcefile(owner)
    src, start = inspect.getsourcelines(owner)
    line = start + next(i for i, t in enumerate(src) if "supported_kv_cache_dtypes" in t)
    over = next((c for c in cls.__mro__ if "supports_kv_cache_dtype" in c.__dict__), None)
    out = {"file": rel(f), "line": line, "imported": True, "kv_dtypes": list(cls.supported_kv_cache_dtypes),
           "mla": bool(cls.is_mla()), "sparse": bool(cls.is_sparse())}
    if over is not AttentionBackend:
        out["kv_override"] = where(over, over.supports_kv_cache_dtype)
        # the override's answer for each dtype the backend does not list (an answer for a listed one can
        # depend on the installed kernels, e.g. FlashAttention's FP8 needs FA3)
        unlisted = {}
        for d in typing.get_args(CacheDType):
            if d not in cls.supported_kv_cache_dtypes:
                try:
                    unlisted[d] = bool(cls.supports_kv_cache_dtype(d))
                except Exception:
                    unlisted[d] = None
        out["override_unlisted"] = unlisted
    cc = next(c for c in cls.__mro__ if "supports_compute_capability" in c.__dict__)
    if cc is AttentionBackend:
        out["capability"] = "any"
    else:
        out["capability_source"] = where(cc, cc.supports_compute_capability)
        got = {}
        for c in caps:
            major, minor = (int(p) for p in c.split("."))
            try:
                got[c] = bool(cls.supports_compute_capability(DeviceCapability(major, minor)))
            except Exception:
                got = None; break
        out["capability"] = got
    return out

kinds = {"standard": (False, False), "mla": (True, False), "mla_sparse": (True, True)}
cuda = {}
for c in caps:
    major, minor = (int(p) for p in c.split("."))
    cuda[c] = {}
    for kind, (mla, sparse) in kinds.items():
        names = []
        for quant in (None, "fp8"):  # SM100 orders its sparse MLA list by KV quantization: the set is the same
            for heads in (None, 8, 128):
                for hs in (None, 128, 512):
                    names += [b.name for b in vcuda._get_backend_priorities(mla, DeviceCapability(major, minor),
                              num_heads=heads, kv_cache_dtype=quant, head_size=hs)]
        cuda[c][kind] = list(dict.fromkeys(names))

rocm = {}
from vllm import _aiter_ops
ops = _aiter_ops.rocm_aiter_ops
seen = {k: [] for k in kinds}
orig = {n: getattr(ops, n) for n in ("is_mla_enabled", "is_mha_enabled", "is_rdna_aiter_enabled")}
orig_found = vrocm.__dict__.get("is_aiter_found_and_supported")
for aiter in (False, True):  # AITER on or off (VLLM_ROCM_USE_AITER*, the aiter package): the union of both
    for n in orig:
        static = isinstance(inspect.getattr_static(ops, n), staticmethod)
        setattr(ops, n, staticmethod(lambda v=aiter: v) if static else classmethod(lambda cls, v=aiter: v))
    _aiter_ops.is_aiter_found_and_supported = lambda v=aiter: v
    for kind, (mla, sparse) in kinds.items():
        for conn in (False, True):
            seen[kind] += [b.name for b in vrocm._get_backend_priorities(mla, sparse, conn)]
rocm = {k: list(dict.fromkeys(v)) for k, v in seen.items()}

# which models vLLM runs with MLA: ModelArchConfigConvertor.is_deepseek_mla's model types (with kv_lora_rank)
from vllm.transformers_utils import model_arch_config_convertor as conv
fn = conv.ModelArchConfigConvertorBase.is_deepseek_mla
fsrc = inspect.getsource(fn)
tup = next(n for n in ast.walk(ast.parse(textwrap.dedent(fsrc)))
           if isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.In) and isinstance(n.comparators[0], ast.Tuple))
mla_types = list(ast.literal_eval(tup.comparators[0]))
mla_where = f"{rel(inspect.getsourcefile(fn))}:{inspect.getsourcelines(fn)[1]}"

used = sorted({n for per in cuda.values() for v in per.values() for n in v} | {n for v in rocm.values() for n in v})
backends = {n: backend(AttentionBackendEnum[n]) for n in used}
print(json.dumps({"kv_cache": {
    "dtypes": list(typing.get_args(CacheDType)),
    "dtypes_source": f"vllm/config/cache.py:{line_of(importlib.import_module('vllm.config.cache'), 'CacheDType =')}",
    "cuda": {"candidates": cuda, "priorities": where(vcuda, vcuda._get_backend_priorities)},
    "rocm": {"candidates": rocm, "priorities": where(vrocm, vrocm._get_backend_priorities)},
    "backends": backends, "mla_model_types": mla_types, "mla_rule": mla_where}}))
'''


_PP_PROBE = _INERT + r'''
import inspect, json
# a model module imports its image/audio stack at load time; whether its class implements SupportsPP does
# not depend on it, so the packages the CPU wheel lacks get inert stand-ins (a module that still fails: null)
_LACKING = ("torchvision", "torchaudio", "timm", "terratorch")
import vllm
from vllm.model_executor.models.interfaces import supports_pp
from vllm.model_executor.models.interfaces_base import is_pooling_model
from vllm.model_executor.models.registry import ModelRegistry

# after transformers has settled what is installed (it keeps using its PIL paths)
sys.meta_path.append(_InertFinder())
root = vllm.__path__[0].rsplit("/vllm", 1)[0] + "/"


def _own_attention(module):
    """Where a model package under vllm/models/ builds attention layers with its own backend (a layer class's
    ``get_attn_backend``): the platform's backend list, and so its KV-dtype rules, do not decide them."""
    parts = module.split(".")
    if parts[:2] != ["vllm", "models"] or len(parts) < 3:
        return None
    import pathlib

    folder = pathlib.Path(root) / "vllm" / "models" / parts[2]
    for path in sorted(folder.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if "def get_attn_backend(self)" in line:  # an indexer's own backend counts too: "cannot decide"
                return f"{str(path).replace(root, '')}:{i}"
    return None


out = {}
for arch, lazy in sorted(ModelRegistry.models.items()):
    module, name = getattr(lazy, "module_name", None), getattr(lazy, "class_name", None)
    if module is None:
        continue
    try:
        cls = getattr(importlib.import_module(module), name)
    except Exception as e:  # a module the CPU wheel cannot import (torchvision, a CUDA extension): unknown
        out[arch] = {"pp": None, "source": module.replace(".", "/") + ".py", "why": type(e).__name__}
        continue
    where = f"{inspect.getsourcefile(cls).replace(root, '')}:{inspect.getsourcelines(cls)[1]}"
    out[arch] = {"pp": bool(supports_pp(cls)), "source": where}
    if is_pooling_model(cls):  # _ModelInfo.is_pooling_model: vLLM's default runner for it is "pooling"
        out[arch]["pooling"] = True
    own = _own_attention(module)
    if own:
        out[arch]["own_attention"] = own
print(json.dumps({"pp_support": out}))
'''


_QUANT_PLATFORM_PROBE = r'''
import ast, importlib.util, json, pathlib
# read, not imported: cuda.py / rocm.py / xpu.py need their GPU stacks to import
root = pathlib.Path(importlib.util.find_spec("vllm").submodule_search_locations[0])
folder = root / "platforms"

def rel(path):
    return str(path.relative_to(root.parent))

''' + _WORDS + r'''
classes = {}
for path in sorted(folder.glob("*.py")):
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            entry = {"bases": [ast.unparse(b) for b in node.bases], "file": rel(path), "line": node.lineno}
            for st in node.body:
                tgt = (st.target if isinstance(st, ast.AnnAssign)
                       else st.targets[0] if isinstance(st, ast.Assign) else None)
                if isinstance(tgt, ast.Name) and tgt.id in ("supported_quantization", "device_name") and st.value:
                    entry[tgt.id] = ast.literal_eval(st.value)
                    if tgt.id == "supported_quantization":
                        entry["where"] = f"{rel(path)}:{st.lineno}"
                if isinstance(st, ast.FunctionDef) and st.name == "verify_quantization":
                    entry["verify"] = f"{rel(path)}:{st.lineno}"
                    for n in ast.walk(st):
                        if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and n.exc.args:
                            entry["raise"] = {"where": f"{rel(path)}:{n.lineno}", "wording": words(n.exc.args[0]),
                                              "raises": ast.unparse(n.exc.func)}
            classes[node.name] = entry

def inherited(name, key):
    entry = classes.get(name)
    while entry is not None:
        if key in entry:
            return entry[key], entry.get("where") if key == "supported_quantization" else entry["file"]
        entry = next((classes[b] for b in entry["bases"] if b in classes), None)
    return None, None

base = classes["Platform"]
platforms = {}
# vLLM's platform names (vllm/platforms/__init__.py builtin plugins) -> the class each file defines
for plat, cls in (("cuda", "CudaPlatformBase"), ("rocm", "RocmPlatform"), ("xpu", "XPUPlatform"),
                  ("cpu", "CpuPlatform")):
    methods, where = inherited(cls, "supported_quantization")
    device, _ = inherited(cls, "device_name")
    platforms[plat] = {"class": cls, "file": classes[cls]["file"], "methods": methods, "where": where,
                       "device_name": device, "verify": classes[cls].get("verify") or base.get("verify")}
tpu = (folder / "tpu.py").read_text()
if "class " not in tpu:
    line = next(i for i, t in enumerate(tpu.splitlines(), 1) if "import" in t and "tpu_inference" in t or
                "from tpu_inference" in t)
    platforms["tpu"] = {"external": "tpu_inference", "where": f"vllm/platforms/tpu.py:{line}"}
print(json.dumps({"platform_quantization": {"rule": base["raise"], "platforms": platforms}}))
'''


def _nvidia_capabilities() -> list[str]:
    """The compute capabilities of the NVIDIA GPUs the hardware catalog knows (the ones judged)."""
    sys.path.insert(0, str(ROOT / "src"))
    from launchcard.hardware import catalog

    caps = {a.compute_capability for a in catalog().accelerators if a.vendor == "NVIDIA" and a.compute_capability}
    return sorted(caps, key=lambda c: tuple(int(p) for p in c.split(".")))


def _run(host: Path, probe: str, *args: str) -> dict[str, object] | None:
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu"}
    done = subprocess.run([str(host), "-c", probe, *args], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return None
    got: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def main() -> int:
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print("usage: python scripts/capture_engine_limits.py [VLLM_PYTHON] [--only platform_quantization|pp_support]\n"
              f"VLLM_PYTHON: the interpreter of a vLLM install (default {HOST})")
        return 0
    only = args[args.index("--only") + 1] if "--only" in args else None
    rest = [a for i, a in enumerate(args) if a != "--only" and (i == 0 or args[i - 1] != "--only")]
    host = Path(rest[0]) if rest else HOST
    quant = _run(host, _QUANT_PLATFORM_PROBE)
    if only in ("platform_quantization", "pp_support"):  # refresh this part of the captured file only
        out = ROOT / "src" / "launchcard" / "data" / "engine_limits" / "vllm-0.32.0.json"
        part = quant if only == "platform_quantization" else _run(host, _PP_PROBE)
        if part is None or not out.is_file():
            return 1
        kept = json.loads(out.read_text(encoding="utf-8"))
        kept.update(part)
        out.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(out)
        return 0
    data = _run(host, _PROBE)
    kv = _run(host, _KV_PROBE, ",".join(_nvidia_capabilities()))
    rules = _run(host, _RULES_PROBE, json.dumps(_RULES))
    pp = _run(host, _PP_PROBE)
    if data is None or kv is None or rules is None or pp is None or quant is None:
        return 1
    data.update(kv)
    data.update(quant)
    data.update(pp)
    data["rules"] = rules
    out = ROOT / "src" / "launchcard" / "data" / "engine_limits" / f"vllm-{data['version']}.json"
    from launchcard import atomicfile

    atomicfile.write_text(out, json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
