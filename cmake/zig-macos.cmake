# Cross-compiling gpuemu for macOS with zig (scripts/cross-macos.sh, docs/platforms.md): zig's clang
# with its bundled macOS libc headers and libSystem/libc++ stubs. GPUEMU_ZIG_BIN is the directory of
# the compiler wrappers the script writes (zig-cc, zig-c++, zig-ar, zig-ranlib, each with -target
# GPUEMU_ZIG_TARGET); GPUEMU_CROSS_STAGE holds the only headers and libraries found (no /usr/include).
set(CMAKE_SYSTEM_NAME Darwin)
if(GPUEMU_ZIG_TARGET MATCHES "^aarch64")
  set(CMAKE_SYSTEM_PROCESSOR arm64)
else()
  set(CMAKE_SYSTEM_PROCESSOR x86_64)
endif()
set(CMAKE_C_COMPILER ${GPUEMU_ZIG_BIN}/zig-cc)
set(CMAKE_CXX_COMPILER ${GPUEMU_ZIG_BIN}/zig-c++)
set(CMAKE_AR ${GPUEMU_ZIG_BIN}/zig-ar CACHE FILEPATH "zig's ar")
set(CMAKE_RANLIB ${GPUEMU_ZIG_BIN}/zig-ranlib CACHE FILEPATH "zig's ranlib")
# zig brings the SDK's headers itself: no sysroot, no xcrun.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "")
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "")
# Headers and libraries from the stage only, so none of the build machine's (glibc's) leaks in.
set(CMAKE_FIND_ROOT_PATH ${GPUEMU_CROSS_STAGE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_PREFIX_PATH /)
