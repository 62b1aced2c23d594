// Private directory creation (private_dir.hpp): mkdir(0700) from the top-most missing directory
// down, so no directory gpuemu creates is ever readable by others, not even for a moment.
#include "util/private_dir.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuemu::util {

namespace fs = std::filesystem;

Expected<void> make_private_dirs(const fs::path& dir, ExistingDir existing, std::string_view fix) {
  if (dir.empty()) return {};
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path d = dir; !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
    missing.push_back(d);
    if (d == d.parent_path()) break;
  }
  const bool existed = missing.empty();
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) == 0) {
      ::chmod(it->c_str(), 0700);  // a umask such as 0277 would leave it unwritable to its owner
    } else if (errno != EEXIST) {
      return fail(ErrorKind::io, fmt::format("cannot create the directory {}: {}; {}", it->string(),
                                             std::strerror(errno), fix));
    }
  }
  if (!fs::is_directory(dir, ec)) {
    return fail(ErrorKind::io, fmt::format("{} is not a directory; {}", dir.string(), fix));
  }
  if (existed && existing == ExistingDir::make_private && ::chmod(dir.c_str(), 0700) != 0) {
    return fail(ErrorKind::io, fmt::format("cannot make {} private (chmod 0700): {}; {}", dir.string(),
                                           std::strerror(errno), fix));
  }
  return {};
}

}  // namespace gpuemu::util
