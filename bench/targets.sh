#!/usr/bin/env bash
# Issue 17's targets in one command: the benches that measure them, each run against a
# fresh separate-process deployment (scripts/start.sh --detach: a gateway and a worker
# as their own processes, over PostgreSQL's and Redis' Unix sockets), and one line per
# target at the end with every run's figure and how many runs met it.
#
#   bench/targets.sh [--runs N] [--take-cpu P]
#     --runs N       how many times the whole set runs, each on its own fresh deployment
#                    (default 1); the figures of one build move by a third between busy
#                    and quiet minutes on a small shared machine (bench/README.md), so a
#                    verdict from several runs says more than one
#     --take-cpu P   a slow day on demand: while the benches run, P % of every core's
#                    time is taken by a spinning process at the highest priority
#                    (bench/lib/cpu-taker.ts, one per core, nice -20: needs root), as a
#                    busy hypervisor takes a VM's vCPUs; the benches then say how much
#                    margin each target has on a slower machine (default 0: none)
#
# Runs, in this order, as bench/README.md's "Where issue 17's targets stand" lists them:
# exec-latency --n 800, throughput, vfs, artifacts --rounds 5, agent (the gateway gets
# the scripted model's AGENT_MODEL_* settings), memory. scripts/start.sh provisions and
# builds what is missing. Full logs: var/targets/<time>/. Takes about 2 minutes a run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/lib/services.sh"

RUNS=1
TAKE_CPU=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="${2:-}"; shift 2 ;;
    --take-cpu) TAKE_CPU="${2:-}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (use --runs N, --take-cpu P)" ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a whole number >= 1 (got '$RUNS')"
[[ "$TAKE_CPU" =~ ^[0-9]+$ && "$TAKE_CPU" -le 90 ]] || die "--take-cpu needs a whole number of percent, 0-90 (got '$TAKE_CPU')"
[[ "$TAKE_CPU" -eq 0 || "$(id -u)" -eq 0 ]] || die "--take-cpu needs root: its processes run at nice -20, ahead of the platform's"
[[ -z "$(ls "$DRYDOCK_VAR"/run/*.pid 2>/dev/null)" ]] || die "scripts/start.sh's apps are running: stop them first (scripts/stop.sh)"

OUT="$DRYDOCK_VAR/targets/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
TAKERS=()
stop_takers() {
  [[ ${#TAKERS[@]} -gt 0 ]] || return 0
  kill "${TAKERS[@]}" 2>/dev/null || true
  wait "${TAKERS[@]}" 2>/dev/null || true
  TAKERS=()
}
trap 'stop_takers; bash "$ROOT/scripts/stop.sh" >/dev/null 2>&1 || true' EXIT
echo "$TAKE_CPU" >"$OUT/take-cpu"

BENCHES=(exec-latency throughput vfs artifacts agent memory)
declare -A OPTIONS=([exec-latency]="--n 800" [artifacts]="--rounds 5")

for run in $(seq 1 "$RUNS"); do
  log "run $run of $RUNS: starting a fresh deployment"
  AGENT_MODEL_BASE_URL=http://127.0.0.1:18097/v1 AGENT_MODEL=bench-scripted AGENT_MODEL_API_KEY=bench-not-needed \
    bash "$ROOT/scripts/start.sh" --detach >"$OUT/start-$run.log" 2>&1 || die "scripts/start.sh failed (see $OUT/start-$run.log)"
  if [[ "$TAKE_CPU" -gt 0 ]]; then
    cores=$(nproc)
    log "run $run: taking $TAKE_CPU % of each of the $cores cores' time"
    for ((cpu = 0; cpu < cores; cpu++)); do
      nice -n -20 taskset -c "$cpu" node "$ROOT/dist/bench/lib/cpu-taker.js" --percent "$TAKE_CPU" &
      TAKERS+=($!)
    done
    # A taker that could not start would leave the run unslowed and its figures mislabelled.
    sleep 0.5
    for pid in "${TAKERS[@]}"; do
      kill -0 "$pid" 2>/dev/null || die "a cpu-taker did not start (nice -20, taskset, dist/bench/lib/cpu-taker.js: see above)"
    done
  fi
  (
    set -a; source "$DRYDOCK_VAR/drydock.env"; set +a
    for bench in "${BENCHES[@]}"; do
      log "run $run: $bench"
      # shellcheck disable=SC2086 # the options are words
      (cd "$ROOT" && npm run -s "bench:$bench" -- --url "http://${GATEWAY_HOST:-127.0.0.1}:${GATEWAY_PORT:-8080}" \
        --admin-key "$DRYDOCK_ADMIN_KEY" ${OPTIONS[$bench]:-}) >"$OUT/$bench-$run.log" 2>&1 \
        || die "bench:$bench failed (see $OUT/$bench-$run.log)"
    done
  )
  stop_takers
  bash "$ROOT/scripts/stop.sh" >/dev/null 2>&1
done

# One line per target: every run's figure, read from the verdict lines the benches print.
node "$ROOT/dist/bench/lib/targets-summary.js" "$OUT" "$RUNS"
