#!/usr/bin/env python3
"""gpucheck's own GPU figures beside PyTorch's, measured in one run on the same GPU, sizes and shapes.

Usage (on a machine with a GPU and PyTorch):
    python3 bench/compare.py --gpucheck build/release/gpucheck [--device 0] [--markdown out.md]

gpucheck's figures come from its check children (`gpucheck --child gpu-bandwidth N`,
`gpucheck --child gpu-cudnn N full`), which write JSON on the fd named by GPUCHECK_RESULT_FD.
PyTorch's come from the same operations: pinned/pageable copies with `copy_`, a device copy,
ReLU, and convolutions with cudnn.benchmark=True (TF32 off for FP32), timed with CUDA events.
Prints a Markdown table with the ratio and the target of docs/performance.md.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import time

MIB = 1 << 20

# label -> (N, C, H, W, K, R, S, pad, stride, dtype, channels_last, tf32); the same shapes as
# src/gpu_checks/cudnn/work.cpp.
CONV_SHAPES = {
    "fp32_nchw_64x64x56x56": (64, 64, 56, 56, 64, 3, 3, 1, 1, "float32", False, False),
    "fp16_nhwc_64x64x56x56": (64, 64, 56, 56, 64, 3, 3, 1, 1, "float16", True, False),
    "fp32_nchw_32x256x56x56": (32, 256, 56, 56, 256, 3, 3, 1, 1, "float32", False, False),
    "tf32_nhwc_32x256x56x56": (32, 256, 56, 56, 256, 3, 3, 1, 1, "float32", True, True),
    "fp16_nhwc_32x256x56x56": (32, 256, 56, 56, 256, 3, 3, 1, 1, "float16", True, False),
    "bf16_nhwc_32x256x56x56": (32, 256, 56, 56, 256, 3, 3, 1, 1, "bfloat16", True, False),
    "fp16_nhwc_128x3x224x224_7x7s2": (128, 3, 224, 224, 64, 7, 7, 3, 2, "float16", True, False),
}


def torch_cudnn_dir():
    """The directory of PyTorch's own cuDNN (pip wheel nvidia-cudnn-cu*), found without importing
    torch (which must not touch the GPU before the gpucheck children ran)."""
    import importlib.util
    spec = importlib.util.find_spec("nvidia.cudnn")
    if spec is None or not spec.submodule_search_locations:
        return None
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    return lib if os.path.isdir(lib) else None


def run_child(gpucheck, mode, args, timeout=300, library_dir=None):
    """Run one gpucheck child and return its JSON (read from the result pipe)."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, GPUCHECK_RESULT_FD=str(write_fd))
    if library_dir:
        env["LD_LIBRARY_PATH"] = library_dir + ":" + env.get("LD_LIBRARY_PATH", "")
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
    return json.loads(b"".join(chunks))


def metrics_of(payload):
    return {m["name"]: m["value"] for m in payload.get("metrics", [])}


def timed(torch, fn, repeats=20, inner=1):
    """Median milliseconds per call of fn, with CUDA events."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def torch_figures(torch, device, copy_bytes, pageable_bytes, d2d_bytes, relu_elements, labels):
    dev = torch.device("cuda", device)
    torch.cuda.set_device(dev)
    out = {}
    n = copy_bytes // 4
    pinned = torch.empty(n, dtype=torch.float32, pin_memory=True).fill_(1.0)
    pageable = torch.ones(pageable_bytes // 4, dtype=torch.float32)
    d = torch.empty(n, dtype=torch.float32, device=dev)
    d_pageable = d[: pageable_bytes // 4]
    gb = copy_bytes / 1e9
    out["h2d_gbps"] = gb / (timed(torch, lambda: d.copy_(pinned, non_blocking=True)) / 1e3)
    out["d2h_gbps"] = gb / (timed(torch, lambda: pinned.copy_(d, non_blocking=True)) / 1e3)
    gb_pageable = pageable_bytes / 1e9
    out["h2d_pageable_gbps"] = gb_pageable / (
        timed(torch, lambda: d_pageable.copy_(pageable), repeats=5) / 1e3)
    out["d2h_pageable_gbps"] = gb_pageable / (
        timed(torch, lambda: pageable.copy_(d_pageable), repeats=5) / 1e3)
    del pinned, pageable, d, d_pageable
    src = torch.empty(d2d_bytes // 4, dtype=torch.float32, device=dev).fill_(2.0)
    dst = torch.empty_like(src)
    out["d2d_gbps"] = (d2d_bytes / 1e9) / (timed(torch, lambda: dst.copy_(src), inner=8) / 1e3)
    del src, dst
    x = torch.randn(relu_elements, device=dev)
    ms = timed(torch, lambda: torch.nn.functional.relu(x), inner=8)
    out["relu_fp32_gbps"] = 2 * relu_elements * 4 / 1e9 / (ms / 1e3)
    del x
    torch.backends.cudnn.benchmark = True
    for label in labels:
        if label not in CONV_SHAPES:
            continue
        n_, c, h, w, k, r, s, pad, stride, dtype, channels_last, tf32 = CONV_SHAPES[label]
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        dt = getattr(torch, dtype)
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        xin = torch.randn(n_, c, h, w, device=dev, dtype=dt).to(memory_format=fmt)
        conv = torch.nn.Conv2d(c, k, (r, s), stride=stride, padding=pad, bias=False)
        conv = conv.to(device=dev, dtype=dt).to(memory_format=fmt)
        with torch.no_grad():
            ms = timed(torch, lambda: conv(xin), repeats=10, inner=4)
        p = (h + 2 * pad - r) // stride + 1
        q = (w + 2 * pad - s) // stride + 1
        out["conv_" + label + "_tflops"] = 2 * n_ * k * c * r * s * p * q / (ms / 1e3) / 1e12
        del xin, conv
    return out


def wall_times(cmd, runs=3):
    times = []
    for _ in range(runs):
        start = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.monotonic() - start)
    return times


TARGETS = {  # metric -> (minimum gpucheck/PyTorch ratio, wording)
    "h2d_gbps": (0.97, "within 3%"),
    "d2h_gbps": (0.97, "within 3%"),
    "d2d_gbps": (0.95, "within 5%"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpucheck", default="gpucheck", help="path to the gpucheck binary")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()

    bandwidth = run_child(args.gpucheck, "gpu-bandwidth", [str(args.device)])
    cudnn = run_child(args.gpucheck, "gpu-cudnn", [str(args.device), "full"])
    ours = metrics_of(bandwidth)
    ours.update(metrics_of(cudnn))
    # The same child on PyTorch's own cuDNN copy: separates the library version from our code.
    same_dir = torch_cudnn_dir()
    same = {}
    same_version = None
    if same_dir:
        same_payload = run_child(args.gpucheck, "gpu-cudnn", [str(args.device), "full"],
                                 library_dir=same_dir)
        same = metrics_of(same_payload)
        same_version = same_payload.get("cudnn", {}).get("version")
    sizes = bandwidth.get("sizes", {})
    labels = [c["label"] for c in cudnn.get("convolutions", []) if "found" in c]
    relu_note = next((m["note"] for m in cudnn.get("metrics", []) if m["name"] == "relu_fp32_gbps"), "")
    relu_elements = int(relu_note.split(" over ")[1].split(" Mi")[0]) * MIB if " over " in relu_note else 64 * MIB

    import torch  # imported late: the gpucheck children run before PyTorch touches the GPU

    theirs = torch_figures(torch, args.device, sizes.get("host_copy_bytes", 64 * MIB),
                           sizes.get("pageable_bytes", sizes.get("host_copy_bytes", 64 * MIB)),
                           sizes.get("d2d_bytes", 256 * MIB), relu_elements, labels)

    standard = wall_times([args.gpucheck])
    quick = wall_times([args.gpucheck, "--quick"])

    rows = []
    for name in ["h2d_gbps", "d2h_gbps", "h2d_pageable_gbps", "d2h_pageable_gbps", "d2d_gbps",
                 "relu_fp32_gbps"] + ["conv_" + l + "_tflops" for l in labels]:
        if name not in ours or name not in theirs:
            continue
        ratio = ours[name] / theirs[name] if theirs[name] else float("nan")
        target = TARGETS.get(name)
        if name.startswith("conv_"):
            target = (0.95, ">= 95%")
        verdict = "" if target is None else ("met" if ratio >= target[0] else "MISSED")
        unit = "TFLOP/s" if name.endswith("tflops") else "GB/s"
        same_text = f"{same[name]:.1f} ({same[name] / theirs[name]:.3f})" if name in same else "-"
        rows.append(f"| {name} | {ours[name]:.1f} | {same_text} | {theirs[name]:.1f} | {unit} | "
                    f"{ratio:.3f} | {target[1] if target else '-'} {verdict} |")
    algos = []
    for conv in cudnn.get("convolutions", []):
        if "found" in conv:
            graph = conv.get("graph", {})
            if "ms" in graph:
                notes = ", ".join(graph.get("numerical_notes", []))
                graph_text = (f"{graph['knobs']} (mode {graph['mode']} #{graph['rank']}"
                              f"{'; ' + notes if notes else ''}) {graph['ms']:.3f} ms; "
                              f"{len(graph.get('screened', []))} of {graph.get('offered')} configs ran")
            elif "error" in graph:
                graph_text = f"{graph['error']['call']}: {graph['error']['name']}"
            else:
                graph_text = "not available"
            algos.append(f"| {conv['label']} | {conv['heuristic']['algo']} {conv['heuristic']['ms']:.3f} ms | "
                         f"{conv['found']['algo']} {conv['found']['ms']:.3f} ms | {graph_text} | "
                         f"{conv.get('best', {}).get('api', 'legacy')} |")

    device = cudnn.get("device", {})
    lines = [
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {device.get('name')} "
        f"(driver API {device.get('driver')}), {platform.node()}; PyTorch {torch.__version__}, "
        f"cuDNN for gpucheck {cudnn.get('cudnn', {}).get('version')} ({cudnn.get('cudnn', {}).get('path')}), "
        f"for PyTorch {torch.backends.cudnn.version()}.",
        f"Command: python3 bench/compare.py --gpucheck {args.gpucheck}",
        "",
        f"Column 'gpucheck, PyTorch's cuDNN' reruns gpucheck's cuDNN child with LD_LIBRARY_PATH={same_dir} "
        f"(cuDNN {same_version}); its ratio is to PyTorch.",
        "",
        "| metric | gpucheck | gpucheck, PyTorch's cuDNN (ratio) | PyTorch | unit | ratio | target |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "| convolution | legacy heuristic | legacy timed best (FindEx) | graph API timed best | reported |",
        "|---|---|---|---|---|",
        *algos,
        "",
        f"cuDNN child timeline (ms since start): "
        f"{', '.join(f'{s} {t:.0f}' for s, t in cudnn.get('timeline_ms', []))}.",
        f"Bandwidth child timeline (ms since start): "
        f"{', '.join(f'{s} {t:.0f}' for s, t in bandwidth.get('timeline_ms', []))}.",
        "",
        f"Whole run, start to exit: `gpucheck` {' / '.join(f'{t:.2f}' for t in standard)} s; "
        f"`gpucheck --quick` {' / '.join(f'{t:.2f}' for t in quick)} s.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
