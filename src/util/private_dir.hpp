// Directories only the user can enter (mode 0700): gpuemu's home holds the daemon's socket, its
// log and the store, which keeps inputs of the user's kernels.
#pragma once

#include <filesystem>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::util {

// What happens to a directory that already exists.
enum class ExistingDir {
  keep_mode,     // it is not ours (a parent the user made): leave its mode alone
  make_private,  // it is ours (GPUEMU_HOME): chmod it to 0700
};

// Creates `dir` and each missing directory above it with mode 0700 (whatever the umask),
// then applies `existing` to `dir` itself. Errors name the directory and end with `fix`.
Expected<void> make_private_dirs(const std::filesystem::path& dir, ExistingDir existing,
                                 std::string_view fix);

}  // namespace gpuemu::util
