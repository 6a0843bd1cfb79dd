#!/usr/bin/env python3
"""What the cuDNN probe child's version checks cost by the GPUs it sees (cuDNN 9's
cudnnGraphVersionCheck initialises CUDA): `gpucheck --child cudnn` in fresh processes with
CUDA_VISIBLE_DEVICES unset, one GPU, and none, with the statuses the checks returned
(docs/performance.md).

    python3 bench/cudnn_probe_gpus.py --gpucheck build/release/gpucheck [--rounds 3]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from init_floor import run_child  # noqa: E402


def probe(gpucheck, visible):
    """Wall time of `gpucheck --child cudnn` and its sub-libraries' version-check statuses."""
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    ms, data = run_child(gpucheck, "cudnn", env)
    try:
        payload = json.loads(data)
        subs = payload.get("result", payload).get("cudnn", {}).get("sublibraries", [])
        checks = {s.get("name", "?"): s.get("version_check") for s in subs}
    except (ValueError, AttributeError):
        checks = {"unreadable": data[:200].decode(errors="replace")}
    return ms, checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for r in range(args.rounds):
        for label, visible in [("every GPU", None), ("GPU 0", "0"), ("none ('')", ""),
                               ("none (-1)", "-1")]:
            ms, checks = probe(args.gpucheck, visible)
            print(f"round {r + 1}, {label}: {ms} ms, version checks {json.dumps(checks)}")


if __name__ == "__main__":
    main()
