#!/usr/bin/env python3
"""The critical path of a standard run, by GPU count, and its projection to more GPUs
(docs/performance.md, "The critical path by GPU count").

    python3 bench/critical_path.py --gpucheck build/release/gpucheck [--runs 3] [--counts 1,2]
        [--project 4,8] [--traces DIR]

Runs `--runs` traced standard runs (GPUCHECK_TRACE=1) with the first k GPUs visible for each k
of --counts (default: 1 up to every GPU of the machine), splits each run's wall time into the
stages below from the engine's trace (their sum is the report's time), and prints each stage's
median per k. Stages that grow with the GPUs are fitted to a + b k by least squares over the
counts where they exist, and the run projected to --project GPUs: a fit, not a measurement, and
only as good as the counts it is fitted on (two points fit any line).

Stages, in order along the run:
  start      spawn to the last GPU's context built (every child's cuInit and context: the driver
             takes one process's GPU at a time)
  prepare    to the first host copy's go (compute, streams, the memory pool; cuDNN's lane loading
             its first kernels, which the timed windows wait for)
  copies     each GPU's host copies, one GPU after another
  span wait  to the device-local copies' go: the copies of every GPU at once, and with several
             GPUs the multi-GPU child's NCCL initialisation (they wait for it)
  cudnn      the device-local copies and cuDNN's timed work, every GPU at once
  tail       to the report: the multi-GPU child's peer copies and all-reduce, the report
Beside them (not on the path unless the span wait shows it): the multi-GPU child's contexts and
NCCL's initialisation.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

STAGES = ("start", "prepare", "copies", "span wait", "cudnn", "tail")
BESIDE = ("span contexts", "nccl init")
# Stages that exist only with several GPUs: fitted over those counts alone.
SPANNING = ("span wait", "tail", "span contexts", "nccl init")

ENGINE_GO = re.compile(r"trace \+([\d.]+) GPU engine: go (\S+) on GPU ([\d,]+)")
CHILD_STAGES = re.compile(r"child (gpu-device|gpu-peers) \S+ \S+ stages: (.*)")
STAGE = re.compile(r"(.+?)@\+(\d+)")
REPORT = re.compile(r"trace \+([\d.]+) report built")


def stage_times(text):
    """A child's 'stages:' list as [(name, ms)], in order."""
    return [(m.group(1).strip(), float(m.group(2)))
            for m in STAGE.finditer(text)]


def first(stages, name):
    return next((ms for n, ms in stages if n == name), None)


def split_run(trace):
    """One traced run's stages (ms), or None when the trace lacks what they need."""
    goes = {}
    for m in ENGINE_GO.finditer(trace):
        goes.setdefault(m.group(2), []).append(float(m.group(1)))
    devices, peers = [], None
    for m in CHILD_STAGES.finditer(trace):
        if m.group(1) == "gpu-device":
            devices.append(stage_times(m.group(2)))
        else:
            peers = stage_times(m.group(2))
    report = REPORT.search(trace)
    if not devices or report is None or "bandwidth" not in goes or "local_copies" not in goes:
        return None
    built = [first(d, "load kernels") for d in devices]
    cudnn_end = [first(d, "cudnn: done with the GPU") for d in devices]
    if None in built or None in cudnn_end:
        return None
    start = max(built)
    copies_go = min(goes["bandwidth"])
    copies_end = min(goes.get("copies_together", goes["local_copies"]))
    local_go = min(goes["local_copies"])
    end = max(cudnn_end)
    total = float(report.group(1))
    times = {"start": start, "prepare": copies_go - start, "copies": copies_end - copies_go,
             "span wait": local_go - copies_end, "cudnn": end - local_go, "tail": total - end,
             "total": total, "gpus": len(devices)}
    if peers is not None:
        contexts = (first(peers, "context"), first(peers, "waiting to prepare"))
        init = (first(peers, "nccl init"), first(peers, "nccl initialised"))
        if None not in contexts:
            times["span contexts"] = contexts[1] - contexts[0]
        if None not in init:
            times["nccl init"] = init[1] - init[0]
    return times


def fit(points):
    """Least squares a + b k over [(k, value)]; a constant with one point."""
    if len(points) == 1:
        return points[0][1], 0.0
    ks = [k for k, _ in points]
    vs = [v for _, v in points]
    mk, mv = statistics.mean(ks), statistics.mean(vs)
    var = sum((k - mk) ** 2 for k in ks)
    b = sum((k - mk) * (v - mv) for k, v in zip(ks, vs)) / var if var else 0.0
    return mv - b * mk, b


def gpu_uuids():
    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False).stdout.split()
    return out


def measure(args, uuids):
    """{k: [split_run(...) per run]} for each GPU count."""
    counts = ([int(c) for c in args.counts.split(",")] if args.counts
              else list(range(1, len(uuids) + 1)))
    runs = {}
    for k in counts:
        if k > len(uuids):
            print(f"skip {k} GPUs: the machine has {len(uuids)}", file=sys.stderr)
            continue
        env = dict(os.environ, GPUCHECK_TRACE="1", CUDA_VISIBLE_DEVICES=",".join(uuids[:k]))
        env.setdefault("NCCL_NVLS_ENABLE", "0")
        for r in range(args.runs):
            proc = subprocess.run([args.gpucheck, "--json"], capture_output=True, text=True,
                                  env=env, check=False)
            if args.traces:
                with open(os.path.join(args.traces, f"k{k}_r{r}.trace"), "w") as f:
                    f.write(proc.stderr)
            times = split_run(proc.stderr)
            if times is None:
                print(f"{k} GPUs, run {r}: the trace lacks the stages", file=sys.stderr)
                continue
            runs.setdefault(k, []).append(times)
    return runs


def table(runs, project):
    counts = sorted(runs)
    medians = {k: {s: statistics.median(r[s] for r in runs[k])
                   for s in STAGES + BESIDE + ("total",) if all(s in r for r in runs[k])}
               for k in counts}
    header = ["stage"] + [f"{k} GPU{'s' if k > 1 else ''} (ms)" for k in counts] + ["fit (ms)"]
    header += [f"{n} GPUs (projected)" for n in project]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    projected_total = {n: 0.0 for n in project}
    for s in STAGES + BESIDE:
        points = [(k, medians[k][s]) for k in counts
                  if s in medians[k] and (s not in SPANNING or k >= 2)]
        cells = [f"{medians[k][s]:.0f}" if s in medians[k] else "-" for k in counts]
        if points:
            a, b = fit(points)
            sign = "+" if b >= 0 else "-"
            cells.append(f"{a:.0f} {sign} {abs(b):.0f} N" if len(points) > 1
                         else f"{a:.0f} (one count)")
            for n in project:
                value = a + b * n
                cells.append(f"{value:.0f}")
                if s in STAGES:
                    projected_total[n] += value
        else:
            cells += ["-"] * (1 + len(project))
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    totals = [f"{medians[k]['total']:.0f}" for k in counts] + [""]
    totals += [f"{projected_total[n]:.0f}" for n in project]
    lines.append("| standard run | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpucheck", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--counts", help="GPU counts, e.g. 1,2 (default 1 up to every GPU)")
    parser.add_argument("--project", default="4,8")
    parser.add_argument("--traces", help="a folder to keep each run's trace in")
    args = parser.parse_args()
    uuids = gpu_uuids()
    if not uuids:
        sys.exit("no GPU: nvidia-smi lists none")
    runs = measure(args, uuids)
    if not runs:
        sys.exit("no run could be split into its stages")
    for k in sorted(runs):
        print(f"{k} GPUs: runs {[round(r['total']) for r in runs[k]]} ms")
    print(table(runs, [int(n) for n in args.project.split(",") if n]))


if __name__ == "__main__":
    main()
