// The one way gpuemu reads a file: regular files only, opened without blocking (a FIFO cannot hang
// open()), checked with fstat on the descriptor, size-capped before reading, errors naming the path.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::util {

// Text documents (configs, baselines, result files) above this are a wrong path, not input.
inline constexpr std::uintmax_t kMaxTextFileBytes = 256u * 1024 * 1024;

// Whether a symbolic link as the path's last component is followed. A name that comes from outside
// (a daemon request, a store URL) is opened with O_NOFOLLOW so it cannot be redirected.
enum class Symlinks { follow, refuse };

struct ReadOptions {
  std::uintmax_t max_bytes = kMaxTextFileBytes;
  Symlinks symlinks = Symlinks::follow;
  // The kind of a wrong file (missing, not regular, too large); read errors are always `io`.
  ErrorKind kind = ErrorKind::usage;
};

// An open regular file: the descriptor and the fstat taken on it, so what is checked (type, size,
// mode) is the file that is read. Move-only; closes on destruction.
class RegularFile {
 public:
  // Fails when the file is missing, unreadable, not a regular file, or above options.max_bytes.
  // `what` names the input in the error ("--baseline", "key file").
  static Expected<RegularFile> open(const std::filesystem::path& path, std::string_view what,
                                    const ReadOptions& options = {});
  // As open, but a file that does not exist is "no value" instead of an error.
  static Expected<std::optional<RegularFile>> open_if_present(const std::filesystem::path& path,
                                                              std::string_view what,
                                                              const ReadOptions& options = {});
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  const struct stat& status() const { return status_; }
  int fd() const { return fd_; }
  // The whole file, at most max_bytes: a file that grows past the cap while read (or that reports
  // size 0, as /proc files do) is refused rather than read without limit.
  Expected<std::string> read_all();

 private:
  RegularFile(int fd, const struct stat& status, std::filesystem::path path, std::string what,
              std::uintmax_t max_bytes);
  int fd_ = -1;
  struct stat status_ {};
  std::filesystem::path path_;
  std::string what_;
  std::uintmax_t max_bytes_ = 0;
};

Expected<std::string> read_text_file(const std::filesystem::path& path, std::string_view what,
                                     const ReadOptions& options = {});

// As read_text_file, but a file that does not exist is "no value" instead of an error.
Expected<std::optional<std::string>> read_text_file_if_present(const std::filesystem::path& path,
                                                               std::string_view what,
                                                               const ReadOptions& options = {});

}  // namespace gpuemu::util
