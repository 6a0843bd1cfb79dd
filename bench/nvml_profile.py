#!/usr/bin/env python3
"""Where the NVML probe child's time goes: the calls it makes for each GPU and each pair (as
src/platform/nvml_probe_child.cpp makes them), each timed, summed by function and sorted
(docs/performance.md, issue 33: `--quick` beside cuInit).

    python3 bench/nvml_profile.py [--rounds 2]

The second round is the one to read: the first includes NVML's own first-call costs.
"""
import argparse
import collections
import ctypes
import sys
import time

NVML = ctypes.CDLL("libnvidia-ml.so.1")
BUF = ctypes.create_string_buffer(1 << 16)
U = ctypes.c_uint


def call(times, name, *args, version=None):
    """NVML function `name`(args..., BUF), timed into times[name]."""
    fn = getattr(NVML, name, None)
    if fn is None:
        return None
    if version is not None:
        ctypes.memmove(BUF, ctypes.byref(U(version)), 4)
    t = time.perf_counter()
    rc = fn(*args, BUF)
    times[name][0] += time.perf_counter() - t
    times[name][1] += 1
    return rc


def call_args(times, name, *args):
    """NVML function `name`(args...) as given (its outputs among them), timed."""
    fn = getattr(NVML, name)
    t = time.perf_counter()
    rc = fn(*args)
    times[name][0] += time.perf_counter() - t
    times[name][1] += 1
    return rc


def one_gpu(times, dev):
    for name in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetSerial"):
        call_args(times, name, dev, BUF, U(96))
    call(times, "nvmlDeviceGetPciInfo_v3", dev)
    a, b = ctypes.c_int(), ctypes.c_int()
    call_args(times, "nvmlDeviceGetCudaComputeCapability", dev, ctypes.byref(a), ctypes.byref(b))
    call(times, "nvmlDeviceGetMemoryInfo_v2", dev, version=40 | (2 << 24))
    for name in ("nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration",
                 "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth",
                 "nvmlDeviceGetPersistenceMode", "nvmlDeviceGetComputeMode",
                 "nvmlDeviceGetDisplayMode", "nvmlDeviceGetDisplayActive",
                 "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetRetiredPagesPendingStatus",
                 "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetPowerUsage",
                 "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetNumaNodeId"):
        call(times, name, dev)
    call_args(times, "nvmlDeviceGetMigMode", dev, ctypes.byref(a), ctypes.byref(b))
    call_args(times, "nvmlDeviceGetEccMode", dev, ctypes.byref(a), ctypes.byref(b))
    for kind, counter in ((1, 0), (0, 0), (1, 1)):
        call(times, "nvmlDeviceGetTotalEccErrors", dev, kind, counter)
    for cause in (0, 1):
        n = U(0)
        call_args(times, "nvmlDeviceGetRetiredPages", dev, cause, ctypes.byref(n), None)
    c = [U() for _ in range(4)]
    call_args(times, "nvmlDeviceGetRemappedRows", dev, *[ctypes.byref(x) for x in c])
    call(times, "nvmlDeviceGetTemperatureV", dev, version=12 | (1 << 24))
    call(times, "nvmlDeviceGetClockInfo", dev, 1)
    call(times, "nvmlDeviceGetMaxClockInfo", dev, 1)
    call_args(times, "nvmlDeviceGetCpuAffinity", dev, U(64), BUF)
    links = []
    for link in range(18):
        if call(times, "nvmlDeviceGetNvLinkState", dev, link) == 0:
            links.append(link)
    for link in links:
        call(times, "nvmlDeviceGetNvLinkVersion", dev, link)
        call(times, "nvmlDeviceGetNvLinkRemotePciInfo_v2", dev, link)
        for counter in range(4):
            call(times, "nvmlDeviceGetNvLinkErrorCounter", dev, link, counter)
    call(times, "nvmlDeviceGetGpuFabricInfoV", dev, version=36 | (2 << 24))
    for name in ("nvmlDeviceGetComputeRunningProcesses_v3",
                 "nvmlDeviceGetGraphicsRunningProcesses_v3"):
        n = U(64)
        call_args(times, name, dev, ctypes.byref(n), BUF)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for rnd in range(args.rounds):
        times = collections.defaultdict(lambda: [0.0, 0])
        start = time.perf_counter()
        call_args(times, "nvmlInit_v2")
        count = U(0)
        call_args(times, "nvmlDeviceGetCount_v2", ctypes.byref(count))
        devs = []
        for i in range(count.value):
            dev = ctypes.c_void_p()
            call_args(times, "nvmlDeviceGetHandleByIndex_v2", i, ctypes.byref(dev))
            one_gpu(times, dev)
            devs.append(dev)
        for i, a in enumerate(devs):
            for b in devs[i + 1:]:
                call(times, "nvmlDeviceGetTopologyCommonAncestor", a, b)
                call(times, "nvmlDeviceGetP2PStatus", a, b, 2)
                call(times, "nvmlDeviceGetP2PStatus", a, b, 0)
        call_args(times, "nvmlShutdown")
        total = time.perf_counter() - start
        print(f"round {rnd}: {count.value} GPU(s), {1e3 * total:.1f} ms in all")
        for name, (sec, n) in sorted(times.items(), key=lambda kv: -kv[1][0])[:15]:
            print(f"  {1e3 * sec:7.1f} ms  {n:4d} calls  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
