#!/usr/bin/env bash
# What a new user of the npm packages gets. Packs @drydock/client and @drydock/cli
# (npm pack builds them), installs both tarballs into an empty project (npm init -y,
# npm install <tarballs>), type-checks and runs the README's TypeScript first session
# there, runs the installed `drydock` (--help, tenants create, login, run, sessions ls,
# batch submit, tenants rm), and installs the CLI globally from its folder (npm install -g
# and npm link, into temporary prefixes). Fails on the first thing that does not work.
#
#   bash scripts/pack-check.sh              # against a worker and a gateway of its own
#   bash scripts/pack-check.sh --url URL    # against a running platform (DRYDOCK_ADMIN_KEY set)
#
# Without --url it needs what scripts/test.sh has set up: the compiled tree (npm run
# build), PostgreSQL, Redis, Docker and the sandbox image, and their settings in the
# environment (DATABASE_URL, REDIS_URL, DRYDOCK_ADMIN_KEY, ARTIFACTS_SIGNING_SECRET, …).
# The packages are built from a copy under var/, so the checkout is left as it was; the
# project lives outside the checkout, so nothing resolves through the repository's own
# node_modules. Only the npm registry is reached (the packages' runtime dependencies).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/lib/services.sh"

URL=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --url) URL=${2:?--url takes the gateway URL}; shift 2 ;;
    *) die "unknown argument $1 (usage: bash scripts/pack-check.sh [--url URL])" ;;
  esac
done
[[ -n ${DRYDOCK_ADMIN_KEY:-} ]] || die "DRYDOCK_ADMIN_KEY is not set (the check creates a tenant of its own)"

WORK="$(mktemp -d)"
BUILD="$DRYDOCK_VAR/pack-check"
PIDS=()
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ((status == 0)) || { [[ -f $WORK/gateway.log ]] && tail -5 "$WORK/gateway.log" >&2; [[ -f $WORK/worker.log ]] && tail -5 "$WORK/worker.log" >&2; }
  rm -rf "$WORK" "$BUILD"
}
trap cleanup EXIT

fail() { printf '[drydock] pack-check failed: %s\n' "$*" >&2; exit 1; }
# expect_in <file> <text> <what>: the file holds the text.
expect_in() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$3: no \"$2\" in the output above"; }; }

log "packing @drydock/client and @drydock/cli (a copy in ${BUILD#"$ROOT"/})"
rm -rf "$BUILD"
mkdir -p "$BUILD"
tar -C "$ROOT/packages" --exclude=dist --exclude=node_modules -cf - client cli | tar -C "$BUILD" -xf -
# Inside the checkout, so that the build finds TypeScript in the repository's node_modules.
(cd "$BUILD" && npm pack --silent --pack-destination "$WORK" ./client ./cli >/dev/null)
CLIENT_TGZ=$(ls "$WORK"/drydock-client-*.tgz)
CLI_TGZ=$(ls "$WORK"/drydock-cli-*.tgz)
# Listed to files first: `tar | grep -q` would fail under pipefail when grep stops early.
tar -tzf "$CLIENT_TGZ" >"$WORK/client.files"
tar -tzf "$CLI_TGZ" >"$WORK/cli.files"
for entry in package/dist/index.js package/dist/index.d.ts package/package.json package/README.md; do
  grep -qx "$entry" "$WORK/client.files" || fail "$(basename "$CLIENT_TGZ") has no $entry"
done
for entry in package/dist/main.js package/README.md; do
  grep -qx "$entry" "$WORK/cli.files" || fail "$(basename "$CLI_TGZ") has no $entry"
done
[[ $(tar -xzOf "$CLI_TGZ" package/dist/main.js | sed -n 1p) == '#!/usr/bin/env node' ]] || fail "the CLI's dist/main.js does not start with #!/usr/bin/env node"
if grep -E '^package/(src|test|scripts|node_modules)/' "$WORK/client.files" "$WORK/cli.files"; then fail "a tarball carries sources, tests or node_modules"; fi

log "installing both tarballs into an empty project"
PROJECT="$WORK/project"
mkdir -p "$PROJECT"
cd "$PROJECT"
npm init -y >/dev/null
npm pkg set type=module
npm install --prefer-offline --no-audit --no-fund --loglevel=error "$CLIENT_TGZ" "$CLI_TGZ" >/dev/null
npm ls --all >/dev/null || fail "npm ls reports a problem with the installed tree"
[[ -x node_modules/.bin/drydock ]] || fail "no drydock binary in node_modules/.bin"

log "type-checking the README's TypeScript first session against the installed types"
# The first ```ts block under "## A first session".
awk '/^## A first session/ { on = 1 } on && /^```ts$/ { copy = 1; next } copy && /^```$/ { exit } copy' "$ROOT/README.md" >first-session.ts
grep -q "from '@drydock/client'" first-session.ts || fail "README.md has no TypeScript first session that imports @drydock/client"
cat >tsconfig.json <<EOF
{
  "compilerOptions": {
    "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "strict": true,
    "skipLibCheck": false, "types": ["node"], "typeRoots": ["$ROOT/node_modules/@types"], "outDir": "out"
  },
  "include": ["first-session.ts"]
}
EOF
"$ROOT/node_modules/.bin/tsc" -p . || fail "the README's example does not type-check against the installed @drydock/client"

if [[ -z $URL ]]; then
  log "starting a worker and a gateway (dist/)"
  [[ -f $ROOT/dist/apps/gateway/src/main.js ]] || die "dist/ is missing: npm run build first"
  node "$ROOT/dist/scripts/migrate.js" >/dev/null
  WORKER_ID="pack-check-$$" WORKER_POOL_SIZE=0 WORKER_DRAIN_TIMEOUT_MS=1000 WORKER_DRAIN_SETTLE_MS=200 LOG_LEVEL=info \
    node "$ROOT/dist/apps/worker/src/main.js" >"$WORK/worker.log" 2>&1 &
  PIDS+=($!)
  GATEWAY_HOST=127.0.0.1 GATEWAY_PORT=0 LOG_LEVEL=info node "$ROOT/dist/apps/gateway/src/main.js" >"$WORK/gateway.log" 2>&1 &
  PIDS+=($!)
  wait_for 60 "the gateway" grep -q 'listening on http' "$WORK/gateway.log"
  URL=$(grep -o 'listening on http://[^" ]*' "$WORK/gateway.log" | head -1 | sed 's/^listening on //; s/localhost/127.0.0.1/')
  wait_for 60 "the worker" grep -q "worker pack-check-$$ ready" "$WORK/worker.log"
fi
wait_for 60 "a ready platform at $URL" node -e 'fetch(process.argv[1] + "/health/ready").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$URL"

export DRYDOCK_URL="$URL"
unset DRYDOCK_API_KEY
# The CLI's saved login goes here, not into this user's ~/.config.
export XDG_CONFIG_HOME="$WORK/config"
BIN="$PROJECT/node_modules/.bin"

log "the installed drydock against $URL"
"$BIN/drydock" --help >help.txt || fail "drydock --help exited $?"
expect_in help.txt 'Usage: drydock' 'drydock --help'
[[ $("$BIN/drydock" --version) == "$(node -p 'require("./node_modules/@drydock/cli/package.json").version')" ]] || fail "drydock --version is not the package's version"
"$BIN/drydock" tenants create "pack-check-$$-$RANDOM" --json >tenant.json || fail "drydock tenants create exited $?"
API_KEY=$(node -p 'JSON.parse(require("fs").readFileSync("tenant.json", "utf8")).apiKey')
TENANT_ID=$(node -p 'JSON.parse(require("fs").readFileSync("tenant.json", "utf8")).id')
echo "$API_KEY" | "$BIN/drydock" login >/dev/null 2>login.txt || { cat login.txt >&2; fail "drydock login exited $?"; }
[[ $(stat -c %a "$XDG_CONFIG_HOME/drydock/config.json") == 600 ]] || fail "drydock login saved its file with mode $(stat -c %a "$XDG_CONFIG_HOME/drydock/config.json"), not 600"
echo 'print(sum(range(10)))' >sum.py
[[ $("$BIN/drydock" run sum.py) == 45 ]] || fail "drydock run sum.py (with the saved login) did not print 45"

log "running the README's first session"
DRYDOCK_API_KEY="$API_KEY" node out/first-session.js >first-session.txt 2>&1 || { cat first-session.txt >&2; fail "the README's example exited $?"; }
expect_in first-session.txt "ok [ '/summary.csv' ]" "the README's example"
expect_in first-session.txt 'count,2.0,2.0' "the README's example (the summary it reads back)"
"$BIN/drydock" sessions ls >sessions.txt || fail "drydock sessions ls exited $?"
expect_in sessions.txt 'chat-42' 'drydock sessions ls (the README session)'

set +e
"$BIN/drydock" batch submit "$ROOT/examples/batch-items.jsonl" >batch.txt 2>&1
status=$?
set -e
# The example's last item fails on purpose: exit 1, every item done.
[[ $status -eq 1 ]] || { cat batch.txt >&2; fail "drydock batch submit examples/batch-items.jsonl exited $status, not 1"; }
expect_in batch.txt '5/5 done' 'drydock batch submit'

log "installing the CLI globally from its folder (npm install -g, a temporary prefix)"
npm install -g --prefix "$WORK/global" --no-audit --no-fund --loglevel=error "$BUILD/cli" >/dev/null
[[ $("$WORK/global/bin/drydock" --version) == "$("$BIN/drydock" --version)" ]] || fail "the globally installed drydock does not run"
[[ $("$WORK/global/bin/drydock" run sum.py) == 45 ]] || fail "the globally installed drydock run sum.py did not print 45"
log "linking the CLI globally from its folder (npm link, another temporary prefix)"
(cd "$BUILD/cli" && NPM_CONFIG_PREFIX="$WORK/linked" npm link --no-audit --no-fund --loglevel=error >/dev/null)
[[ $("$WORK/linked/bin/drydock" run sum.py) == 45 ]] || fail "the npm-linked drydock run sum.py did not print 45"

# The check's tenant goes with everything it made (and the installed CLI's tenants rm is run).
"$BIN/drydock" tenants rm "$TENANT_ID" --yes >/dev/null || fail "drydock tenants rm --yes exited $?"

log "pack-check: the tarballs install into an empty project and work as the README shows"
