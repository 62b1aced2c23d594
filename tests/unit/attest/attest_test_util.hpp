// Shared helpers for the attest unit tests: scratch directories, the fixture project and
// result.json, and running real commands (openssl, bash) with their output captured.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"

namespace gpuemu::attest::testing {

namespace fs = std::filesystem;

inline fs::path fixture_dir() {
  return fs::path(GPUEMU_SOURCE_DIR) / "tests/fixtures/attest";
}

// A fresh directory removed when the test ends (the unit tests' one helper, support/temp_dir.hpp).
using ScratchDir = ::gpuemu::testing::TempDir;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline nlohmann::json fixture_result() {
  return nlohmann::json::parse(read_text(fixture_dir() / "result.json"));
}

// Copies the fixture project (kernels/, reference/) into `dir` so tests may change files.
inline void copy_project(const fs::path& dir) {
  fs::copy(fixture_dir() / "project", dir, fs::copy_options::recursive);
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` with /bin/sh in `cwd`; the tests use it for the real openssl CLI.
inline CommandResult run_command(const std::string& command, const fs::path& cwd) {
  std::string full = "cd '" + cwd.string() + "' && { " + command + " ; } 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace gpuemu::attest::testing
