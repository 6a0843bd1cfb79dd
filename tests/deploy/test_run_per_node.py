#!/usr/bin/env python3
"""deploy/k8s/run-per-node.sh waits for every node's Job at once, Complete or Failed, within one
deadline, and collects every node's report: a fake kubectl (Jobs that complete, fail or never
end, each at its own time) and a fake gpucheck that records the merge.

A Failed Job never becomes Complete: waiting for "complete" one Job after another cost the whole
timeout (15 minutes) per broken node, and broken nodes are what the script looks for.

Usage: test_run_per_node.py --source REPO_ROOT
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

FAKE_KUBECTL = r'''#!/usr/bin/env python3
import json, os, re, sys, time
state_dir = os.environ["FAKE_KUBE_DIR"]
plan = json.load(open(os.path.join(state_dir, "plan.json")))  # node -> [seconds, "Complete"|"Failed"|null]
created_file = os.path.join(state_dir, "created.json")
created = json.load(open(created_file)) if os.path.exists(created_file) else {}
args = [a for a in sys.argv[1:]]
if args[:2] == ["-n", "gpucheck"]:
    args = args[2:]

def condition(node):
    if node not in created:
        return None
    after, end = plan[node]
    return end if end is not None and time.time() - created[node] >= after else None

if args[:2] == ["get", "namespace"]:
    sys.exit(0)
if args[:1] == ["apply"]:
    if args[-1] == "-":
        text = sys.stdin.read()
        for name in re.findall(r"name: gpucheck-([a-z0-9-]+)", text):
            if name in plan:  # the Job's name (not the ConfigMap's it mounts)
                created.setdefault(name, time.time())
        json.dump(created, open(created_file, "w"))
    sys.exit(0)
if args[:2] == ["get", "nodes"]:
    print(" ".join(plan))
    sys.exit(0)
if args[:2] == ["get", "node"]:
    print("8")
    sys.exit(0)
if args[:2] == ["get", "jobs"]:
    for node in created:
        end = condition(node)
        print(f"gpucheck-{node}=" + (f"{end}," if end else ""))
    sys.exit(0)
if args[:1] == ["wait"]:
    # kubectl wait --for=condition=X --timeout=T job/gpucheck-NODE: blocks until X or T.
    wanted = next(a.split("=", 2)[2] for a in args if a.startswith("--for=condition="))
    timeout = next(a.split("=", 1)[1] for a in args if a.startswith("--timeout="))
    seconds = float(timeout[:-1]) * {"s": 1, "m": 60, "h": 3600}[timeout[-1]]
    node = args[-1].split("/gpucheck-", 1)[1]
    until = time.time() + seconds
    while time.time() < until:
        end = condition(node)
        if end is not None and end.lower() == wanted.lower():
            sys.exit(0)
        time.sleep(0.05)
    sys.exit(1)
if args[:1] == ["logs"]:
    node = args[-1].split("/gpucheck-", 1)[1]
    print(json.dumps({"node": node, "ended": condition(node)}))
    sys.exit(0)
sys.exit(2)
'''

FAKE_GPUCHECK = r'''#!/bin/sh
echo "$@" >> "$FAKE_KUBE_DIR/gpucheck-calls"
'''

PROBLEMS = []


def check(ok, text):
    if not ok:
        PROBLEMS.append(text)


def run_case(source, name, plan, wait_s, limit_s):
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(bin_dir)
        for tool, body in (("kubectl", FAKE_KUBECTL), ("gpucheck", FAKE_GPUCHECK)):
            path = os.path.join(bin_dir, tool)
            with open(path, "w") as f:
                f.write(body)
            os.chmod(path, 0o755)
        with open(os.path.join(tmp, "plan.json"), "w") as f:
            json.dump(plan, f)
        reports = os.path.join(tmp, "reports")
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                   FAKE_KUBE_DIR=tmp, GPUCHECK_WAIT_S=str(wait_s), GPUCHECK_POLL_S="0.2")
        start = time.monotonic()
        try:
            done = subprocess.run(["bash", os.path.join(source, "deploy/k8s/run-per-node.sh"),
                                   reports], env=env, capture_output=True, text=True,
                                  timeout=limit_s)
        except subprocess.TimeoutExpired:
            check(False, f"{name}: still waiting after {limit_s} s")
            return None
        took = time.monotonic() - start
        check(done.returncode == 0, f"{name}: exit {done.returncode}: {done.stderr}")
        check(took < limit_s, f"{name}: took {took:.1f} s")
        for node, (_, end) in plan.items():
            path = os.path.join(reports, f"{node}.json")
            check(os.path.exists(path), f"{name}: no report for {node}")
            if os.path.exists(path):
                with open(path) as f:
                    report = json.load(f)
                if end is not None:
                    check(report.get("ended") == end, f"{name}: {node}'s report taken before it ended")
        calls_path = os.path.join(tmp, "gpucheck-calls")
        calls = open(calls_path).read() if os.path.exists(calls_path) else ""
        check(calls.strip() == f"merge {reports}", f"{name}: gpucheck called as {calls!r}")
        return took, done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True)
    source = parser.parse_args().source
    # Two broken nodes and a healthy one, all ended well within the deadline: the script ends with
    # the last of them, not at one timeout per Failed Job.
    result = run_case(source, "broken nodes",
                      {"gpu-a": [1.0, "Complete"], "gpu-b": [0.4, "Failed"],
                       "gpu-c": [0.8, "Failed"]}, wait_s=60, limit_s=20)
    if result:
        took, stderr = result
        check(took < 8, f"broken nodes: took {took:.1f} s for Jobs that ended within 1 s")
        check("deadline" not in stderr, f"broken nodes: said {stderr!r}")
    # A Job that never ends: the one deadline ends the wait for all, which says whose.
    result = run_case(source, "a Job that never ends",
                      {"gpu-a": [0.3, "Complete"], "gpu-b": [0.0, None]}, wait_s=2, limit_s=20)
    if result:
        took, stderr = result
        # The deadline counts whole seconds (date +%s): between 1 and 2 s from the start.
        check(1 <= took < 10, f"a Job that never ends: took {took:.1f} s against a 2 s deadline")
        check("gpu-b" in stderr and "gpu-a" not in stderr.split("deadline", 1)[-1],
              f"a Job that never ends: said {stderr!r}")
    for text in PROBLEMS:
        print(text)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
