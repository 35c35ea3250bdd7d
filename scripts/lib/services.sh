# Shared helpers for scripts/start.sh and scripts/test.sh: make sure PostgreSQL, Redis
# and a Docker engine are installed (from Debian's packages, when running as root on
# Debian) and running. Everything here is idempotent.

DRYDOCK_VAR="${DRYDOCK_VAR:-$ROOT/var}"
mkdir -p "$DRYDOCK_VAR/log"

log() { printf '\033[1m[drydock]\033[0m %s\n' "$*"; }
die() { printf '[drydock] error: %s\n' "$*" >&2; exit 1; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null ||
    die "missing packages: ${missing[*]} (install them, or run this script as root on Debian)"
  log "installing ${missing[*]} from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$DRYDOCK_VAR/log/apt.log" 2>&1 ||
    { tail -20 "$DRYDOCK_VAR/log/apt.log" >&2; die "apt-get install failed"; }
}

# The allocator of the apps' native memory (Buffers, request bodies, sockets): jemalloc,
# which gives back what bulk file work grew, where glibc's malloc keeps it for the life
# of the process (docs/operations.md, "Memory"). Sets MALLOC_ENV to the prefix that
# starts a command on it, `env LD_PRELOAD=<jemalloc>` (Debian's libjemalloc2, installed
# when missing and this runs as root), or to nothing for glibc's malloc:
# DRYDOCK_MALLOC=glibc, or no jemalloc to be had.
choose_malloc() {
  MALLOC_ENV=()
  local lib=""
  case "${DRYDOCK_MALLOC:-jemalloc}" in
    glibc) return 0 ;;
    jemalloc) ;;
    *) die "DRYDOCK_MALLOC must be jemalloc or glibc (got '${DRYDOCK_MALLOC}')" ;;
  esac
  if ! dpkg -s libjemalloc2 >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    apt_install libjemalloc2
  fi
  local ldconfig
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  # awk reads to the end: stopping at the match would let ldconfig die of SIGPIPE on
  # its next write, which pipefail turns into a failure that ends the calling script
  # (start.sh stopped silently about one start in nine).
  lib=$("$ldconfig" -p 2>/dev/null | awk '/libjemalloc\.so\.2 / && !found {print $NF; found = 1}')
  if [[ -n "$lib" ]]; then
    MALLOC_ENV=(env "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}")
  else
    log "jemalloc (libjemalloc2) is not installed: the apps run on glibc's malloc (docs/operations.md, \"Memory\")"
  fi
}

wait_for() { # wait_for <seconds> <description> <command...>
  # A deadline on the clock, not a count of tries: a check that itself takes seconds
  # (a request to an app waiting on a service) must not stretch the wait.
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + seconds))
  while ((SECONDS < deadline)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "$what did not come up within ${seconds}s"
}

# gVisor's runsc as the Docker runtime "runsc" (the gvisor tier, docs/security.md): Debian's
# package, called through a wrapper that gives every runsc command the flags this platform
# needs: the ptrace platform (KVM spins in this VM), no network stack (sandboxes have
# none) and host Unix sockets (the host channel and the egress socket). Not
# --oci-seccomp: this runsc applies a profile's filters inside the sandbox but answers
# EPERM where the profile says ENOSYS, so clone3 fails and glibc never falls back to
# clone (no thread could start: pthread_create, posix_spawn); the user code's system calls
# are gVisor's own to serve, and its Sentry runs under gVisor's seccomp filter on the host
# (docs/security.md, "The gvisor tier"). A wrapper, not daemon.json's runtimeArgs, so that
# a dockerd we start needs no file in /etc.
RUNSC_WRAPPER=/usr/local/lib/drydock/runsc
install_runsc_wrapper() {
  command -v runsc >/dev/null || apt_install runsc
  mkdir -p "$(dirname "$RUNSC_WRAPPER")"
  cat >"$RUNSC_WRAPPER.tmp" <<'WRAPPER'
#!/bin/sh
exec /usr/bin/runsc --platform=ptrace --network=none --host-uds=all "$@"
WRAPPER
  chmod 0755 "$RUNSC_WRAPPER.tmp" && mv "$RUNSC_WRAPPER.tmp" "$RUNSC_WRAPPER"
}
docker_has_runsc() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }

# DRYDOCK_GVISOR=1 (scripts/test.sh sets it): a dockerd we start knows the runtime runsc;
# one running already must have it registered by its operator (docs/security.md shows
# the daemon.json lines).
ensure_docker() {
  local gvisor=()
  if [[ "${DRYDOCK_GVISOR:-0}" == 1 ]]; then
    install_runsc_wrapper
    # Checkpoints (docker checkpoint, hibernation) are an experimental API of dockerd.
    gvisor=(--add-runtime "runsc=$RUNSC_WRAPPER" --experimental)
  fi
  if docker info >/dev/null 2>&1; then
    if [[ ${#gvisor[@]} -gt 0 ]] && ! docker_has_runsc; then
      die "DRYDOCK_GVISOR=1 but the running dockerd has no runtime \"runsc\": register $RUNSC_WRAPPER as \"runsc\" in /etc/docker/daemon.json (docs/security.md) and restart it"
    fi
    return 0
  fi
  command -v dockerd >/dev/null || apt_install docker.io
  command -v docker >/dev/null || apt_install docker.io
  log "starting dockerd${gvisor:+ with gVisor (runsc)}"
  (setsid dockerd "${gvisor[@]}" >"$DRYDOCK_VAR/log/dockerd.log" 2>&1 &)
  wait_for 60 "dockerd" docker info
}

# Redis as BullMQ requires it (docs/operations.md): append-only persistence (a restart
# keeps queued jobs; fsync every second) and no eviction (an evicted job key is a lost
# job; a full Redis refuses writes instead). Ours is the one that answers on our socket,
# $REDIS_SOCKET (root only), which processes on this host use (redis_url); it is started
# when that socket does not answer, also on 127.0.0.1:$REDIS_PORT (6379) for TCP clients
# (scripts/test.sh) unless something else listens there: a Redis of its own or of
# another checkout, which is left alone, and ours then listens on the socket only.
REDIS_SOCKET="$DRYDOCK_VAR/redis/redis.sock"
redis_ours() { [[ -S "$REDIS_SOCKET" ]] && redis-cli -s "$REDIS_SOCKET" ping >/dev/null 2>&1; }

# What listens on 127.0.0.1:<port>, in words; nothing (and status 1) when nothing does.
listener_on() { # listener_on <port>
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null || return 1
  local info pid
  info=$(redis-cli -p "$1" info server 2>&1 | tr -d '\r')
  pid=$(ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
  local args=""; [[ -n "$pid" ]] && args=$(ps -o args= -p "$pid" 2>/dev/null)
  if ! grep -q '^redis_version:' <<<"$info" && grep -qE 'NOAUTH|DENIED' <<<"$info"; then
    echo "a Redis that asks for a password, which we did not start (pid ${pid:-?}${args:+: $args})"
  elif grep -q '^redis_version:' <<<"$info"; then
    local dir config
    dir=$(redis-cli -p "$1" config get dir 2>/dev/null | sed -n 2p)
    config=$(sed -n 's/^config_file://p' <<<"$info")
    echo "a Redis $(sed -n 's/^redis_version://p' <<<"$info") we did not start (pid ${pid:-?}${args:+: $args}${dir:+, data in $dir}${config:+, config $config})"
  else
    echo "a process that is not a Redis (pid ${pid:-?}${args:+: $args})"
  fi
}

ensure_redis() {
  local port=${REDIS_PORT:-6379}
  if ! { command -v redis-cli >/dev/null && redis_ours; }; then
    command -v redis-server >/dev/null || apt_install redis-server
    mkdir -p "$DRYDOCK_VAR/redis"
    local listen=(--port "$port" --bind 127.0.0.1) where=":$port and $REDIS_SOCKET" other
    if other=$(listener_on "$port"); then
      listen=(--port 0)
      where="$REDIS_SOCKET only"
      log "port $port is taken by $other, which does not serve $REDIS_SOCKET: it is left alone"
    fi
    log "starting redis on $where (append-only, noeviction)"
    redis-server "${listen[@]}" --daemonize yes --dir "$DRYDOCK_VAR/redis" \
      --unixsocket "$REDIS_SOCKET" --unixsocketperm 700 \
      --appendonly yes --appendfsync everysec --save '' --maxmemory-policy noeviction \
      --logfile "$DRYDOCK_VAR/log/redis.log"
    wait_for 20 "redis on $REDIS_SOCKET (see $DRYDOCK_VAR/log/redis.log)" redis_ours
  fi
  redis-cli -s "$REDIS_SOCKET" config set maxmemory-policy noeviction >/dev/null
  redis-cli -s "$REDIS_SOCKET" config set appendonly yes >/dev/null
}

# The OCI registry sandbox templates are pushed to and every worker pulls from (issue
# 52; docs/operations.md, "Template registry"): Debian's docker-registry (Distribution
# v2) on 127.0.0.1, its blobs under var/registry, deletes enabled (a deleted template's
# versions go). No TLS and no auth: it listens on the loopback only, and Docker pushes
# to and pulls from 127.0.0.0/8 without TLS by default. It starts on REGISTRY_PORT
# (5000), or the next free port when another program (another checkout's registry)
# holds that one; REGISTRY_ADDR is set to where it listens.
REGISTRY_DIR="$DRYDOCK_VAR/registry"
registry_ours() {
  local pid_file="$DRYDOCK_VAR/run/registry.pid" addr_file="$REGISTRY_DIR/addr"
  [[ -f "$pid_file" && -f "$addr_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null &&
    curl -fsS --max-time 2 "http://$(cat "$addr_file")/v2/" >/dev/null 2>&1
}

ensure_registry() {
  if ! registry_ours; then
    command -v docker-registry >/dev/null || apt_install docker-registry
    local port=${REGISTRY_PORT:-5000}
    local who
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
      who=$(ss -Hltnp "sport = :$port" 2>/dev/null | sed -n 's/.*users:(("\([^"]*\)".*/\1/p' | head -1)
      log "port $port is taken (by ${who:-another program}): trying $((port + 1)) for the registry"
      port=$((port + 1))
    done
    mkdir -p "$REGISTRY_DIR/data" "$DRYDOCK_VAR/run"
    cat >"$REGISTRY_DIR/config.yml" <<YAML
version: 0.1
log:
  level: info
  fields:
    service: drydock-registry
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  headers:
    X-Content-Type-Options: [nosniff]
health:
  storagedriver:
    enabled: true
    interval: 10s
    threshold: 3
YAML
    echo "127.0.0.1:$port" >"$REGISTRY_DIR/addr"
    log "starting the template registry on 127.0.0.1:$port (docker-registry, storage $REGISTRY_DIR/data)"
    # A session of its own: it outlives this script, as PostgreSQL and Redis do.
    setsid nohup docker-registry serve "$REGISTRY_DIR/config.yml" >>"$DRYDOCK_VAR/log/registry.log" 2>&1 </dev/null &
    echo $! >"$DRYDOCK_VAR/run/registry.pid"
    wait_for 20 "the registry on 127.0.0.1:$port (see $DRYDOCK_VAR/log/registry.log)" registry_ours
  fi
  REGISTRY_ADDR=$(cat "$REGISTRY_DIR/addr")
}

pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1; }

ensure_postgres() {
  [[ -n "$(pg_version)" ]] || apt_install postgresql
  local version; version=$(pg_version)
  if ! pg_lsclusters -h 2>/dev/null | grep -q "^$version main"; then
    pg_createcluster "$version" main >/dev/null
  fi
  if ! pg_lsclusters -h | grep "^$version main" | grep -q online; then
    log "starting PostgreSQL $version"
    pg_ctlcluster "$version" main start
  fi
  wait_for 30 "PostgreSQL" su postgres -c "psql -qAtc 'select 1'"
  # One role for the platform; databases are created on demand.
  su postgres -c "psql -qAt -c \"select 1 from pg_roles where rolname='drydock'\"" | grep -q 1 ||
    su postgres -c "psql -q -c \"create role drydock login password 'drydock' createdb\""
  # The role signs in with its password over the Unix socket too (Debian's rules allow
  # only peer sign-in there), so processes on this host can skip loopback TCP (pg_url).
  local hba; hba=$(su postgres -c "psql -qAtc 'show hba_file'")
  if ! grep -q '^local all drydock scram-sha-256' "$hba"; then
    sed -i '0,/^local[[:space:]]/s//local all drydock scram-sha-256\n&/' "$hba"
    su postgres -c "psql -qAtc 'select pg_reload_conf()'" >/dev/null
  fi
}

# Connection URLs for processes on this host: the Unix sockets when they answer (about
# 0.9 ms less per execution at p50 than loopback TCP here, docs/operations.md), else TCP.
pg_url() { # pg_url <database>
  local dir=/var/run/postgresql
  if [[ -S "$dir/.s.PGSQL.5432" ]] && PGPASSWORD=drydock psql -qAt -h "$dir" -U drydock -d "$1" -c 'select 1' >/dev/null 2>&1; then
    echo "postgres://drydock:drydock@localhost/$1?host=$dir"
  else
    echo "postgres://drydock:drydock@127.0.0.1:5432/$1"
  fi
}

redis_url() { # redis_url <db>
  if [[ -S "$REDIS_SOCKET" ]] && redis-cli -s "$REDIS_SOCKET" ping >/dev/null 2>&1; then
    echo "unix://$REDIS_SOCKET?db=$1"
  else
    echo "redis://127.0.0.1:${REDIS_PORT:-6379}/$1"
  fi
}

ensure_database() { # ensure_database <name>
  su postgres -c "psql -qAt -c \"select 1 from pg_database where datname='$1'\"" | grep -q 1 ||
    su postgres -c "createdb -O drydock '$1'"
}

# Debian's headless-capable Chromium, for the test that renders /docs (the OpenAPI page).
ensure_chromium() {
  command -v chromium >/dev/null && return 0
  apt_install chromium
}

ensure_node_modules() {
  local stamp="$ROOT/node_modules/.drydock-lock-hash"
  local hash; hash=$(sha256sum "$ROOT/package-lock.json" | cut -d' ' -f1)
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$hash" ]]; then
    log "installing npm dependencies"
    # Not `npm ci`: npm records only this platform's optional native binaries (swc,
    # msgpackr) in the lockfile and `npm ci` then rejects it as out of sync (npm/cli
    # #4828, #8320). `npm install --no-save` installs the locked versions and never
    # rewrites the lockfile.
    (cd "$ROOT" && npm install --no-save --no-audit --no-fund --loglevel=error) || die "npm install failed"
    echo "$hash" >"$stamp"
  fi
}

build_images() {
  ensure_docker
  command -v debootstrap >/dev/null || apt_install debootstrap
  bash "$ROOT/docker/sandbox/base/build-base.sh"
  log "building the sandbox image ${SANDBOX_IMAGE:-drydock/sandbox:latest}"
  docker build -q -t "${SANDBOX_IMAGE:-drydock/sandbox:latest}" \
    --build-arg BASE_IMAGE="${DRYDOCK_BASE_IMAGE:-drydock/sandbox-base:bookworm}" \
    "$ROOT/docker/sandbox" >/dev/null || die "sandbox image build failed"
}

build_app() {
  log "compiling TypeScript (swc)"
  (cd "$ROOT" && npm run -s build) || die "build failed"
}
