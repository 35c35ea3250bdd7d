#!/usr/bin/env bash
# Submits a batch with the drydock CLI, waits for it (progress on stderr), then saves every
# item's record and prints the ones that did not end ok.
#
#   export DRYDOCK_URL=http://localhost:8080 DRYDOCK_API_KEY=ddk_…
#   examples/cli-batch.sh [items.jsonl] [results.jsonl]
#
# Exit codes are docs/cli.md's: 1 means some items failed (their results are still saved),
# 3 a platform error, 4 no API key.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

ITEMS="${1:-$ROOT/examples/batch-items.jsonl}"
RESULTS="${2:-results.jsonl}"
# The CLI built in this repository (npm run build); an installed `drydock` works the same.
drydock() { node "$ROOT/dist/packages/cli/src/main.js" "$@"; }

# The id is the only thing submit prints on stdout; progress and the summary go to stderr.
BATCH_ID="$(drydock batch submit "$ITEMS" --concurrency 4 --timeout 60000)"
status=$?
if [ -z "$BATCH_ID" ]; then exit "$status"; fi   # nothing was submitted (2, 3 or 4)

drydock batch results "$BATCH_ID" > "$RESULTS" || exit $?
echo "$(wc -l < "$RESULTS") results in $RESULTS" >&2

if [ "$status" -eq 1 ]; then
  echo "items that did not end ok:" >&2
  # Without jq: grep the NDJSON for records whose status is not "ok".
  grep -v '"status":"ok"' "$RESULTS" | cut -c1-200 >&2
fi
exit "$status"
