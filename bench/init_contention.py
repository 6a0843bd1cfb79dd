#!/usr/bin/env python3
"""How the driver's start-up cost grows with processes and GPUs (docs/performance.md, issue 33).

    python3 bench/init_contention.py [--rounds 2]

Each case starts K fresh processes at once; each loads libcuda, runs cuInit and retains the
primary context of every GPU it sees (CUDA_VISIBLE_DEVICES as the case sets), then exits.
Prints, per case, every process's load, cuInit and context times and the case's wall time, so
that one process over every GPU, one process per GPU and two per GPU can be compared.
"""
import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import ctypes, json, sys, threading, time
t0 = time.time()
l = ctypes.CDLL('libcuda.so.1')
t1 = time.time()
rc = l.cuInit(0)
t2 = time.time()
n = ctypes.c_int(0)
l.cuDeviceGetCount(ctypes.byref(n))
threaded = sys.argv[1] == 'threads'
ctx_end = {}
def retain(i):
    d = ctypes.c_int(0); l.cuDeviceGet(ctypes.byref(d), i)
    c = ctypes.c_void_p(); l.cuDevicePrimaryCtxRetain(ctypes.byref(c), d)
    l.cuCtxSetCurrent(c)
    p = ctypes.c_void_p(); l.cuMemAlloc_v2(ctypes.byref(p), 1 << 20)
    ctx_end[i] = time.time()
if threaded:
    ts = [threading.Thread(target=retain, args=(i,)) for i in range(n.value)]
    [t.start() for t in ts]; [t.join() for t in ts]
else:
    for i in range(n.value): retain(i)
t3 = time.time()
print(json.dumps({"start": t0, "load": t1 - t0, "init": t2 - t1, "ctx": t3 - t2, "end": t3,
                  "gpus": n.value, "rc": rc}))
"""


def run_case(name, envs, mode="serial"):
    epoch = time.time()
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, mode], env=e, stdout=subprocess.PIPE,
                              text=True) for e in envs]
    outs = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.time() - epoch
    cells = [f"[{o['gpus']}g load {o['load']*1e3:.0f} init {o['init']*1e3:.0f} "
             f"ctx {o['ctx']*1e3:.0f} ends +{(o['end']-epoch)*1e3:.0f}]" for o in outs]
    print(f"{name}: wall {wall*1e3:.0f} ms " + " ".join(cells), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    uuids = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                           capture_output=True, text=True, check=False).stdout.split()
    base = dict(os.environ)
    base.pop("CUDA_VISIBLE_DEVICES", None)
    one = [dict(base, CUDA_VISIBLE_DEVICES=u) for u in uuids]
    for _ in range(args.rounds):
        run_case("1 process, every GPU, contexts in turn", [base])
        run_case("1 process, every GPU, contexts on threads", [base], "threads")
        run_case("1 process, GPU 0 alone", one[:1])
        run_case(f"{len(one)} processes at once, one GPU each", one)
        run_case(f"{2*len(one)} processes at once, two per GPU", one + one)
        run_case(f"{len(one)} one-GPU processes + 2 over every GPU", one + [base, base])
        run_case("2 processes at once, every GPU each", [base, base])
    return 0


if __name__ == "__main__":
    sys.exit(main())
