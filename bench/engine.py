#!/usr/bin/env python3
"""The GPU engine's targets (docs/performance.md, "The GPU engine"), measured on a GPU machine:
gpucheck beside nvidia-smi in the same run.

    python3 bench/engine.py --gpucheck build/release/gpucheck [--runs 7] [--markdown out.md]
        [--scenarios]   # also the busy-node scenarios: a tenant holding most of the memory,
                        # four gpucheck runs at once

Wall times are medians of --runs runs after one warm-up. Peak GPU memory is sampled with NVML
(nvmlDeviceGetMemoryInfo, every ~2 ms) while gpucheck runs: used minus used before the run, per
GPU. A tenant is a PyTorch process that allocates all but N MiB of GPU 0 and multiplies matrices
until told to stop; its own iteration rate alone and during gpucheck says whether it was hurt.
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

import init_floor  # bench/init_floor.py, beside this script

MIB = 1 << 20


class MemInfo(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class ProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong),
                ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return " ".join(a.decode(errors="replace") for a in f.read().split(b"\0")[1:4])
    except OSError:
        return str(pid)


class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        count = ctypes.c_uint()
        self.lib.nvmlDeviceGetCount_v2(ctypes.byref(count))
        self.handles = []
        for i in range(count.value):
            h = ctypes.c_void_p()
            self.lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
            self.handles.append(h)

    def used(self):
        out = []
        for h in self.handles:
            m = MemInfo()
            self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
            out.append(m.used)
        return out

    def processes(self, index):
        count = ctypes.c_uint(64)
        infos = (ProcessInfo * 64)()
        rc = self.lib.nvmlDeviceGetComputeRunningProcesses_v3(self.handles[index],
                                                              ctypes.byref(count), infos)
        if rc != 0:
            return []
        return [(infos[i].pid, infos[i].used) for i in range(count.value)]

    def free(self, index):
        m = MemInfo()
        self.lib.nvmlDeviceGetMemoryInfo(self.handles[index], ctypes.byref(m))
        return m.free


class Sampler(threading.Thread):
    """Peak of (used - baseline) per GPU while running."""

    def __init__(self, nvml):
        super().__init__(daemon=True)
        self.nvml = nvml
        self.base = nvml.used()
        self.peak = [0] * len(self.base)
        self.per_process = {}  # "gpu:cmdline" -> peak MiB
        self.stop = False
        self.tick = 0

    def run(self):
        while not self.stop:
            for i, u in enumerate(self.nvml.used()):
                self.peak[i] = max(self.peak[i], u - self.base[i])
            self.tick += 1
            if self.tick % 3 == 0:
                for i in range(len(self.base)):
                    for pid, used in self.nvml.processes(i):
                        key = f"{i}:{cmdline(pid)}"
                        self.per_process[key] = max(self.per_process.get(key, 0), used / MIB)
            time.sleep(0.002)


def timed(cmd, env=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - start, proc


def results_of(stdout):
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return report.get("results", [])


def gpu_statuses(results):
    """{check_id: [status per GPU]} for the active checks, plus finding codes."""
    out = {}
    for r in results or []:
        if r["check_id"] in ("gpu.compute", "gpu.bandwidth", "gpu.cudnn", "gpu.streams"):
            codes = sorted({f["code"] for f in r.get("findings", [])})
            out.setdefault(r["check_id"], []).append(r["status"] + (f" {codes}" if codes else ""))
    return out


def unlabelled_warnings(results):
    """Warnings or failures of active checks that do not say contention, with their messages."""
    bad = []
    for r in results or []:
        if not r["check_id"].startswith("gpu.") or r["status"] not in ("warn", "fail"):
            continue
        codes = {f["code"] for f in r.get("findings", [])}
        if not codes & {"gpu.contention", "gpu.busy_not_tested", "gpu.other_run"}:
            said = [f["message"] for f in r.get("findings", []) if f.get("severity") != "info"]
            bad.append((r["check_id"], r["status"], sorted(codes), said))
    return bad


TENANT = r"""
import os, sys, time, torch
leave_mib = int(sys.argv[1])
free, total = torch.cuda.mem_get_info(0)
hold = torch.empty(max(0, free - leave_mib * (1 << 20) - (512 << 20)), dtype=torch.uint8, device="cuda")
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
free, total = torch.cuda.mem_get_info(0)
print(json.dumps({"free_mib": free >> 20}) if False else f"READY {free >> 20}", flush=True)
n = 0
t0 = time.perf_counter()
marks = []
while not os.path.exists(sys.argv[2]):
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    n += 20
    marks.append((time.perf_counter(), n))
ok = torch.isfinite(c).all().item()
import json
print(json.dumps({"marks": marks[-5000:], "finite": ok}), flush=True)
"""


def tenant_scenario(args, nvml, leave_mib, runs=3):
    stop = f"/tmp/gpucheck-tenant-stop-{os.getpid()}-{leave_mib}"
    if os.path.exists(stop):
        os.remove(stop)
    tenant = subprocess.Popen([sys.executable, "-c", TENANT, str(leave_mib), stop],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = tenant.stdout.readline()
    if not line.startswith("READY"):
        tenant.kill()
        return {"error": "tenant did not start: " + line + tenant.stderr.read()[-500:]}
    free_mib = int(line.split()[1])
    time.sleep(1.0)
    windows = []
    outcomes = []
    for _ in range(runs):
        t0 = time.perf_counter()
        wall, proc = timed([args.gpucheck, "--json"])
        windows.append((t0, t0 + wall))
        res = results_of(proc.stdout)
        outcomes.append({"exit": proc.returncode, "wall_s": round(wall, 3),
                         "gpu": gpu_statuses(res), "unlabelled": unlabelled_warnings(res)})
        time.sleep(1.0)
    open(stop, "w").close()
    out, err = tenant.communicate(timeout=60)
    os.remove(stop)
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"error": "tenant died: " + err[-800:], "runs": outcomes}
    marks = data["marks"]
    def rate(lo, hi):
        inside = [(t, n) for t, n in marks if lo <= t <= hi]
        if len(inside) < 2:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])
    during = [rate(a, b) for a, b in windows]
    alone = [rate(b + 0.2, b + 0.9) for a, b in windows]
    return {"leave_mib": leave_mib, "tenant_free_mib": free_mib, "tenant_exit": tenant.returncode,
            "tenant_results_finite": data["finite"], "runs": outcomes,
            "tenant_rate_alone": [round(r, 1) for r in alone if r],
            "tenant_rate_during": [round(r, 1) for r in during if r]}


def concurrent_runs(args, n=4):
    procs = [subprocess.Popen([args.gpucheck, "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    out = []
    for p in procs:
        stdout, _ = p.communicate(timeout=300)
        res = results_of(stdout)
        out.append({"exit": p.returncode, "gpu": gpu_statuses(res),
                    "unlabelled": unlabelled_warnings(res)})
    return out


def idle_then_timed(cmd):
    """Wall seconds of cmd started a second after the run before it, as on a node. gpucheck
    exits once its children's results are in, while the kernel still frees the driver state of
    its probes (docs/performance.md); a run started at once would meet that."""
    time.sleep(1.0)
    return timed(cmd)[0]


def cuinit_floor(runs):
    """Median seconds of cuInit over every GPU in a fresh process (init_floor.py's measurement):
    the floor under --quick (issue 33), or None."""
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", init_floor.CUINIT], capture_output=True,
                             text=True, check=False).stdout.split()
        if len(out) == 2 and out[1] == "0":
            times.append(int(out[0]) / 1000)
    return statistics.median(times) if times else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--markdown")
    parser.add_argument("--json-out")
    parser.add_argument("--scenarios", action="store_true")
    args = parser.parse_args()
    nvml = Nvml()
    env_trace = dict(os.environ, GPUCHECK_TRACE="1")
    report = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
              "host": platform.node(), "gpus": len(nvml.handles)}
    smi = [timed(["nvidia-smi"])[0] for _ in range(args.runs)]
    floor = cuinit_floor(args.runs)
    timed([args.gpucheck, "--quick"])  # warm-up: the NVIDIA libraries from disk
    quick = [idle_then_timed([args.gpucheck, "--quick"]) for _ in range(args.runs)]
    timed([args.gpucheck])
    standard, peaks, statuses, per_process = [], [], [], {}
    for _ in range(args.runs):
        sampler = Sampler(nvml)
        sampler.start()
        wall, proc = timed([args.gpucheck, "--json"])
        sampler.stop = True
        sampler.join()
        standard.append(wall)
        peaks.append([p / MIB for p in sampler.peak])
        for k, v in sampler.per_process.items():
            per_process[k] = max(per_process.get(k, 0), round(v))
        statuses.append((proc.returncode, gpu_statuses(results_of(proc.stdout))))
    _, traced = timed([args.gpucheck], env=env_trace)
    report.update({
        "nvidia_smi_s": statistics.median(smi), "cuinit_floor_s": floor,
        # The target: --quick within 0.1 s of the cuInit floor of the same GPUs.
        "quick_over_floor_s": None if floor is None else statistics.median(quick) - floor,
        "quick_s": statistics.median(quick), "quick_all_s": [round(x, 3) for x in quick],
        "standard_s": statistics.median(standard),
        "standard_all_s": [round(x, 3) for x in standard],
        "peak_gpu_mib_max": [round(max(p[i] for p in peaks)) for i in range(len(nvml.handles))],
        "peak_gpu_mib_all": [[round(x) for x in p] for p in peaks],
        "per_process_peak_mib": per_process,
        "statuses": statuses[-1], "trace": traced.stderr[-6000:],
    })
    if args.scenarios:
        report["tenant_1200"] = tenant_scenario(args, nvml, 1200)
        report["tenant_300"] = tenant_scenario(args, nvml, 300)
        report["four_at_once"] = concurrent_runs(args)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json_out:
        with open(args.json_out, "w") as f:
            f.write(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"| {report['date']} | {report['gpus']} GPU(s) | nvidia-smi "
                    f"{report['nvidia_smi_s']:.2f} s | --quick {report['quick_s']:.2f} s | "
                    f"standard {report['standard_s']:.2f} s | peak GPU MiB "
                    f"{report['peak_gpu_mib_max']} |\n")


if __name__ == "__main__":
    main()
