#!/bin/sh
# node-problem-detector custom plugin (deploy/k8s/npd-gpucheck-monitor.json; docs/fleet.md,
# "Kubernetes"): sets the node condition GPUProblem from what the gpucheck DaemonSet found.
# NPD's plugin protocol: exit 0 OK (condition False), 1 problem (condition True), anything else
# unknown; the first line of stdout is the condition's message.
#
# It runs nothing on the GPU and needs no GPU access: it reads the one-line reason that the
# DaemonSet (deploy/k8s/daemonset.yaml) writes every hour with gpucheck --format reason to the
# node's /var/log/gpucheck/reason, which NPD's own DaemonSet sees through its /var/log mount.
# An empty file: nothing drains (exit 0). A line "gpucheck: CODE GPU N (SERIAL), ...": a finding
# that means a broken node (docs/findings.md, "Drain"; exit 1). A line "gpucheck-blind: ...":
# gpucheck could not see the GPUs or the driver (no driver libraries in its pod, no device
# nodes): unknown (exit 3), never OK. No file, or one older than GPUCHECK_MAX_AGE_S (default 3
# hours: the DaemonSet stopped, or gpucheck could not run): unknown (exit 3), never a problem.
reason_file="${GPUCHECK_REASON_FILE:-/var/log/gpucheck/reason}"
max_age_s="${GPUCHECK_MAX_AGE_S:-10800}"

if [ ! -f "$reason_file" ]; then
  echo "gpucheck has not reported on this node ($reason_file is missing)"
  exit 3
fi
age_s=$(( $(date +%s) - $(stat -c %Y "$reason_file") ))
if [ "$age_s" -gt "$max_age_s" ]; then
  echo "gpucheck's last report is ${age_s}s old (over ${max_age_s}s): is the DaemonSet running?"
  exit 3
fi
line=$(head -n 1 "$reason_file" | tr -cd '\040-\176' | cut -c 1-200)
case "$line" in
  "")
    echo "gpucheck finds no finding that means a broken GPU or driver"
    exit 0
    ;;
  gpucheck:*)
    echo "$line"
    exit 1
    ;;
  gpucheck-blind:*)
    echo "$line"
    exit 3
    ;;
  *)
    echo "unexpected content in $reason_file"
    exit 3
    ;;
esac
