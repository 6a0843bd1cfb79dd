#!/usr/bin/env python3
"""The NVML child's CRC counters: one call per link and counter against the per-link fields, one
GPU after another against a thread per GPU, and what each costs `cuInit` beside it
(docs/performance.md, issue 33: `--quick` on several GPUs).

    python3 bench/nvml_crc.py [--rounds 4]

1. Per GPU: each link's CRC flit and data counters (nvmlDeviceGetNvLinkErrorCounter), then one
   nvmlDeviceGetFieldValues call of the per-link fields (32-37 and 96-101 flit, 39-44 and
   102-107 data: links 0-11), then the counters again. A field agrees when it lies between the
   two readings (the data counter grows with traffic on healthy links).
2. The CRC counters of every GPU read one GPU after another, and with a thread per GPU.
3. nvmlDeviceGetCpuAffinity against the PCI device's local_cpulist in sysfs.
4. cuInit in a fresh process, alone and beside a process that reads the NVLink counters each way
   (nvmlInit, the handles, the links' states, then the counters), alternating.
"""
import argparse
import ctypes
import statistics
import subprocess
import sys
import threading
import time

from nvml_calls import FieldValue  # nvmlFieldValue_t

FLIT_FIELDS = list(range(32, 38)) + list(range(96, 102))
DATA_FIELDS = list(range(39, 45)) + list(range(102, 108))
CRC_FLIT, CRC_DATA = 2, 3




class PciInfo(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint),
                ("bus", ctypes.c_uint), ("device", ctypes.c_uint),
                ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]


def open_nvml():
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    nvml.nvmlInit_v2()
    count = ctypes.c_uint(0)
    nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
    devs = []
    for i in range(count.value):
        dev = ctypes.c_void_p()
        nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(dev))
        devs.append(dev)
    return nvml, devs


def links_of(nvml, dev):
    links = []
    for link in range(18):
        state = ctypes.c_uint(0)
        if nvml.nvmlDeviceGetNvLinkState(dev, link, ctypes.byref(state)) == 0:
            links.append(link)
    return links


def counters(nvml, dev, links, kinds=(CRC_FLIT, CRC_DATA)):
    out = {}
    for link in links:
        for kind in kinds:
            v = ctypes.c_ulonglong(0)
            rc = nvml.nvmlDeviceGetNvLinkErrorCounter(dev, link, kind, ctypes.byref(v))
            out[(link, kind)] = v.value if rc == 0 else None
    return out


def fields(nvml, dev, links):
    wanted = [(link, kind, ids[link]) for link in links if link < 12
              for kind, ids in ((CRC_FLIT, FLIT_FIELDS), (CRC_DATA, DATA_FIELDS))]
    values = (FieldValue * len(wanted))()
    for n, (_, _, fid) in enumerate(wanted):
        values[n].fieldId = fid
    rc = nvml.nvmlDeviceGetFieldValues(dev, len(values), values)
    return rc, {(link, kind): (values[n].value if values[n].nvmlReturn == 0 else None)
                for n, (link, kind, _) in enumerate(wanted)}


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return 1e3 * (time.perf_counter() - t), out


def compare(nvml, devs):
    for i, dev in enumerate(devs):
        links = links_of(nvml, dev)
        t_before, before = timed(counters, nvml, dev, links)
        t_fields, (rc, got) = timed(fields, nvml, dev, links)
        after = counters(nvml, dev, links)
        agree = nonzero = answered = 0
        for key, value in got.items():
            if value is None:
                continue
            answered += 1
            lo, hi = before[key], after[key]
            if lo is not None and hi is not None and lo <= value <= hi:
                agree += 1
                nonzero += value > 0
        print(f"GPU {i}: {len(links)} links; {2 * len(links)} CRC counter calls "
              f"{t_before:.1f} ms; one call of {len(got)} per-link fields {t_fields:.1f} ms "
              f"(rc {rc}); {answered} answered, {agree} between the counters' two readings "
              f"({nonzero} of them non-zero)")
        sample = [(k, before[k], got[k], after[k]) for k in sorted(got) if got[k]][:4]
        print(f"  (link, kind): before, field, after: {sample}")


def every_gpu(nvml, devs, link_lists, threaded):
    if not threaded:
        for dev, links in zip(devs, link_lists):
            counters(nvml, dev, links)
        return
    threads = [threading.Thread(target=counters, args=(nvml, dev, links))
               for dev, links in zip(devs, link_lists)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def affinity(nvml, devs):
    mask = (ctypes.c_ulong * 16)()
    for i, dev in enumerate(devs):
        pci = PciInfo()
        nvml.nvmlDeviceGetPciInfo_v3(dev, ctypes.byref(pci))
        bus = pci.busId.decode().lower()
        bus = bus[4:] if len(bus) > 12 else bus
        t_nvml, _ = timed(nvml.nvmlDeviceGetCpuAffinity, dev, 16, mask)
        t = time.perf_counter()
        try:
            with open(f"/sys/bus/pci/devices/{bus}/local_cpulist") as f:
                text = f.read().strip()
        except OSError as e:
            text = str(e)
        t_sysfs = 1e3 * (time.perf_counter() - t)
        print(f"GPU {i} ({bus}): nvmlDeviceGetCpuAffinity {t_nvml:.2f} ms (mask word 0 "
              f"{mask[0]:#x}); sysfs local_cpulist {t_sysfs:.3f} ms ({text})")


CUINIT = ("import ctypes,time,sys;l=ctypes.CDLL('libcuda.so.1');sys.stdin.readline();"
          "t=time.perf_counter();rc=l.cuInit(0);print(round(1000*(time.perf_counter()-t)),rc)")
READER = ("import sys;sys.path.insert(0,sys.argv[1]);import nvml_crc as m;import time;"
          "n,d=m.open_nvml();ls=[m.links_of(n,x) for x in d];"
          "print('ready',flush=True);sys.stdin.readline();t=time.perf_counter();"
          "m.every_gpu(n,d,ls,sys.argv[2]=='threads');"
          "print(round(1000*(time.perf_counter()-t)),flush=True)")


def cuinit_beside(way, here):
    """cuInit's time in ms with a reader of the counters (`way`) started at the same moment."""
    init = subprocess.Popen([sys.executable, "-c", CUINIT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    reader = None
    if way != "alone":
        reader = subprocess.Popen([sys.executable, "-c", READER, here, way],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        reader.stdout.readline()
        reader.stdin.write("go\n")
        reader.stdin.flush()
    init.stdin.write("go\n")
    init.stdin.flush()
    init_ms = init.stdout.read().split()[0]
    init.wait()
    reader_ms = "-"
    if reader:
        reader_ms = reader.stdout.read().strip()
        reader.wait()
    return int(init_ms), reader_ms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    here = sys.path[0]
    nvml, devs = open_nvml()
    compare(nvml, devs)
    compare(nvml, devs)
    link_lists = [links_of(nvml, d) for d in devs]
    for threaded in (False, True, False, True):
        ms, _ = timed(every_gpu, nvml, devs, link_lists, threaded)
        print(f"CRC counters of {len(devs)} GPUs, {'a thread per GPU' if threaded else 'in turn'}:"
              f" {ms:.1f} ms")
    affinity(nvml, devs)
    nvml.nvmlShutdown()
    results = {"alone": [], "in_turn": [], "threads": []}
    for _ in range(args.rounds):
        for way in results:
            time.sleep(0.5)
            results[way].append(cuinit_beside(way, here))
    for way, runs in results.items():
        inits = [r[0] for r in runs]
        print(f"cuInit {way}: median {statistics.median(inits)} ms {inits}; reader ms "
              f"{[r[1] for r in runs]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
