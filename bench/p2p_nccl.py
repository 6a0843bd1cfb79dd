#!/usr/bin/env python3
"""gpucheck's peer-to-peer (and, when its child has it, NCCL all-reduce) figures beside PyTorch's,
measured in one run on the same two GPUs and sizes (issue 15's targets).

Usage (on a machine with two GPUs and PyTorch):
    python3 bench/p2p_nccl.py --gpucheck build/release/gpucheck [--devices 0,1] [--markdown out.md]

gpucheck's figures come from its multi-GPU child (`gpucheck --child gpu-peers 0,1`), run by hand
(no engine gates), which writes JSON on the fd named by GPUCHECK_RESULT_FD. PyTorch's come from
the same operations: a 64 MiB device-to-device copy between cuda:A and cuda:B with peer access
(`dst.copy_(src)`, each way, and both ways at once), timed on the host around queued copies with
both devices synchronised, median of 5; and torch.distributed's NCCL all_reduce with one process
per GPU over the same sizes, with nccl-tests' bus bandwidth (busbw = algbw * 2(n-1)/n).
NCCL_NVLS_ENABLE=0 is set for every process here (NVLink SHARP/multicast stays off). gpucheck loads
the libnccl.so.2 the dynamic loader finds; to use PyTorch's own copy, put its directory
(site-packages/nvidia/nccl/lib) on LD_LIBRARY_PATH.
Prints a Markdown table with the ratio and the issue's target.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
COPY_BYTES = 64 * MIB
NCCL_SIZES = [1 * MIB, 16 * MIB, 64 * MIB, 256 * MIB]


def run_child(gpucheck, mode, args, env_extra=None, timeout=300):
    """Run one gpucheck child and return its JSON (read from the result pipe)."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, GPUCHECK_RESULT_FD=str(write_fd), **(env_extra or {}))
    proc = subprocess.Popen([gpucheck, "--child", mode] + args, env=env, pass_fds=(write_fd,))
    os.close(write_fd)
    chunks = []
    with os.fdopen(read_fd, "rb") as pipe:
        while True:
            chunk = pipe.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
    proc.wait(timeout=timeout)
    text = b"".join(chunks).decode()
    # A child of several works writes one JSON line per work; one work writes one value.
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return lines if len(lines) != 1 else lines[0]


def torch_copies(torch, a, b, repeats=5, copies=40):
    """GB/s of dst.copy_(src) a->b, b->a, and each way while both run (median of `repeats`)."""
    src = {d: torch.empty(COPY_BYTES, dtype=torch.uint8, device=f"cuda:{d}").random_(0, 255)
           for d in (a, b)}
    dst = {d: torch.empty(COPY_BYTES, dtype=torch.uint8, device=f"cuda:{d}") for d in (a, b)}

    def sync():
        torch.cuda.synchronize(a)
        torch.cuda.synchronize(b)

    def timed(pairs):
        for _ in range(3):
            for f, t in pairs:
                dst[t].copy_(src[f], non_blocking=True)
        sync()
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(copies):
                for f, t in pairs:
                    dst[t].copy_(src[f], non_blocking=True)
            sync()
            samples.append(time.perf_counter() - start)
        return COPY_BYTES * copies / statistics.median(samples) / 1e9

    out = {
        f"{a}->{b}": timed([(a, b)]),
        f"{b}->{a}": timed([(b, a)]),
        "both ways (sum)": timed([(a, b), (b, a)]) * 2,
    }
    assert torch.equal(dst[b].cpu(), src[a].cpu()) and torch.equal(dst[a].cpu(), src[b].cpu()), \
        "torch copy corrupted"
    return out


def torch_allreduce_worker(rank, world, init_file, devices, result_file):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(devices[rank])
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=world)
    results = {}
    for size in NCCL_SIZES:
        count = size // 4
        x = torch.full((count,), float(rank + 1), dtype=torch.float32, device=f"cuda:{devices[rank]}")
        iters = 20 if size <= 16 * MIB else 10
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        samples = []
        for _ in range(3):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - start) / iters)
        algbw = size / statistics.median(samples) / 1e9
        results[size] = {"algbw": algbw, "busbw": algbw * 2 * (world - 1) / world}
    if rank == 0:
        with open(result_file, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def torch_allreduce(devices):
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        result_file = os.path.join(tmp, "result.json")
        mp.spawn(torch_allreduce_worker, args=(len(devices), init_file, devices, result_file),
                 nprocs=len(devices), join=True)
        with open(result_file) as f:
            return {int(k): v for k, v in json.load(f).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--devices", default="0,1")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    # The child sees the listed GPUs as 0..n-1 (CUDA_VISIBLE_DEVICES); PyTorch too, below.
    os.environ["CUDA_VISIBLE_DEVICES"] = args.devices
    devices = list(range(len(args.devices.split(","))))
    a, b = devices[0], devices[1]

    # gpucheck first, before PyTorch touches the GPUs.
    began = time.perf_counter()
    result = run_child(args.gpucheck, "gpu-peers",
                       [",".join(str(d) for d in devices), "peers,nccl"])
    child_s = time.perf_counter() - began
    parts = result if isinstance(result, list) else [result]
    peers = next((p for p in parts if p.get("work") == "peers"), {})
    nccl = next((p for p in parts if p.get("work") == "nccl"), None)
    if nccl and nccl.get("nccl_missing"):
        print("gpucheck: NCCL not available:", nccl["nccl_missing"], file=sys.stderr)
    if nccl and "failure" in nccl:
        print("gpucheck nccl work failed:", json.dumps(nccl["failure"]), file=sys.stderr)
    if "failure" in peers:
        print("gpucheck peers child failed:", json.dumps(peers["failure"]), file=sys.stderr)
    ours = {}
    for pair in peers.get("pairs", []):
        key = f"{devices[pair['from']]}->{devices[pair['to']]}"
        ours[key] = pair["write_gbps"]
        if {devices[pair["from"]], devices[pair["to"]]} == {a, b}:  # the pair PyTorch measures
            ours.setdefault("both ways (sum)", 0.0)
            ours["both ways (sum)"] += pair["bidir_gbps"]
    checks = peers.get("verify", []) + (nccl or {}).get("verify", [])
    verified = bool(checks) and all(v["mismatches"] == 0 for v in checks)

    import torch  # imported late: the gpucheck child ran before PyTorch touched the GPUs
    theirs = torch_copies(torch, a, b)
    reduce_theirs = torch_allreduce(devices)

    rows = ["| figure | gpucheck | PyTorch | ratio | target |", "|---|---|---|---|---|"]
    for key in (f"{a}->{b}", f"{b}->{a}", "both ways (sum)"):
        g = ours.get(key)
        t = theirs.get(key)
        ratio = f"{g / t:.3f}" if g and t else "n/a"
        target = ">= 0.95" if "->" in key else "-"
        rows.append(f"| P2P copy {key}, 64 MiB, GB/s | {g or 0:.1f} | {t:.1f} | {ratio} | {target} |")
    ours_reduce = {}
    if nccl:
        for entry in nccl.get("sizes", []):
            ours_reduce[entry["bytes"]] = entry
    for size in NCCL_SIZES:
        t = reduce_theirs.get(size, {})
        g = ours_reduce.get(size, {})
        gb = g.get("busbw_gbps")
        tb = t.get("busbw")
        ratio = f"{gb / tb:.3f}" if gb and tb else "n/a"
        target = ">= 0.90" if size == 256 * MIB else "-"
        ours_text = f"{gb:.1f}" if gb is not None else "n/a"
        rows.append(f"| all-reduce {size // MIB} MiB busbw, GB/s | {ours_text} | {tb:.1f} | "
                    f"{ratio} | {target} |")
    torch_nccl = torch.cuda.nccl.version()
    torch_nccl = ".".join(map(str, torch_nccl)) if isinstance(torch_nccl, tuple) else str(torch_nccl)
    ours_nccl = (nccl or {}).get("nccl_library") or "n/a"
    header = [
        f"# gpucheck multi-GPU figures against PyTorch ({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC)",
        "",
        f"GPUs {args.devices}: {', '.join(torch.cuda.get_device_name(d) for d in devices)}; "
        f"host {platform.node()}; torch {torch.__version__} (NCCL {torch_nccl}); gpucheck's NCCL: {ours_nccl}; "
        f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}",
        f"gpucheck peers child: {child_s:.2f} s wall, every buffer verified: {bool(verified)}, "
        f"copies gated: {peers.get('gated')}",
        "",
    ]
    text = "\n".join(header + rows) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
