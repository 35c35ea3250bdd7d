#!/usr/bin/env bash
# bench/python-client (see run.py): boots the platform the Python SDK's tests use (its
# launcher compiled as packages/python/scripts/test.sh does) and runs the bench with the
# SDK from packages/python/src. Options go to run.py: --n, --items, --url/--admin-key
# (a running gateway: nothing is booted, and the test settings are left out).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/lib/services.sh"
source "$ROOT/packages/python/scripts/platform.sh"
if [[ " $* " != *" --url "* ]]; then
  py_platform_env
  py_check_services
  py_compile_launcher
fi
PYTHONPATH="$ROOT/packages/python/src" exec "${PYTHON:-python3}" "$ROOT/bench/python-client/run.py" "$@"
