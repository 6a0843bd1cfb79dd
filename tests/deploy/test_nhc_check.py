#!/usr/bin/env python3
"""deploy/slurm/nhc/gpucheck.nhc as LBNL NHC runs it: sourced by bash, with NHC's `die` and `log`
stubbed to record their calls, and `check_gpucheck` called with the real gpucheck replaying the
recorded snapshots (a wrapper adds --from-snapshot FILE to the check's own arguments).

A broken node fails with gpucheck's reason line; its healthy twin passes; a node where gpucheck
sees no driver is logged and passes unless -B is given; gpucheck unable to run is logged and
passes; -c passes the gates; the report is left in the log directory.

Usage: test_nhc_check.py --source REPO_ROOT --gpucheck BINARY
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HARNESS = r"""
die() { echo "DIE $1 $2" >> "$NHC_CALLS"; }
log() { echo "LOG $*" >> "$NHC_CALLS"; }
source "$NHC_CHECK"
check_gpucheck "$@"
echo "RETURN $?" >> "$NHC_CALLS"
"""

FAILURES = []


def case(name, source, gpucheck, snapshot, args=(), expect_return=0, expect=(), exit_code=None,
         report=True):
    """exit_code: a gpucheck that only exits so; report: last.json must be left."""
    with tempfile.TemporaryDirectory() as work:
        wrapper = os.path.join(work, "gpucheck")
        with open(wrapper, "w") as f:
            if exit_code is not None:
                f.write(f"#!/bin/sh\necho 'gpucheck: broken' >&2\nexit {exit_code}\n")
            else:
                f.write(f'#!/bin/sh\nexec "{gpucheck}" --from-snapshot "{snapshot}" "$@"\n')
        os.chmod(wrapper, 0o755)
        calls = os.path.join(work, "calls")
        logs = os.path.join(work, "log")
        env = dict(os.environ, NHC_CALLS=calls, NHC_CHECK=os.path.join(
            source, "deploy/slurm/nhc/gpucheck.nhc"), GPUCHECK_NHC_BINARY=wrapper,
                   GPUCHECK_NHC_LOG_DIR=logs)
        subprocess.run(["bash", "-c", HARNESS, "harness", *args], env=env, check=False,
                       stdin=subprocess.DEVNULL)
        lines = open(calls).read().splitlines() if os.path.exists(calls) else []
        problems = []
        if f"RETURN {expect_return}" not in lines:
            problems.append(f"returned {lines[-1:] or 'nothing'}, want {expect_return}")
        for prefix in expect:
            if not any(line.startswith(prefix) for line in lines):
                problems.append(f"no call starting {prefix!r}")
        if not expect_return and any(line.startswith("DIE") for line in lines):
            problems.append("die was called")
        if report:
            path = os.path.join(logs, "last.json")
            if not os.path.exists(path):
                problems.append("no last.json report")
            else:
                json.load(open(path))
        for p in problems:
            FAILURES.append(f"{name}: {p} (calls: {lines})")
        print(f"{'FAIL' if problems else 'ok  '} {name}: {lines}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--gpucheck", required=True)
    args = parser.parse_args()
    snaps = os.path.join(args.source, "tests/snapshots")
    g = args.gpucheck
    case("healthy node passes", args.source, g, f"{snaps}/h100x8_healthy.json")
    case("broken node fails with gpucheck's reason", args.source, g,
         f"{snaps}/degraded_hw.json", expect_return=1,
         expect=("DIE 1 gpucheck: gpu.ecc_uncorrected GPU 1",))
    case("no driver: logged, node left as it is", args.source, g, f"{snaps}/no_driver.json",
         expect=("LOG check_gpucheck: gpucheck-blind:",))
    case("no driver with -B fails", args.source, g, f"{snaps}/no_driver.json", args=("-B",),
         expect_return=1, expect=("DIE 1 gpucheck-blind:",))
    case("gpucheck cannot run: logged, passes", args.source, g, f"{snaps}/degraded_hw.json",
         exit_code=2, expect=("LOG check_gpucheck: gpucheck could not run (exit 2)",),
         report=False)
    # Gates that ignore the broken node's codes make it pass (-c is passed through).
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as gates:
        gates.write('ignore = ["gpu.ecc_uncorrected", "gpu.row_remap_pending"]\n')
    try:
        case("-c gates that ignore its codes pass the broken node", args.source, g,
             f"{snaps}/degraded_hw.json", args=("-c", gates.name))
    finally:
        os.unlink(gates.name)
    case("unknown option fails loudly", args.source, g, f"{snaps}/h100x8_healthy.json",
         args=("-x",), expect_return=1, expect=("DIE 1 check_gpucheck: unknown option -x",),
         report=False)
    if FAILURES:
        print("\n".join(FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
