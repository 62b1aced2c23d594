// Paths and TOML snippets shared by the config unit tests: the fixture project and a minimal
// valid [project] head plus one op, which each test extends with the line under test.
#pragma once

#include <filesystem>
#include <string>

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

}  // namespace gpuemu::config::fixtures
