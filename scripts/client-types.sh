#!/usr/bin/env bash
# Regenerates @drydock/client's types (packages/client/src/generated/openapi.ts) from the
# gateway's OpenAPI document, so a route change that breaks the client breaks its build.
# --check: fail instead of writing when the committed types are stale (scripts/test.sh).
# Needs the compiled tree (npm run build). openapi-typescript lives in its own install
# (tools/openapi-types) because it needs TypeScript 5's compiler API; the repo uses 7.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TOOL=tools/openapi-types
[[ -x $TOOL/node_modules/.bin/openapi-typescript ]] || npm ci --prefix "$TOOL" --no-audit --no-fund --loglevel=error
mkdir -p var
node dist/scripts/openapi.js var/openapi.json
TARGET=packages/client/src/generated/openapi.ts
OUT=$TARGET
[[ ${1:-} == --check ]] && OUT=var/openapi.generated.ts
node "$TOOL/node_modules/.bin/openapi-typescript" var/openapi.json --default-non-nullable false -o "$OUT" --silent
if [[ ${1:-} == --check ]] && ! cmp -s "$OUT" "$TARGET"; then
  diff -u "$TARGET" "$OUT" | head -40 >&2
  echo "packages/client/src/generated/openapi.ts is stale: the API changed. Run npm run build && npm run client:types, then fix the client where it no longer compiles." >&2
  exit 1
fi
