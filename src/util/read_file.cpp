// The one way to read a file (see read_file.hpp): open non-blocking, fstat the descriptor, refuse
// anything but a regular file within the size cap, then read at most the cap.
#include "util/read_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace gpuemu::util {

namespace {

std::string_view type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string limit_text(std::uintmax_t max_bytes) {
  return fmt::format("the limit of {} bytes", max_bytes);
}

std::unexpected<Error> symlink_error(const std::filesystem::path& path, std::string_view what,
                                     const ReadOptions& options) {
  return fail(options.kind, fmt::format("cannot read {} '{}': it is a symbolic link, which is not followed "
                                        "here; give the path of the file itself",
                                        what, path.string()));
}

std::unexpected<Error> not_regular_error(const std::filesystem::path& path, std::string_view what,
                                         const ReadOptions& options, mode_t mode) {
  return fail(options.kind, fmt::format("cannot read {} '{}': it is {}, not a regular file; check the path",
                                        what, path.string(), type_name(mode)));
}

struct Opened {
  int fd = -1;
  struct stat status {};
};

// ENOENT is reported through `missing` so read_text_file_if_present can tell it apart.
Expected<Opened> open_regular(const std::filesystem::path& path, std::string_view what,
                              const ReadOptions& options, bool* missing) {
  // Judge the name before opening it: opening a device can have effects of its own (a tape
  // rewinds, a watchdog arms). The fstat below judges what was actually opened.
  struct stat named {};
  const int named_rc =
      options.symlinks == Symlinks::refuse ? ::lstat(path.c_str(), &named) : ::stat(path.c_str(), &named);
  if (named_rc == 0 && S_ISLNK(named.st_mode)) {
    return symlink_error(path, what, options);
  }
  if (named_rc == 0 && !S_ISREG(named.st_mode)) {
    return not_regular_error(path, what, options, named.st_mode);
  }
  // O_NONBLOCK: should the name be swapped for a FIFO after the stat, open() still returns at
  // once instead of waiting for a writer.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (options.symlinks == Symlinks::refuse) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT && missing != nullptr) *missing = true;
    if (err == ELOOP && options.symlinks == Symlinks::refuse) {
      return symlink_error(path, what, options);
    }
    const ErrorKind kind = err == ENOENT || err == ENOTDIR || err == EACCES ? options.kind : ErrorKind::io;
    return fail(kind, fmt::format("cannot read {} '{}': {}; check the path", what, path.string(),
                                  std::strerror(err)));
  }
  Opened opened{fd, {}};
  if (::fstat(fd, &opened.status) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(ErrorKind::io,
                fmt::format("cannot read {} '{}': {}", what, path.string(), std::strerror(err)));
  }
  if (!S_ISREG(opened.status.st_mode)) {
    ::close(fd);
    return not_regular_error(path, what, options, opened.status.st_mode);
  }
  const auto size = static_cast<std::uintmax_t>(opened.status.st_size);
  if (size > options.max_bytes) {
    ::close(fd);
    return fail(options.kind, fmt::format("cannot read {} '{}': it is {} bytes, more than {}; check the path",
                                          what, path.string(), size, limit_text(options.max_bytes)));
  }
  // Regular files never block; clearing the flag keeps later reads ordinary.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return opened;
}

}  // namespace

RegularFile::RegularFile(int fd, const struct stat& status, std::filesystem::path path, std::string what,
                         std::uintmax_t max_bytes)
    : fd_(fd), status_(status), path_(std::move(path)), what_(std::move(what)), max_bytes_(max_bytes) {}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      status_(other.status_),
      path_(std::move(other.path_)),
      what_(std::move(other.what_)),
      max_bytes_(other.max_bytes_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    status_ = other.status_;
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    max_bytes_ = other.max_bytes_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<RegularFile> RegularFile::open(const std::filesystem::path& path, std::string_view what,
                                        const ReadOptions& options) {
  const Opened opened = TRY(open_regular(path, what, options, nullptr));
  return RegularFile(opened.fd, opened.status, path, std::string(what), options.max_bytes);
}

Expected<std::optional<RegularFile>> RegularFile::open_if_present(const std::filesystem::path& path,
                                                                  std::string_view what,
                                                                  const ReadOptions& options) {
  bool missing = false;
  auto opened = open_regular(path, what, options, &missing);
  if (!opened) {
    if (missing) return std::optional<RegularFile>();
    return std::unexpected(std::move(opened).error());
  }
  return std::optional<RegularFile>(
      RegularFile(opened->fd, opened->status, path, std::string(what), options.max_bytes));
}

Expected<std::string> RegularFile::read_all() {
  std::string text;
  // The size from fstat is a hint (a /proc file says 0); the cap is what bounds the read.
  const auto hint = static_cast<std::uintmax_t>(status_.st_size);
  text.reserve(static_cast<std::size_t>(std::min(hint, max_bytes_)));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorKind::io,
                  fmt::format("cannot read {} '{}': {}", what_, path_.string(), std::strerror(errno)));
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::size_t>(got) > max_bytes_) {
      return fail(ErrorKind::io, fmt::format("cannot read {} '{}': it grew past {} while being read", what_,
                                             path_.string(), limit_text(max_bytes_)));
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

Expected<std::string> read_text_file(const std::filesystem::path& path, std::string_view what,
                                     const ReadOptions& options) {
  RegularFile file = TRY(RegularFile::open(path, what, options));
  return file.read_all();
}

Expected<std::optional<std::string>> read_text_file_if_present(const std::filesystem::path& path,
                                                               std::string_view what,
                                                               const ReadOptions& options) {
  std::optional<RegularFile> file = TRY(RegularFile::open_if_present(path, what, options));
  if (!file) return std::optional<std::string>();
  return std::optional<std::string>(TRY(file->read_all()));
}

}  // namespace gpuemu::util
