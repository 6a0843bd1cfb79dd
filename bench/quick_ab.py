#!/usr/bin/env python3
"""A/B of gpucheck builds' `--quick` on one machine: each build in turn, ROUNDS times, each run a
second after the one before (as on a node: a run started at once would meet the kernel still
freeing the driver state of the run before's probes). Prints each build's median and range, and
the NVLink error counters of its last report summed over each GPU's links, so that two builds'
readings can be compared (docs/performance.md).

    python3 bench/quick_ab.py ROUNDS BUILD_A BUILD_B [...]
"""
import json
import statistics
import subprocess
import sys
import time

COUNTERS = ("replay_errors", "recovery_errors", "crc_flit_errors", "crc_data_errors", "crc_errors")


def main():
    rounds, builds = int(sys.argv[1]), sys.argv[2:]
    wall = {b: [] for b in builds}
    last = {}
    for _ in range(rounds):
        for b in builds:
            time.sleep(1.0)
            start = time.perf_counter()
            proc = subprocess.run([b, "--quick", "--json"], capture_output=True, text=True,
                                  check=False)
            wall[b].append(time.perf_counter() - start)
            last[b] = proc.stdout
    for b in builds:
        w = sorted(wall[b])
        print(f"{b}: --quick median {statistics.median(w):.3f} s ({w[0]:.3f}-{w[-1]:.3f})")
        try:
            gpus = json.loads(last[b]).get("snapshot", {}).get("gpus", [])
        except json.JSONDecodeError:
            print("  no JSON report")
            continue
        for gpu in gpus:
            links = gpu.get("nvlinks", [])
            sums = [sum(link.get(c) or 0 for link in links) for c in COUNTERS]
            unknown = sum(1 for link in links for c in COUNTERS if link.get(c) is None)
            print(f"  GPU {gpu.get('index')}: {len(links)} links; replay, recovery, CRC flit, "
                  f"CRC data, DL CRC summed {sums}; {unknown} unknown (unread or absent)")
        codes = sorted({f["code"] for r in json.loads(last[b]).get("results", [])
                        for f in r.get("findings", [])})
        print(f"  finding codes: {codes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
