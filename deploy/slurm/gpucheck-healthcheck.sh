#!/usr/bin/env bash
# Slurm node health check with gpucheck (docs/fleet.md). Use it as
#   - the HealthCheckProgram (slurm.conf: HealthCheckProgram=/etc/slurm/gpucheck-healthcheck.sh
#     and HealthCheckInterval=3600): it drains a failing node itself with scontrol;
#   - a Prolog or Epilog (slurm.conf: Prolog=/etc/slurm/gpucheck-healthcheck.sh): a non-zero exit
#     makes slurmd drain the node and requeue the job; the script drains it first with a reason
#     that names gpucheck's failing codes.
# It runs the passive checks only (--quick: about a second, no GPU work), so it can run before
# every job. The last report stays in /var/log/gpucheck/last.json for `gpucheck merge`.
set -uo pipefail

GPUCHECK="${GPUCHECK:-/usr/local/bin/gpucheck}"
GATES="${GPUCHECK_CONFIG:-/etc/gpucheck/gpucheck.toml}"
LOG_DIR="${GPUCHECK_LOG_DIR:-/var/log/gpucheck}"
NODE="${SLURMD_NODENAME:-$(hostname -s)}"

mkdir -p "$LOG_DIR"
report="$LOG_DIR/last.json"
args=(--quick --json)
[ -r "$GATES" ] && args+=(--config "$GATES")

"$GPUCHECK" "${args[@]}" > "$report.tmp" 2> "$LOG_DIR/last.err"
status=$?
mv -f "$report.tmp" "$report"

case "$status" in
  0)
    exit 0
    ;;
  1)
    # The failing codes, for the drain reason: gpucheck merge reads the report it just wrote.
    codes=$("$GPUCHECK" merge --json "$report" 2>/dev/null |
      python3 -c 'import json, sys; print(",".join(json.load(sys.stdin)["nodes"][0]["failing_codes"]))' \
        2>/dev/null)
    reason="gpucheck: ${codes:-checks failed} (see $report)"
    ;;
  *)
    reason="gpucheck could not run (exit $status, see $LOG_DIR/last.err)"
    ;;
esac

scontrol update nodename="$NODE" state=drain reason="${reason:0:250}"
echo "$NODE drained: $reason" >&2
exit 1
