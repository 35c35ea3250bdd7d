# Sourced by packages/python/scripts/test.sh and bench/python-client/run.sh: the settings
# of the platform they boot (tests/platform.ts), and its compiled launcher. The values come
# from the environment, with defaults of their own: a database and a Redis db apart from
# scripts/test.sh's (DRYDOCK_PY_DATABASE_URL, DRYDOCK_PY_REDIS_URL).
# Needs ROOT (the checkout) and scripts/lib/services.sh sourced.

PY_OUT="$DRYDOCK_VAR/python-sdk"
PY_LAUNCHER="$PY_OUT/build/packages/python/tests/platform.js"

py_platform_env() {
  export NODE_ENV=test
  export DATABASE_URL="${DRYDOCK_PY_DATABASE_URL:-postgres://drydock:drydock@127.0.0.1:5432/drydock_test_py}"
  export REDIS_URL="${DRYDOCK_PY_REDIS_URL:-redis://127.0.0.1:6379/13}"
  export DRYDOCK_ADMIN_KEY="test-admin-key-0123456789abcdef"
  export SANDBOX_IMAGE="${SANDBOX_IMAGE:-drydock/sandbox:latest}"
  export TEMPLATE_REGISTRY="${TEMPLATE_REGISTRY:-127.0.0.1:5000}"
  export ARTIFACTS_SIGNING_SECRET="test-signing-secret-0123456789abcdef0123"
  export ARTIFACTS_DIR="$DRYDOCK_VAR/py-artifacts"
  export SANDBOX_CHANNEL_DIR="$DRYDOCK_VAR/py-channels"
  # The gvisor tier (hibernate, snapshots, forks: tests/test_snapshots.py): Docker's
  # runtime of gVisor, "runsc" as scripts/lib/services.sh registers it (DRYDOCK_GVISOR=1).
  export SANDBOX_GVISOR_RUNTIME="${SANDBOX_GVISOR_RUNTIME:-runsc}"
  mkdir -p "$PY_OUT" "$ARTIFACTS_DIR" "$SANDBOX_CHANNEL_DIR"
  # harness.py starts the launcher with this command.
  export DRYDOCK_PLATFORM_CMD="node --enable-source-maps $PY_LAUNCHER"
}

# The services are checked, not started (scripts/start.sh and scripts/test.sh start them);
# the database is created when missing.
py_check_services() {
  local db="${DATABASE_URL##*/}"
  db="${db%%\?*}"
  if [[ $(id -u) -eq 0 ]] && command -v psql >/dev/null; then
    ensure_database "$db"
  fi
  docker image inspect "$SANDBOX_IMAGE" >/dev/null 2>&1 || die "no sandbox image $SANDBOX_IMAGE: scripts/test.sh (or scripts/start.sh) builds it"
  if [[ -n "${SANDBOX_GVISOR_RUNTIME:-}" ]] && ! docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"$SANDBOX_GVISOR_RUNTIME\""; then
    die "Docker has no runtime \"$SANDBOX_GVISOR_RUNTIME\" (SANDBOX_GVISOR_RUNTIME, the gvisor tier): scripts/start.sh --gvisor registers runsc (docs/security.md)"
  fi
  [[ -d "$ROOT/node_modules" ]] || ensure_node_modules
}

# The launcher and what it imports, compiled with swc apart from dist/ (npm run build
# empties that one, and another build may be using it): about 2 s.
py_compile_launcher() {
  log "compiling the launcher (swc)"
  (cd "$ROOT" && npx swc apps libs packages migrations bench -d "$PY_OUT/build" --config-file .swcrc \
    --only "**/*.ts" --ignore "**/*.spec.ts" -q) || die "compiling the launcher failed"
  mkdir -p "$PY_OUT/build/libs/agents/src/python-tools"
  cp "$ROOT/libs/agents/src/python-tools/derive_schema.py" "$PY_OUT/build/libs/agents/src/python-tools/"
}
