// What a GitHub Actions runner tells a step through its environment: whether we run there, the
// checkout root, and the files that take the job summary and the step outputs.
#pragma once

#include <filesystem>
#include <string>

namespace gpuemu::github {

struct Environment {
  bool actions = false;                // GITHUB_ACTIONS=true
  std::string workspace;               // GITHUB_WORKSPACE: paths in reports are relative to it
  std::string project_root;            // gpuemu.toml's folder, set by the command: result.json's
                                       // relative paths are relative to it (empty: to the workspace)
  std::filesystem::path step_summary;  // GITHUB_STEP_SUMMARY; empty when unset
  std::filesystem::path output;        // GITHUB_OUTPUT; empty when unset
};

// Reads the variables of the current process.
Environment read_environment();

}  // namespace gpuemu::github
