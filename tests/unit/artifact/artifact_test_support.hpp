// Helpers of the artifact unit tests: the committed kernels under tests/kernels, and the rule for
// tests that need the CUDA tools (skip with the reason, but fail under CI=true when
// scripts/install-deps.sh installs the nvidia-cuda-nvcc wheel).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "artifact/toolchain.hpp"

namespace gpuemu::artifact::testing {

inline std::filesystem::path kernel_path(const std::string& name) {
  return std::filesystem::path(GPUEMU_SOURCE_DIR) / "tests" / "kernels" / name;
}

inline std::string read_kernel(const std::string& name) {
  std::ifstream in(kernel_path(name), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// True when CI must have the CUDA tools: CI=true and install-deps.sh installs the wheel.
inline bool tools_required() {
  const char* ci = std::getenv("CI");
  if (!ci || std::string(ci) != "true") return false;
  std::ifstream script(std::filesystem::path(GPUEMU_SOURCE_DIR) / "scripts" / "install-deps.sh");
  std::ostringstream text;
  text << script.rdbuf();
  return text.str().find("nvidia-cuda-nvcc") != std::string::npos;
}

inline const Toolchain& discovered_tools() {
  static const Toolchain tools = [] {
    auto t = Toolchain::discover();
    return t ? *t : Toolchain{};
  }();
  return tools;
}

}  // namespace gpuemu::artifact::testing

// Skips the test (printing why) when `tool` is missing; fails instead when CI requires the tools.
#define REQUIRE_TOOL(member, name)                                                                         \
  do {                                                                                                     \
    if (!::gpuemu::artifact::testing::discovered_tools().member) {                                         \
      const std::string why = std::string(name) + " not found; " + ::gpuemu::artifact::install_hint(name); \
      if (::gpuemu::artifact::testing::tools_required()) FAIL() << "CI=true requires it: " << why;         \
      GTEST_SKIP() << why;                                                                                 \
    }                                                                                                      \
  } while (0)
