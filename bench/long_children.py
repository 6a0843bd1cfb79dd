#!/usr/bin/env python3
"""Run the long level's children alone on one GPU (no engine) and print what they report, the
NVML samples summarised: a first look at the memory test and the burn on a new machine.

    python3 bench/long_children.py --gpucheck build/release/gpucheck [--seconds 5] [--fault memtest]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import run_child  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--device", default="0")
    parser.add_argument("--fault")
    args = parser.parse_args()
    os.environ["GPUCHECK_LONG_DURATION_MS"] = str(int(args.seconds * 1000))
    if args.fault:
        os.environ["GPUCHECK_PLANT_FAULT"] = args.fault
    for mode in ("gpu-memtest", "gpu-burn"):
        out = run_child(args.gpucheck, mode, [args.device], timeout=600)
        burn = out.get("burn", {})
        watch = burn.get("watch")
        if watch:
            n = len(watch.get("t_ms", []))
            reasons = {}
            for r in watch.get("reasons", []):
                reasons[r] = reasons.get(r, 0) + 1
            summary = {"samples": n, "sm_mhz": sorted(set(watch.get("sm_mhz", [])))[:8],
                       "max_temp_c": max(watch.get("temp_c", [0]) or [0]),
                       "max_power_w": max(watch.get("power_w", [0]) or [0]),
                       "reasons": reasons, "why": watch.get("why")}
            burn["watch"] = summary
        print(mode, json.dumps(out, indent=1)[:6000])


if __name__ == "__main__":
    main()
