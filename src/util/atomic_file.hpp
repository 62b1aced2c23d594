// Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the directory. A kill -9 leaves either the old file or the new one, never half.
#pragma once

#include <filesystem>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::util {

// Creates missing parent directories. `mode` applies to a newly created file (e.g. 0600 for keys).
Expected<void> write_file_atomically(const std::filesystem::path& target, std::string_view bytes,
                                     unsigned mode = 0644);

}  // namespace gpuemu::util
