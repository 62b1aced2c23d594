// Crash-safe file replacement (see atomic_file.hpp): temp file with O_EXCL and a random suffix so
// concurrent writers never share one, fsync before rename so the rename never exposes a hole.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

namespace gpuemu::util {

namespace fs = std::filesystem;

Expected<void> write_file_atomically(const fs::path& target, std::string_view bytes, unsigned mode) {
  std::error_code ec;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) {
    return fail(ErrorKind::io, "cannot create directory '" + parent.string() + "': " + ec.message() +
                                   "; check the path and permissions");
  }
  std::random_device random;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp.%d.%08x", static_cast<int>(::getpid()), random());
  // Appended piece by piece: GCC 12 at -O3 reports `"." + std::string` (an insert at the front) as a
  // -Wrestrict overlap that cannot happen (GCC PR 105329).
  std::string name = ".";
  name += target.filename().string();
  name += suffix;
  const fs::path temp = parent / name;
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return fail(ErrorKind::io, "cannot create '" + temp.string() + "': " + std::strerror(errno) +
                                   "; check the directory is writable");
  }
  std::size_t written = 0;
  while (written < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool ok = written == bytes.size() && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), target.c_str()) != 0) {
    const int why = ok ? errno : saved;
    fs::remove(temp, ec);
    return fail(ErrorKind::io, "cannot write '" + target.string() + "': " + std::strerror(why) +
                                   "; check the disk space and permissions");
  }
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace gpuemu::util
