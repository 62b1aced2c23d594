#!/usr/bin/env bash
# The static binary's tests: builds build-static/gpuemu (scripts/build-static.sh, cached), then runs
# tests/static with pytest as root (chroot, debootstrap'd Debian roots). See docs/static-build.md.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# debootstrap makes the minimal Debian roots the tests run gpuemu in (cached under third_party/build).
if ! PATH="$PATH:/usr/sbin:/sbin" command -v debootstrap >/dev/null; then
  echo "test-static: installing debootstrap" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

echo "test-static: building build-static/gpuemu (scripts/build-static.sh)" >&2
scripts/build-static.sh

echo "test-static: tests/static (pytest; skips print why, and fail under CI=true)" >&2
# -rs prints every skip's reason in the summary: nothing is skipped silently.
exec $SUDO env "PATH=$PATH" ${CI:+CI=$CI} ${GPUEMU_STATIC_BIN:+GPUEMU_STATIC_BIN=$GPUEMU_STATIC_BIN} \
  "${GPUEMU_PYTHON:-python3}" -m pytest -q -rs -p no:cacheprovider tests/static
