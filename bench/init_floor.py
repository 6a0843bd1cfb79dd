#!/usr/bin/env python3
"""The floor under `gpucheck --quick`: what the driver's own initialisation costs on this machine,
beside gpucheck's probe children that pay it (docs/performance.md, "The GPU engine, third pass").

    python3 bench/init_floor.py --gpucheck build/release/gpucheck [--rounds 3]

Prints, per round: cuInit alone in a fresh process (every GPU visible, then only the first GPU by
UUID), nvmlInit alone, gpucheck's `cuda` and `nvml` probe children alone, and both at once (as
`--quick` runs them). Times are wall times of the call (ctypes) or of the child: spawn to its
result, and to its exit.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

CUINIT = ("import ctypes,time;l=ctypes.CDLL('libcuda.so.1');t=time.perf_counter();rc=l.cuInit(0);"
          "print(round(1000*(time.perf_counter()-t)),rc)")
NVMLINIT = ("import ctypes,time;l=ctypes.CDLL('libnvidia-ml.so.1');t=time.perf_counter();"
            "rc=l.nvmlInit_v2();print(round(1000*(time.perf_counter()-t)),rc)")


def in_fresh_process(code, env=None):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=False).stdout.split()
    return f"{out[0]} ms (rc {out[1]})" if len(out) == 2 else "failed"


def run_child(gpucheck, mode, env=None, timing=None):
    """Wall time (ms) of `gpucheck --child MODE` to its exit and the result it wrote to its pipe;
    with `timing`, also when the result was in (the child closes its pipe before it exits):
    timing["result_ms"]."""
    read_fd, write_fd = os.pipe()
    env = dict(env if env is not None else os.environ, GPUCHECK_RESULT_FD=str(write_fd))
    start = time.perf_counter()
    proc = subprocess.Popen([gpucheck, "--child", mode], env=env, pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 1 << 16):
        data += chunk
    result_at = time.perf_counter()
    proc.wait()
    os.close(read_fd)
    if timing is not None:
        timing["result_ms"] = round(1000 * (result_at - start))
    return round(1000 * (time.perf_counter() - start)), data


def child_ms(gpucheck, mode, into=None):
    """`gpucheck --child MODE`: "R ms (exit E)", R when its result was in (what gpucheck waits
    for), E when its process had exited (the kernel freed its driver state)."""
    timing = {}
    ms = run_child(gpucheck, mode, timing=timing)[0]
    text = f"{timing['result_ms']} ms (exit {ms})"
    if into is not None:
        into[mode] = text
    return text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    uuids = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                           capture_output=True, text=True, check=False).stdout.split()
    for _ in range(args.rounds):
        line = [f"cuInit, {len(uuids)} GPU(s) visible: {in_fresh_process(CUINIT)}"]
        if len(uuids) > 1:
            one = dict(os.environ, CUDA_VISIBLE_DEVICES=uuids[0])
            line.append(f"cuInit, one visible: {in_fresh_process(CUINIT, one)}")
        line.append(f"nvmlInit: {in_fresh_process(NVMLINIT)}")
        line.append(f"child cuda alone: {child_ms(args.gpucheck, 'cuda')}")
        line.append(f"child nvml alone: {child_ms(args.gpucheck, 'nvml')}")
        both = {}
        threads = [threading.Thread(target=child_ms, args=(args.gpucheck, m, both))
                   for m in ("nvml", "cuda")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        line.append(f"together: cuda {both['cuda']}, nvml {both['nvml']}")
        print("; ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
