#!/usr/bin/env python3
"""What NCCL's initialisation costs in one process over every GPU (as gpucheck's multi-GPU child
does it, ncclCommInitAll) against one process per GPU (ncclCommInitRank, each process with its
context already built and only its GPU visible, as gpucheck's per-GPU children would), and the
all-reduce bus bandwidth each reaches at 256 MiB: docs/performance.md.

    NCCL_NVLS_ENABLE=0 python3 bench/nccl_init.py [--rounds 3]

Each case runs in fresh processes; the times are of the NCCL call alone, after cuInit and the
contexts. NCCL's own "Init timings" line (kernels, bootstrap, ...) is printed per rank.
"""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import time

NCCL_ID_BYTES = 128


class NcclUniqueId(ctypes.Structure):
    """ncclUniqueId: passed by value to ncclCommInitRank."""
    _fields_ = [("internal", ctypes.c_char * NCCL_ID_BYTES)]


def cuda_ready(devices):
    """libcuda, cuInit and each device's primary context, current on this thread at the end."""
    cuda = ctypes.CDLL("libcuda.so.1")
    t = time.perf_counter()
    assert cuda.cuInit(0) == 0
    init_ms = 1000 * (time.perf_counter() - t)
    ctxs = []
    for d in devices:
        dev = ctypes.c_int()
        assert cuda.cuDeviceGet(ctypes.byref(dev), d) == 0
        ctx = ctypes.c_void_p()
        assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
        assert cuda.cuCtxSetCurrent(ctx) == 0
        ptr = ctypes.c_uint64()
        assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)) == 0
        ctxs.append(ctx)
    return cuda, init_ms, 1000 * (time.perf_counter() - t) - init_ms, ctxs


SUM_BYTES = 256 << 20
SUM_ITERATIONS = 20


def all_reduce_busbw(cuda, nccl, comms, contexts, n):
    """Bus bandwidth (GB/s) of SUM_ITERATIONS float32 sums of SUM_BYTES over `comms` (this
    process's ranks, one context each), after 5 untimed ones, timed on the host."""
    nccl.ncclAllReduce.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    bufs, streams = [], []
    for ctx in contexts:
        assert cuda.cuCtxSetCurrent(ctx) == 0
        pair = (ctypes.c_uint64(), ctypes.c_uint64())
        for b in pair:
            assert cuda.cuMemAlloc_v2(ctypes.byref(b), ctypes.c_size_t(SUM_BYTES)) == 0
        stream = ctypes.c_void_p()
        assert cuda.cuStreamCreate(ctypes.byref(stream), 0) == 0
        bufs.append(pair)
        streams.append(stream)

    def sums(times):
        for _ in range(times):
            nccl.ncclGroupStart()
            for k, comm in enumerate(comms):
                nccl.ncclAllReduce(bufs[k][0].value, bufs[k][1].value, SUM_BYTES // 4, 7, 0, comm,
                                   streams[k])
            nccl.ncclGroupEnd()
        for k, ctx in enumerate(contexts):
            cuda.cuCtxSetCurrent(ctx)
            cuda.cuStreamSynchronize(streams[k])

    sums(5)
    t = time.perf_counter()
    sums(SUM_ITERATIONS)
    seconds = (time.perf_counter() - t) / SUM_ITERATIONS
    return round(SUM_BYTES / seconds / 1e9 * 2 * (n - 1) / n, 1)


def one_process(n):
    cuda, init_ms, ctx_ms, contexts = cuda_ready(range(n))
    nccl = ctypes.CDLL("libnccl.so.2")
    comms = (ctypes.c_void_p * n)()
    devs = (ctypes.c_int * n)(*range(n))
    t = time.perf_counter()
    rc = nccl.ncclCommInitAll(comms, n, devs)
    ms = 1000 * (time.perf_counter() - t)
    busbw = all_reduce_busbw(cuda, nccl, [comms[k] for k in range(n)], contexts, n)
    print(json.dumps({"case": "all", "rc": rc, "cuinit_ms": round(init_ms), "contexts_ms":
                      round(ctx_ms), "nccl_ms": round(ms), "busbw_256mib": busbw}), flush=True)


def rank_process(n, rank, id_hex):
    cuda, init_ms, ctx_ms, contexts = cuda_ready([0])
    nccl = ctypes.CDLL("libnccl.so.2")
    uid = NcclUniqueId.from_buffer_copy(bytes.fromhex(id_hex))
    comm = ctypes.c_void_p()
    nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, NcclUniqueId,
                                      ctypes.c_int]
    t = time.perf_counter()
    rc = nccl.ncclCommInitRank(ctypes.byref(comm), n, uid, rank)
    ms = 1000 * (time.perf_counter() - t)
    busbw = all_reduce_busbw(cuda, nccl, [comm], contexts, n)
    print(json.dumps({"case": "rank", "rank": rank, "rc": rc, "cuinit_ms": round(init_ms),
                      "contexts_ms": round(ctx_ms), "nccl_ms": round(ms), "busbw_256mib": busbw}),
          flush=True)


def run(cmd, env):
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def report(proc, start):
    out, err = proc.communicate()
    wall = 1000 * (time.perf_counter() - start)
    timings = [line.split("Init timings", 1)[1].strip()[:160] for line in (out + err).splitlines()
               if "Init timings" in line]
    for line in out.splitlines():
        if line.startswith("{"):
            print(f"  {line}  wall {wall:.0f} ms")
    for t in timings:
        print("    NCCL: " + re.sub(r"\s+", " ", t))
    transports = sorted({m.group(1) for m in re.finditer(r"Channel \d+/\d+ : \S+ -> \S+ via (\S+)",
                                                         out + err)})
    if transports:
        print("    NCCL's transports: " + ", ".join(transports))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        n, rank, id_hex = int(args.child[0]), int(args.child[1]), args.child[2]
        if rank < 0:
            one_process(n)
        else:
            rank_process(n, rank, id_hex)
        return
    uuids = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                           capture_output=True, text=True, check=False).stdout.split()
    n = len(uuids)
    env = dict(os.environ, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,P2P")
    me = [sys.executable, os.path.abspath(__file__), "--child"]
    for r in range(args.rounds):
        print(f"round {r + 1}, {n} GPUs: one process, ncclCommInitAll")
        start = time.perf_counter()
        report(run(me + [str(n), "-1", "-"], env), start)
        print(f"round {r + 1}: one process per GPU, ncclCommInitRank")
        nccl = ctypes.CDLL("libnccl.so.2")
        uid = NcclUniqueId()
        assert nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
        start = time.perf_counter()
        procs = [run(me + [str(n), str(k), bytes(uid).hex()],
                     dict(env, CUDA_VISIBLE_DEVICES=uuids[k])) for k in range(n)]
        for p in procs:
            report(p, start)


if __name__ == "__main__":
    main()
