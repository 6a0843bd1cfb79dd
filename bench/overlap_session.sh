#!/usr/bin/env bash
# One device call for overlapping runs on a multi-GPU machine (docs/performance.md, "Overlapping
# runs"): the GPU suite, the overlap benchmark (N runs at once, then beside a tenant), the engine
# benchmark, the critical path by GPU count (bench/critical_path.py: 1 up to every GPU, projected
# to eight), a traced run, and, given a second binary (the build before), the same N runs at once
# with it under a time limit. The logs come back as one archive, $OUT/session.tar.gz (the device
# tool returns at most eight files), beside the summary, $OUT/summary.txt.
#
#   bench/overlap_session.sh NEW_GPUCHECK [OLD_GPUCHECK] [AT_ONCE]
set -uo pipefail
new="$1"
old="${2:-}"
at_once="${3:-8}"
final="${OUT:-out}"
out="$(mktemp -d)"
mkdir -p "$final"
export NCCL_NVLS_ENABLE=0
nvidia-smi -L | tee "$out/gpus.txt"
nvidia-smi topo -m >>"$out/gpus.txt" 2>&1
if [ -n "$old" ]; then
  # The build before: N runs at once, each stopped at 60 s (it could hang for good).
  start=$(date +%s)
  pids=()
  for i in $(seq "$at_once"); do
    timeout -s KILL 60 "$old" --json >"$out/old_$i.json" 2>"$out/old_$i.err" &
    pids+=($!)
  done
  codes=()
  for p in "${pids[@]}"; do
    wait "$p"
    codes+=($?)
  done
  echo "old build, $at_once at once: exits ${codes[*]} (137: killed at 60 s) in" \
    "$(($(date +%s) - start)) s" | tee "$out/old_summary.txt"
  grep -c '"gpu.other_run"' "$out"/old_*.json | tr '\n' ' ' >>"$out/old_summary.txt"
  echo >>"$out/old_summary.txt"
fi
python3 tests/gpu/gpu_checks_test.py --gpucheck "$new" >"$out/gpu_suite.log" 2>&1
echo "GPU suite: exit $?" | tee "$out/suite_summary.txt"
python3 bench/overlap.py --gpucheck "$new" --at-once "$at_once" --rounds "${OVERLAP_ROUNDS:-2}" \
  --json-out "$out/overlap.json" >"$out/overlap.log" 2>&1
echo "overlap: exit $?" >>"$out/suite_summary.txt"
python3 bench/engine.py --gpucheck "$new" --runs 5 --json-out "$out/engine.json" \
  >"$out/engine.log" 2>&1
echo "engine: exit $?" >>"$out/suite_summary.txt"
mkdir -p "$out/critical_path"
python3 bench/critical_path.py --gpucheck "$new" --runs 3 --traces "$out/critical_path" \
  >"$out/critical_path.txt" 2>&1
GPUCHECK_TRACE=1 "$new" >"$out/trace_run.txt" 2>"$out/trace.txt"
cat "$out/suite_summary.txt" "$out/critical_path.txt"
tail -4 "$out/overlap.log"
python3 - "$out/engine.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
floor = r.get("cuinit_floor_s")
print(f"engine: standard {r['standard_s']:.2f} s {r['standard_all_s']}, quick {r['quick_s']:.2f} s, "
      f"cuInit floor {floor if floor is None else round(floor, 2)} s, "
      f"nvidia-smi {r['nvidia_smi_s']:.2f} s, peak MiB {r['peak_gpu_mib_max']}")
EOF
cat "$out"/old_summary.txt "$out/suite_summary.txt" "$out/critical_path.txt" \
  >"$final/summary.txt" 2>/dev/null
tail -4 "$out/overlap.log" >>"$final/summary.txt"
tar czf "$final/session.tar.gz" -C "$out" .
