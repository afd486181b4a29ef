"""Host cost of running a decoder step eagerly vs replaying it as a CUDA graph, measured on a GPU.

Why: without CUDA graphs (SGLang extend batches, decode batches above ``--cuda-graph-max-bs``, vLLM
``--enforce-eager``) every kernel of a step is launched from Python; when a kernel's GPU time is shorter than
its launch, the step runs at the host's pace.  This script measures, with PyTorch on the GPU it runs on:

* ``launch_us``: host time per launch of a tiny kernel (back-to-back, eager), the floor of an eager kernel;
* per decoder layer of a Llama-8B shape (bf16; hidden 4096, 32 heads, 8 KV heads, MLP 14336), for decode
  batches of 1-512 sequences over a 1,024-token KV cache: the eager time, the CUDA-graph replay time and
  the number of kernels launched (torch profiler), so ``(eager - graph) / kernels`` is the host cost per
  kernel not hidden behind GPU work at that batch.

    python bench/gpu_eager_overhead.py [--out results.json]

Needs a CUDA GPU (run it with the device tool); prints one JSON document.
"""

from __future__ import annotations

import json
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from gpu_torch import finish, start

    got = start(__doc__, "gpu_eager_overhead.py", argv, layers=8)
    if got is None:
        return 2
    args, torch = got
    import torch.nn.functional as F  # noqa: N812 (the usual name)
    dev = torch.device("cuda")
    dt = torch.bfloat16
    hid, nh, kvh, hd, inter = 4096, 32, 8, 128, 14336
    ctx = 1024
    nl = args.layers

    def timed(fn, n: int) -> float:
        fn()
        torch.cuda.synchronize()
        xs = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            xs.append((time.perf_counter() - t) / n)
        return statistics.median(xs)

    # launch floor: a tiny elementwise kernel, launched back to back
    a = torch.zeros(16, device=dev)
    launch = timed(lambda: [a.add_(1.0) for _ in range(1000)], 3) / 1000

    g = torch.Generator(device=dev).manual_seed(0)
    w = [dict(qkv=torch.randn((nh + 2 * kvh) * hd, hid, device=dev, dtype=dt, generator=g) * 0.02,
              o=torch.randn(hid, nh * hd, device=dev, dtype=dt, generator=g) * 0.02,
              gu=torch.randn(2 * inter, hid, device=dev, dtype=dt, generator=g) * 0.02,
              d=torch.randn(hid, inter, device=dev, dtype=dt, generator=g) * 0.02,
              n1=torch.ones(hid, device=dev, dtype=dt), n2=torch.ones(hid, device=dev, dtype=dt)) for _ in range(nl)]

    def rms(x: torch.Tensor, wt: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * wt

    rows = []
    for bs in (1, 8, 32, 64, 128, 256, 512):
        kc = [torch.randn(bs, kvh, ctx, hd, device=dev, dtype=dt, generator=g) for _ in range(nl)]
        vc = [torch.randn(bs, kvh, ctx, hd, device=dev, dtype=dt, generator=g) for _ in range(nl)]
        cos = torch.randn(bs, 1, hd // 2, device=dev, dtype=dt, generator=g)
        sin = torch.randn(bs, 1, hd // 2, device=dev, dtype=dt, generator=g)
        x0 = torch.randn(bs, hid, device=dev, dtype=dt, generator=g)

        def rope(t: torch.Tensor, cos: torch.Tensor = cos, sin: torch.Tensor = sin) -> torch.Tensor:
            t1, t2 = t[..., : hd // 2], t[..., hd // 2:]
            return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), dim=-1)

        def step(x: torch.Tensor = x0, kc: list[torch.Tensor] = kc, vc: list[torch.Tensor] = vc,
                 bs: int = bs) -> torch.Tensor:
            for li in range(nl):
                p = w[li]
                h = rms(x, p["n1"])
                q, k, v = F.linear(h, p["qkv"]).split([nh * hd, kvh * hd, kvh * hd], dim=-1)
                q = rope(q.view(bs, nh, hd))
                k = rope(k.view(bs, kvh, hd))
                kc[li][:, :, -1] = k  # the new token's KV written into the cache
                vc[li][:, :, -1] = v.view(bs, kvh, hd)
                att = F.scaled_dot_product_attention(q.unsqueeze(2), kc[li], vc[li], enable_gqa=True)
                x = x + F.linear(att.reshape(bs, nh * hd), p["o"])
                h = rms(x, p["n2"])
                gu = F.linear(h, p["gu"])
                x = x + F.linear(F.silu(gu[:, :inter]) * gu[:, inter:], p["d"])
            return x

        eager = timed(step, 10)
        # kernels per layer: count launches with the profiler
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        kernels = sum(e.count for e in prof.key_averages() if e.device_type.name == "CUDA")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        replay = timed(graph.replay, 10)
        # host time alone: launch the eager step without waiting (the GPU queue drains behind it); the median of
        # 10, each started on an idle GPU
        hosts = []
        for _ in range(10):
            torch.cuda.synchronize()
            t = time.perf_counter()
            step()
            hosts.append(time.perf_counter() - t)
        torch.cuda.synchronize()
        host = statistics.median(hosts)
        rows.append({"batch": bs, "layers": nl, "eager_us_per_layer": round(eager / nl * 1e6, 2),
                     "graph_us_per_layer": round(replay / nl * 1e6, 2),
                     "host_launch_us_per_layer": round(host / nl * 1e6, 2),
                     "kernels_per_layer": round(kernels / nl, 2),
                     "eager_minus_graph_us_per_layer": round((eager - replay) / nl * 1e6, 2)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        del kc, vc, graph
        torch.cuda.empty_cache()
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "launch_us": round(launch * 1e6, 3),
           "shape": {"hidden": hid, "heads": nh, "kv_heads": kvh, "head_dim": hd, "intermediate": inter,
                     "context": ctx,
                     "dtype": "bfloat16"},
           "rows": rows}
    return finish(doc, args.out)


if __name__ == "__main__":
    sys.exit(main())
