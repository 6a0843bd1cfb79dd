#!/usr/bin/env python3
"""The long level on real GPUs (ctest label "gpu"): gpucheck --level long with a short --duration
must pass gpu.memtest and gpu.burn on a healthy machine, and catch the planted faults:
GPUCHECK_PLANT_FAULT=memtest flips one bit of tested memory (gpu.memtest_errors) and
GPUCHECK_PLANT_FAULT=burn perturbs one GEMM iteration's result (gpu.burn_mismatch). With two GPUs
or more, gpu.p2p at the long level must report every size of its sweep for every ordered pair.
Without a GPU it exits 77 (skipped, with the reason)."""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

PLANTED = {"memtest": ("gpu.memtest", "gpu.memtest_errors"),
           "burn": ("gpu.burn", "gpu.burn_mismatch")}


def run(gpucheck, only, duration, fault=None):
    env = dict(os.environ)
    env.pop("GPUCHECK_PLANT_FAULT", None)
    if fault:
        env["GPUCHECK_PLANT_FAULT"] = fault
    start = time.monotonic()
    proc = subprocess.run([gpucheck, "--json", "--level", "long", "--duration", str(duration),
                           "--only", only], env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    wall = time.monotonic() - start
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(f"gpucheck --level long --only {only}: no JSON report (exit {proc.returncode}):\n"
              f"{proc.stderr}")
        sys.exit(1)
    return report, wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--duration", type=float, default=4)
    args = parser.parse_args()
    if not os.path.exists("/dev/nvidiactl"):
        print("SKIP: no NVIDIA GPU on this machine (/dev/nvidiactl is absent)")
        return 77
    failures = []
    report, wall = run(args.gpucheck, "gpu.memtest,gpu.burn", args.duration)
    if report["context"]["mode"] != "long":
        failures.append(f"mode is {report['context']['mode']}, not long")
    for check in PLANTED.values():
        mine = [r for r in report["results"] if r["check_id"] == check[0]]
        if not mine:
            failures.append(f"{check[0]}: no result")
        for r in mine:
            if r["status"] != "pass":
                failures.append(f"{check[0]} GPU {r.get('gpu_index')}: {r['status']}: "
                                f"{r['summary']}; {[f['message'] for f in r.get('findings', [])]}")
            else:
                print(f"ok   {check[0]} GPU {r.get('gpu_index')}: {r['summary']}")
    # Two phases of --duration, plus contexts, allocation and the last pattern's pass.
    if wall > 2 * args.duration + 15:
        failures.append(f"the long level took {wall:.1f} s for --duration {args.duration}")
    else:
        print(f"ok   long level with --duration {args.duration}: {wall:.1f} s")
    for fault, (check, code) in PLANTED.items():
        planted, _ = run(args.gpucheck, check, args.duration, fault)
        results = [r for r in planted["results"] if r["check_id"] == check]
        caught = [r for r in results if r["status"] == "fail" and
                  any(f["code"] == code for f in r.get("findings", []))]
        if results and len(caught) == len(results):
            print(f"ok   planted {fault} fault caught by {check} as {code}: "
                  f"{caught[0]['findings'][0]['message']}")
        else:
            failures.append(f"planted {fault} fault NOT caught by {check}: "
                            f"{[(r['status'], r['summary']) for r in results]}")
    failures += sweep(args.gpucheck)
    failures += interrupted(args.gpucheck)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


def sweep(gpucheck):
    """gpu.p2p at --level long: a figure per size (1-256 MiB) and ordered pair, verified copies."""
    report, _ = run(gpucheck, "gpu.p2p", 1)
    results = [r for r in report["results"] if r["check_id"] == "gpu.p2p"]
    if not results or results[0]["status"] == "skip":
        print(f"ok   gpu.p2p size sweep not run: "
              f"{results[0]['summary'] if results else 'no result'}")
        return []
    result = results[0]
    pairs = [m["name"][:-len("_write_gbps")] for m in result["metrics"]
             if m["name"].endswith("_write_gbps")]
    sizes = sorted({int(m["name"].split("_")[3][:-3]) for m in result["metrics"]
                    if m["name"].endswith("mib_gbps")})
    missing = [f"{p}_{n}mib_gbps" for p in pairs for n in sizes
               if not any(m["name"] == f"{p}_{n}mib_gbps" for m in result["metrics"])]
    if result["status"] != "pass" or not pairs or sizes[:4] != [1, 4, 16, 64] or missing:
        return [f"gpu.p2p at the long level: {result['status']}: {result['summary']}; sizes "
                f"{sizes}, missing {missing}"]
    slowest = min(m["value"] for m in result["metrics"] if m["name"].endswith("mib_gbps"))
    print(f"ok   gpu.p2p size sweep: {len(pairs)} directions x {sizes} MiB, slowest "
          f"{slowest:.0f} GB/s: {result['summary']}")
    return []


def interrupted(gpucheck):
    """Ctrl-C in the middle of the memory test: the report of what ran is still written (valid
    JSON), the memory test reports what it did and warns gpu.long_interrupted, the burn says it
    was stopped (never a failure of the machine), and the exit code is 130."""
    proc = subprocess.Popen([gpucheck, "--json", "--level", "long", "--duration", "30",
                             "--only", "gpu.memtest,gpu.burn"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    out, err = proc.communicate(timeout=60)
    stopped_in = time.monotonic() - start
    problems = []
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        return [f"interrupted run: no JSON report (exit {proc.returncode}): {err[-500:]}"]
    if proc.returncode != 130:
        problems.append(f"interrupted run exited {proc.returncode}, not 130")
    if stopped_in > 10:
        problems.append(f"interrupted run took {stopped_in:.1f} s to stop")
    for r in report["results"]:
        codes = [f["code"] for f in r.get("findings", [])]
        # The memory test reports what it did before the stop: never a pass, never a failure.
        if r["check_id"] == "gpu.memtest" and (r["status"] != "warn" or
                                               "gpu.long_interrupted" not in codes):
            problems.append(f"gpu.memtest after the interrupt: {r['status']} {codes}: "
                            f"{r['summary']}")
        if r["check_id"] == "gpu.burn" and r["status"] not in ("warn", "skip"):
            problems.append(f"gpu.burn after the interrupt: {r['status']}: {r['summary']}")
    if not problems:
        print(f"ok   Ctrl-C: stopped in {stopped_in:.1f} s, exit 130, "
              f"{[(r['check_id'], r['status'], r['summary']) for r in report['results']]}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
