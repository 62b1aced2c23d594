// Reading a whole small file with an error naming it (see read_file.hpp).
#include "util/read_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace gpuemu::util {

Expected<std::string> read_text_file(const std::filesystem::path& path, std::string_view what,
                                     std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    return fail(ErrorKind::usage,
                fmt::format("cannot read {} '{}': {}; check the path", what, path.string(), ec.message()));
  }
  if (size > max_bytes) {
    return fail(ErrorKind::usage, fmt::format("{} '{}' is {} bytes, more than {}: check the path", what,
                                              path.string(), size, max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return fail(ErrorKind::io, fmt::format("cannot read {} '{}': read error", what, path.string()));
  }
  return text.str();
}

}  // namespace gpuemu::util
