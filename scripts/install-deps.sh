#!/usr/bin/env bash
# Installs what gpuemu needs and is missing: Debian packages (apt-get) and Python packages (pip).
# Idempotent and quick when everything is present; setup.sh and test.sh both call it. With --clang it
# also installs clang-19 and its runtimes, which the test build and the libFuzzer harnesses use.
set -euo pipefail
cd "$(dirname "$0")/.."

# Installs the Debian packages named that are not installed yet (one apt-get run).
install_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "install-deps: installing Debian packages: ${missing[*]}" >&2
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

if [ "${1:-}" = "--clang" ]; then
  # Debian 12's clang-14 cannot compile the project's std::expected against libstdc++ 12; clang-19
  # (bookworm main) can. libclang-rt-19-dev holds ASan, UBSan and libFuzzer. ccache: the test builds
  # (scripts/test.sh) compile mostly what the last run compiled.
  install_debian_packages clang-19 libclang-rt-19-dev ccache
  exit 0
elif [ $# -gt 0 ]; then
  echo "install-deps: unknown argument '$1' (the only one is --clang)" >&2
  exit 2
fi

# file: scripts/cross-macos.sh checks the architecture of the Mach-O it links.
install_debian_packages cmake ninja-build g++ pkg-config libtomlplusplus-dev nlohmann-json3-dev libb2-dev \
  libcli11-dev libfmt-dev libgtest-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev libpugixml-dev libnng-dev \
  libmbedtls-dev libxml2-utils clang-format nginx libnginx-mod-http-dav-ext python3 python3-pip shellcheck \
  file

# Node.js and npm: the VS Code extension's build and tests (vscode/, node --test). Machines that
# already have a Node (e.g. from nodesource or nvm) keep it; Debian 12's nodejs 18 is enough.
if [ -f vscode/package.json ] && ! command -v npm >/dev/null; then
  echo "install-deps: installing Node.js and npm (Debian packages) for the VS Code extension" >&2
  install_debian_packages nodejs npm
fi

PY=${GPUEMU_PYTHON:-python3}
if ! "$PY" -c 'import numpy, pytest, jsonschema, xdist, yaml' 2>/dev/null; then
  echo "install-deps: installing Python packages (numpy, pytest, pytest-xdist, jsonschema, pyyaml)" >&2
  "$PY" -m pip install -q numpy pytest pytest-xdist jsonschema pyyaml
fi
# pynng: the Python client's NNG transport to the daemon (python/gpuemu/_internal/wire/transport.py).
if ! "$PY" -c 'import pynng' 2>/dev/null; then
  echo "install-deps: installing pynng (the Python client's NNG transport)" >&2
  "$PY" -m pip install -q pynng
fi
# moto's S3 server with signature checking on: the real S3 implementation baseline push and pull are
# tested against (tests/servers/moto_s3.py); it brings botocore, whose signer the home-made server
# (tests/servers/s3_server.py) checks every request with. Pinned: its auth switch is version-specific.
if ! "$PY" -c 'import moto, flask, botocore, sys; sys.exit(moto.__version__ != "5.2.5")' 2>/dev/null; then
  echo "install-deps: installing moto[server] 5.2.5 (S3 with signature checks, botocore's SigV4 signer)" >&2
  "$PY" -m pip install -q "moto[server]==5.2.5"
fi
# Third-party judges of gpuemu's outputs (tests/e2e/test_third_party_checks.py), pinned: securesystemslib
# verifies signed reports as DSSE, check-jsonschema validates action.yml and workflows against
# SchemaStore's GitHub schemas (vendored in the package: no network at test time).
if ! "$PY" -c 'import securesystemslib, sys; sys.exit(securesystemslib.__version__ != "1.6.0")' 2>/dev/null \
  || [ "$(check-jsonschema --version 2>/dev/null)" != "check-jsonschema, version 0.39.0" ]; then
  echo "install-deps: installing securesystemslib 1.6.0 and check-jsonschema 0.39.0 (third-party report checks)" >&2
  "$PY" -m pip install -q "securesystemslib[crypto]==1.6.0" "check-jsonschema==0.39.0"
fi
# CUDA's ptxas/nvcc/cuobjdump from PyPI: lint tests check real register and spill numbers with them.
if ! "$PY" -c 'import nvidia.cu13' 2>/dev/null && ! "$PY" -c 'import nvidia.cuda_nvcc' 2>/dev/null; then
  echo "install-deps: installing CUDA tool wheels (nvidia-cuda-nvcc, nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)" >&2
  "$PY" -m pip install -q nvidia-cuda-nvcc nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
fi
# The frameworks gpuemu.frameworks adapts and the Triton interpreter (python/tests/test_frameworks_*.py
# test every adapter against them; under CI=true a missing one fails). CPU use; torch's wheel brings
# its CUDA libraries (about 5 GB, 2 minutes; pip's cache keeps reruns quick). Bounds as pyproject.toml.
if ! "$PY" -c 'import torch, triton, jax, tensorflow, ml_dtypes' 2>/dev/null; then
  echo "install-deps: installing torch, triton, jax, tensorflow and ml_dtypes (framework adapters, interpreters)" >&2
  "$PY" -m pip install -q "torch>=2.2" "triton>=3.2" "jax>=0.4.30" "tensorflow>=2.16" "ml_dtypes>=0.4"
fi
# Liger-Kernel: a widely used open-source Triton library whose unmodified kernels the end-to-end suite
# gates on the CPU (tests/e2e/test_open_source_triton.py). Pinned, and without its dependencies (torch
# and triton, installed above), so a new release never changes the test or the frameworks under it.
if ! "$PY" -c 'import liger_kernel' 2>/dev/null; then
  echo "install-deps: installing liger-kernel 0.8.5 (open-source Triton kernels the tests run unmodified)" >&2
  "$PY" -m pip install -q --no-deps "liger-kernel==0.8.5"
fi
# FlagGems: the largest open-source Triton operator library, its ops gated on the CPU through their own
# code paths (tests/e2e/test_flag_gems.py). Pinned and without its dependencies (its numpy and torch pins
# would replace the frameworks above); of those, it imports sqlalchemy and PyYAML at import time.
# (find_spec: importing flag_gems without a GPU needs GEMS_VENDOR, docs/frameworks.md "Triton libraries".)
if ! "$PY" -c 'import importlib.util as u, sys; sys.exit(not all(map(u.find_spec, ("flag_gems", "sqlalchemy", "yaml"))))' 2>/dev/null; then
  echo "install-deps: installing flag-gems 5.0.2 (open-source Triton ops the tests run unmodified)" >&2
  "$PY" -m pip install -q --no-deps "flag-gems==5.0.2"
  "$PY" -m pip install -q "sqlalchemy==2.0.48" "PyYAML>=6.0"
fi
# zig, pinned: scripts/cross-macos.sh cross-compiles gpuemu for macOS with it (docs/platforms.md).
ZIGLANG_VERSION=0.17.0
if [ "$("$PY" -c 'import importlib.metadata as m; print(m.version("ziglang"))' 2>/dev/null)" != "$ZIGLANG_VERSION" ]; then
  echo "install-deps: installing ziglang $ZIGLANG_VERSION (zig, for the macOS cross-compile)" >&2
  "$PY" -m pip install -q "ziglang==$ZIGLANG_VERSION"
fi
if [ -f python/pyproject.toml ] && ! "$PY" -c "import gpuemu" 2>/dev/null; then
  "$PY" -m pip install -q -e python >/dev/null
fi

# actionlint lints .github and examples/workflows (tests/e2e/test_action.py); with shellcheck
# installed it also checks the shell of every run: step. From the Go module proxy, pinned.
ACTIONLINT_VERSION=v1.7.12
if ! command -v actionlint >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1; then
    echo "install-deps: go is not installed: cannot install actionlint (the workflow lint test skips, and fails under CI=true)" >&2
  elif [ ! -x "$(go env GOPATH)/bin/actionlint" ]; then
    echo "install-deps: installing actionlint $ACTIONLINT_VERSION (go install)" >&2
    go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  fi
fi
