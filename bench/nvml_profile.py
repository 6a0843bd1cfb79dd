#!/usr/bin/env python3
"""Where the NVML probe child's time goes: the calls it makes for each GPU and each pair (as
src/platform/nvml_probe_child.cpp makes them), each timed, summed by function and sorted
(docs/performance.md, issue 33: `--quick` beside cuInit).

    python3 bench/nvml_profile.py [--rounds 2] [--beside-cuinit N [--skip FUNCTION ...]]
        [--after-cuinit] [--link-fields]

The second round is the one to read: the first includes NVML's own first-call costs. With
--beside-cuinit, N more rounds each start beside a fresh process's cuInit, alternating with
cuInit alone, and print cuInit's times: what the calls cost the driver's initialisation. --skip
leaves those functions out of those rounds (and out of their profile), to see what each costs.
--after-cuinit starts each GPU's reads once cuInit has returned (NVML's initialisation and the
handles still beside it), and also prints when both were over; --link-fields reads each link's
state and version as fields 165 and 166 in the call that reads its error counters, and says
whether they agree with nvmlDeviceGetNvLinkState and nvmlDeviceGetNvLinkVersion.
"""
import argparse
import collections
import ctypes
import statistics
import subprocess
import sys
import time

from nvml_calls import FieldValue  # nvmlFieldValue_t

NVML = ctypes.CDLL("libnvidia-ml.so.1")
BUF = ctypes.create_string_buffer(1 << 16)
U = ctypes.c_uint




SKIP = set()
LINK_FIELDS = False  # --link-fields: each link's state and version as fields 165 and 166


def link_fields(times, dev):
    """The links as --link-fields reads them: the error totals and, for each of the 18 links,
    fields 161-163 (DL replay, recovery, CRC) and 165-166 (state, version) in one call; then the
    remote end of each link whose state answered. Prints, once per GPU, whether the fields agree
    with nvmlDeviceGetNvLinkState and nvmlDeviceGetNvLinkVersion."""
    fields = (FieldValue * (4 + 5 * 18))()
    for n, fid in enumerate((52, 59, 38, 45)):
        fields[n].fieldId = fid
    for link in range(18):
        for k, fid in enumerate((161, 162, 163, 165, 166)):
            fields[4 + 5 * link + k].fieldId, fields[4 + 5 * link + k].scopeId = fid, link
    call_args(times, "nvmlDeviceGetFieldValues", dev, len(fields), fields)
    links = [link for link in range(18) if fields[4 + 5 * link + 3].nvmlReturn == 0]
    for link in links:
        call(times, "nvmlDeviceGetNvLinkRemotePciInfo_v2", dev, link)
    if dev.value not in COMPARED:
        COMPARED.add(dev.value)
        same = 0
        for link in range(18):
            state, version = U(), U()
            rs = NVML.nvmlDeviceGetNvLinkState(dev, link, ctypes.byref(state))
            rv = NVML.nvmlDeviceGetNvLinkVersion(dev, link, ctypes.byref(version))
            fs, fv = fields[4 + 5 * link + 3], fields[4 + 5 * link + 4]
            got = ((fs.nvmlReturn, fs.value if fs.nvmlReturn == 0 else None),
                   (fv.nvmlReturn, fv.value if fv.nvmlReturn == 0 else None))
            want = ((rs, state.value if rs == 0 else None), (rv, version.value if rv == 0 else None))
            same += got == want
            if got != want:
                print(f"  link {link}: fields {got}, calls {want}")
        print(f"  fields 165/166 agree with the calls on {same} of 18 links "
              f"(value types {fields[4 + 3].valueType}, {fields[4 + 4].valueType})")
    return links


COMPARED = set()


def call(times, name, *args, version=None):
    """NVML function `name`(args..., BUF), timed into times[name]."""
    fn = getattr(NVML, name, None)
    if fn is None or name in SKIP:
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
    if name in SKIP:
        return None
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
    if LINK_FIELDS:
        links = link_fields(times, dev)
    else:
        links = []
        for link in range(18):
            if call(times, "nvmlDeviceGetNvLinkState", dev, link) == 0:
                links.append(link)
        for link in links:
            call(times, "nvmlDeviceGetNvLinkVersion", dev, link)
            call(times, "nvmlDeviceGetNvLinkRemotePciInfo_v2", dev, link)
        # The error totals (fields 52, 59, 38, 45), then each link's DL replay, recovery and CRC
        # (161-163, scopeId the link) in one call; the flit and data counters are not read where
        # those answer.
        totals = (FieldValue * 4)()
        for n, fid in enumerate((52, 59, 38, 45)):
            totals[n].fieldId = fid
        call_args(times, "nvmlDeviceGetFieldValues", dev, 4, totals)
        scoped = (FieldValue * (3 * len(links)))()
        for n, (link, fid) in enumerate((l, f) for l in links for f in (161, 162, 163)):
            scoped[n].fieldId, scoped[n].scopeId = fid, link
        call_args(times, "nvmlDeviceGetFieldValues", dev, len(scoped), scoped)
        for n, link in enumerate(links):
            if scoped[3 * n + 2].nvmlReturn != 0:
                for counter in (2, 3):
                    call(times, "nvmlDeviceGetNvLinkErrorCounter", dev, link, counter)
    call(times, "nvmlDeviceGetGpuFabricInfoV", dev, version=36 | (2 << 24))
    for name in ("nvmlDeviceGetComputeRunningProcesses_v3",
                 "nvmlDeviceGetGraphicsRunningProcesses_v3"):
        n = U(64)
        call_args(times, name, dev, ctypes.byref(n), BUF)


def one_round(between=None):
    """Every call of the child, once; the times by function and the total. `between`, when
    given, is called once the handles are had and before each GPU's reads (--after-cuinit)."""
    times = collections.defaultdict(lambda: [0.0, 0])
    start = time.perf_counter()
    call_args(times, "nvmlInit_v2")
    count = U(0)
    call_args(times, "nvmlDeviceGetCount_v2", ctypes.byref(count))
    devs = []
    for i in range(count.value):
        dev = ctypes.c_void_p()
        call_args(times, "nvmlDeviceGetHandleByIndex_v2", i, ctypes.byref(dev))
        devs.append(dev)
    if between is not None:
        between()
    for dev in devs:
        one_gpu(times, dev)
    for i, a in enumerate(devs):
        for b in devs[i + 1:]:
            call(times, "nvmlDeviceGetTopologyCommonAncestor", a, b)
            call(times, "nvmlDeviceGetP2PStatus", a, b, 2)
            call(times, "nvmlDeviceGetP2PStatus", a, b, 0)
    call_args(times, "nvmlShutdown")
    return count.value, times, time.perf_counter() - start


def print_round(label, count, times, total):
    print(f"{label}: {count} GPU(s), {1e3 * total:.1f} ms in all")
    for name, (sec, n) in sorted(times.items(), key=lambda kv: -kv[1][0])[:15]:
        print(f"  {1e3 * sec:7.1f} ms  {n:4d} calls  {name}")


CUINIT = ("import ctypes,time,sys;l=ctypes.CDLL('libcuda.so.1');sys.stdin.readline();"
          "t=time.perf_counter();rc=l.cuInit(0);print(round(1000*(time.perf_counter()-t)),rc)")


def cuinit_ms(beside, after=False):
    """cuInit's time (ms) in a fresh process, with one round of the calls started beside it;
    with `after`, the round's per-GPU reads wait for cuInit to return (its handles do not).
    Also the time (ms) from cuInit's start until both are over."""
    init = subprocess.Popen([sys.executable, "-c", CUINIT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    time.sleep(0.2)  # its interpreter started
    init.stdin.write("go\n")
    init.stdin.flush()
    began = time.perf_counter()
    out = []
    returned = []
    def wait_init():  # cuInit's line, written as it returns (the process exits after)
        out.extend(init.stdout.readline().split())
        returned.append(time.perf_counter())
    total = one_round(wait_init if after else None)[2] if beside else None
    calls_over = time.perf_counter()
    if not out:
        wait_init()
    init.wait()
    return int(out[0]), total, round(1e3 * (max(calls_over, returned[0]) - began))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--beside-cuinit", type=int, default=0)
    parser.add_argument("--skip", action="append", default=[])
    parser.add_argument("--after-cuinit", action="store_true",
                        help="each GPU's reads once cuInit has returned (the handles before)")
    parser.add_argument("--link-fields", action="store_true",
                        help="links' state and version as fields 165/166, in one call")
    args = parser.parse_args()
    global LINK_FIELDS
    LINK_FIELDS = args.link_fields
    for rnd in range(args.rounds):
        print_round(f"round {rnd}", *one_round())
    SKIP.update(args.skip)
    alone, beside, calls, ends = [], [], [], []
    for _ in range(args.beside_cuinit):
        time.sleep(0.5)
        alone.append(cuinit_ms(False)[0])
        time.sleep(0.5)
        ms, total, end = cuinit_ms(True, args.after_cuinit)
        beside.append(ms)
        calls.append(round(1e3 * total))
        ends.append(end)
    if alone:
        print(f"{'link fields, ' if LINK_FIELDS else ''}"
              f"skipping {sorted(SKIP) or 'nothing'}: cuInit alone median "
              f"{statistics.median(alone)} ms {alone}; beside the calls "
              f"{statistics.median(beside)} ms {beside}; the calls took {calls} ms; "
              f"{'reads after cuInit; ' if args.after_cuinit else ''}both over after "
              f"{statistics.median(ends)} ms {ends}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
