#!/usr/bin/env bash
# Builds the offline sandbox base image (python3 with the data-analysis set a code
# interpreter is expected to have, and the everyday command-line tools agents reach
# for) from Debian packages with debootstrap and imports it with `docker import`. Used
# on machines that reach Debian's mirror but no container registry. Skips the work
# when the image already exists and was built by this very script: the image carries
# the script's sha256 in the label drydock.base.script-sha256, so a changed package
# list (or any other change here) rebuilds it. DRYDOCK_REBUILD_BASE=1 forces a rebuild.
set -euo pipefail

IMAGE="${DRYDOCK_BASE_IMAGE:-drydock/sandbox-base:bookworm}"
SUITE="${DRYDOCK_BASE_SUITE:-bookworm}"
MIRROR="${DRYDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Python and its data stack, then the shell tools an agent expects in a Unix sandbox
# (docker/sandbox/README.md). bash, coreutils, findutils, grep and sed are Essential in
# Debian (minbase has them anyway); they are named so that this list is the promise
# test/e2e/sandbox-image.e2e-spec.ts checks. No compiler is asked for here.
PACKAGES="python3,python3-numpy,python3-pandas,python3-matplotlib,ca-certificates"
# What a code interpreter is expected to import (docker/sandbox/README.md, "Python
# packages"): statistics and models, spreadsheets, images, symbolic maths, graphs, HTML
# and XML; then the files users hand an agent (Word, PDF), YAML, text tables, an HTTP
# client and pip (for when a session is allowed a network).
PACKAGES+=",python3-scipy,python3-sklearn,python3-seaborn,python3-statsmodels,python3-openpyxl,python3-pil"
PACKAGES+=",python3-sympy,python3-networkx,python3-bs4,python3-lxml,python3-docx,python3-pypdf,python3-yaml"
PACKAGES+=",python3-tabulate,python3-requests,python3-pip"
PACKAGES+=",bash,coreutils,findutils,grep,sed,gawk,procps,git,jq,sqlite3,file,zip,unzip,xz-utils,less"

LABEL=drydock.base.script-sha256
RECIPE="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
if [[ "${DRYDOCK_REBUILD_BASE:-0}" != "1" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  built="$(docker image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)"
  if [[ "$built" == "$RECIPE" ]]; then
    echo "base image $IMAGE already present (built by this build-base.sh)"
    exit 0
  fi
  echo "base image $IMAGE was built by another build-base.sh (${built:-no $LABEL label}): rebuilding"
fi

command -v debootstrap >/dev/null || {
  echo "debootstrap is missing: apt-get install -y debootstrap" >&2
  exit 1
}

ROOTFS="$(mktemp -d /var/tmp/drydock-rootfs.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT

echo "debootstrap $SUITE into $ROOTFS (a few minutes on first run)"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" >/tmp/drydock-debootstrap.log 2>&1 || {
  tail -30 /tmp/drydock-debootstrap.log >&2
  exit 1
}

# Trim what a sandbox never needs: package caches, docs, man pages, apt lists.
chroot "$ROOTFS" apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* \
  "$ROOTFS"/usr/share/info/* "$ROOTFS"/var/cache/debconf/*-old
# Pre-build matplotlib's font cache so the first plot in a session is not slow and
# does not need a writable home at image build time.
chroot "$ROOTFS" env MPLCONFIGDIR=/etc/matplotlib-cache python3 -c "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot" || true

tar -C "$ROOTFS" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  --change "LABEL $LABEL=$RECIPE" \
  - "$IMAGE" >/dev/null
echo "built $IMAGE"
