#!/usr/bin/env python3
"""gpucheck's Prometheus output read by a real parser (Debian's python3-prometheus-client):
the golden files of every recorded snapshot (tests/golden/*.prom) and the binary's own output
for every recorded snapshot (tests/snapshots/*.json), on stdout and through --output
prometheus:FILE and a .prom name (the textfile collector's file, written atomically)."""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    sys.exit(f"{sys.executable} has no prometheus_client: apt-get install python3-prometheus-client "
             "(scripts/install-deps.sh)")

STATUSES = {"pass", "warn", "fail", "skip", "error"}
NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
PROBLEMS = []


def problem(where, text):
    PROBLEMS.append(f"{where}: {text}")


def check_text(where, text, gpus=None):
    """Parse `text` and check what the parser alone does not: one TYPE per family, gauges only,
    gpucheck_ names, one status set per check, the GPU series."""
    types = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    names = [name for name, _ in types]
    if len(names) != len(set(names)):
        problem(where, "a family has two TYPE lines")
    for name, kind in types:
        if kind != "gauge":
            problem(where, f"{name} is a {kind}")
        if not NAME.match(name) or not name.startswith("gpucheck_"):
            problem(where, f"bad family name {name!r}")
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as error:  # the parser's own exceptions are ValueError and friends
        problem(where, f"prometheus_client cannot parse it: {error}")
        return
    by_name = {family.name: family for family in families}
    if set(by_name) != set(names):
        problem(where, f"parsed families {sorted(set(by_name) ^ set(names))} differ from TYPE")
    for required in ("gpucheck_info", "gpucheck_status", "gpucheck_check_status",
                     "gpucheck_findings", "gpucheck_results", "gpucheck_gpus",
                     "gpucheck_run_timestamp_seconds", "gpucheck_run_duration_seconds"):
        if required not in by_name:
            problem(where, f"no {required}")
    if "gpucheck_check_status" not in by_name:
        return
    states = {}
    for sample in by_name["gpucheck_check_status"].samples:
        labels = dict(sample.labels)
        status = labels.pop("status", None)
        if status not in STATUSES or sample.value != 1.0:
            problem(where, f"bad status series {sample}")
        states.setdefault(tuple(sorted(labels.items())), {})[status] = sample.value
    # One series per result, its status a label (issue 36 item 1: no series of 0 beside it).
    for key, values in states.items():
        if len(values) != 1:
            problem(where, f"check {dict(key)} has statuses {values}")
    if sum(s.value for s in by_name["gpucheck_status"].samples) != 1:
        problem(where, "the verdict is not exactly one status")
    if gpus is not None:
        count = by_name["gpucheck_gpus"].samples[0].value
        if count != len(gpus):
            problem(where, f"gpucheck_gpus {count}, the snapshot has {len(gpus)}")
        info = by_name.get("gpucheck_gpu_info")
        # dcgm-exporter's labels, so that its dashboards and alerts join (issue 36 item 1).
        seen = sorted((s.labels["gpu"], s.labels["UUID"], s.labels["modelName"],
                       s.labels["pci_bus_id"]) for s in (info.samples if info else []))
        wanted = sorted((str(g["index"]), g.get("uuid", ""), g.get("name", ""),
                         g.get("pci_bus_id", "")) for g in gpus)
        if seen != wanted:
            problem(where, f"gpu_info {seen} != snapshot {wanted}")
        for family in families:
            for sample in family.samples:
                if "gpu" in sample.labels and not {"UUID", "modelName", "pci_bus_id",
                                                   "Hostname"} <= set(sample.labels):
                    problem(where, f"{sample.name} has a gpu label without dcgm-exporter's others")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--gpucheck", required=True)
    args = parser.parse_args()
    goldens = sorted((args.source / "tests/golden").glob("*.prom"))
    snapshots = sorted((args.source / "tests/snapshots").glob("*.json"))
    if not goldens or len(goldens) != len(snapshots):
        problem("tests/golden", f"{len(goldens)} .prom goldens for {len(snapshots)} snapshots")
    for golden in goldens:
        text = golden.read_text(encoding="utf-8")
        snapshot = args.source / "tests/snapshots" / (golden.stem + ".json")
        gpus = json.loads(snapshot.read_text())["gpus"] if snapshot.exists() else None
        check_text(str(golden.relative_to(args.source)), text, gpus)
    with tempfile.TemporaryDirectory() as tmp:
        for snapshot in snapshots:
            gpus = json.loads(snapshot.read_text())["gpus"]
            as_file = Path(tmp) / f"{snapshot.stem}.txt"
            as_prom = Path(tmp) / "collector" / f"{snapshot.stem}.prom"
            as_prom.parent.mkdir(exist_ok=True)
            run = subprocess.run(
                [args.gpucheck, "--from-snapshot", str(snapshot), "--format", "prometheus",
                 "--output", f"prometheus:{as_file}", "--output", str(as_prom)],
                capture_output=True, env={**os.environ, "SOURCE_DATE_EPOCH": "1795262400"})
            where = f"gpucheck --from-snapshot {snapshot.name} --format prometheus"
            if run.returncode not in (0, 1):
                problem(where, f"exit {run.returncode}: {run.stderr.decode(errors='replace')}")
                continue
            if run.stderr:
                problem(where, f"wrote to stderr: {run.stderr!r}")
            text = run.stdout.decode("utf-8")
            check_text(where, text, gpus)
            for path in (as_file, as_prom):
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    problem(where, f"{path.name} differs from stdout")
            leftovers = [p.name for p in as_prom.parent.iterdir() if p.suffix != ".prom"]
            if leftovers:
                problem(where, f"temporary files left beside the .prom file: {leftovers}")
            if "gpucheck_run_timestamp_seconds 1795262400" not in text:
                problem(where, "the run timestamp is not SOURCE_DATE_EPOCH's")
            if len(gpus) == 8:
                print(f"{snapshot.name}: 8 GPUs, {text.count(chr(10))} lines parsed")
    for line in PROBLEMS:
        print(line)
    print(f"{len(goldens)} goldens and {len(snapshots)} snapshots checked, "
          f"{len(PROBLEMS)} problem{'s' if len(PROBLEMS) != 1 else ''}")
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
