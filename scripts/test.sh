#!/usr/bin/env bash
# Runs every test suite against real PostgreSQL, Redis and Docker, installing and
# starting them first when they are missing. This is the README's test command and
# what CI (.ci/run) calls.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/lib/services.sh"

ensure_postgres
ensure_database drydock_test
ensure_redis
ensure_docker
ensure_node_modules
build_images

export NODE_ENV=test
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://drydock:drydock@127.0.0.1:5432/drydock_test}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
export DRYDOCK_ADMIN_KEY="test-admin-key-0123456789abcdef"
export SANDBOX_IMAGE="${SANDBOX_IMAGE:-drydock/sandbox:latest}"

log "type-checking (tsc $(cd "$ROOT" && npx tsc --version | cut -d' ' -f2))"
(cd "$ROOT" && npx tsc -p .)

log "REPL server tests (python unittest)"
(cd "$ROOT/docker/sandbox/repl" && python3 -m unittest -q test_repl)

log "unit and end-to-end tests (jest)"
cd "$ROOT"
NODE_OPTIONS="--experimental-vm-modules --no-warnings" npx jest --ci "$@"
