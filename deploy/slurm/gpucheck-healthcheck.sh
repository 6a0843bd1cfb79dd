#!/usr/bin/env bash
# Slurm node health check with gpucheck, in the style of LBNL NHC (docs/fleet.md, "Slurm").
# slurm.conf: HealthCheckProgram=/etc/slurm/gpucheck-healthcheck.sh, HealthCheckInterval=3600,
# HealthCheckNodeState=ANY. slurmd runs it as root on every node, so on a node without GPU GRES it
# does nothing.
#
# It runs the passive checks (gpucheck --quick: about a second, no GPU work, nothing taken from
# a job) and asks gpucheck for a one-line drain reason (--format reason: empty and exit 0 unless
# a finding means a broken node, docs/findings.md "Drain"). Then, and only then:
#   - a drain-worthy finding on a node with no reason set: drain it, reason "gpucheck: CODE GPU N
#     (SERIAL), +K more";
#   - a node it drained itself (its reason starts with "gpucheck:") that now passes: resume it;
#   - any other reason (an admin's drain, "Not responding", a reboot request) is never touched or
#     overwritten, whatever gpucheck finds;
#   - gpucheck could not run (exit 2 or 3), or could not see the GPUs or the driver (its reason
#     line starts "gpucheck-blind:"): nothing changes, not even a resume; said on stderr and in
#     the log.
# Exit: 0 the node is fine (resumed if it was ours), 1 it should stay drained (drained now, or
# already), 2 gpucheck or scontrol could not run, or gpucheck saw no GPU or driver. The report of the last run stays in
# $GPUCHECK_LOG_DIR/last.json for `gpucheck merge`.
set -uo pipefail

GPUCHECK="${GPUCHECK:-/usr/local/bin/gpucheck}"
GATES="${GPUCHECK_CONFIG:-/etc/gpucheck/gpucheck.toml}"
LOG_DIR="${GPUCHECK_LOG_DIR:-/var/log/gpucheck}"
NODE="${SLURMD_NODENAME:-$(hostname -s)}"
# 1: check every node, also those whose Gres names no GPU (GPUs not configured as GRES).
ALL_NODES="${GPUCHECK_ALL_NODES:-0}"
MARKER="gpucheck:"

say() {
  echo "gpucheck-healthcheck: $NODE: $*" >&2
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $*" >> "$LOG_DIR/healthcheck.log" 2>/dev/null
}

mkdir -p "$LOG_DIR"

# The node as slurmctld sees it: State=IDLE+DRAIN, Reason=TEXT [user@time], Gres=gpu:8.
if ! info=$(scontrol show node "$NODE" 2>&1); then
  say "scontrol show node failed, nothing changed: $info"
  exit 2
fi
state=$(sed -n 's/.*[[:space:]]State=\([^[:space:]]*\).*/\1/p' <<< " $info" | head -n 1)
gres=$(sed -n 's/.*[[:space:]]Gres=\([^[:space:]]*\).*/\1/p' <<< " $info" | head -n 1)
current=$(sed -n 's/^[[:space:]]*Reason=//p' <<< "$info" | head -n 1)
case "$current" in "(null)" | "none" | "None") current="" ;; esac

if [ "$ALL_NODES" != 1 ] && [[ "$gres" != *gpu* ]]; then
  exit 0 # no GPU here (Gres=$gres): nothing to check
fi

args=(--quick --format reason --output "json:$LOG_DIR/last.json")
[ -r "$GATES" ] && args+=(--config "$GATES")
reason=$("$GPUCHECK" "${args[@]}" 2> "$LOG_DIR/last.err")
status=$?

drained=0
[[ "$state" == *DRAIN* ]] && drained=1
ours=0
[[ "$current" == "$MARKER"* ]] && ours=1

case "$status" in
  0)
    if [[ "$reason" == gpucheck-blind:* ]]; then
      # gpucheck could not see the GPUs or the driver: no verdict, so no resume either.
      say "${reason%%$'\n'*}: nothing changed"
      exit 2
    fi
    if [ "$drained" = 1 ] && [ "$ours" = 1 ]; then
      if scontrol update nodename="$NODE" state=resume; then
        say "passes now: resumed (was: $current)"
      else
        say "passes now, but scontrol could not resume it"
        exit 2
      fi
    fi
    exit 0
    ;;
  1)
    reason="${reason%%$'\n'*}"
    [[ "$reason" == "$MARKER"* ]] || reason="$MARKER checks failed (see $LOG_DIR/last.json)"
    if [ -n "$current" ]; then
      # Drained already (by this script or an admin), or a reason of slurmctld's own: keep it.
      [ "$ours" = 1 ] || say "would drain ($reason), but the node has a reason not ours: $current"
      exit 1
    fi
    if scontrol update nodename="$NODE" state=drain reason="$reason"; then
      say "drained: $reason"
    else
      say "should drain ($reason), but scontrol could not"
      exit 2
    fi
    exit 1
    ;;
  *)
    say "gpucheck could not run (exit $status, see $LOG_DIR/last.err): nothing changed"
    exit 2
    ;;
esac
