# One imported target per third-party library, each from Debian's packages with its minimum version.
# Header-only libraries are found by their headers so the static build needs nothing extra.
if(GPUEMU_STATIC)
  # Static archives only (Debian's -dev packages ship them): a shared library found here would make
  # the -static link fail late, so find_library sees nothing but .a files.
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
  set(ZLIB_USE_STATIC_LIBS TRUE)
  # Debian's libcurl.a needs LDAP, GSSAPI, SSH, nghttp2, psl and idn2, which have no static
  # libraries; scripts/build-static.sh installs a minimal one (HTTP/HTTPS, OpenSSL, zlib, c-ares) here.
  set(GPUEMU_STATIC_PREFIX "${PROJECT_SOURCE_DIR}/third_party/build/prefix"
      CACHE PATH "Install prefix of the minimal static libcurl (scripts/build-static.sh)")
endif()
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# GCC 12 has no <format>; fmt (header-only mode, so the static build needs no .a) stands in.
find_package(fmt 9 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus>=3.3)
if(GPUEMU_STATIC)
  # Debian ships toml++ as a shared library only; its headers also hold the whole implementation.
  set_target_properties(PkgConfig::TOMLPP PROPERTIES INTERFACE_LINK_LIBRARIES "" INTERFACE_LINK_OPTIONS ""
                        INTERFACE_COMPILE_OPTIONS "" INTERFACE_COMPILE_DEFINITIONS TOML_HEADER_ONLY=1)
endif()
find_package(CLI11 2.1 QUIET CONFIG)
if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
find_path(B2_INCLUDE_DIR blake2.h REQUIRED)
find_library(B2_LIBRARY NAMES b2 REQUIRED)
add_library(gpuemu::b2 INTERFACE IMPORTED)
target_include_directories(gpuemu::b2 INTERFACE ${B2_INCLUDE_DIR})
target_link_libraries(gpuemu::b2 INTERFACE ${B2_LIBRARY})
find_package(SQLite3 3.35 REQUIRED)
find_package(OpenSSL 3.0 REQUIRED)
if(GPUEMU_STATIC)
  find_package(CURL 7.80 CONFIG QUIET PATHS ${GPUEMU_STATIC_PREFIX} NO_DEFAULT_PATH)
  if(NOT CURL_FOUND)
    message(FATAL_ERROR "GPUEMU_STATIC: no minimal static libcurl in ${GPUEMU_STATIC_PREFIX}; "
                        "run scripts/build-static.sh, which builds it and then this project")
  endif()
else()
  find_package(CURL 7.80 REQUIRED)
endif()
pkg_check_modules(PUGIXML REQUIRED IMPORTED_TARGET pugixml>=1.11)
find_path(NNG_INCLUDE_DIR nng/nng.h REQUIRED)
find_library(NNG_LIBRARY NAMES nng REQUIRED)
add_library(gpuemu::nng INTERFACE IMPORTED)
target_include_directories(gpuemu::nng INTERFACE ${NNG_INCLUDE_DIR})
target_link_libraries(gpuemu::nng INTERFACE ${NNG_LIBRARY} Threads::Threads)
if(GPUEMU_STATIC)
  # Debian builds NNG with TLS through Mbed TLS; the shared libnng names it, the archive cannot.
  foreach(lib mbedtls mbedx509 mbedcrypto)
    find_library(MBED_${lib}_LIBRARY NAMES ${lib} REQUIRED)
    target_link_libraries(gpuemu::nng INTERFACE ${MBED_${lib}_LIBRARY})
  endforeach()
endif()
if(GPUEMU_BUILD_TESTS)
  find_package(GTest 1.10 REQUIRED)
endif()
