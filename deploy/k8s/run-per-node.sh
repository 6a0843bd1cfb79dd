#!/usr/bin/env bash
# Run the full gpucheck Job (job-per-node.yaml) on every GPU node, wait for them, collect each
# node's JSON report from the Job's log and merge them into one table (docs/fleet.md).
# Usage: deploy/k8s/run-per-node.sh [REPORT_DIR]   (needs kubectl and gpucheck on this machine)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reports="${1:-gpucheck-reports}"
mkdir -p "$reports"

kubectl get namespace gpucheck >/dev/null 2>&1 || kubectl create namespace gpucheck
kubectl apply -f "$here/configmap.yaml"

nodes=$(kubectl get nodes -l nvidia.com/gpu.present=true -o jsonpath='{.items[*].metadata.name}')
for node in $nodes; do
  gpus=$(kubectl get node "$node" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
  sed -e "s/gpu-node-0/$node/g" -e "s/nvidia.com\/gpu: 1 /nvidia.com\/gpu: ${gpus:-1} /" \
    "$here/job-per-node.yaml" | kubectl apply -f -
done

# Wait for every Job at once until each has ended, Complete (exit 0) or Failed (exit 1: a check
# or gate failed; a Failed Job never completes), within one deadline for them all
# (GPUCHECK_WAIT_S, 15 minutes): a broken node costs no more than a healthy one.
deadline=$(($(date +%s) + ${GPUCHECK_WAIT_S:-900}))
pending=" $nodes "
while :; do
  states=$(kubectl -n gpucheck get jobs -o jsonpath='{range .items[*]}{.metadata.name}{"="}{range .status.conditions[?(@.status=="True")]}{.type}{","}{end}{"\n"}{end}' || true)
  while IFS='=' read -r job conditions; do
    case ",$conditions" in
    *,Complete,* | *,Failed,*) pending="${pending/ ${job#gpucheck-} / }" ;;
    esac
  done <<<"$states"
  [ -z "${pending// /}" ] && break
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "run-per-node: still running at the deadline, reported as they are:$pending" >&2
    break
  fi
  sleep "${GPUCHECK_POLL_S:-5}"
done
for node in $nodes; do
  kubectl -n gpucheck logs "job/gpucheck-$node" >"$reports/$node.json" || true
done

gpucheck merge "$reports"
