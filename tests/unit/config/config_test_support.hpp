// Paths and TOML snippets shared by the config unit tests: the fixture project and a minimal
// valid [project] head plus one op, which each test extends with the line under test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/loader.hpp"

namespace gpuemu::config::fixtures {

inline const std::filesystem::path kFixtures =
    std::filesystem::path(GPUEMU_SOURCE_DIR) / "tests" / "fixtures" / "config";
inline const std::filesystem::path kProject = kFixtures / "project";
inline const std::string kPath = (kProject / "gpuemu.toml").string();
inline const std::string kHead = "[project]\nname = \"p\"\n";
inline const std::string kOp = kHead +
                               "[[ops]]\n"
                               "name = \"mm\"\n"
                               "reference = \"scripts/matmul_ref.py\"\n"
                               "op_script = \"kernels/matmul_op.py\"\n";

// `text` loaded as the fixture project's gpuemu.toml; a load error fails the calling test.
inline Config load_ok(const std::string& text) {
  auto c = load_config_text(text, kPath);
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  return c ? *c : Config{};
}

// The config error `text` gives when loaded as the fixture project's gpuemu.toml.
inline std::string error_of(const std::string& text) {
  auto c = load_config_text(text, kPath);
  if (c) return "<loaded without error>";
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  return c.error().message;
}

}  // namespace gpuemu::config::fixtures
