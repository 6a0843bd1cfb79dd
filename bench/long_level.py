#!/usr/bin/env python3
"""The long level's figures beside PyTorch's, measured in one run on the same GPUs.

Usage (on a machine with GPUs and PyTorch):
    python3 bench/long_level.py --gpucheck build/release/gpucheck [--duration 20] [--markdown out.md]

Runs `gpucheck --level long --duration D --json` (the whole run: standard checks, then the
memory test and the burn on every GPU), then PyTorch's `a @ b` at 8192^3 in the burn's types
(TF32 off for FP32) on GPU 0, timed with CUDA events after warm-up, median of 30. Prints the
targets of issue 16: burn GEMM >= 0.9 x PyTorch; memory test >= 0.8 x gpucheck's device-local
copy (both counted as bytes read plus bytes written); coverage >= 95% of free memory; wall time
<= 2 phases x D + the standard run + 10 s.
"""
import argparse
import json
import statistics
import subprocess
import time

TYPES = ["bf16", "fp16", "fp32", "fp64"]


def metric(result, name):
    for m in result.get("metrics", []):
        if m["name"] == name:
            return m["value"]
    return None


def torch_gemm(types, n=8192, repeats=30, seconds=0.0):
    """PyTorch's `a @ b`, median TFLOP/s per type: `repeats` timed after a short warm-up (a
    burst), or, with `seconds`, back to back for that long as the burn does (sustained)."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
              "fp64": torch.float64}
    out = {}
    for t in types:
        a = torch.rand(n, n, device="cuda", dtype=dtypes[t]) * 2 - 1
        b = torch.rand(n, n, device="cuda", dtype=dtypes[t]) * 2 - 1
        for _ in range(5):
            a @ b
        times = []
        start = time.monotonic()
        while len(times) < repeats if not seconds else time.monotonic() - start < seconds:
            batch = []
            for _ in range(8):
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                a @ b
                e.record()
                batch.append((s, e))
            batch[-1][1].synchronize()
            times += [s.elapsed_time(e) for s, e in batch]
        out[t] = 2 * n ** 3 / (statistics.median(times) * 1e-3) / 1e12
        del a, b
        torch.cuda.empty_cache()
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--markdown")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    start = time.monotonic()
    proc = subprocess.run([args.gpucheck, "--json", "--level", "long", "--duration",
                           str(args.duration)], capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    report = json.loads(proc.stdout)
    t0 = time.monotonic()
    subprocess.run([args.gpucheck, "--json"], capture_output=True, text=True, check=False)
    standard_wall = time.monotonic() - t0
    results = report["results"]
    rows = []
    by = lambda check: [r for r in results if r["check_id"] == check]
    burns = by("gpu.burn")
    types = [t for t in TYPES if burns and metric(burns[0], f"burn_{t}_tflops")]
    # The burn gives each type an equal share of --duration: PyTorch runs as long, back to back.
    share = args.duration / max(len(types), 1)
    torch = {} if args.no_torch else torch_gemm(types, seconds=share)
    burst = {} if args.no_torch else torch_gemm(types)
    for r in burns:
        g = r.get("gpu_index")
        for t in TYPES:
            ours = metric(r, f"burn_{t}_tflops")
            if ours is None:
                continue
            ref = torch.get(t) if g == 0 else None
            rows.append((f"GPU {g} burn GEMM 8192^3 {t} (TFLOP/s)", f"{ours:.1f}",
                         f"{ref:.1f} sustained {share:g} s, {burst[t]:.1f} burst" if ref else "",
                         f"{ours / ref:.3f}" if ref else "", ">= 0.9 x PyTorch"))
    d2d = {r.get("gpu_index"): metric(r, "d2d_dram_gbps") for r in by("gpu.bandwidth")}
    for r in by("gpu.memtest"):
        g = r.get("gpu_index")
        ours = metric(r, "memtest_throughput_gbps")
        cov = metric(r, "memtest_coverage_percent")
        ref = d2d.get(g)
        if ours is not None:
            rows.append((f"GPU {g} memory test (GB/s read + written)", f"{ours:.0f}",
                         f"{ref:.0f} (gpucheck d2d)" if ref else "",
                         f"{ours / ref:.3f}" if ref else "", ">= 0.8 x device-local copy"))
        if cov is not None:
            rows.append((f"GPU {g} memory test coverage (% of free)", f"{cov:.1f}", "", "",
                         ">= 95"))
    budget = 2 * args.duration + standard_wall + 10
    rows.append(("long level wall time (s)", f"{wall:.1f}", f"{budget:.1f} (2 x {args.duration:g}"
                 f" + standard {standard_wall:.2f} + 10)", f"{wall / budget:.3f}", "<= budget"))
    lines = ["| what | gpucheck | reference | ratio | target |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    statuses = {r["check_id"] + (f"[{r['gpu_index']}]" if r.get("gpu_index") is not None else ""):
                r["status"] for r in results if r["check_id"] in ("gpu.memtest", "gpu.burn")}
    text = "\n".join(lines) + f"\n\nexit {proc.returncode}; long checks: {statuses}\n"
    for r in burns + by("gpu.memtest"):
        text += f"- {r['check_id']} GPU {r.get('gpu_index')}: {r['status']}: {r['summary']}\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
