#!/usr/bin/env python3
"""A/B of gpucheck builds on one machine: run each binary's standard run (`--json`) in turn,
ROUNDS times, and print each one's median wall time and the key GPU figures of its first runs,
so that two builds are compared on the same machine in the same minutes (machines of one kind
differ by 10-20% in start-up).

    python3 bench/ab.py ROUNDS BUILD_A BUILD_B [...]
"""
import json
import os
import statistics
import subprocess
import sys
import time

KEYS = ("h2d_gbps", "d2h_gbps", "d2d_gbps", "d2h_bidir_gbps", "h2d_pageable_gbps",
        "d2h_pageable_gbps", "conv_fp16_nhwc_32x256x56x56_tflops",
        "conv_fp32_nchw_64x64x56x56_tflops", "host_h2d_all_gpus_gbps", "nccl_busbw_gbps",
        "fp32_fma_gflops", "event_timed_kernel_us", "graph_replay_us", "h2d_bidir_gbps",
        "memory_pool_alloc_free_us", "memory_alloc_free_us")


def key(name):
    """The figures compared: the keys above and every peer pair's copies."""
    return name in KEYS or (name.startswith("p2p_") and name.endswith("_gbps"))


def main():
    rounds, builds = int(sys.argv[1]), sys.argv[2:]
    wall = {b: [] for b in builds}
    figures = {b: [] for b in builds}
    for _ in range(rounds):
        for b in builds:
            start = time.perf_counter()
            proc = subprocess.run([b, "--json"], capture_output=True, text=True, check=False)
            wall[b].append(time.perf_counter() - start)
            try:
                report = json.loads(proc.stdout)
            except json.JSONDecodeError:
                figures[b].append("no JSON report")
                continue
            seen, not_passed = {}, []
            for result in report["results"]:
                if result["check_id"].startswith("gpu.") and result["status"] != "pass":
                    not_passed.append((result["check_id"], result["status"]))
                for m in result.get("metrics", []):
                    if key(m["name"]):
                        seen.setdefault(m["name"], []).append(round(m["value"], 1))
            figures[b].append((seen, not_passed))
    for b in builds:
        print(f"{os.path.basename(b)}: median {statistics.median(wall[b]):.3f} s, "
              f"all {[round(x, 3) for x in wall[b]]}")
        for f in figures[b][:3]:
            print("   ", f)
        # Each figure's range over every run and GPU: a figure disturbed in some runs only.
        ranges = {}
        for f in figures[b]:
            if isinstance(f, tuple):
                for name, values in f[0].items():
                    ranges.setdefault(name, []).extend(values)
        for name in sorted(ranges):
            print(f"    {name}: {min(ranges[name])}-{max(ranges[name])}")
        # Every run's device-local copies and FP32 convolutions, one list per run (a GPU
        # disturbed in some runs only).
        for name in ("d2d_gbps", "conv_fp32_nchw_64x64x56x56_tflops"):
            print(f"    {name} per run:",
                  [f[0].get(name) for f in figures[b] if isinstance(f, tuple)])


if __name__ == "__main__":
    main()
