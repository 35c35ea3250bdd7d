#!/usr/bin/env bash
# Runs one bench against two builds of Drydock in alternating runs (base, head, head,
# base, ...), each against the separate-process deployment (a worker and a gateway
# started from that build, as scripts/start.sh starts them), and prints each run's
# verdict lines, one run after another.
#
# Why alternating runs: on a small shared machine the same build gives figures 20-40 %
# apart a few minutes apart (bench/README.md). Two builds are only compared fairly in
# runs interleaved in the same minutes; one run of each says little.
#
#   bench/compare.sh --base <git rev> [--runs N] <bench> [bench options...]
#     <bench>     exec-latency | throughput | agent | vfs | artifacts | memory | ...
#                 (a folder of bench/ with a run.ts; it is given --url and --admin-key)
#     --base REV  the build to compare with: REV is built into var/compare/<sha>/ from
#                 `git archive` (once), with this checkout's node_modules
#     --runs N    runs of each build (default 4), in the order A B B A A B ...
#
# The head is this checkout as it is (built with `npm run build` first). Services,
# settings and the sandbox image are scripts/start.sh's: run it once before
# (`bash scripts/start.sh --detach && bash scripts/stop.sh`); this script starts and
# stops only the apps, on the settings in var/drydock.env, with one worker
# (worker id compare-1, operator port 9401, where the benches look for it). For the
# agent bench the gateway gets the scripted model's AGENT_MODEL_* settings. Full logs:
# var/compare/logs/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/lib/services.sh"

BASE=""
RUNS=4
while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) BASE="${2:-}"; shift 2 ;;
    --runs) RUNS="${2:-}"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
BENCH="${1:-}"
[[ -n "$BENCH" ]] && shift || die "name a bench (e.g. exec-latency); see --help"
[[ -f "$ROOT/bench/$BENCH/run.ts" ]] || die "no bench named '$BENCH' (bench/$BENCH/run.ts)"
[[ -n "$BASE" ]] || die "--base <git rev> is required"
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a whole number >= 1 (got '$RUNS')"
ENV_FILE="$DRYDOCK_VAR/drydock.env"
[[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run scripts/start.sh once (it provisions the services and writes the settings)"
[[ -z "$(ls "$DRYDOCK_VAR"/run/*.pid 2>/dev/null)" ]] || die "scripts/start.sh's apps are running: stop them first (scripts/stop.sh)"

SHA=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE^{commit}") || die "'$BASE' is not a commit of this repository"
OUT="$DRYDOCK_VAR/compare"
BASE_DIR="$OUT/$SHA"
mkdir -p "$OUT/logs"
if [[ ! -f "$BASE_DIR/dist/apps/gateway/src/main.js" ]]; then
  log "building the base, ${SHA:0:12}, into $BASE_DIR"
  rm -rf "$BASE_DIR" && mkdir -p "$BASE_DIR"
  git -C "$ROOT" archive "$SHA" | tar -x -C "$BASE_DIR"
  ln -s "$ROOT/node_modules" "$BASE_DIR/node_modules"
  (cd "$BASE_DIR" && npm run -s build >"$OUT/logs/build-${SHA:0:12}.log" 2>&1) || die "the base did not build (see $OUT/logs/build-${SHA:0:12}.log)"
fi
log "building the head (this checkout)"
(cd "$ROOT" && npm run -s build >"$OUT/logs/build-head.log" 2>&1) || die "this checkout did not build (see $OUT/logs/build-head.log)"

set -a; source "$ENV_FILE"; set +a
# Both builds on the allocator scripts/start.sh gives the apps (DRYDOCK_MALLOC).
choose_malloc
# The settings' Redis must answer: its socket is scripts/start.sh's own (a Redis started
# another way listens elsewhere, and the apps would wait on it).
redis_ping() {
  case "$REDIS_URL" in
    unix://*) local path=${REDIS_URL#unix://}; redis-cli -s "${path%%\?*}" ping ;;
    *) redis-cli -u "$REDIS_URL" ping ;;
  esac
}
[[ "$(redis_ping 2>/dev/null)" == PONG ]] || die "Redis at $REDIS_URL (from $ENV_FILE) does not answer: start the services with scripts/start.sh --detach, then scripts/stop.sh"
URL="http://${GATEWAY_HOST:-127.0.0.1}:${GATEWAY_PORT:-8080}"
if [[ "$BENCH" == agent ]]; then
  # The bench's scripted model server (bench/lib/fake-model-server.ts, default port).
  export AGENT_MODEL_BASE_URL=http://127.0.0.1:18097/v1 AGENT_MODEL=bench-scripted AGENT_MODEL_API_KEY=bench-not-needed
fi

PIDS=()
stop_apps() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  PIDS=()
}
trap stop_apps EXIT

# start_apps <tree> <label>: a worker and the gateway of that build; returns once the
# gateway answers and lists the worker as live.
start_apps() {
  local dir=$1 label=$2
  (cd "$dir" && node dist/scripts/migrate.js >>"$OUT/logs/$label.apps.log" 2>&1) || die "migrations of $label failed (see $OUT/logs/$label.apps.log)"
  (cd "$dir" && WORKER_ID=compare-1 WORKER_METRICS_PORT=9401 exec "${MALLOC_ENV[@]}" node dist/apps/worker/src/main.js >>"$OUT/logs/$label.apps.log" 2>&1) &
  PIDS+=($!)
  (cd "$dir" && exec "${MALLOC_ENV[@]}" node dist/apps/gateway/src/main.js >>"$OUT/logs/$label.apps.log" 2>&1) &
  PIDS+=($!)
  worker_live() { curl -fsS --max-time 2 -H "Authorization: Bearer $DRYDOCK_ADMIN_KEY" "$URL/admin/workers" 2>/dev/null | grep -q '"compare-1"'; }
  wait_for 60 "the $label gateway and its worker (see $OUT/logs/$label.apps.log)" worker_live
}

# The lines that carry a bench's verdict and figures (every bench prints its targets
# with met/MET or missed/MISSED; some add ratio, headline and CPU lines).
VERDICT='(MET|MISSED|: met|: missed| met$| missed$|^drydock p50|^ratio|^CPU|^overhead|^machine)'

declare -A DIRS=([base]="$BASE_DIR" [head]="$ROOT")
ORDER=()
for i in $(seq 1 "$RUNS"); do
  if (( i % 2 )); then ORDER+=(base head); else ORDER+=(head base); fi
done
declare -A COUNT=([base]=0 [head]=0)
STAMP=$(date +%Y%m%d-%H%M%S)
for build in "${ORDER[@]}"; do
  COUNT[$build]=$((COUNT[$build] + 1))
  label="$STAMP-$BENCH-$build-${COUNT[$build]}"
  dir=${DIRS[$build]}
  log "$build run ${COUNT[$build]} of $RUNS"
  start_apps "$dir" "$label"
  status=0
  (cd "$dir" && node dist/bench/"$BENCH"/run.js --url "$URL" --admin-key "$DRYDOCK_ADMIN_KEY" "$@") >"$OUT/logs/$label.log" 2>&1 || status=$?
  stop_apps
  echo "--- $build ${COUNT[$build]} ($([[ $build == base ]] && echo "${SHA:0:12}" || echo "this checkout"))$([[ $status != 0 ]] && echo ", the bench FAILED with status $status")"
  grep -E "$VERDICT" "$OUT/logs/$label.log" | sed 's/^/    /' || tail -3 "$OUT/logs/$label.log" | sed 's/^/    /'
done
log "logs: $OUT/logs/$STAMP-*"
