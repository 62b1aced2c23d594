#!/usr/bin/env bash
# The static binary's tests: builds build-static/gpuemu (scripts/build-static.sh, cached), then runs
# tests/static with pytest as root (chroot, debootstrap'd Debian roots). See docs/static-build.md.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# debootstrap makes the minimal Debian roots the tests run gpuemu in (cached under third_party/build,
# or $GPUEMU_THIRD_PARTY_DIR).
if ! PATH="$PATH:/usr/sbin:/sbin" command -v debootstrap >/dev/null; then
  echo "test-static: installing debootstrap" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# One run at a time per third-party folder: when GPUEMU_THIRD_PARTY_DIR is shared by several clones
# (scripts/test.sh), two runs must not build curl or debootstrap a root into it at once.
if [ -n "${GPUEMU_THIRD_PARTY_DIR:-}" ]; then
  mkdir -p "$GPUEMU_THIRD_PARTY_DIR"
  exec 9>"$GPUEMU_THIRD_PARTY_DIR/.test-static.lock"
  flock 9
fi

echo "test-static: building build-static/gpuemu (scripts/build-static.sh)" >&2
scripts/build-static.sh

echo "test-static: tests/static (pytest; skips print why, and fail under CI=true)" >&2
# -rs prints every skip's reason in the summary: nothing is skipped silently.
exec $SUDO env "PATH=$PATH" ${CI:+CI=$CI} ${GPUEMU_STATIC_BIN:+GPUEMU_STATIC_BIN=$GPUEMU_STATIC_BIN} \
  ${GPUEMU_THIRD_PARTY_DIR:+GPUEMU_THIRD_PARTY_DIR=$GPUEMU_THIRD_PARTY_DIR} \
  "${GPUEMU_PYTHON:-python3}" -m pytest -q -rs -p no:cacheprovider tests/static
