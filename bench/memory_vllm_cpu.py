"""Start real vLLM (CPU backend) on tiny generated models and read its KV cache size.

Run with the vLLM venv's python (it has torch, transformers, tokenizers):

    .cache/vllm-venv/bin/python bench/memory_vllm_cpu.py [--only gqa,mha] [--out F.json]

For each architecture it writes a random-weight checkpoint (head_dim 64, a
word-level tokenizer) under ``.cache/memory-cpu-models/<name>`` (reused while
the stamp matches this file's hash), starts ``vllm.LLM`` with
``VLLM_CPU_KVCACHE_SPACE=1`` in a fresh subprocess, and records the
``KV cache size: N tokens`` line it prints.  The result is JSON:
``{name: {"config": path, "tokens": N, "max_model_len": L, "dtype": D, "log": tail}}``.
tests/test_memory_vllm_cpu.py compares it with the planner's CPU prediction.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "memory-cpu-models"
MAX_LEN = 2048
KV_GIB = 1
VOCAB = 512

_COMMON = dict(vocab_size=VOCAB, hidden_size=256, intermediate_size=512, max_position_embeddings=4096,
               rms_norm_eps=1e-6, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)

# name -> (transformers config class, extra fields, dtype)
ARCHS: dict[str, tuple[str, dict, str]] = {
    "gqa": ("LlamaConfig", dict(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=64),
            "float32"),
    "mha": ("Qwen3Config", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, head_dim=64),
            "bfloat16"),
    "sliding": ("Gemma3TextConfig", dict(num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                         sliding_window=256, sliding_window_pattern=3,
                                         layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2,
                                         query_pre_attn_scalar=64), "float32"),
    "moe": ("Qwen3MoeConfig", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                   num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                                   decoder_sparse_step=1, mlp_only_layers=[]), "float32"),
    "mla": ("DeepseekV3Config", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                                     kv_lora_rank=128, q_lora_rank=None, qk_rope_head_dim=64, qk_nope_head_dim=64,
                                     v_head_dim=64, head_dim=64, n_routed_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=128, first_k_dense_replace=1, n_shared_experts=1,
                                     n_group=1, topk_group=1, topk_method="noaux_tc", rope_scaling=None), "bfloat16"),
}


def _stamp() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def make_tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    special = ["<pad>", "<s>", "</s>", "<unk>"]
    vocab = {t: i for i, t in enumerate(special)}
    for i in range(VOCAB - len(special)):
        vocab[f"w{i}"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>")
    fast.save_pretrained(str(out))


def make_model(name: str) -> Path:
    out = CACHE / name
    stamp = out / "stamp"
    if stamp.exists() and stamp.read_text() == _stamp():
        return out
    import torch
    import transformers

    cls_name, extra, dtype = ARCHS[name]
    cfg_cls = getattr(transformers, cls_name)
    cfg = cfg_cls(**{**_COMMON, **extra})
    cfg.torch_dtype = dtype
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=getattr(torch, dtype))
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    make_tokenizer(out)
    stamp.write_text(_stamp())
    return out


def run_children(names: list[str]) -> None:
    """In one child process (vLLM imported once): start each engine in turn and
    let it log its KV cache size; a marker line splits the log per model."""
    import gc
    import traceback

    from vllm import LLM

    for name in names:
        print(f"LAUNCHCARD_ARCH {name}", flush=True)
        try:
            llm = LLM(model=str(CACHE / name), max_model_len=MAX_LEN, dtype=ARCHS[name][2], enforce_eager=True,
                      max_num_seqs=16, max_num_batched_tokens=MAX_LEN, seed=0)
            del llm
        except Exception:  # noqa: BLE001 - report and go on with the next model
            traceback.print_exc()
        gc.collect()
        print(f"LAUNCHCARD_DONE {name}", flush=True)


_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")


def measure(names: list[str], timeout: float = 180) -> dict:
    paths = {name: make_model(name) for name in names}
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(KV_GIB), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
           "VLLM_CPU_CI_ENV": "1", "TOKENIZERS_PARALLELISM": "false", "VLLM_LOGGING_LEVEL": "INFO"}
    t0 = time.time()
    log = ""
    for name in names:  # one process per model: a second engine in one process can hang on CPU
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", name], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout, cwd=str(ROOT))
            log += proc.stdout
        except subprocess.TimeoutExpired as exc:
            out_txt = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            log += f"LAUNCHCARD_ARCH {name}\ntimeout after {timeout}s\n{out_txt}\nLAUNCHCARD_DONE {name}\n"
    # one merged stream, cut at the markers the child prints around each model
    out: dict = {}
    for name in names:
        m = re.search(rf"LAUNCHCARD_ARCH {name}\n(.*?)(LAUNCHCARD_DONE {name}|$)", log, re.S)
        seg = m.group(1) if m else ""
        hits = _TOKENS.findall(seg)
        out[name] = {"config": str(paths[name] / "config.json"),
                     "tokens": int(hits[-1].replace(",", "")) if hits else None,
                     "max_model_len": MAX_LEN, "dtype": ARCHS[name][2], "kv_gib": KV_GIB,
                     "max_num_batched_tokens": MAX_LEN, "max_num_seqs": 16,
                     "log": "" if hits else (seg[-2500:] or log[-2500:])}
    out["_seconds"] = round(time.time() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(ARCHS))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child:
        run_children(args.child.split(","))
        return 0
    results = measure([n for n in args.only.split(",") if n])
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
