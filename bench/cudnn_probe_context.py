#!/usr/bin/env python3
"""Which cuDNN query creates a CUDA context (device memory) in the probe child? Calls each
function the probe calls and reads this process's device memory from NVML after each."""
import ctypes, glob, json, os, sys, subprocess

class PI(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]

nvml = ctypes.CDLL("libnvidia-ml.so.1"); nvml.nvmlInit_v2()
h = ctypes.c_void_p(); nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
def mine():
    n = ctypes.c_uint(64); a = (PI * 64)()
    nvml.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), a)
    return sum(a[i].used for i in range(n.value) if a[i].pid == os.getpid()) >> 20

lib = os.environ.get("CUDNN", "libcudnn.so.9")
d = ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
print("loaded", mine())
for fn in ["cudnnGetVersion", "cudnnGetCudartVersion", "cudnnGetMaxDeviceVersion"]:
    f = getattr(d, fn, None)
    if f is None: print(fn, "missing"); continue
    f.restype = ctypes.c_size_t
    print(fn, f(), "MiB", mine())
import ctypes.util
class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
libdl = ctypes.CDLL(None)
info = DlInfo()
libdl.dladdr(ctypes.cast(d.cudnnGetVersion, ctypes.c_void_p), ctypes.byref(info))
sub = os.path.dirname(os.path.realpath(info.fname.decode()))
print("cudnn dir", sub)
for stem, check in [("ops", "cudnnOpsVersionCheck"), ("cnn", "cudnnCnnVersionCheck"), ("adv", "cudnnAdvVersionCheck"), ("graph", "cudnnGraphVersionCheck")]:
    for cand in glob.glob(f"{sub}/libcudnn_{stem}.so.9*")[:1]:
        s = ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
        f = getattr(s, check, None)
        if f is None: print(check, "missing"); continue
        print(check, f(), "MiB", mine())
