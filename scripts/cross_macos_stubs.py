#!/usr/bin/env python3
# Link stubs for scripts/cross-macos.sh: the third-party symbols a macOS link of gpuemu needs, each checked
# against the Debian library that exports it, written as .tbd files (Apple's text stubs) for zig's linker.
"""Usage: cross_macos_stubs.py LIBDIR MULTIARCH_LIBDIR [LINK_LOG]

Without LINK_LOG: writes an empty stub per library into LIBDIR (what CMake finds at configure).
With LINK_LOG (zig's "undefined symbol: _name" errors of a link against those): assigns each symbol
to the library whose Debian build exports it (C by name; C++ by demangled name, std::__cxx11:: and
std::__1:: read as std::, since libstdc++ and libc++ spell the standard library's namespaces apart),
writes the stubs and exits 0; exits 1 naming every symbol no library exports: one gpuemu's own
code lacks on macOS, or a libSystem/libc++ call macOS does not have.
"""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

# stub name -> (Debian shared library, the dylib a Homebrew install names)
LIBRARIES = {
    "crypto": ("libcrypto.so.3", "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib"),
    "ssl": ("libssl.so.3", "/opt/homebrew/opt/openssl@3/lib/libssl.3.dylib"),
    "sqlite3": ("libsqlite3.so.0", "/opt/homebrew/opt/sqlite/lib/libsqlite3.0.dylib"),
    "b2": ("libb2.so.1", "/opt/homebrew/opt/libb2/lib/libb2.1.dylib"),
    "nng": ("libnng.so.1", "/opt/homebrew/opt/nng/lib/libnng.1.dylib"),
    "curl": ("libcurl.so.4", "/opt/homebrew/opt/curl/lib/libcurl.4.dylib"),
    "z": ("libz.so.1", "/usr/lib/libz.1.dylib"),
    "pugixml": ("libpugixml.so.1", "/opt/homebrew/opt/pugixml/lib/libpugixml.1.dylib"),
}
UNDEFINED = re.compile(r"undefined symbol: (\S+)")
STD = re.compile(r"std::(__cxx11|__1)::")


def tbd(name: str, symbols: list[str]) -> str:
    install_name = LIBRARIES[name][1]
    text = ("--- !tapi-tbd\ntbd-version:     4\ntargets:         [ x86_64-macos, arm64-macos ]\n"
            f"install-name:    '{install_name}'\n")
    if symbols:
        text += "exports:\n  - targets:         [ x86_64-macos, arm64-macos ]\n    symbols:         [ "
        text += ",\n                       ".join(f"'{s}'" for s in symbols) + " ]\n"
    return text + "...\n"


def demangle(names: list[str]) -> list[str]:
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return [STD.sub("std::", line) for line in out.splitlines()]


def exports(shared_library: pathlib.Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(shared_library)],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[0].split("@")[0] for line in out.splitlines() if line.strip()}


def main(argv: list[str]) -> int:
    libdir, system_libdir = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    libdir.mkdir(parents=True, exist_ok=True)
    if len(argv) < 4:
        for name in LIBRARIES:
            (libdir / f"lib{name}.tbd").write_text(tbd(name, []))
        return 0
    wanted = sorted(set(UNDEFINED.findall(pathlib.Path(argv[3]).read_text(errors="replace"))))
    # Mach-O names carry a leading underscore that ELF names do not.
    plain = [symbol[1:] if symbol.startswith("_") else symbol for symbol in wanted]
    wanted_demangled = dict(zip(wanted, demangle(plain)))
    assigned: dict[str, list[str]] = {name: [] for name in LIBRARIES}
    left = set(wanted)
    for name, (shared, _) in LIBRARIES.items():
        names = exports(system_libdir / shared)
        demangled = set(demangle(sorted(n for n in names if n.startswith("_Z"))))
        for symbol, bare in zip(wanted, plain):
            if symbol in left and (bare in names or (bare.startswith("_Z") and wanted_demangled[symbol] in demangled)):
                assigned[name].append(symbol)
                left.discard(symbol)
    for name, symbols in assigned.items():
        (libdir / f"lib{name}.tbd").write_text(tbd(name, symbols))
    counts = ", ".join(f"{name} {len(symbols)}" for name, symbols in assigned.items() if symbols)
    print(f"cross-macos: third-party symbols from stubs: {counts or 'none'}")
    if left:
        print("cross-macos: undefined on macOS, in no library's Debian build either (a Linux-only call, or a "
              "symbol gpuemu lacks):", file=sys.stderr)
        for symbol in sorted(left):
            print(f"  {symbol}  ({wanted_demangled[symbol]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
