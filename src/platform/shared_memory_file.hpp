// A shared-memory file another process of this user opens by name while we hold it (the warm
// workers' input and output files, wire/shared_file.hpp): a memfd on Linux, else a file in a private
// directory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gpuemu::platform {

// Linux: memfd_create, named /proc/<our pid>/fd/<fd>, sealed against shrinking (F_SEAL_SHRINK), gone
// with its last descriptor or mapping even if gpuemu is killed. Elsewhere (and with
// GPUEMU_PORTABLE_PLATFORM=ON): a file 0600 in a directory 0700 of this process,
// <dir>/gpuemu-shared-<pid>-<random>/<n>, where <dir> is /dev/shm when it is a writable directory
// (memory, as a memfd) and else $TMPDIR or /tmp; unlinked when the object is destroyed. Not sealed:
// an op that truncates it could make gpuemu's next write a SIGBUS, and a killed gpuemu leaves its
// directory behind (the next gpuemu process removes those whose process has ended).
class SharedMemoryFile {
 public:
  // A file of `size` bytes (zero-filled). An io error names the cause.
  static Expected<SharedMemoryFile> create(std::uint64_t size);
  SharedMemoryFile(SharedMemoryFile&& other) noexcept;
  SharedMemoryFile& operator=(SharedMemoryFile&& other) noexcept;
  SharedMemoryFile(const SharedMemoryFile&) = delete;
  SharedMemoryFile& operator=(const SharedMemoryFile&) = delete;
  ~SharedMemoryFile();

  int fd() const { return fd_; }
  // What another process opens: /proc/<pid>/fd/<fd>, or the file's path.
  const std::string& name() const { return name_; }
  // Whether the system keeps anyone from shrinking the file (memfd seals).
  bool sealed() const { return sealed_; }

 private:
  SharedMemoryFile(int fd, std::string name, bool unlink_on_close, bool sealed);
  void release();
  int fd_ = -1;
  std::string name_;
  bool unlink_on_close_ = false;
  bool sealed_ = false;
};

// True when `path` is a name SharedMemoryFile::create gave in this process.
bool names_shared_memory_file(std::string_view path);

}  // namespace gpuemu::platform
