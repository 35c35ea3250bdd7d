#!/usr/bin/env bash
# Stops the gateway and worker started by scripts/start.sh (the services stay up).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="${DRYDOCK_VAR:-$ROOT/var}/run"
for app in gateway worker; do
  pid_file="$RUN/$app.pid"
  [[ -f "$pid_file" ]] || continue
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    [[ "${1:-}" == "--quiet" ]] || echo "stopped $app ($pid)"
  fi
  rm -f "$pid_file"
done
