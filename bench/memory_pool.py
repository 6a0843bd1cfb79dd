#!/usr/bin/env python3
"""gpu.memory_pool's figures beside their peers, on one GPU, in one run: gpucheck's own child
(`gpucheck --child gpu-memory-pool 0`, ROUNDS times), the same driver calls made from Python
through ctypes on PyTorch's context, and PyTorch's allocators (its cudaMallocAsync backend and
its caching allocator), each a median per allocation-and-free pair of 1 MiB after warm-up.

    python3 bench/memory_pool.py GPUCHECK [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys

from compare import run_child, metrics_of

TORCH_SCRIPT = r"""
import ctypes, json, statistics, sys, time
import torch
BLOCK, BATCHES, PAIRS = 1 << 20, 5, 32

def per_pair(fn):
    for _ in range(4):
        fn()
    out = []
    for _ in range(BATCHES):
        t = time.perf_counter()
        for _ in range(PAIRS):
            fn()
        out.append((time.perf_counter() - t) / PAIRS * 1e6)
    return statistics.median(out)

torch.cuda.init()
torch.empty(1, device="cuda")
result = {"backend": torch.cuda.get_allocator_backend()}
result["torch_pair_us"] = per_pair(lambda: torch.empty(BLOCK, dtype=torch.uint8, device="cuda"))
if result["backend"] == "cudaMallocAsync":
    cuda = ctypes.CDLL("libcuda.so.1")
    pool, dev = ctypes.c_void_p(), ctypes.c_int(0)
    cuda.cuDeviceGet(ctypes.byref(dev), 0)
    cuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), dev)
    keep = ctypes.c_uint64(2**64 - 1)
    cuda.cuMemPoolSetAttribute(pool, 4, ctypes.byref(keep))  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    ptr = ctypes.c_uint64()
    def pair():
        cuda.cuMemAllocAsync(ctypes.byref(ptr), ctypes.c_size_t(BLOCK), stream)
        cuda.cuMemFreeAsync(ptr, stream)
    result["ctypes_driver_pair_us"] = per_pair(pair)
print(json.dumps(result))
"""


def torch_figures(backend):
    env = dict(os.environ)
    if backend:
        env["PYTORCH_CUDA_ALLOC_CONF"] = f"backend:{backend}"
    proc = subprocess.run([sys.executable, "-c", TORCH_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(proc.stdout)


def main():
    gpucheck = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    pool, plain = [], []
    for _ in range(rounds):
        payload = run_child(gpucheck, "gpu-memory-pool", ["0"])
        if payload.get("failure"):
            print(f"gpucheck child failed: {payload['failure']}")
            return 1
        m = metrics_of(payload)
        pool.append(m["memory_pool_alloc_free_us"])
        plain.append(m["memory_alloc_free_us"])
        verify = payload.get("verify", [])
        if not verify or any(v["mismatches"] for v in verify):
            print(f"gpucheck's pool blocks did not verify: {verify}")
            return 1
    print(f"gpucheck  cuMemAllocAsync+cuMemFreeAsync  median {statistics.median(pool):.2f} us "
          f"(runs {', '.join(f'{v:.2f}' for v in pool)})")
    print(f"gpucheck  cuMemAlloc+cuMemFree            median {statistics.median(plain):.1f} us "
          f"(runs {', '.join(f'{v:.1f}' for v in plain)})")
    for backend in ("cudaMallocAsync", "native"):
        print(f"torch {backend}: {json.dumps(torch_figures(backend))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
