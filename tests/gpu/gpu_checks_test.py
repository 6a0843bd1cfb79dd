#!/usr/bin/env python3
"""GPU test (ctest label "gpu"): every active GPU check passes on a real GPU, including the
verification of its outputs, and a fault planted in each check's child is caught.

GPUCHECK_PLANT_FAULT=<what> makes the child corrupt one output element on purpose (after the
GPU wrote it, before it is verified); the check must then fail with the named finding.
GPUCHECK_PLANT_FAULT=kernel-load hands the driver a broken kernel image: gpu.compute must report
gpu.kernel_load_failed and gpu.bandwidth must still pass without kernels.
The image the kernels came from shows in gpu.compute's kernel_load_ms note ("cuda13.0 sass"):
with GPUCHECK_KERNEL_IMAGE=cuda11.8 it must be that image, and with CUDA_FORCE_PTX_JIT=1 (the driver
ignores SASS) its route must be ptx-jit, which proves that image's PTX (docs/building.md).

Multi-GPU: with two GPUs or more gpu.p2p must pass on every pair, gpu.topology,
gpu.nvlink and gpu.fabric must pass or skip with a reason, and GPUCHECK_PLANT_FAULT=p2p (one word
of a received peer buffer changed) must fail gpu.p2p with p2p.data_mismatch; with one GPU
gpu.p2p, gpu.topology and gpu.nvlink must skip saying so. gpu.nccl must pass on two GPUs or more
(or skip naming why libnccl.so.2 did not load: put PyTorch's site-packages/nvidia/nccl/lib on
LD_LIBRARY_PATH to use its copy), and GPUCHECK_PLANT_FAULT=nccl (one element of one GPU's sum
changed) must fail it with nccl.wrong_sum.
Exit 0: all good; 1: a failure (printed); 77: skipped (no GPU here), with the reason.
"""
import argparse
import json
import os
import subprocess
import sys

CHECKS = ["gpu.compute", "gpu.bandwidth", "gpu.cudnn", "gpu.streams", "gpu.memory_pool"]
PLANTED = {  # fault -> (check, finding code that must appear)
    "compute": ("gpu.compute", "gpu.compute_mismatch"),
    "copy": ("gpu.bandwidth", "gpu.copy_corrupt"),
    "cudnn": ("gpu.cudnn", "cudnn.conv_mismatch"),
    "relu": ("gpu.cudnn", "cudnn.activation_mismatch"),
    "graph": ("gpu.streams", "gpu.graph_mismatch"),
    "memory_pool": ("gpu.memory_pool", "gpu.memory_pool_corrupt"),
}


def run(gpucheck, only, fault=None):
    env = dict(os.environ)
    env.pop("GPUCHECK_PLANT_FAULT", None)
    if fault:
        env["GPUCHECK_PLANT_FAULT"] = fault
    proc = subprocess.run([gpucheck, "--json", "--only", only], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(f"gpucheck --only {only}: no JSON report (exit {proc.returncode}):\n{proc.stderr}")
        sys.exit(1)
    return [r for r in report["results"] if r["check_id"].startswith(only)]


def passive_facts(gpucheck):
    """The passive facts on a real GPU: the driver API's kernel time limit and NVML's display
    state are read for every GPU, every GPU has an NVML handle, and the new checks (kernel log,
    display watchdog, lost GPUs, WSL2, /dev/shm) fail nothing on a healthy machine."""
    failures = []
    proc = subprocess.run([gpucheck, "--json", "--quick"], capture_output=True, text=True,
                          timeout=120, check=False)
    report = json.loads(proc.stdout)
    snapshot = report["snapshot"]
    for gpu in snapshot["gpus"]:
        # The driver API's fact only for GPUs CUDA sees (CUDA_VISIBLE_DEVICES may hide some).
        keys = ["display_active", "display_mode"]
        if gpu.get("cuda_ordinal") is not None:
            keys.append("kernel_exec_timeout")
        for key in keys:
            if gpu.get(key) is None:
                failures.append(f"GPU {gpu['index']}: {key} was not read")
    if snapshot["nvml"]["handle_failures"]:
        failures.append(f"NVML handle failures: {snapshot['nvml']['handle_failures']}")
    log = snapshot["kernel_log"]
    print(f"info kernel log: source={log['source']!r} readable={log['readable']} "
          f"records={log['records_read']} events={len(log['events'])} {log['unreadable_reason']}")
    for r in report["results"]:
        if r["check_id"] in ("driver.kernel_log", "gpu.display", "env.wsl", "env.shm",
                             "driver.nvml", "driver.kernel_module"):
            codes = [f["code"] for f in r.get("findings", [])]
            print(f"info {r['check_id']} GPU {r.get('gpu_index')}: {r['status']}: {r['summary']} {codes}")
            if r["status"] in ("fail", "error"):
                failures.append(f"{r['check_id']}: {r['status']}: {r['summary']} {codes}")
    if report["root_causes"]:
        print(f"info root causes: {[c['code'] for c in report['root_causes']]}")
    return failures


def image_problems(result):
    """The kernel image gpu.compute used, printed, against GPUCHECK_KERNEL_IMAGE and
    CUDA_FORCE_PTX_JIT."""
    notes = [m.get("note", "") for m in result.get("metrics", []) if m["name"] == "kernel_load_ms"]
    if not notes:
        return [f"gpu.compute GPU {result.get('gpu_index')}: no kernel_load_ms metric"]
    image, _, route = notes[0].partition(" ")
    print(f"     kernels: image {image}, route {route}")
    problems = []
    wanted = os.environ.get("GPUCHECK_KERNEL_IMAGE")
    if wanted and image != wanted:
        problems.append(f"GPUCHECK_KERNEL_IMAGE={wanted} but the kernels came from {image}")
    if os.environ.get("CUDA_FORCE_PTX_JIT") == "1" and route != "ptx-jit":
        problems.append(f"CUDA_FORCE_PTX_JIT=1 but the route is {route}")
    return problems


def bandwidth_alone(gpucheck):
    """`gpucheck --child gpu-bandwidth 0`, as bench/compare.py runs it: the host copies and the
    device-local copy (a work of its own in the engine) in one payload."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, GPUCHECK_RESULT_FD=str(write_fd))
    env.pop("GPUCHECK_PLANT_FAULT", None)
    proc = subprocess.Popen([gpucheck, "--child", "gpu-bandwidth", "0"], env=env,
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        raw = pipe.read()
    proc.wait(timeout=120)
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError:
        return [f"gpu-bandwidth alone wrote no JSON: {raw[:200]!r}"]
    names = {m["name"] for m in payload.get("metrics", [])}
    sizes = payload.get("sizes", {})
    verified = [v["what"] for v in payload.get("verify", []) if v.get("mismatches") == 0]
    if {"h2d_gbps", "d2h_gbps", "d2d_gbps", "d2d_dram_gbps"} <= names and \
            sizes.get("host_copy_bytes", 0) > 0 and sizes.get("d2d_bytes", 0) > 0 and \
            "device-local copy" in verified and not payload.get("failure"):
        print(f"ok   gpu-bandwidth alone: host and device-local copies in one payload, {sizes}")
        return []
    return [f"gpu-bandwidth alone: metrics {sorted(names)}, sizes {sizes}, "
            f"failure {payload.get('failure')}"]


def child_alone(gpucheck, args):
    """The JSON that `gpucheck --child ARGS...` writes to its result pipe, or the raw bytes."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, GPUCHECK_RESULT_FD=str(write_fd))
    env.pop("GPUCHECK_PLANT_FAULT", None)
    proc = subprocess.Popen([gpucheck, "--child", *args], env=env, pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        raw = pipe.read()
    proc.wait(timeout=300)
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def cudnn_alone(gpucheck):
    """`gpucheck --child gpu-cudnn 0 full`, as bench/compare.py runs it: its own child mode
    (the check's own_child), every shape of the comparison timed and verified."""
    payload = child_alone(gpucheck, ["gpu-cudnn", "0", "full"])
    if not isinstance(payload, dict):
        return [f"gpu-cudnn alone wrote no JSON: {payload[:200]!r}"]
    convs = [m["name"] for m in payload.get("metrics", []) if m["name"].startswith("conv_")]
    verified = [v for v in payload.get("verify", []) if v.get("kind") == "cudnn_conv"]
    if payload.get("cudnn_missing"):
        print(f"ok   gpu-cudnn alone: cuDNN not loadable here ({payload.get('cudnn_missing')})")
        return []
    if len(convs) >= 4 and verified and all(v.get("mismatches") == 0 for v in verified) and \
            not payload.get("failure") and not payload.get("cudnn_failure"):
        print(f"ok   gpu-cudnn alone (full): {len(convs)} convolutions timed, "
              f"{len(verified)} verified")
        return []
    return [f"gpu-cudnn alone: convolutions {convs}, verified {verified}, "
            f"failure {payload.get('failure') or payload.get('cudnn_failure')}"]


def metrics_known_to_min(gpucheck, results):
    """--min refuses a metric no check reports (exit 2); every metric a real run
    reports must therefore be one it accepts (src/gates/metric_names.cpp)."""
    names = sorted({m["name"] for r in results for m in r.get("metrics", [])})
    if not names:
        return ["no metric reported by the GPU checks"]
    proc = subprocess.run([gpucheck, "--quick", "--only", "driver", "--min",
                           ",".join(f"{name}=0" for name in names)],
                          capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode == 2:
        return [f"--min refuses a metric the checks report: {proc.stderr.strip()}"]
    print(f"ok   --min accepts all {len(names)} metrics the GPU checks reported")
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    args = parser.parse_args()
    if not os.path.exists("/dev/nvidiactl"):
        print("SKIP: no NVIDIA GPU on this machine (/dev/nvidiactl is absent)")
        return 77
    failures = []
    results = run(args.gpucheck, "gpu")
    # CUDA_FORCE_PTX_JIT=1 makes the driver ignore every SASS image, cuDNN's own too: cuDNN then
    # fails with 209 (no kernel image) for reasons that are not gpucheck's (docs/building.md).
    forced_ptx = os.environ.get("CUDA_FORCE_PTX_JIT") == "1"
    if forced_ptx:
        print("info CUDA_FORCE_PTX_JIT=1: gpu.cudnn and its planted fault are not judged")
    for check in [c for c in CHECKS if not (forced_ptx and c == "gpu.cudnn")]:
        mine = [r for r in results if r["check_id"] == check]
        if not mine:
            failures.append(f"{check}: no result")
        for r in mine:
            if r["status"] != "pass":
                failures.append(f"{check} GPU {r.get('gpu_index')}: {r['status']}: {r['summary']}; "
                                f"{[f['message'] for f in r.get('findings', [])]}")
            else:
                print(f"ok   {check} GPU {r.get('gpu_index')}: {r['summary']}")
            if check == "gpu.compute":
                failures += image_problems(r)
    for fault, (check, code) in PLANTED.items():
        if forced_ptx and check == "gpu.cudnn":
            continue
        planted = run(args.gpucheck, check, fault)
        caught = [r for r in planted
                  if r["status"] == "fail" and any(f["code"] == code for f in r.get("findings", []))]
        if planted and len(caught) == len(planted):
            print(f"ok   planted {fault} fault caught by {check} as {code}")
        else:
            failures.append(f"planted {fault} fault NOT caught by {check}: "
                            f"{[(r['status'], r['summary']) for r in planted]}")
    # Kernels that do not load: gpu.compute fails with the loader's finding, and the copy check,
    # which needs no kernel of ours, still passes (ungated copies, verified on the host).
    compute = run(args.gpucheck, "gpu.compute", "kernel-load")
    if compute and all(r["status"] == "fail" and any(f["code"] == "gpu.kernel_load_failed"
                                                      for f in r.get("findings", []))
                       for r in compute):
        print(f"ok   broken kernel image reported: {compute[0]['findings'][0]['message']}")
    else:
        failures.append(f"broken kernel image not reported: {compute}")
    bandwidth = run(args.gpucheck, "gpu.bandwidth", "kernel-load")
    if bandwidth and all(r["status"] == "pass" for r in bandwidth) and all(
            "ungated" in m["note"] for r in bandwidth for m in r.get("metrics", [])
            if m["name"] == "h2d_gbps"):
        print(f"ok   copies still measured without kernels: {bandwidth[0]['summary']}")
    else:
        failures.append(f"copies without kernels: {[(r['status'], r['summary']) for r in bandwidth]}")
    failures += passive_facts(args.gpucheck)
    failures += framework_imports(args.gpucheck)
    failures += multi_gpu(args.gpucheck, results)
    failures += metrics_known_to_min(args.gpucheck, results)
    failures += bandwidth_alone(args.gpucheck)
    failures += cudnn_alone(args.gpucheck)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


def framework_imports(gpucheck):
    """--import over the python3 on PATH (the device's holds PyTorch, JAX, ONNX Runtime and
    CuPy): every framework gpucheck finds is imported in its own interpreter, and none fails on
    a healthy machine (an ONNX Runtime without its CUDA provider says so without failing)."""
    python = subprocess.run(["sh", "-c", "command -v python3"], capture_output=True, text=True,
                            check=False).stdout.strip()
    if not python:
        print("info no python3 on PATH: --import not tried")
        return []
    proc = subprocess.run([gpucheck, "--json", "--quick", "--import", "--only", "fw",
                           "--python", python], capture_output=True, text=True, timeout=600,
                          check=False)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [f"--import: no JSON report (exit {proc.returncode}): {proc.stderr[-2000:]}"]
    found = [fw["name"] for env in report["snapshot"]["python_environments"]
             for fw in env.get("frameworks", [])]
    imports = [r for r in report["results"] if r["check_id"] == "fw.import"]
    failures = []
    if len(imports) < len(found):
        failures.append(f"--import: {len(found)} frameworks found ({found}), "
                        f"{len(imports)} imported")
    for r in imports:
        if r["status"] in ("fail", "error"):
            failures.append(f"fw.import: {r['status']}: {r['summary']}; "
                            f"{[f['message'] for f in r.get('findings', [])]}")
        else:
            print(f"ok   fw.import: {r['status']}: {r['summary']}")
    return failures


def multi_gpu(gpucheck, results):
    """The interconnect checks: proven on two GPUs or more, skipped with the reason on one."""
    failures = []
    gpus = len([r for r in results if r["check_id"] == "gpu.compute"])
    by_id = {}
    for r in results:
        by_id.setdefault(r["check_id"], []).append(r)
    for check in ("gpu.topology", "gpu.nvlink", "gpu.fabric", "gpu.p2p", "gpu.nccl"):
        mine = by_id.get(check, [])
        if not mine:
            failures.append(f"{check}: no result")
            continue
        for r in mine:
            line = f"{check} GPU {r.get('gpu_index')}: {r['status']}: {r['summary']}"
            # topology and NVLink come from NVML, which sees every GPU whatever
            # CUDA_VISIBLE_DEVICES hides; P2P and NCCL work on the GPUs CUDA sees.
            if check in ("gpu.topology", "gpu.nvlink"):
                ok = r["status"] in ("pass", "skip")
            elif gpus < 2 and check in ("gpu.p2p", "gpu.nccl"):
                ok = r["status"] == "skip" and "one GPU" in r["summary"]
            elif check == "gpu.p2p":
                ok = r["status"] == "pass" and "->" in r["summary"]
            elif check == "gpu.nccl":
                ok = (r["status"] == "pass" and "256 MiB" in r["summary"]) or (
                    r["status"] == "skip" and "NCCL not available" in r["summary"])
            else:
                ok = r["status"] in ("pass", "skip")
            if ok:
                print(f"ok   {line}")
            else:
                failures.append(f"{line}; {[f['message'] for f in r.get('findings', [])]}")
    if gpus >= 2:
        planted = run(gpucheck, "gpu.p2p", "p2p")
        caught = [r for r in planted if r["status"] == "fail" and
                  any(f["code"] == "p2p.data_mismatch" for f in r.get("findings", []))]
        if planted and caught:
            print(f"ok   planted p2p fault caught: {caught[0]['findings'][0]['message']}")
        else:
            failures.append(f"planted p2p fault NOT caught: "
                            f"{[(r['status'], r['summary']) for r in planted]}")
        if any(r["status"] == "pass" for r in by_id.get("gpu.nccl", [])):
            planted = run(gpucheck, "gpu.nccl", "nccl")
            caught = [r for r in planted if r["status"] == "fail" and
                      any(f["code"] == "nccl.wrong_sum" for f in r.get("findings", []))]
            if planted and caught:
                print(f"ok   planted nccl fault caught: {caught[0]['findings'][0]['message']}")
            else:
                failures.append(f"planted nccl fault NOT caught: "
                                f"{[(r['status'], r['summary']) for r in planted]}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
