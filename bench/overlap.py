#!/usr/bin/env python3
"""Overlapping runs on a multi-GPU node (docs/performance.md, "Overlapping runs"): N standard
`gpucheck --json` started at once, as a Prometheus timer, a Slurm prolog, a DaemonSet and an
admin would, then the same beside a PyTorch tenant on one GPU.

    python3 bench/overlap.py --gpucheck build/release/gpucheck [--at-once 8] [--rounds 2]
        [--tenant-gpu 1] [--json-out FILE]

Per run: wall time, exit code, which GPU checks measured (pass or warn with figures) and which
skipped, every gpu.other_run finding (a run that did not get its turn) and every warning that
does not say contention. The bound each run must exit within is the documented one
(docs/architecture.md, "Nothing waits forever") for the node's GPU count and the defaults.
Exit status 1 when a run outlived the bound, printed no valid JSON, reported gpu.other_run
although the wait allowed every run, or (with a tenant) warned about a GPU other than the
tenant's.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import TENANT, Nvml, results_of, unlabelled_warnings  # noqa: E402

ACTIVE = ("gpu.compute", "gpu.streams", "gpu.memory_pool", "gpu.bandwidth", "gpu.cudnn", "gpu.p2p",
          "gpu.nccl")


def bound_s(gpus, probe_timeout=15, timeout=30, census=5):
    wait = 30 + 15 * gpus
    return 4 * probe_timeout + wait + 3 * timeout + census + 5 + 30


def summarise(proc, wall):
    results = results_of(proc.stdout)
    out = {"exit": proc.returncode, "wall_s": round(wall, 3), "json": results is not None,
           "other_run": [], "skipped": [], "measured": 0, "unlabelled": [],
           "warned_gpus": set(), "waited": "waiting up to" in proc.stderr}
    for r in results or []:
        if r["check_id"] not in ACTIVE:
            continue
        codes = {f["code"] for f in r.get("findings", [])}
        if "gpu.other_run" in codes:
            out["other_run"].append(r["check_id"])
        if r["status"] == "skip":
            out["skipped"].append(r["check_id"])
        elif r["status"] == "pass" or (r["status"] == "warn" and not codes & {
                "gpu.busy_not_tested", "gpu.other_run"}):
            out["measured"] += 1
        if r["status"] in ("warn", "fail"):
            out["warned_gpus"].add(r.get("gpu_index", -1))
    out["unlabelled"] = unlabelled_warnings(results)
    out["warned_gpus"] = sorted(out["warned_gpus"], key=lambda g: -1 if g is None else g)
    return out


def at_once(gpucheck, n, env=None):
    """N runs started together; each one's wall time is its own (a thread waits for each)."""
    results = [None] * n

    def one(i):
        start = time.perf_counter()
        p = subprocess.Popen([gpucheck, "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        try:
            stdout, stderr = p.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
        wall = time.perf_counter() - start
        results[i] = summarise(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr),
                               wall)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def with_tenant(gpucheck, n, gpu, leave_mib=1200):
    stop = f"/tmp/gpucheck-overlap-tenant-{os.getpid()}"
    if os.path.exists(stop):
        os.remove(stop)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
    tenant = subprocess.Popen([sys.executable, "-c", TENANT, str(leave_mib), stop],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = tenant.stdout.readline()
    if not line.startswith("READY"):
        tenant.kill()
        return {"error": "tenant did not start: " + line + tenant.stderr.read()[-500:]}
    time.sleep(1.0)
    runs = at_once(gpucheck, n)
    open(stop, "w").close()
    out, err = tenant.communicate(timeout=60)
    os.remove(stop)
    try:
        finite = json.loads(out.strip().splitlines()[-1])["finite"]
    except (json.JSONDecodeError, IndexError, KeyError):
        finite = None
    return {"tenant_gpu": gpu, "tenant_exit": tenant.returncode, "tenant_finite": finite,
            "runs": runs}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tenant-gpu", type=int, default=1)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    gpus = len(Nvml().handles)
    bound = bound_s(gpus)
    report = {"gpus": gpus, "bound_s": bound, "rounds": [], "tenant": None}
    ok = True
    for _ in range(args.rounds):
        runs = at_once(args.gpucheck, args.at_once)
        report["rounds"].append(runs)
        for r in runs:
            if r["wall_s"] > bound or not r["json"] or r["other_run"] or r["unlabelled"]:
                ok = False
    if args.tenant_gpu >= 0 and args.tenant_gpu < gpus:
        t = with_tenant(args.gpucheck, args.at_once, args.tenant_gpu)
        report["tenant"] = t
        for r in t.get("runs", []):
            if r["wall_s"] > bound or not r["json"] or r["other_run"] or \
                    any(g not in (args.tenant_gpu, None, -1) for g in r["warned_gpus"]):
                ok = False
    text = json.dumps(report, indent=1, default=list)
    if args.json_out:
        with open(args.json_out, "w") as f:
            f.write(text)
    print(text)
    # The table to read last.
    for i, runs in enumerate(report["rounds"]):
        walls = sorted(r["wall_s"] for r in runs)
        print(f"round {i}: {len(runs)} runs at once on {gpus} GPUs: wall {walls[0]:.2f}-"
              f"{walls[-1]:.2f} s (bound {bound} s); measured {[r['measured'] for r in runs]}; "
              f"other_run {sum(len(r['other_run']) for r in runs)}; waited "
              f"{sum(r['waited'] for r in runs)}; exits {[r['exit'] for r in runs]}")
    if report["tenant"] and "runs" in report["tenant"]:
        runs = report["tenant"]["runs"]
        walls = sorted(r["wall_s"] for r in runs)
        print(f"tenant on GPU {args.tenant_gpu}: wall {walls[0]:.2f}-{walls[-1]:.2f} s; warned "
              f"GPUs {[r['warned_gpus'] for r in runs]}; other_run "
              f"{sum(len(r['other_run']) for r in runs)}; tenant finite "
              f"{report['tenant']['tenant_finite']}")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
