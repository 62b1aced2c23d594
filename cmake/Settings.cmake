# Build hygiene as targets: gpuemu_settings (language level, sanitizers) and gpuemu_warnings.
# Every gpuemu target links both; nothing is set through global flags.
add_library(gpuemu_settings INTERFACE)
target_compile_features(gpuemu_settings INTERFACE cxx_std_23)
set(CMAKE_CXX_EXTENSIONS OFF)
if(GPUEMU_SANITIZE)
  target_compile_options(gpuemu_settings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(gpuemu_settings INTERFACE -fsanitize=address,undefined)
endif()
if(GPUEMU_PARSER_HARNESSES)
  # Every library gets libFuzzer's coverage instrumentation and the sanitizers; only the harnesses
  # in tests/harness/ link libFuzzer itself (-fsanitize=fuzzer), which brings its own main().
  target_compile_options(gpuemu_settings INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(gpuemu_settings INTERFACE -fsanitize=address,undefined)
endif()

add_library(gpuemu_warnings INTERFACE)
target_compile_options(gpuemu_warnings INTERFACE -Wall -Wextra -Wno-missing-field-initializers)
if(GPUEMU_WERROR)
  target_compile_options(gpuemu_warnings INTERFACE -Werror)
endif()
if(GPUEMU_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports std::regex/std::function internals as maybe-uninitialized under ASan
  # instrumentation (a known false positive); the non-sanitized builds keep the warning.
  target_compile_options(gpuemu_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # libstdc++ 12's std::stable_sort calls its own deprecated std::get_temporary_buffer; GCC hides
  # that inside system headers, clang reports it at every instantiation in our code.
  target_compile_options(gpuemu_warnings INTERFACE -Wno-deprecated-declarations)
endif()
