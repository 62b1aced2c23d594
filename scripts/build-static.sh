#!/usr/bin/env bash
# Builds build-static/gpuemu: one executable with no shared-library dependencies (docs/static-build.md).
# Idempotent and resumable: every finished stage leaves a stamp under third_party/build/ (or
# $GPUEMU_THIRD_PARTY_DIR) and is skipped next time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# Sources, build trees and the install prefix: third_party/build (gitignored) unless
# GPUEMU_THIRD_PARTY_DIR names another folder (scripts/test.sh shares one across clones).
TP=${GPUEMU_THIRD_PARTY_DIR:-$ROOT/third_party/build}
PREFIX="$TP/prefix"                   # the minimal libcurl is installed here; CMake looks nowhere else for it
BUILD=${GPUEMU_STATIC_BUILD_DIR:-build-static}
JOBS=${GPUEMU_JOBS:-$(nproc)}
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# shellcheck source=/dev/null
. /etc/os-release
CODENAME=${VERSION_CODENAME:?build-static: /etc/os-release has no VERSION_CODENAME; this script needs Debian}

log() { echo "build-static [${SECONDS}s]: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The libraries' static archives (.a) and headers, c-ares for the minimal libcurl's DNS, and the
# tools to fetch and build Debian's curl source. Nothing here is needed by the normal build beyond
# what scripts/install-deps.sh already installs, except libc-ares-dev and zlib1g-dev.
APT_PACKAGES=(cmake ninja-build g++ pkg-config file dpkg-dev libtomlplusplus-dev nlohmann-json3-dev libb2-dev
  libcli11-dev libfmt-dev libsqlite3-dev libssl-dev zlib1g-dev libc-ares-dev libpugixml-dev libnng-dev
  libmbedtls-dev)

install_packages() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# `apt-get source` needs deb-src entries. When there are none, add one per Debian entry of this
# release (same mirror, suites and keyring as the deb entries apt already uses), then update.
ensure_deb_src() {
  if grep -qsE '^[[:space:]]*(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources; then
    return 0
  fi
  local stanzas lines f
  stanzas=$(
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # deb822 stanzas whose Types include "deb" and whose Suites are this release (or -updates/-security).
      awk -v RS= -v ORS='\n\n' -v cn="$CODENAME" '
        /(^|\n)Types:[^\n]*(^|[ \t])deb([ \t]|\n|$)/ && match($0, /(^|\n)Suites:[^\n]*/) &&
        substr($0, RSTART, RLENGTH) ~ ("[ \t]" cn "(-[a-z]+)?([ \t]|$)") {
          gsub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' "$f"
    done
  )
  lines=$(
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      # One-line entries: "deb [options] URI SUITE COMPONENTS..." becomes a deb-src line.
      sed -nE "s/^deb([[:space:]].*[[:space:]]$CODENAME(-[a-z]+)?[[:space:]].*)$/deb-src\1/p" "$f"
    done
  )
  [ -n "$stanzas$lines" ] || die "no Debian '$CODENAME' entry in /etc/apt/sources.list* to derive a deb-src entry from;
  add one (e.g. 'deb-src http://deb.debian.org/debian $CODENAME main') and rerun"
  [ -z "$stanzas" ] || printf '%s\n' "$stanzas" | $SUDO tee /etc/apt/sources.list.d/gpuemu-deb-src.sources >/dev/null
  [ -z "$lines" ] || printf '%s\n' "$lines" | $SUDO tee /etc/apt/sources.list.d/gpuemu-deb-src.list >/dev/null
  log "added deb-src entries (/etc/apt/sources.list.d/gpuemu-deb-src.*); updating the package lists"
  $SUDO apt-get update -qq
}

# Debian's curl source, unpacked once into $TP/src/curl (apt-get source applies Debian's patches).
fetch_curl_source() {
  [ -f "$TP/src/curl.stamp" ] && return 0
  ensure_deb_src
  local tmp="$TP/src/curl.tmp"
  rm -rf "$tmp" "$TP/src/curl"
  mkdir -p "$tmp"
  log "fetching Debian's curl source (apt-get source curl)"
  if ! (cd "$tmp" && apt-get source -qq curl >/dev/null); then
    # deb-src entries that apt has not fetched lists for yet: update once and try again.
    log "apt-get source curl failed; updating the package lists and retrying"
    $SUDO apt-get update -qq
    (cd "$tmp" && apt-get source -qq curl >/dev/null) || die "apt-get source curl failed; check the deb-src entries"
  fi
  local dir
  dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'curl-*' | head -1)
  [ -n "$dir" ] || die "apt-get source curl left no curl-* directory in $tmp"
  mv "$dir" "$TP/src/curl"
  basename "$dir" >"$TP/src/curl.stamp"
  rm -rf "$tmp"
}

# A libcurl with HTTP and HTTPS only: OpenSSL for TLS, zlib for compressed responses, c-ares for
# DNS so name lookups do not go through glibc's NSS (which a static binary cannot load). No netrc
# and no NTLM: both look up the user with getpwuid, which is NSS too, and gpuemu uses neither.
curl_options() {
  local libdir
  libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  CURL_OPTIONS=(-DBUILD_SHARED_LIBS=OFF -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF
    -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=ON -DCURL_ZLIB=ON
    -DENABLE_ARES=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF
    -DCURL_USE_LIBPSL=OFF -DUSE_LIBIDN2=OFF -DUSE_NGHTTP2=OFF -DUSE_NGTCP2=OFF -DUSE_QUICHE=OFF -DUSE_MSH3=OFF
    -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DCURL_USE_GSSAPI=OFF -DUSE_LIBRTMP=OFF -DENABLE_UNIX_SOCKETS=OFF
    -DCURL_DISABLE_NETRC=ON -DCURL_DISABLE_NTLM=ON
    -DCURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt -DCURL_CA_PATH=/etc/ssl/certs
    -DCARES_LIBRARY="$libdir/libcares.a" -DZLIB_LIBRARY="$libdir/libz.a"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=OFF)
}

build_curl() {
  local want have=""
  curl_options
  want="$(cat "$TP/src/curl.stamp") $(printf '%s ' "${CURL_OPTIONS[@]}" | sha256sum | cut -c1-16)"
  [ -f "$PREFIX/curl.stamp" ] && have=$(cat "$PREFIX/curl.stamp")
  if [ "$have" = "$want" ]; then
    log "libcurl: cached ($PREFIX, $want)"
    return 0
  fi
  log "libcurl: building $(cat "$TP/src/curl.stamp") (HTTP/HTTPS, OpenSSL, zlib, c-ares)"
  rm -rf "$TP/curl-build" "$PREFIX"
  nice -n 10 cmake -S "$TP/src/curl" -B "$TP/curl-build" -G Ninja -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    "${CURL_OPTIONS[@]}" >"$TP/curl-configure.log" 2>&1 || {
    tail -30 "$TP/curl-configure.log" >&2
    die "configuring curl failed (full log: $TP/curl-configure.log)"
  }
  nice -n 10 cmake --build "$TP/curl-build" -j "$JOBS" >"$TP/curl-build.log" 2>&1 || {
    tail -30 "$TP/curl-build.log" >&2
    die "building curl failed (full log: $TP/curl-build.log)"
  }
  cmake --install "$TP/curl-build" >/dev/null
  echo "$want" >"$PREFIX/curl.stamp"
}

# gpuemu itself: Release, GPUEMU_STATIC (cmake/Dependencies.cmake takes .a files and the libcurl
# above), unity batches for a faster clean build, no unit tests. Ninja makes a rerun a no-op.
# CMake's own Release flags (-O3) and GPUEMU_WERROR off, as a user's Release build: scripts/test.sh
# counts this build's warnings and fails only if it does not build (docs/static-build.md).
build_gpuemu() {
  log "gpuemu: building $BUILD/gpuemu (Release, GPUEMU_STATIC=ON)"
  local launcher=()  # ccache when installed: a rerun compiles little; warnings are replayed from it
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
  nice -n 10 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGPUEMU_WERROR=OFF -DGPUEMU_STATIC=ON -DGPUEMU_UNITY=ON \
    -DGPUEMU_BUILD_TESTS=OFF -DGPUEMU_STATIC_PREFIX="$PREFIX" "${launcher[@]}" >/dev/null
  nice -n 10 cmake --build "$BUILD" -j "$JOBS" --target gpuemu
}

check_static() {
  local bin="$BUILD/gpuemu" deps
  deps=$(LC_ALL=C ldd "$bin" 2>&1 || true)
  grep -q "not a dynamic executable" <<<"$deps" || die "$bin is not fully static; ldd says:
$deps"
  log "done: $bin is statically linked ($(du -h "$bin" | cut -f1)); $("$bin" version)"
}

mkdir -p "$TP/src"
install_packages
fetch_curl_source
build_curl
build_gpuemu
check_static
