"""Web catalog under load: a real HTTP client against a real ``launchcard serve`` process.

    .venv/bin/python bench/web_load.py [--corpus ../shared/corpus] [--users 50] [--rounds 3] [--workers 1]

Each round starts a fresh server (nothing cached) over a catalog ingested from the corpus, then:

1. ``one_page``: ``--users`` simultaneous first requests to one model page (GLM-5.3-Flash) -- the
   first-render latency every user of a new page sees (target: median <= 300 ms).
2. ``cold_mix``: ``--users`` simultaneous users, each opening a different model page not yet built,
   then a builder selection (hardware changed: ``resolve.json`` and the HTML fragment) and a JSON twin.
3. ``cached``: the same users repeat everything (all built now), three passes (target: p95 <= 200 ms).

Every response must be 200 (target: 0 errors).  Reported per phase: median and p95 latency (ms, over
every request of every round), errors, and the server's CPU time (user+sys, from /proc) and the client's.
The load generator is ``curl --parallel`` (one transfer in flight per user; C, so that on a 2-core machine
the server rather than the client is measured), or ``--client httpx`` (an httpx AsyncClient).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE = "zai-org/GLM-5.3-Flash"
HARDWARE = ("h100", "h200", "b200", "mi300x", "mi355x", "gb200")


def _cpu_s(pid: int) -> float:
    """User+sys CPU seconds of process ``pid`` and its children that were waited for (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _models(catalog: Path, recipes: Path, n: int) -> list[str]:
    from launchcard.store import Catalog

    with Catalog(catalog) as cat:
        stored = sorted(m for m, _, _ in cat.latest_json())
    with_recipe = [m for m in stored if (recipes / "models" / f"{m}.yaml").is_file() and m != ONE]
    return (with_recipe * (n // max(len(with_recipe), 1) + 1))[:n]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _user(client: object, paths: list[str], out: list[tuple[str, float, int]]) -> None:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    for path in paths:
        t0 = time.perf_counter()
        try:
            status = (await client.get(path)).status_code
        except httpx.HTTPError:
            status = 0
        out.append((path, (time.perf_counter() - t0) * 1000, status))


def _phase(client: str, base: str, users: list[list[str]]) -> list[tuple[str, float, int]]:
    return _curl(base, users) if client == "curl" else asyncio.run(_httpx(base, users))


def _curl(base: str, users: list[list[str]]) -> list[tuple[str, float, int]]:
    """curl --parallel: ``len(users)`` transfers in flight, each user's requests in its order, keep-alive."""
    order = [u[step] for step in range(max(len(u) for u in users)) for u in users if step < len(u)]
    with tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False) as cfg:
        for path in order:
            cfg.write(f'url = "{base}{path}"\noutput = "/dev/null"\n')
    try:
        res = subprocess.run(["curl", "--silent", "--parallel", "--parallel-immediate", "--parallel-max",
                              str(len(users)), "--max-time", "120", "--write-out",
                              "%{http_code} %{time_total} %{url}\\n", "--config", cfg.name],
                             capture_output=True, text=True, check=False)
    finally:
        os.unlink(cfg.name)
    out = []
    for line in res.stdout.splitlines():
        code, secs, url = line.split(" ", 2)
        out.append((url.removeprefix(base), float(secs) * 1000, int(code)))
    out += [("(no answer)", 120_000.0, 0)] * (len(order) - len(out))
    return out


async def _httpx(base: str, users: list[list[str]]) -> list[tuple[str, float, int]]:
    import httpx

    out: list[tuple[str, float, int]] = []
    limits = httpx.Limits(max_connections=len(users), max_keepalive_connections=len(users))
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        await asyncio.gather(*(_user(client, u, out) for u in users))
    return out


def _start(catalog: Path, corpus: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    import httpx

    argv = [sys.executable, "-m", "launchcard.cli", "serve", "--catalog", str(catalog), "--corpus", str(corpus),
            "--port", str(port)]
    if workers > 1:
        argv += ["--workers", str(workers)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/index.json?per_page=1", timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("launchcard serve did not come up")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1, help="server worker processes (launchcard serve --workers)")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--client", choices=("curl", "httpx"), default="curl" if shutil.which("curl") else "httpx",
                    help="load generator: curl --parallel (C, light: the server is what is measured) or an "
                         "httpx AsyncClient per run (Python: on 2 cores its own CPU shows in the latencies)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    samples: dict[str, list[tuple[str, float, int]]] = {"one_page": [], "cold_mix": [], "cached": []}
    server_cpu: dict[str, list[float]] = {k: [] for k in samples}
    client_cpu: dict[str, list[float]] = {k: [] for k in samples}
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.sqlite3"
        subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(args.corpus),
                        "--catalog", str(catalog), "--quiet"], check=True, capture_output=True)
        models = _models(catalog, args.corpus / "vllm-recipes", args.users)
        for rnd in range(args.rounds):
            proc = _start(catalog, args.corpus, args.port, args.workers)
            try:
                users = [[
                    f"/{m}", f"/{m}/resolve.json?hardware={HARDWARE[i % len(HARDWARE)]}",
                    f"/{m}/builder?hardware={HARDWARE[(i + 1) % len(HARDWARE)]}", f"/{m}.json",
                ] for i, m in enumerate(models)]
                phases = {"one_page": [[f"/{ONE}"] for _ in range(args.users)], "cold_mix": users,
                          "cached": [u * 3 for u in users]}
                for name, work in phases.items():
                    pids = [proc.pid, *_children(proc.pid)]
                    s0, c0 = sum(_cpu_s(p) for p in pids), _own_cpu_s()
                    samples[name] += _phase(args.client, f"http://127.0.0.1:{args.port}", work)
                    server_cpu[name].append(sum(_cpu_s(p) for p in pids) - s0)
                    client_cpu[name].append(_own_cpu_s() - c0)
                print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    report: dict[str, object] = {"users": args.users, "rounds": args.rounds, "workers": args.workers,
                                 "client": args.client, "cpus": os.cpu_count(),
                                 "load_average": os.getloadavg()}
    for name, got in samples.items():
        ms = [t for _, t, _ in got]
        report[name] = {"requests": len(got), "errors": sum(1 for _, _, s in got if s != 200),
                        "median_ms": round(statistics.median(ms), 1), "p95_ms": round(_pct(ms, 0.95), 1),
                        "max_ms": round(max(ms), 1),
                        "server_cpu_s_per_round": round(statistics.median(server_cpu[name]), 2),
                        "client_cpu_s_per_round": round(statistics.median(client_cpu[name]), 2)}
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    ok = (all(report[k]["errors"] == 0 for k in samples)  # type: ignore[index]
          and report["cached"]["p95_ms"] <= 200 and report["one_page"]["median_ms"] <= 300)  # type: ignore[index]
    print("targets met" if ok else "targets NOT met", file=sys.stderr)
    return 0 if ok else 1


def _own_cpu_s() -> float:
    """This process's CPU time plus that of its finished children (the curl runs)."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _children(pid: int) -> list[int]:
    """Worker processes of a multi-worker server (direct children)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


if __name__ == "__main__":
    sys.exit(main())
