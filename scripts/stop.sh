#!/usr/bin/env bash
# Stops the gateway and the workers started by scripts/start.sh (the services stay up).
# Workers get SIGTERM and drain: running executions and batch items finish (up to
# WORKER_DRAIN_TIMEOUT_MS), their sessions are handed back and their containers removed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VAR="${DRYDOCK_VAR:-$ROOT/var}"
RUN="$VAR/run"
DRAIN_MS=$( (grep -h '^WORKER_DRAIN_TIMEOUT_MS=' "$VAR/drydock.env" 2>/dev/null || true) | tail -1 | cut -d= -f2)
DRAIN_MS=${WORKER_DRAIN_TIMEOUT_MS:-${DRAIN_MS:-60000}}
# Workers first (the gateway answers while they drain), all at once.
stop_app() { # stop_app <pid file> <seconds>
  local pid_file=$1 seconds=$2 pid
  [[ -f "$pid_file" ]] || return 0
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq $((seconds * 5))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$(basename "$pid_file" .pid) ($pid) did not stop within ${seconds}s; killing it" >&2
      kill -KILL "$pid"
    elif [[ "${QUIET:-0}" != 1 ]]; then
      echo "stopped $(basename "$pid_file" .pid) ($pid)"
    fi
  fi
  rm -f "$pid_file"
}
[[ "${1:-}" == "--quiet" ]] && QUIET=1
for pid_file in "$RUN"/worker*.pid; do
  [[ -e "$pid_file" ]] && stop_app "$pid_file" $((DRAIN_MS / 1000 + 15)) &
done
wait
stop_app "$RUN/gateway.pid" 10
