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

for node in $nodes; do
  # A Job ends Complete (exit 0) or Failed (exit 1: a check or gate failed); wait for either.
  kubectl -n gpucheck wait --for=condition=complete --timeout=15m "job/gpucheck-$node" ||
    kubectl -n gpucheck wait --for=condition=failed --timeout=1s "job/gpucheck-$node" || true
  kubectl -n gpucheck logs "job/gpucheck-$node" > "$reports/$node.json" || true
done

gpucheck merge "$reports"
