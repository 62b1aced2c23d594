#!/usr/bin/env bash
# Quick start, step 1: installs what is missing (Debian packages, Python packages), builds gpuemu,
# and runs the CI job on the bundled example project (whose buggy kernels it must catch).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(cmake ninja-build g++ pkg-config libtomlplusplus-dev nlohmann-json3-dev libb2-dev
  libcli11-dev libfmt-dev libgtest-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev libpugixml-dev libnng-dev
  libmbedtls-dev libxml2-utils clang-format nginx libnginx-mod-http-dav-ext python3 python3-pip)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PY=${GPUEMU_PYTHON:-python3}
if ! "$PY" -c 'import numpy, pytest, jsonschema' 2>/dev/null; then
  echo "setup: installing Python packages (numpy, pytest, jsonschema)" >&2
  "$PY" -m pip install -q numpy pytest jsonschema
fi
"$PY" -m pip install -q -e python >/dev/null

BUILD=${GPUEMU_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD"

echo "setup: running the CI job on examples/ (its buggy kernels must be caught)" >&2
set +e
"$BUILD/gpuemu" --config examples/gpuemu.toml fuzz --iterations 100
rc=$?
set -e
if [ "$rc" -eq 1 ]; then
  echo "setup: done. gpuemu caught the example project's buggy kernels (exit 1, as intended)." >&2
  exit 0
fi
echo "setup: the example run ended with exit code $rc, expected 1 (failures found)" >&2
exit 1
