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
ensure_registry
# gVisor as the Docker runtime "runsc" (a dockerd this script starts registers it, with
# the checkpoint API): hibernate.e2e and the suites of the gvisor tier run under it.
export DRYDOCK_GVISOR=1
ensure_docker
ensure_node_modules
ensure_chromium
# The kernel's syscall tables (asm/unistd_*.h), from which sandbox-hardening.e2e takes
# the numbers of every denied call on each ABI.
apt_install linux-libc-dev
# egress.e2e makes a certificate for its HTTPS target with the openssl command.
command -v openssl >/dev/null || apt_install openssl
build_images

export NODE_ENV=test
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://drydock:drydock@127.0.0.1:5432/drydock_test}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
# The outage and fault tests stop and restart our Redis (the one on $REDIS_SOCKET): the
# Redis the tests reach over TCP must be that one, not another checkout's on 6379.
if [[ -z "${TEST_REDIS_URL:-}" ]] &&
  [[ "$(redis-cli -s "$REDIS_SOCKET" info server | sed -n 's/^run_id://p')" != "$(redis-cli -p 6379 info server | sed -n 's/^run_id://p')" ]]; then
  die "the Redis on 127.0.0.1:6379 is not this checkout's (ours answers on $REDIS_SOCKET only), and the tests stop and restart theirs: stop that one, or set TEST_REDIS_URL to a Redis they may restart"
fi
export DRYDOCK_ADMIN_KEY="test-admin-key-0123456789abcdef"
export SANDBOX_IMAGE="${SANDBOX_IMAGE:-drydock/sandbox:latest}"
# The template registry (ensure_registry): registry.e2e pushes to and pulls from it.
export TEMPLATE_REGISTRY="${TEMPLATE_REGISTRY:-$REGISTRY_ADDR}"
export ARTIFACTS_SIGNING_SECRET="test-signing-secret-0123456789abcdef0123"
export ARTIFACTS_DIR="$DRYDOCK_VAR/test-artifacts"
# The workers reach their sandboxes over Unix sockets here (decision 010), as
# scripts/start.sh runs them; the attached-stream channel has its own e2e case.
export SANDBOX_CHANNEL_DIR="$DRYDOCK_VAR/test-channels"

log "checking the layering rules (dependency-cruiser, .dependency-cruiser.cjs)"
(cd "$ROOT" && npm run -s check:layers)

log "type-checking (tsc $(cd "$ROOT" && npx tsc --version | cut -d' ' -f2))"
(cd "$ROOT" && npx tsc -p .)

log "Python tests (unittest): the REPL server, the agent's tool-schema derivation"
PY_RAN=0
PY_FAILED=0
# The REPL's tests start the supervisor as other users (nobody, the two sandbox users),
# who must be able to read it: they run from a world-readable copy, wherever the
# checkout lives (a `mktemp -d` clone is closed to other users).
PY_COPY="$(mktemp -d)"
trap 'rm -rf "$PY_COPY"' EXIT
chmod 755 "$PY_COPY"
cp -r "$ROOT/docker/sandbox/repl" "$PY_COPY/repl"
chmod -R a+rX "$PY_COPY/repl"
# <folder>:<unittest arguments>; the REPL's tests are split by concern (test_*.py).
for suite in "$PY_COPY/repl:discover -p test_*.py" "$ROOT/libs/agents/src/python-tools:test_derive_schema"; do
  PY_LOG="$DRYDOCK_VAR/log/python-$(basename "${suite%%:*}").log"
  set +e
  # Split into words on purpose, never globbed: `test_*.py` is discover's pattern.
  # shellcheck disable=SC2086
  (set -f; cd "${suite%%:*}" && python3 -m unittest ${suite#*:}) 2>&1 | tee "$PY_LOG" | tail -4
  status=${PIPESTATUS[0]}
  set -e
  ran=$(sed -n 's/^Ran \([0-9]*\) tests\? .*/\1/p' "$PY_LOG")
  failed=$(sed -n 's/^FAILED (.*failures=\([0-9]*\).*/\1/p; s/^FAILED (.*errors=\([0-9]*\).*/\1/p' "$PY_LOG" | head -1)
  failed=${failed:-0}
  [[ $status -ne 0 && $failed -eq 0 ]] && failed=1
  PY_RAN=$((PY_RAN + ${ran:-0}))
  PY_FAILED=$((PY_FAILED + failed))
done

# Some end-to-end tests run a worker as a process of its own, from the compiled tree.
build_app

log "client types match the OpenAPI document; @drydock/client compiles with browser types only"
(cd "$ROOT" && bash scripts/client-types.sh --check && npx tsc -p packages/client/tsconfig.json --noEmit)

log "unit and end-to-end tests (jest)"
cd "$ROOT"
JEST_JSON="$DRYDOCK_VAR/jest-results.json"
rm -f "$JEST_JSON"
set +e
# --forceExit: the results are written when the last test ends; a handle some suite left
# open (a worker's connection, a channel to a container) must not hold CI until its time
# limit. Jest still says so ("Force exiting Jest"); `npx jest` run by hand waits on it.
NODE_OPTIONS="--experimental-vm-modules --no-warnings" npx jest --ci --forceExit --json --outputFile="$JEST_JSON" "$@"
JEST_STATUS=$?
set -e
# The npm packages as a new user gets them (packed, installed into an empty project, the
# README's example and commands run there; about 20 s). After jest: it needs dist/ and
# starts a worker and a gateway of its own, which must not run beside the suites.
log "npm packages: pack, install into an empty project, run the README (scripts/pack-check.sh)"
PACK_LOG="$DRYDOCK_VAR/log/pack-check.log"
PACK_STARTED=$SECONDS
set +e
bash "$ROOT/scripts/pack-check.sh" >"$PACK_LOG" 2>&1
PACK_STATUS=$?
set -e
PACK_OUTCOME="passed in $((SECONDS - PACK_STARTED)) s"
if [[ $PACK_STATUS -ne 0 ]]; then
  tail -25 "$PACK_LOG"
  PACK_OUTCOME="FAILED after $((SECONDS - PACK_STARTED)) s (log: ${PACK_LOG#"$ROOT"/})"
fi

# The Python SDK (packages/python): its wheel built offline and installed into a fresh
# venv, its unittest suites against a platform of its own, the README's Python example.
# After jest too (its own database and Redis db; about a minute).
command -v mypy >/dev/null || apt_install mypy
log "Python SDK: wheel, venv, tests against the platform (packages/python/scripts/test.sh)"
PYSDK_LOG="$DRYDOCK_VAR/log/python-sdk.log"
set +e
bash "$ROOT/packages/python/scripts/test.sh" >"$PYSDK_LOG" 2>&1
PYSDK_STATUS=$?
set -e
PYSDK_RAN=$(sed -n 's/^Ran \([0-9]*\) tests\? .*/\1/p' "$PYSDK_LOG" | tail -1)
[[ $PYSDK_STATUS -ne 0 ]] && tail -30 "$PYSDK_LOG"

read -r J_PASSED J_FAILED J_SKIPPED < <(node -e '
  const fs = require("fs"); const f = process.argv[1];
  const r = fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, "utf8")) : { numPassedTests: 0, numFailedTests: 1, numPendingTests: 0 };
  console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrorTestSuites || 0), r.numPendingTests);' "$JEST_JSON")

PASSED=$(( ${PY_RAN:-0} - PY_FAILED + J_PASSED ))
FAILED=$(( PY_FAILED + J_FAILED ))
echo
echo "python: $(( ${PY_RAN:-0} - PY_FAILED )) passed, $PY_FAILED failed"
echo "jest: $J_PASSED passed, $J_FAILED failed, $J_SKIPPED skipped"
echo "pack-check: $PACK_OUTCOME"
echo "python SDK: ${PYSDK_RAN:-0} tests, $([[ $PYSDK_STATUS -eq 0 ]] && echo passed || echo "FAILED (log: ${PYSDK_LOG#"$ROOT"/})")"
echo "total: $PASSED passed, $FAILED failed"
[[ $PY_FAILED -eq 0 && $JEST_STATUS -eq 0 && $PACK_STATUS -eq 0 && $PYSDK_STATUS -eq 0 ]]
