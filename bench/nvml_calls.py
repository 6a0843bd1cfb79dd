#!/usr/bin/env python3
"""What the NVML child's NVLink reads cost, one call per counter against one batched call
(docs/performance.md, issue 33: `--quick`).

    python3 bench/nvml_calls.py

Per GPU: the 4 x links calls of nvmlDeviceGetNvLinkErrorCounter, then one
nvmlDeviceGetFieldValues call with fields 161-163 (DL replay, recovery, CRC) scoped to each
link, and both readings, so that the batched values can be compared with the counters; then one
call for the four totals over every link (fields 38, 45, 52, 59: CRC flit, CRC data, replay,
recovery), against the sums of the per-link counters, which is how the NVML child reads them.
"""
import ctypes
import sys
import time


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint),
                ("timestamp", ctypes.c_longlong), ("latencyUsec", ctypes.c_longlong),
                ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", ctypes.c_ulonglong)]


# Fields 38, 45, 52, 59 and the nvmlNvLinkErrorCounter_t each totals.
TOTALS = (38, 45, 52, 59)
COUNTER_OF_TOTAL = (2, 3, 0, 1)


def main():
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    t = time.perf_counter()
    nvml.nvmlInit_v2()
    print(f"nvmlInit {1e3*(time.perf_counter()-t):.1f} ms")
    count = ctypes.c_uint(0)
    nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
    for i in range(count.value):
        dev = ctypes.c_void_p()
        nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(dev))
        t = time.perf_counter()
        links = []
        for link in range(18):
            state = ctypes.c_uint(0)
            if nvml.nvmlDeviceGetNvLinkState(dev, link, ctypes.byref(state)) == 0:
                links.append(link)
        t_state = time.perf_counter() - t
        t = time.perf_counter()
        legacy = {}
        for link in links:
            for counter in range(4):
                v = ctypes.c_ulonglong(0)
                rc = nvml.nvmlDeviceGetNvLinkErrorCounter(dev, link, counter, ctypes.byref(v))
                legacy[(link, counter)] = v.value if rc == 0 else f"rc{rc}"
        t_legacy = time.perf_counter() - t
        fields = (FieldValue * (3 * len(links)))()
        for n, (link, fid) in enumerate((l, f) for l in links for f in (161, 162, 163)):
            fields[n].fieldId = fid
            fields[n].scopeId = link
        t = time.perf_counter()
        rc = nvml.nvmlDeviceGetFieldValues(dev, len(fields), fields)
        t_batch = time.perf_counter() - t
        batched = {(f.scopeId, f.fieldId): (f.value if f.nvmlReturn == 0 else f"rc{f.nvmlReturn}")
                   for f in fields}
        print(f"GPU {i}: {len(links)} links; state {1e3*t_state:.1f} ms; "
              f"{4*len(links)} counter calls {1e3*t_legacy:.1f} ms; one batched call "
              f"{1e3*t_batch:.1f} ms (rc {rc})")
        same = sum(1 for l in links if batched[(l, 161)] == legacy[(l, 0)]
                   and batched[(l, 162)] == legacy[(l, 1)])
        kinds = sorted({f.valueType for f in fields if f.nvmlReturn == 0})
        print(f"  fields 161/162 equal the replay/recovery counters on {same} of {len(links)} "
              f"links (value types {kinds})")
        if links:
            l0 = links[0]
            print(f"  link {l0}: counters replay/recovery/flit/data "
                  f"{[legacy[(l0, c)] for c in range(4)]}; fields 161/162/163 "
                  f"{[batched[(l0, f)] for f in (161, 162, 163)]}")
        totals = (FieldValue * 4)()
        for n, fid in enumerate(TOTALS):
            totals[n].fieldId = fid
        t = time.perf_counter()
        rc = nvml.nvmlDeviceGetFieldValues(dev, 4, totals)
        t_totals = time.perf_counter() - t
        sums = [sum(legacy[(l, c)] for l in links if isinstance(legacy[(l, c)], int))
                for c in COUNTER_OF_TOTAL]
        read = [f.value if f.nvmlReturn == 0 else f"rc{f.nvmlReturn}" for f in totals]
        print(f"  totals (flit, data, replay, recovery): one call {1e3*t_totals:.1f} ms (rc {rc}) "
              f"read {read}; sums of the counters {sums}; "
              f"{'equal' if read == sums else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
