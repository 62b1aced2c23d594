// Reading a whole small file (configs, JSON documents, keys) with an error that names the file and
// what it was for, so every command reports a wrong path the same way.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::util {

// `what` names the input in the error ("--baseline", "result file"). Files above `max_bytes` are
// refused: a document that large is a wrong path.
Expected<std::string> read_text_file(const std::filesystem::path& path, std::string_view what,
                                     std::uintmax_t max_bytes = 256u * 1024 * 1024);

}  // namespace gpuemu::util
