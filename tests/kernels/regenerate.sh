#!/usr/bin/env bash
# Regenerates the committed PTX next to each .cu here with nvcc (pip install nvidia-cuda-nvcc).
# nvcc is taken from $GPUEMU_NVCC, else PATH, else the pip wheel's site-packages location.
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${GPUEMU_NVCC:-$(command -v nvcc || true)}
if [ -z "$NVCC" ]; then
  NVCC=$(python3 - <<'PY'
import glob, site
dirs = site.getsitepackages() + [site.getusersitepackages()]
hits = [p for d in dirs for p in glob.glob(d + "/nvidia/cu*/bin/nvcc") + glob.glob(d + "/nvidia/cuda_nvcc/bin/nvcc")]
print(hits[0] if hits else "")
PY
)
fi
if [ -z "$NVCC" ]; then
  echo "regenerate.sh: nvcc not found; install it with: python3 -m pip install nvidia-cuda-nvcc" >&2
  exit 1
fi
for cu in *.cu; do
  "$NVCC" -ptx -arch=sm_80 -lineinfo "$cu" -o "${cu%.cu}.ptx"
  echo "regenerate.sh: ${cu%.cu}.ptx" >&2
done
