#!/usr/bin/env bash
# Builds the offline sandbox base image (python3 + numpy, pandas, matplotlib) from
# Debian packages with debootstrap and imports it with `docker import`. Used on
# machines that reach Debian's mirror but no container registry. Skips the work when
# the image already exists (set DRYDOCK_REBUILD_BASE=1 to force).
set -euo pipefail

IMAGE="${DRYDOCK_BASE_IMAGE:-drydock/sandbox-base:bookworm}"
SUITE="${DRYDOCK_BASE_SUITE:-bookworm}"
MIRROR="${DRYDOCK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES="python3,python3-numpy,python3-pandas,python3-matplotlib,ca-certificates"

if [[ "${DRYDOCK_REBUILD_BASE:-0}" != "1" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "base image $IMAGE already present"
  exit 0
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
  - "$IMAGE" >/dev/null
echo "built $IMAGE"
