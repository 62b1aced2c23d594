#!/usr/bin/env bash
# Cross-compiles gpuemu for macOS (x86_64-macos and aarch64-macos) with zig (PyPI ziglang, pinned in
# scripts/install-deps.sh): every source file compiles, -Werror, against macOS's headers, and the CLI
# links against macOS's libSystem and libc++ (docs/platforms.md, "How each platform is checked").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

OUT=${GPUEMU_CROSS_DIR:-build-cross}
JOBS=${GPUEMU_JOBS:-$(nproc)}
TARGETS=${GPUEMU_CROSS_TARGETS:-x86_64-macos aarch64-macos}
PY=${GPUEMU_PYTHON:-python3}
if ! ZIG=$("$PY" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null); then
  echo "cross-macos: ziglang is not installed: run scripts/install-deps.sh" >&2
  exit 1
fi
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
SYSLIB=/usr/lib/$MULTIARCH

# The headers a macOS build may see besides zig's own: the header-only libraries (nlohmann/json,
# toml++, fmt, CLI11) and the API headers of the libraries with no macOS build here (OpenSSL, SQLite,
# libb2, NNG, libcurl, zlib, pugixml). Only these folders are copied, so glibc's headers never leak in.
stage_headers() {
  local inc=$1/include
  # cp -p keeps Debian's timestamps, so a rerun in the same build directory recompiles nothing.
  rm -rf "$inc" && mkdir -p "$inc/openssl"
  cp -rp /usr/include/nlohmann /usr/include/toml++ /usr/include/fmt /usr/include/CLI /usr/include/nng "$inc/"
  cp -p /usr/include/openssl/*.h "/usr/include/$MULTIARCH/openssl/"*.h "$inc/openssl/"
  cp -rp "/usr/include/$MULTIARCH/curl" "$inc/"
  cp -p /usr/include/sqlite3.h /usr/include/sqlite3ext.h /usr/include/blake2.h /usr/include/zlib.h \
    /usr/include/zconf.h /usr/include/pugixml.hpp /usr/include/pugiconfig.hpp "$inc/"
  # Included first by every C++ file (CMAKE_CXX_FLAGS below): in zig 0.17's headers a first <float.h>
  # for INFINITY alone (libc++'s <__math/...>) sets libc++'s guard, so a later <cfloat> has no FLT_MAX.
  printf '#include <float.h>\n#include <__float_infinity_nan.h>\n' >"$inc/gpuemu-zig-prelude.h"
  touch -r /usr/include/float.h "$inc/gpuemu-zig-prelude.h" 2>/dev/null || true
}

# CMake and pkg-config files for the header-only libraries (Debian's name its Linux libraries).
stage_packages() {
  local lib=$1/lib
  mkdir -p "$lib/cmake/fmt" "$lib/cmake/nlohmann_json" "$lib/pkgconfig"
  local version
  for pkg in fmt nlohmann_json; do
    version=$(pkg-config --modversion "$pkg")
    cat >"$lib/cmake/$pkg/$pkg-config-version.cmake" <<CMAKE
set(PACKAGE_VERSION "$version")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
CMAKE
  done
  cat >"$lib/cmake/fmt/fmt-config.cmake" <<'CMAKE'
add_library(fmt::fmt-header-only INTERFACE IMPORTED)
set_target_properties(fmt::fmt-header-only PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include"
                      INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
CMAKE
  cat >"$lib/cmake/nlohmann_json/nlohmann_json-config.cmake" <<'CMAKE'
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include")
CMAKE
  cat >"$lib/pkgconfig/tomlplusplus.pc" <<PC
Name: tomlplusplus
Description: toml++, header-only
Version: $(pkg-config --modversion tomlplusplus)
Cflags: -I$1/include -DTOML_HEADER_ONLY=1
PC
  cat >"$lib/pkgconfig/pugixml.pc" <<PC
Name: pugixml
Description: pugixml (a link stub, scripts/cross_macos_stubs.py)
Version: $(pkg-config --modversion pugixml)
Cflags: -I$1/include
Libs: -L$lib -lpugixml
PC
}

# zig's compilers for one target, as the programs CMake runs. ccache tells compilers apart by the
# wrapper's text (CCACHE_COMPILERCHECK=content below), which names zig's version and the target.
write_wrappers() {
  local bin=$1 target=$2 version
  version=$("$ZIG" version)
  mkdir -p "$bin"
  local tool
  for tool in "cc -target $target" "c++ -target $target" ar ranlib; do
    local text name=zig-${tool%% *}
    text=$(printf '#!/bin/sh\n# zig %s\nexec "%s" %s "$@"' "$version" "$ZIG" "$tool")
    # Rewritten only when it changes: ninja and ccache see an unchanged compiler.
    [ "$(cat "$bin/$name" 2>/dev/null)" = "$text" ] || printf '%s\n' "$text" >"$bin/$name"
    chmod +x "$bin/$name"
  done
}

# The two caches that make a rerun, or a CI run on a fresh clone, take seconds instead of minutes
# (docs/platforms.md). zig's own (~/.cache/zig) keeps libc++ and libSystem's stubs, built once per
# target (most of a cold configure), but not our objects; ccache keeps those, in a folder of its own
# under ~/.cache/gpuemu (kept between CI runs, like the third-party builds) unless CCACHE_DIR is set.
# It knows zig's compilers by their wrappers' text (a fresh clone writes new wrappers, whose
# timestamps would miss), and paths under this checkout are hashed relative to it.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuemu/ccache-macos}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-1G} CCACHE_COMPILERCHECK=content CCACHE_BASEDIR=$ROOT

# The Mach-O architecture `file` names for each target.
macho_arch() {
  case $1 in
    aarch64-*) echo arm64 ;;
    *) echo "${1%%-*}" ;;
  esac
}

status=0
summary=()
for target in $TARGETS; do
  dir=$OUT/$target
  stage=$ROOT/$dir/stage
  SECONDS=0
  echo "cross-macos: $target: building $dir/gpuemu with zig $("$ZIG" version)" >&2
  stage_headers "$stage"
  stage_packages "$stage"
  write_wrappers "$ROOT/$dir/bin" "$target"
  "$PY" scripts/cross_macos_stubs.py "$stage/lib" "$SYSLIB"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # -O0 without debug info: the check is that everything compiles and links, not the code's speed.
  if ! PKG_CONFIG_LIBDIR=$stage/lib/pkgconfig PKG_CONFIG_PATH='' cmake -S . -B "$dir/build" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/zig-macos.cmake" -DGPUEMU_ZIG_TARGET="$target" \
    -DGPUEMU_ZIG_BIN="$ROOT/$dir/bin" -DGPUEMU_CROSS_STAGE="$stage" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="-include $stage/include/gpuemu-zig-prelude.h" \
    -DCMAKE_C_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DGPUEMU_BUILD_TESTS=OFF -DGPUEMU_UNITY=ON \
    -DGPUEMU_WERROR=ON "${launcher[@]}" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log" >&2
    summary+=("$target: configure FAILED")
    status=1
    continue
  fi
  echo "cross-macos: $target: configured (${SECONDS} s)" >&2
  # Every library first (-k 0: every file that fails, not only the first); then the link, whose
  # undefined third-party symbols become the stubs'.
  if ! cmake --build "$dir/build" -j "$JOBS" --target gpuemu_cli -- -k 0 >"$dir/compile.log" 2>&1; then
    grep -E "error|FAILED" "$dir/compile.log" | head -40 >&2
    summary+=("$target: compile FAILED (see $dir/compile.log)")
    status=1
    continue
  fi
  echo "cross-macos: $target: compiled (${SECONDS} s)" >&2
  cmake --build "$dir/build" --target gpuemu >"$dir/link.log" 2>&1 || true
  if ! "$PY" scripts/cross_macos_stubs.py "$stage/lib" "$SYSLIB" "$dir/link.log" ||
    ! cmake --build "$dir/build" --target gpuemu >"$dir/link.log" 2>&1; then
    grep -E "error" "$dir/link.log" | head -40 >&2
    summary+=("$target: link FAILED (see $dir/link.log)")
    status=1
    continue
  fi
  kind=$(file -b "$dir/build/gpuemu" | cut -d, -f1)
  if [ "$kind" != "Mach-O 64-bit $(macho_arch "$target") executable" ]; then
    summary+=("$target: link made a $kind, not a Mach-O $(macho_arch "$target") executable")
    status=1
    continue
  fi
  summary+=("$target linked (${SECONDS} s)")
done
joined=$(printf '%s, ' "${summary[@]}")
echo "cross-macos: ${joined%, }"
exit $status
