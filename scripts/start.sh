#!/usr/bin/env bash
# Starts the whole platform on this machine: PostgreSQL, Redis, the template registry
# and a Docker engine (installed from Debian's packages when missing and running as
# root), the sandbox image, migrations, the workers and the gateway. Prints where the
# gateway listens and how to authenticate. Ctrl-C stops the gateway and the workers
# (draining them); `--detach` leaves them running in the background (stop them with
# scripts/stop.sh).
#   --workers N   start N workers on this machine (worker-1 ... worker-N), default 1
#   --gvisor      also offer the gvisor tier: installs gVisor (Debian's runsc), registers
#                 it with the Docker engine we start, sets SANDBOX_GVISOR_RUNTIME=runsc
#                 (its sessions can hibernate and be snapshotted: docs/sessions.md)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/lib/services.sh"

DETACH=0
WORKERS=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --detach) DETACH=1 ;;
    --gvisor) export DRYDOCK_GVISOR=1 ;;
    --workers) WORKERS="${2:-}"; shift ;;
    --workers=*) WORKERS="${1#*=}" ;;
    *) die "unknown option $1 (use --detach, --workers N, --gvisor)" ;;
  esac
  shift
done
[[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || die "--workers needs a whole number >= 1 (got '$WORKERS')"

ensure_postgres
ensure_database drydock
ensure_redis
ensure_registry
ensure_docker
ensure_node_modules
build_images
build_app

# Settings: var/drydock.env is created once with a fresh admin key; edit it or export
# variables to override (see docs/configuration.md).
ENV_FILE="$DRYDOCK_VAR/drydock.env"
if [[ ! -f "$ENV_FILE" ]]; then
  cat >"$ENV_FILE" <<ENV
DATABASE_URL=$(pg_url drydock)
REDIS_URL=$(redis_url 0)
DRYDOCK_ADMIN_KEY=adm_$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)
GATEWAY_HOST=127.0.0.1
GATEWAY_PORT=8080
ENV
  chmod 600 "$ENV_FILE"
fi
# Added separately so env files from before artifacts existed get them too.
grep -q '^ARTIFACTS_SIGNING_SECRET=' "$ENV_FILE" ||
  echo "ARTIFACTS_SIGNING_SECRET=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 48)" >>"$ENV_FILE"
grep -q '^ARTIFACTS_DIR=' "$ENV_FILE" || echo "ARTIFACTS_DIR=$DRYDOCK_VAR/artifacts" >>"$ENV_FILE"
# Sandboxes' host channels on Unix sockets (decision 010; the workers run on this host).
grep -q '^SANDBOX_CHANNEL_DIR=' "$ENV_FILE" || echo "SANDBOX_CHANNEL_DIR=$DRYDOCK_VAR/channels" >>"$ENV_FILE"
set -a; source "$ENV_FILE"; set +a
# Template images go to the registry ensure_registry started (unless the settings name one).
export TEMPLATE_REGISTRY="${TEMPLATE_REGISTRY:-$REGISTRY_ADDR}"
if [[ "${DRYDOCK_GVISOR:-0}" == 1 ]]; then export SANDBOX_GVISOR_RUNTIME="${SANDBOX_GVISOR_RUNTIME:-runsc}"; fi

log "applying migrations"
(cd "$ROOT" && node dist/scripts/migrate.js)

mkdir -p "$DRYDOCK_VAR/run"
"$ROOT/scripts/stop.sh" --quiet || true
# Extra flags for node, from the environment or the settings: V8's own options (such as
# --heap-growing-percent) are refused in NODE_OPTIONS (docs/operations.md, "Memory").
# Source maps are off by default: on, every process keeps the maps of every module it
# loaded (ours and node_modules', with their TypeScript sources), 20 MB of the gateway's
# heap; --enable-source-maps in these flags turns them on (docs/operations.md, "Memory").
read -r -a worker_flags <<<"${WORKER_NODE_FLAGS:-}"
read -r -a gateway_flags <<<"${GATEWAY_NODE_FLAGS:-}"
# jemalloc under both apps unless DRYDOCK_MALLOC=glibc (choose_malloc, scripts/lib/services.sh).
choose_malloc
# Each worker has a stable id (its queue and its containers' label carry it): a worker
# restarted under the same id clears what its previous life left behind.
for n in $(seq 1 "$WORKERS"); do
  # Operator port (metrics, probes) 9400+n on 127.0.0.1 unless the settings name one.
  (cd "$ROOT" && WORKER_ID="worker-$n" WORKER_METRICS_PORT="${WORKER_METRICS_PORT:-$((9400 + n))}" \
    exec "${MALLOC_ENV[@]}" node "${worker_flags[@]}" dist/apps/worker/src/main.js >>"$DRYDOCK_VAR/log/worker-$n.log" 2>&1) &
  echo $! >"$DRYDOCK_VAR/run/worker-$n.pid"
done
log "started $WORKERS worker(s) (worker-1 ... worker-$WORKERS) and the gateway"
(cd "$ROOT" && exec "${MALLOC_ENV[@]}" node "${gateway_flags[@]}" dist/apps/gateway/src/main.js >>"$DRYDOCK_VAR/log/gateway.log" 2>&1) &
echo $! >"$DRYDOCK_VAR/run/gateway.pid"

URL="http://${GATEWAY_HOST}:${GATEWAY_PORT}"
health_ok() { curl -fsS "$URL/health" >/dev/null; }
wait_for 60 "the gateway (see $DRYDOCK_VAR/log/gateway.log)" health_ok

cat <<INFO

  Drydock is running.
    gateway   $URL   (health: $URL/health)
    workers   $WORKERS (worker-1 ... worker-$WORKERS)
    registry  http://$REGISTRY_ADDR/v2/   (templates' images; storage $REGISTRY_DIR/data)
    logs      $DRYDOCK_VAR/log/gateway.log, $DRYDOCK_VAR/log/worker-<n>.log
    settings  $ENV_FILE

  Authenticate with "Authorization: Bearer <key>".
    admin key  $DRYDOCK_ADMIN_KEY   (for /admin; from $ENV_FILE)

  Create a tenant (its API key is shown once), then a session, then run code:
    curl -s -X POST $URL/admin/tenants -H "Authorization: Bearer $DRYDOCK_ADMIN_KEY" \\
         -H 'content-type: application/json' -d '{"name":"acme"}'
    curl -s -X POST $URL/v1/sessions -H "Authorization: Bearer <apiKey>" -H 'content-type: application/json' -d '{}'
    curl -s -X POST $URL/v1/sessions/<id>/executions -H "Authorization: Bearer <apiKey>" \\
         -H 'content-type: application/json' -d '{"code":"x = 41\nx + 1"}'

INFO

if [[ $DETACH -eq 1 ]]; then
  log "detached; stop with scripts/stop.sh"
  exit 0
fi
trap '"$ROOT/scripts/stop.sh"; exit 0' INT TERM
log "press Ctrl-C to stop"
wait
