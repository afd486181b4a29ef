"""What a request costs on vLLM's chat endpoint over its completions endpoint, measured on vLLM's own code.

``vllm bench serve`` sends ``--backend vllm`` requests to ``/v1/completions`` by default; ``--backend openai-chat``
(what GPUStack's performance lab and many users run) sends one user message to ``/v1/chat/completions``.  On the
chat endpoint vLLM's API server does more per request before the engine sees it: it parses the messages, renders
the model's chat template (``vllm/entrypoints/chat_utils.py`` ``apply_hf_chat_template``) and tokenizes the
result, and it streams a role-only chunk before the first token's chunk (``serving_chat.py``
``chat_completion_stream_generator``; ``vllm bench serve``'s openai-chat client counts any chunk with
``choices`` as the first token, ``vllm/benchmarks/lib/endpoint_request_func.py``).  vLLM 0.11.0 alone also parses
the whole chat template again on every request (``resolve_chat_template_kwargs``: a new jinja2 environment and
``env.parse`` of the template, added in 0.11.0 and cached from 0.11.1 on as ``_cached_resolve_chat_template_kwargs``).

Default: starts the real vLLM CPU server (``bench/predict_cpu.py``'s launch of the random-weight 512x4 bench model)
with a real chat template (``--template``, default the Qwen3-family template that vLLM's own wheel ships for
MiniCPM-V 4.5, ``vllm/transformers_utils/chat_templates/template_minicpmv45.jinja``: the same reasoning/tool
logic as Qwen3's), then runs closed loops of one client (``--max-concurrency 1``) on both endpoints, interleaved,
``--repeats`` times, with prompts of ``--isl`` random tokens and ``--osl`` output tokens, and reads the CPU time
(user + system, ``/proc/PID/stat``) of the API server's and the client's processes around each loop.  The
difference per request (chat minus completions) is host CPU time on the request's path, stated with the host op
time measured before and after (``bench/measure_cpu.py``), like every measured host term.

``--parse``: the CPU time of vLLM 0.11.0's per-request template parse alone (a new sandboxed jinja2 environment
with 0.11.0's options, ``parse`` and ``find_undeclared_variables``), median over ``--parse-reps`` in the vLLM venv's
jinja2.

    .venv/bin/python bench/measure_chat_request.py [--requests 200] [--repeats 3] [--json]
    .venv/bin/python bench/measure_chat_request.py --parse [--template PATH] [--json]
    .venv/bin/python bench/measure_chat_request.py --write    # record bench/data/chat_*.json in the table

``--write`` records the table's "chat" section (data/predict_coefficients.json, read by predict._endpoint) from the
saved results: bench/data/chat_request.json (a run's --json), bench/data/chat_parse.json (--parse --json) and
bench/data/host_stream_chat.json (bench/measure_host_stream.py --chat --json: the chat stream's per-chunk costs,
compared with the completions point of the same burst in "streaming").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from cpu_time import cpu_during  # noqa: E402
from measure_host_stream import Client, _cpu_model, _vllm_version, host_op_us, serve  # noqa: E402
from predict_cpu import FIT_SHAPE, VLLM_PY, _engine_pids, stop  # noqa: E402


def default_template() -> Path:
    """The Qwen3-family chat template vLLM's CPU wheel ships (found in the vLLM venv)."""
    got = sorted((ROOT / ".cache" / "vllm-venv").glob("lib/python*/site-packages/vllm/transformers_utils/"
                                                      "chat_templates/template_minicpmv45.jinja"))
    if not got:
        raise SystemExit("no template_minicpmv45.jinja in .cache/vllm-venv: pass --template PATH")
    return got[0]


# vLLM 0.11.0's per-request step (chat_utils.py resolve_chat_template_kwargs): a fresh environment, parse, and the
# template's undeclared variables; timed in CPU seconds
_PARSE = """\
import json, statistics, sys, time
import jinja2, jinja2.ext, jinja2.meta, jinja2.sandbox
text = open(sys.argv[1], encoding="utf-8").read()
reps = int(sys.argv[2])
times = []
for _ in range(reps):
    t0 = time.process_time()
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[jinja2.ext.loopcontrols])
    jinja2.meta.find_undeclared_variables(env.parse(text))
    times.append(time.process_time() - t0)
print(json.dumps({"parse_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
                  "max_ms": max(times) * 1e3, "bytes": len(text.encode()), "jinja2": jinja2.__version__}))
"""


def parse_cost(template: Path, reps: int) -> dict[str, Any]:
    op = [host_op_us()]
    r = subprocess.run([str(VLLM_PY), "-c", _PARSE, str(template), str(reps)], check=True, capture_output=True,
                       text=True, timeout=600)
    op.append(host_op_us())
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # what produced the figure: the vLLM release of the venv whose jinja2 parsed, and the template's exact bytes
    out.update({"vllm": _vllm_version(), "template_sha256": hashlib.sha256(template.read_bytes()).hexdigest(),
                "template": template.name, "reps": reps, "host_op_us": statistics.median(op),
                "machine": {"cpu": _cpu_model(), "load_1min": os.getloadavg()[0]}})
    return out


class Bench(Client):
    """``vllm bench serve`` kept warm in one process (measure_host_stream's client); ``loop`` returns the run's
    result."""

    def loop(self, endpoint: str, model_dir: Path, chat: bool, isl: int, osl: int, n: int, seed: int
             ) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            self.burst(endpoint, model_dir, isl, osl, n, seed, chat, extra=(
                "--max-concurrency", "1", "--save-result", "--result-dir", tmp, "--result-filename", "r.json"))
            data = json.loads((Path(tmp) / "r.json").read_text())
        if data.get("completed") != n:
            raise RuntimeError(f"{data.get('completed')} of {n} requests completed")
        return {"ttft_ms_mean": data["mean_ttft_ms"], "ttft_ms_median": data["median_ttft_ms"],
                "e2el_ms_mean": data.get("mean_e2el_ms"), "input_tokens": data["total_input_tokens"] / n}


def run(requests: int, repeats: int, isl: int, osl: int, port: int, template: Path) -> dict[str, Any]:
    from compare_vllm_bench import bench_model

    model_dir = bench_model(VLLM_PY, FIT_SHAPE)
    state, log = ROOT / ".cache" / "chat-request-up.json", ROOT / ".cache" / "chat-request-server.log"
    endpoint = serve(model_dir, port, state, log, extra=["--chat-template", str(template)])
    client = Bench()
    op = [host_op_us()]
    rows: list[dict[str, Any]] = []
    try:
        pids = _engine_pids(int(json.loads(state.read_text())["pid"]))
        pids["client"] = client.proc.pid
        for chat in (False, True):  # warm-up of both paths (template compiled, tokenizer loaded), not measured
            client.loop(endpoint, model_dir, chat, isl, osl, 4, 99)
        for rep in range(repeats):
            row: dict[str, Any] = {"repeat": rep}
            for chat in ((False, True) if rep % 2 == 0 else (True, False)):
                name = "chat" if chat else "completions"
                got, got["wall_s"], cpu = cpu_during(
                    pids, lambda chat=chat, rep=rep: client.loop(endpoint, model_dir, chat, isl, osl, requests,
                                                               rep))
                got["cpu_us_per_request"] = {k: v / requests * 1e6 for k, v in cpu.items()}
                row[name] = got
            row["chat_minus_completions"] = {
                "cpu_us_per_request": {k: row["chat"]["cpu_us_per_request"][k]
                                       - row["completions"]["cpu_us_per_request"][k] for k in pids},
                "ttft_ms_mean": row["chat"]["ttft_ms_mean"] - row["completions"]["ttft_ms_mean"],
                "ttft_ms_median": row["chat"]["ttft_ms_median"] - row["completions"]["ttft_ms_median"]}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    finally:
        client.close()
        stop(state)
    op.append(host_op_us())
    diffs = [r["chat_minus_completions"] for r in rows]
    keys = diffs[0]["cpu_us_per_request"].keys()
    return {"machine": {"cpu": _cpu_model(), "host_op_us": statistics.median(op),
                        "load_1min": os.getloadavg()[0]},
            "vllm": _vllm_version(), "template": template.name, "template_bytes": len(template.read_bytes()),
            "isl": isl, "osl": osl, "requests": requests, "repeats": repeats,
            "cpu_us_per_request": {k: statistics.median(d["cpu_us_per_request"][k] for d in diffs) for k in keys},
            "cpu_us_spread": {k: (min(d["cpu_us_per_request"][k] for d in diffs),
                                  max(d["cpu_us_per_request"][k] for d in diffs)) for k in keys},
            "ttft_ms_mean": statistics.median(d["ttft_ms_mean"] for d in diffs),
            "ttft_ms_median": statistics.median(d["ttft_ms_median"] for d in diffs), "runs": rows}


DATA = ROOT / "bench" / "data"
# the releases that parse the chat template on every request: [from, before) (vLLM 0.11.0's chat_utils.py
# resolve_chat_template_kwargs, L1575-1599; 0.10.2 has no such step; 0.11.1 caches it, chat_utils.py L1535)
PARSE_RELEASES = {"vllm": ["0.11.0", "0.11.1"]}


def parse_provenance(parse: dict[str, Any]) -> str:
    """What produced a saved --parse result, as its measured_on says it: the vLLM release and the template's
    sha256 (recorded from this version on); a result saved before says they were not recorded, never a guess.
    A field present with a bad value is refused (one line)."""
    vllm, digest = parse.get("vllm"), parse.get("template_sha256")
    if vllm is not None and (not isinstance(vllm, str) or not vllm or vllm == "unknown"):
        raise SystemExit(f"bench/data/chat_parse.json: 'vllm' must name the release that ran, got {vllm!r}; "
                         "rerun --parse --json with the vLLM venv")
    if digest is not None and not (isinstance(digest, str) and len(digest) == 64
                                   and all(c in "0123456789abcdef" for c in digest)):
        raise SystemExit(f"bench/data/chat_parse.json: 'template_sha256' must be 64 lowercase hex digits, got "
                         f"{digest!r}; rerun --parse --json")
    said = [f"vLLM {vllm} venv" if vllm else "vLLM release not recorded",
            f"template sha256 {digest}" if digest else "template digest not recorded"]
    return ", ".join(said)


def write(path: Path | None = None) -> dict[str, Any]:
    """The table's "chat" section from the saved results (every other key kept; write-then-rename)."""
    from measure_host_stream import COEFFICIENTS, write_section

    run = json.loads((DATA / "chat_request.json").read_text())
    parse = json.loads((DATA / "chat_parse.json").read_text())
    made_by = parse_provenance(parse)
    stream = json.loads((DATA / "host_stream_chat.json").read_text())
    rm, us = run["machine"], run["cpu_us_per_request"]
    sm = stream["machine"]
    section = {
        "about": "What vLLM's /v1/chat/completions costs over /v1/completions (predict._endpoint, workloads with "
                 "--endpoint chat): per request the API server's and the client's CPU (chat minus completions), "
                 "vLLM 0.11.0's per-request chat-template parse, and the streaming stages' cost per chunk (chat "
                 "over the completions point of the same burst in \"streaming\"); each stated at its host op time",
        "request": {
            "api_us": {"vllm": round(max(0.0, us["api"]), 1)}, "client_us": round(max(0.0, us["client"]), 1),
            "host_op_us": round(rm["host_op_us"], 3),
            "measured_on": (f"bench/measure_chat_request.py --requests {run['requests']} --repeats {run['repeats']}: "
                            f"vLLM {run['vllm']} CPU server (vllm-venv) serving the random-weight Llama 512x4 with "
                            f"--chat-template {run['template']} ({run['template_bytes']} bytes), closed loops of one "
                            f"vllm bench serve client, {run['isl']}/{run['osl']} tokens, /v1/chat/completions "
                            f"(--backend openai-chat) and /v1/completions (--backend vllm) interleaved; CPU time (user "
                            f"+ system, /proc/PID/stat) per request, chat minus completions, medians over the "
                            f"repeats: API server {us['api']:.0f} us (spread {run['cpu_us_spread']['api'][0]:.0f}.."
                            f"{run['cpu_us_spread']['api'][1]:.0f}), client {us['client']:.0f} us (spread "
                            f"{run['cpu_us_spread']['client'][0]:.0f}..{run['cpu_us_spread']['client'][1]:.0f}); "
                            f"TTFT mean +{run['ttft_ms_mean']:.2f} ms on this CPU engine (its prompt "
                            f"grows by the template's tokens too); {rm['cpu']}, host op {rm['host_op_us']:.2f} us, "
                            f"load {rm['load_1min']:.1f}")},
        "template_parse": {
            "ms": {"vllm": round(parse["parse_ms"], 2)}, "releases": PARSE_RELEASES,
            "template": parse["template"], "bytes": parse["bytes"], "host_op_us": round(parse["host_op_us"], 3),
            "measured_on": (f"bench/measure_chat_request.py --parse: a new sandboxed jinja2 {parse['jinja2']} "
                            f"environment (trim_blocks, lstrip_blocks, loopcontrols), parse and "
                            f"find_undeclared_variables of {parse['template']} ({parse['bytes']} bytes, the Qwen3-"
                            f"family template vLLM's wheel ships), CPU time, median of {parse['reps']} (min "
                            f"{parse['min_ms']:.2f}, max {parse['max_ms']:.2f} ms); what vLLM 0.11.0 does on every "
                            f"chat request (vllm/entrypoints/chat_utils.py L1575-1599), cached from 0.11.1 (L1535); "
                            f"host op {parse['host_op_us']:.2f} us; {made_by}")},
        "stream": {
            "outputs": stream["burst"], "api_us": {"vllm": round(stream["us_per_request_token"]["api"], 1)},
            "client_us": round(stream["us_per_request_token"]["client"], 1), "host_op_us": round(sm["host_op_us"], 3),
            "measured_on": (f"bench/measure_host_stream.py --chat --burst {stream['burst']} (bench/data/"
                            f"host_stream_chat.json): vLLM {stream['vllm']} CPU server, bursts of {stream['burst']} x "
                            f"{stream['isl']} prompt tokens at {stream['osl'][0]} and {stream['osl'][1]} output tokens "
                            f"on /v1/chat/completions, {stream['repeats']} repeats, CPU per request-chunk; "
                            f"host op {sm['host_op_us']:.2f} us")},
    }
    write_section(path or COEFFICIENTS, "chat", section)
    return section


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=24, help="requests per closed loop")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--isl", type=int, default=128)
    ap.add_argument("--osl", type=int, default=2)
    ap.add_argument("--port", type=int, default=8097)
    ap.add_argument("--template", type=Path, default=None)
    ap.add_argument("--parse", action="store_true", help="time vLLM 0.11.0's per-request template parse only")
    ap.add_argument("--parse-reps", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--write", action="store_true", help="record the saved results (bench/data/chat_*.json) in "
                    "data/predict_coefficients.json")
    a = ap.parse_args(argv)
    if a.write:
        print(json.dumps(write(), indent=1))
        return 0
    if a.template is not None and not a.template.is_file():
        ap.error(f"--template {a.template}: no such file; pass a chat template (.jinja)")
    template = a.template or default_template()
    if a.parse:
        res = parse_cost(template, a.parse_reps)
        print(json.dumps(res, indent=1) if a.json else
              f"{res['template']} ({res['bytes']} bytes): parse {res['parse_ms']:.2f} ms CPU (min {res['min_ms']:.2f},"
              f" max {res['max_ms']:.2f}) at host op {res['host_op_us']:.2f} us, jinja2 {res['jinja2']}")
        return 0
    res = run(a.requests, a.repeats, a.isl, a.osl, a.port, template)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    m = res["machine"]
    print(f"{m['cpu']}, host op {m['host_op_us']:.2f} us, load {m['load_1min']:.1f}; vLLM {res['vllm']}; "
          f"{res['template']}; closed loops of 1 client x {res['requests']} requests, {res['isl']}/{res['osl']} tokens,"
          f" {res['repeats']} repeats")
    for k, v in res["cpu_us_per_request"].items():
        lo, hi = res["cpu_us_spread"][k]
        print(f"  chat - completions {k:7s} {v:9.1f} us CPU per request (min {lo:.1f}, max {hi:.1f})")
    print(f"  chat - completions TTFT mean {res['ttft_ms_mean']:.2f} ms, median {res['ttft_ms_median']:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
