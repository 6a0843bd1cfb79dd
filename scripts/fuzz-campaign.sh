#!/usr/bin/env bash
# The fuzzing campaign of docs/fuzzing.md: every fuzz target (tests/fuzz/) under libFuzzer with
# ASan and UBSan, each for at least 10 minutes AND at least one million executions, over its seed
# corpus. Prints one Markdown table row per target and leaves, under build/fuzz/campaign/:
#   <target>.log      libFuzzer's output
#   corpus/<target>/  the inputs it found (the seeds stay in tests/fuzz/corpus/<target>/)
#   crashes/<target>/ crash-*, timeout-*, oom-* reproducers (none when clean)
#
#   scripts/fuzz-campaign.sh [--seconds S] [--runs N] [--max-seconds M] [--parallel P]
#                            [--jobs J] [--out DIR] [TARGET[=J]...]
#
# A target runs S seconds (default 600), then on in S-second passes until it has executed N inputs
# (default 1e6), at most M seconds in all (default 4 hours); TMPDIR is /dev/shm when unset (the
# sysroot and python_env targets write their fixture files each execution). P targets run at once
# (default 2). With J > 1 (--jobs, or TARGET=J for one target) a target runs as J libFuzzer workers
# (-jobs=J -workers=J) sharing one corpus, and its executions are the sum over the workers: the
# way to spend many cores on the slow targets (docs/fuzzing.md).
#
# Build first: cmake --preset fuzz && cmake --build --preset fuzz (clang with libFuzzer:
# apt-get install clang libclang-rt-dev). A reproducer replays with build/fuzz/tests/fuzz/fuzz_<target> FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
runs=1000000
max_seconds=14400
parallel=2
jobs=1
out=build/fuzz/campaign
export TMPDIR="${TMPDIR:-/dev/shm}"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --max-seconds) max_seconds="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
bin="$PWD/build/fuzz/tests/fuzz"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$bin"/fuzz_*; do targets+=("$(basename "$f" | sed 's/^fuzz_//')"); done
fi
mkdir -p "$out"

run_target() {
  local t="${1%%=*}" seconds="$2" runs="$3" bin="$4" out="$5" max_seconds="$6" jobs="$7"
  if [ "$1" != "$t" ]; then jobs="${1#*=}"; fi
  mkdir -p "$out/corpus/$t" "$out/crashes/$t" "$out/workers/$t"
  local log="$out/$t.log" start end executed=0 pass=0 seeds="$PWD/tests/fuzz/corpus/$t"
  : > "$log"
  start=$(date +%s)
  # First the time, then more passes if the time did not reach the count.
  while :; do
    local args=(-max_total_time="$seconds")
    if [ "$pass" -gt 0 ]; then args+=(-runs=$(((runs - executed) / jobs + 1))); fi
    if [ "$jobs" -gt 1 ]; then args+=(-jobs="$jobs" -workers="$jobs"); fi
    # Workers write fuzz-N.log into the working directory; their stats are added up below.
    (
      cd "$out/workers/$t" || exit
      rm -f fuzz-*.log
      "$bin/fuzz_$t" "${args[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" "$seeds" >> "$log" 2>&1
      cat fuzz-*.log >> "$log" 2>/dev/null
      true
    )
    executed=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" |
               awk '{s += $2} END {print s + 0}')
    pass=$((pass + 1))
    if [ "$executed" -ge "$runs" ] || [ -n "$(find "$out/crashes/$t" -type f)" ] ||
       [ $(($(date +%s) - start + seconds)) -gt "$max_seconds" ]; then
      break
    fi
  done
  end=$(date +%s)
  local cov ft units crashes peak
  cov=$(grep -o 'cov: [0-9]*' "$log" | awk '{print $2}' | sort -n | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$log" | awk '{print $2}' | sort -n | tail -1)
  units=$(find "$out/corpus/$t" -type f | wc -l)
  crashes=$(find "$out/crashes/$t" -type f | wc -l)
  peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | awk '{print $2}' | sort -n | tail -1)
  printf '| %s | %s | %d | %d | %s | %s | %s | %s MB | %s |\n' "$t" "$executed" $((end - start)) \
    "$jobs" "${cov:-?}" "${ft:-?}" "$units" "${peak:-?}" "$crashes"
}
export -f run_target

echo "| target | executions | seconds | workers | edges (cov) | features (ft) | corpus | peak RSS | crashes |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${targets[@]}" |
  xargs -P "$parallel" -I{} bash -c 'run_target "$@"' _ {} "$seconds" "$runs" "$bin" "$out" \
    "$max_seconds" "$jobs"
