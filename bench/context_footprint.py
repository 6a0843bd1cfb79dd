#!/usr/bin/env python3
"""How much GPU memory one CUDA context takes, and what shrinks it (exploration for the engine
issue). Run in a child per variant so each starts from a fresh process:
    python3 bench/context_footprint.py
Prints, per variant, the device memory used by the process (NVML, used delta) and cuInit time."""
import ctypes, json, os, subprocess, sys, time

class MemInfo(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

def nvml_used(index=0):
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    nvml.nvmlInit_v2()
    h = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(h))
    m = MemInfo()
    nvml.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
    return m.used

def variant(limits):
    t0 = time.perf_counter()
    cu = ctypes.CDLL("libcuda.so.1")
    t1 = time.perf_counter()
    assert cu.cuInit(0) == 0
    t2 = time.perf_counter()
    dev = ctypes.c_int()
    cu.cuDeviceGet(ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p()
    before = nvml_used()
    r = cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    cu.cuCtxSetCurrent(ctx)
    t3 = time.perf_counter()
    for lim, val in limits:
        rr = cu.cuCtxSetLimit(lim, ctypes.c_size_t(val))
        if rr != 0:
            print("setlimit", lim, "->", rr, file=sys.stderr)
    time.sleep(0.3)
    after = nvml_used()
    free = ctypes.c_size_t(); total = ctypes.c_size_t()
    cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
    print(json.dumps({"dlopen_ms": (t1-t0)*1e3, "cuInit_ms": (t2-t1)*1e3, "ctx_ms": (t3-t2)*1e3,
                      "ctx_mib": (after-before)/2**20, "retain": r}))

def nvml_census_ms():
    t0 = time.perf_counter()
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    t1 = time.perf_counter()
    nvml.nvmlInit_v2()
    t2 = time.perf_counter()
    n = ctypes.c_uint()
    nvml.nvmlDeviceGetCount_v2(ctypes.byref(n))
    for i in range(n.value):
        h = ctypes.c_void_p()
        nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
        m = MemInfo()
        nvml.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
        cnt = ctypes.c_uint(0)
        nvml.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(cnt), None)
    t3 = time.perf_counter()
    return {"dlopen_ms": (t1-t0)*1e3, "init_ms": (t2-t1)*1e3, "query_ms": (t3-t2)*1e3}

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "nvml":
        print(json.dumps(nvml_census_ms()))
        sys.exit(0)
    if len(sys.argv) > 1:
        limits = json.loads(sys.argv[1])
        variant(limits)
        sys.exit(0)
    uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True).stdout.split()
    # CU_LIMIT_STACK_SIZE=0, PRINTF_FIFO=1, MALLOC_HEAP=2
    for name, env, limits in [
        ("default", {}, []),
        ("conn1", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, []),
        ("conn1+uuid", {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_VISIBLE_DEVICES": uuid[0] if uuid else "0"}, []),
        ("conn1+small limits", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, [[0, 256], [1, 4096], [2, 1 << 20]]),
        ("conn1+stack64", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, [[0, 64], [1, 4096], [2, 1 << 20]]),
        ("conn1+stack16", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, [[0, 16], [1, 4096], [2, 1 << 20]]),
        ("conn1+stack0", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, [[0, 0], [1, 4096], [2, 1 << 20]]),
        ("conn1+stack256 only", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, [[0, 256]]),
        ("conn1+lazy", {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_MODULE_LOADING": "LAZY"}, []),
        ("conn1+uuid again", {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_VISIBLE_DEVICES": uuid[0] if uuid else "0"}, []),
    ]:
        out = subprocess.run([sys.executable, __file__, json.dumps(limits)], env=dict(os.environ, **env), capture_output=True, text=True)
        print(name, out.stdout.strip(), out.stderr.strip()[-300:])
    for _ in range(3):
        out = subprocess.run([sys.executable, __file__, "nvml"], capture_output=True, text=True)
        print("nvml census", out.stdout.strip(), out.stderr.strip()[-300:])
