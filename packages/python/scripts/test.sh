#!/usr/bin/env bash
# The Python SDK's tests against the real platform: builds the wheel and the sdist
# (pyproject.toml, setuptools, offline), installs the wheel into a fresh venv, compiles
# the launcher (tests/platform.ts: a gateway and a worker in one Node process, on the
# real PostgreSQL, Redis and Docker), runs every unittest module with the venv's Python,
# then the README's Python first session from the installed wheel. Exits non-zero on any
# failure and ends with `Ran N tests`.
#
# The platform's settings: scripts/platform.sh (DRYDOCK_PY_DATABASE_URL,
# DRYDOCK_PY_REDIS_URL, SANDBOX_IMAGE, TEMPLATE_REGISTRY from the environment, else
# defaults apart from scripts/test.sh's). DRYDOCK_PY_SLOW=1 adds the test that builds a
# template for real (about a minute); DRYDOCK_TEST_URL (with DRYDOCK_ADMIN_KEY) tests a
# running gateway instead of booting one.
set -euo pipefail
PKG="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$PKG/../.." && pwd)"
source "$ROOT/scripts/lib/services.sh"
source "$PKG/scripts/platform.sh"
START=$SECONDS
OUT="$PY_OUT"
PYTHON="${PYTHON:-python3}"
py_platform_env
py_check_services

# -- the annotations, strictly (pyproject's [tool.mypy]), where mypy is installed
# (Debian's package `mypy`); the wheel ships py.typed, so they are part of its contract.
if command -v mypy >/dev/null; then
  log "type-checking the package (mypy --strict, $(mypy --version | cut -d' ' -f2))"
  (cd "$PKG" && mypy) || die "mypy found errors"
else
  log "mypy is not installed (apt install mypy): the annotations are not checked"
fi

# -- the wheel and the sdist, with the build frontend of Debian's python3-build when there
# is one, else setuptools' PEP 517 hooks called directly (the same backend and result).
builder=""
for candidate in "$PYTHON" /usr/bin/python3; do
  if "$candidate" -c 'import build, setuptools, wheel' 2>/dev/null; then builder="$candidate frontend"; break; fi
done
if [[ -z "$builder" ]]; then
  for candidate in "$PYTHON" /usr/bin/python3; do
    if "$candidate" -c 'import setuptools, wheel' 2>/dev/null; then builder="$candidate hooks"; break; fi
  done
fi
if [[ -z "$builder" ]]; then
  apt_install python3-setuptools python3-wheel python3-build
  builder="/usr/bin/python3 frontend"
fi
build_py="${builder% *}"
rm -rf "$OUT/dist" "$PKG/build" "$PKG"/src/*.egg-info
log "building the wheel and the sdist ($build_py, ${builder#* })"
if [[ "${builder#* }" == frontend ]]; then
  (cd "$PKG" && "$build_py" -m build --no-isolation --sdist --wheel --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1) ||
    { tail -20 "$OUT/build.log" >&2; die "the package build failed"; }
else
  (cd "$PKG" && "$build_py" -c 'import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1]); b.build_wheel(sys.argv[1])' "$OUT/dist" >"$OUT/build.log" 2>&1) ||
    { tail -20 "$OUT/build.log" >&2; die "the package build failed"; }
fi
rm -rf "$PKG/build" "$PKG"/src/*.egg-info
shopt -s nullglob
wheels=("$OUT"/dist/drydock_client-*-py3-none-any.whl)
sdists=("$OUT"/dist/drydock[-_]client-*.tar.gz)
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 && ${#sdists[@]} -eq 1 ]] || die "expected one wheel and one sdist in $OUT/dist"
wheel=${wheels[0]}
sdist=${sdists[0]}
"$PYTHON" - "$wheel" "$sdist" <<'PY' || die "the wheel or the sdist lacks a file"
import sys, tarfile, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
assert {"drydock/py.typed", "drydock/deepagents.py", "drydock/aio.py"} <= names, sorted(names)
assert not any(n.startswith("tests/") for n in names), "tests in the wheel"
members = {m.split("/", 1)[1] for m in tarfile.open(sys.argv[2]).getnames() if "/" in m}
assert {"pyproject.toml", "README.md", "src/drydock/py.typed"} <= members, sorted(members)
PY

# -- a fresh venv with the wheel (no index: it has no dependencies)
rm -rf "$OUT/venv"
# Debian's python3 makes venvs with pip only with python3-venv (ensurepip) installed.
"$PYTHON" -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
"$PYTHON" -m venv "$OUT/venv"
"$OUT/venv/bin/python" -m pip install -q --no-index --no-deps --disable-pip-version-check "$wheel"
VENV_PY="$OUT/venv/bin/python"
"$VENV_PY" -c 'import drydock, sys; assert "site-packages" in drydock.__file__, drydock.__file__'

py_compile_launcher

# -- the tests and the README's first session, against one platform
README_PY="$OUT/readme_first_session.py"
awk '/<!-- python-first-session -->/{on=1; next} /<!-- \/python-first-session -->/{on=0} on' "$ROOT/README.md" |
  sed -n '/^```python$/,/^```$/p' | sed '1d;$d' >"$README_PY"
[[ -s "$README_PY" ]] || die "the README has no Python first session between <!-- python-first-session --> markers"

log "running the tests (unittest, $("$VENV_PY" --version)) against an in-process gateway and worker"
: >"$OUT/platform.log"
set +e
(cd "$PKG/tests" && "$VENV_PY" harness.py run -- bash -c '
    set -o pipefail
    "$0" -m unittest discover -v -s . -p "test_*.py" 2>&1 | tee "$1/unittest.log"
    tests=${PIPESTATUS[0]}
    echo "--- the README first session, from the installed wheel:"
    (cd "$(mktemp -d)" && "$0" "$2") | tee "$1/readme.out"
    readme=${PIPESTATUS[0]}
    [[ $readme -eq 0 ]] && grep -qx "42" "$1/readme.out" || { echo "the README example did not print 42"; readme=1; }
    exit $((tests != 0 || readme != 0))
  ' "$VENV_PY" "$OUT" "$README_PY")
status=$?
set -e
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$OUT/unittest.log" | tail -1)
log "wheel $(basename "$wheel"), sdist $(basename "$sdist"); $((SECONDS - START)) s in all"
echo "Ran ${ran:-0} tests"
if [[ $status -ne 0 ]]; then
  log "FAILED (unittest log: $OUT/unittest.log; platform log: $OUT/platform.log)"
  exit 1
fi
log "OK"
