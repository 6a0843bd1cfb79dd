#!/usr/bin/env python3
"""The alert rules of docs/prometheus.md, evaluated against gpucheck's exposition of recorded
snapshots (issue 36 item 1): on the degraded node the hardware alerts fire, naming its GPU; on the
healthy 8-GPU node none does. The rules are read from the doc's YAML block, so the doc cannot drift
from what is tested. An expression is `FAMILY{MATCHERS} OP NUMBER` (what every rule there is but
the staleness one, `time() - gpucheck_run_timestamp_seconds > N`, checked with the report's own
time), or `FAMILY OP FAMILY` (a figure against its expected floor, one to one on all labels,
evaluated against the renderer's goldens, which carry measured figures); prometheus_client
parses the exposition.

    check_alerts.py --source DIR --gpucheck BIN
"""
import argparse
import os
import re
import subprocess
import sys

import yaml
from prometheus_client.parser import text_string_to_metric_families

EXPR = re.compile(r'^(?P<name>[a-z][a-z0-9_]*)(\{(?P<matchers>[^}]*)\})?\s*(?P<op>==|!=|>=|<=|>|<)\s*'
                  r'(?P<value>[0-9.e+-]+)$')
MATCHER = re.compile(r'(?P<label>[A-Za-z_]+)\s*(?P<op>=~|!=|=)\s*"(?P<value>[^"]*)"')
# `FAMILY OP FAMILY`: two families compared series by series, one to one on all their labels.
VECTORS = re.compile(r'^(?P<left>[a-z][a-z0-9_]*)\s*(?P<op>==|!=|>=|<=|>|<)\s*(?P<right>[a-z][a-z0-9_]*)$')
OPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, ">": lambda a, b: a > b,
       "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}


def rules_of(doc):
    text = open(doc, encoding="utf-8").read()
    block = re.search(r"## Alerts\n.*?```yaml\n(.*?)```", text, re.S)
    if not block:
        sys.exit(f"{doc}: no ```yaml block under '## Alerts'")
    return [r for g in yaml.safe_load(block.group(1))["groups"] for r in g["rules"]]


def samples_of(text):
    out = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.append((s.name, s.labels, s.value))
    return out


def firing(rule, samples):
    """The label sets for which the rule's expression holds."""
    expr = rule["expr"].strip()
    if expr.startswith("time() - "):
        return []  # the report's own time is now: never stale here (its clock test is below)
    v = VECTORS.match(expr)
    if v:
        right = {tuple(sorted(l.items())): x for n, l, x in samples if n == v["right"]}
        return [l for n, l, x in samples if n == v["left"] and
                tuple(sorted(l.items())) in right and
                OPS[v["op"]](x, right[tuple(sorted(l.items()))])]
    m = EXPR.match(expr)
    if not m:
        raise ValueError(f"alert {rule['alert']}: expression this test cannot evaluate: {expr}")
    matchers = [(x["label"], x["op"], x["value"]) for x in MATCHER.finditer(m["matchers"] or "")]
    hits = []
    for name, labels, value in samples:
        if name != m["name"]:
            continue
        ok = True
        for label, op, want in matchers:
            got = labels.get(label, "")
            ok = ok and (got == want if op == "=" else got != want if op == "!="
                         else re.fullmatch(want, got) is not None)
        if ok and OPS[m["op"]](value, float(m["value"])):
            hits.append(labels)
    return hits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--gpucheck", required=True)
    args = parser.parse_args()
    rules = rules_of(os.path.join(args.source, "docs", "prometheus.md"))
    failures = []

    def exposition(snapshot):
        r = subprocess.run([args.gpucheck, "--from-snapshot",
                            os.path.join(args.source, "tests", "snapshots", snapshot + ".json"),
                            "--format", "prometheus"], capture_output=True, text=True,
                           env={**os.environ, "SOURCE_DATE_EPOCH": "1795262400"})
        if r.returncode not in (0, 1):
            sys.exit(f"gpucheck on {snapshot}: exit {r.returncode}: {r.stderr}")
        return samples_of(r.stdout)

    healthy = exposition("h100x8_healthy")
    for rule in rules:
        hits = firing(rule, healthy)
        if hits:
            failures.append(f"{rule['alert']} fires on the healthy 8-GPU node: {hits[:2]}")
    # The degraded node: GPU 1's uncorrected ECC errors and pending remap, GPU 2's x4 link, GPU
    # 3's thermal slowdown at 91 C; every hardware alert fires, each on its GPU.
    degraded = exposition("degraded_hw")
    expected = {"GpuUncorrectedEcc": "1", "GpuRowRemapPending": "1", "GpuPcieLinkDegraded": "2",
                "GpuHot": "3", "GpuCheckFailed": None}
    by_name = {r["alert"]: r for r in rules}
    for alert, gpu in expected.items():
        if alert not in by_name:
            failures.append(f"docs/prometheus.md has no alert {alert}")
            continue
        hits = firing(by_name[alert], degraded)
        if not hits:
            failures.append(f"{alert} does not fire on the degraded node")
        elif gpu is not None and {h.get("gpu") for h in hits} != {gpu}:
            failures.append(f"{alert} fires for GPUs {sorted(h.get('gpu') for h in hits)}, not {gpu}")
        elif gpu is not None and not all(h.get("UUID") and h.get("Hostname") for h in hits):
            failures.append(f"{alert}: its series lack dcgm-exporter's UUID or Hostname: {hits}")
    # A figure below its expected floor: the renderer's goldens carry measured figures (a replay
    # measures nothing): GPU 2's x4 link copies 13.9 GB/s against 40.3; the H200's 55.5 passes.
    def golden(name):
        with open(os.path.join(args.source, "tests", "golden", name + ".prom"), encoding="utf-8") as f:
            return samples_of(f.read())
    if "GpuHostCopiesBelowFloor" not in by_name:
        failures.append("docs/prometheus.md has no alert GpuHostCopiesBelowFloor")
    else:
        rule = by_name["GpuHostCopiesBelowFloor"]
        hits = firing(rule, golden("degraded_hw"))
        if {h.get("gpu") for h in hits} != {"2"}:
            failures.append(f"GpuHostCopiesBelowFloor fires for {hits} on degraded_hw, not GPU 2")
        if firing(rule, golden("h200_healthy")):
            failures.append("GpuHostCopiesBelowFloor fires on the healthy H200")
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(rules)} rules, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
