// Reading shared-memory segments (segment.hpp): the checks that keep a peer from pointing us at
// arbitrary files, and copies of exactly the bytes a tensor names, so no peer can fault our memory.
#include "wire/segment.hpp"

#include "platform/platform.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>

namespace gpuemu::wire {

void SegmentReleases::add(std::string path) {
  std::lock_guard lock(mutex_);
  paths_.push_back(std::move(path));
}

std::vector<std::string> SegmentReleases::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(paths_, {});
}

namespace {

// Memory for a copy, never value-initialised (every byte is overwritten by the read). Copies below
// malloc's mmap threshold (32 MiB in the gpuemu binary, src/main.cpp) come from the heap, which keeps
// freed memory: a worker's outputs are copied every case at the same sizes, and fresh pages for each
// (faulted in, or MAP_POPULATE'd) cost as much as the copy. Larger copies get their pages in one go
// (platform::map_prefaulted: MAP_POPULATE on Linux) instead of one fault per page, and are unmapped when the
// last tensor lets go.
std::shared_ptr<std::byte[]> allocate(std::uint64_t nbytes) {
  constexpr std::uint64_t kPopulateFrom = std::uint64_t{32} << 20;
  if (nbytes < kPopulateFrom)
    return std::shared_ptr<std::byte[]>(new (std::nothrow) std::byte[std::max<std::uint64_t>(nbytes, 1)]);
  if (nbytes > std::numeric_limits<std::size_t>::max()) return nullptr;
  void* at = platform::map_prefaulted(nbytes);
  if (at == nullptr) return nullptr;
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(at),
                                      [nbytes](std::byte* p) { ::munmap(p, nbytes); });
}

}  // namespace

Expected<OpenSegment> OpenSegment::open(const std::string& path, SegmentUse use, const std::string& what) {
  if (use == SegmentUse::refuse) {
    return fail(ErrorKind::parse, fmt::format("{} named shared-memory segment '{}' where none is allowed "
                                              "(send the tensor in the payload)",
                                              what, path));
  }
  const std::string_view dir = kSegmentDir;
  const std::string_view name = std::string_view(path).substr(std::min(path.size(), dir.size()));
  if (!path.starts_with(dir) || !name.starts_with(kSegmentPrefix) ||
      name.find('/') != std::string_view::npos || name.find("..") != std::string_view::npos) {
    return fail(
        ErrorKind::parse,
        fmt::format("{} named segment '{}', which is not a file {}{}*: segments must be created there "
                    "(docs/protocol.md \"Shared-memory segments\")",
                    what, path, kSegmentDir, kSegmentPrefix));
  }
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer that never comes.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    return fail(ErrorKind::io,
                fmt::format("{} named segment '{}', which cannot be opened: {} (a client whose "
                            "/dev/shm is not the daemon's, e.g. in another container, must set "
                            "GPUEMU_SEGMENTS=0)",
                            what, path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    ::close(fd);
    return fail(ErrorKind::parse,
                fmt::format("{} named segment '{}', which is not a regular file of this user with mode 0600",
                            what, path));
  }
  return OpenSegment(path, fd, static_cast<std::uint64_t>(st.st_size));
}

OpenSegment::OpenSegment(OpenSegment&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

OpenSegment::~OpenSegment() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<std::shared_ptr<const std::byte[]>> OpenSegment::read(std::uint64_t offset, std::uint64_t nbytes,
                                                               const std::string& what) const {
  if (offset > size_ || nbytes > size_ - offset) {
    return fail(ErrorKind::parse,
                fmt::format("{} lies outside its segment's {} bytes (segment '{}', offset {}, nbytes {})",
                            what, size_, path_, offset, nbytes));
  }
  std::shared_ptr<std::byte[]> copy = allocate(nbytes);
  if (!copy) {
    return fail(ErrorKind::io,
                fmt::format("{}: no memory for a copy of its {} bytes in segment '{}'", what, nbytes, path_));
  }
  std::uint64_t done = 0;
  while (done < nbytes) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(nbytes - done, 1u << 30));
    const ssize_t n = ::pread(fd_, copy.get() + done, chunk, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return fail(ErrorKind::io,
                  fmt::format("{}: reading segment '{}' failed: {}", what, path_, std::strerror(errno)));
    }
    if (n == 0) {
      return fail(ErrorKind::parse,
                  fmt::format("{}: segment '{}' shrank to {} bytes while it was read (offset {}, nbytes {}); "
                              "a client must leave its segment unchanged until the reply is in",
                              what, path_, offset + done, offset, nbytes));
    }
    done += static_cast<std::uint64_t>(n);
  }
  return std::shared_ptr<const std::byte[]>(std::move(copy));
}

int remove_segments_of(long pid) {
  const std::string prefix = fmt::format("{}{}-", kSegmentPrefix, pid);
  DIR* dir = ::opendir(kSegmentDir);
  if (dir == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::string_view(entry->d_name).starts_with(prefix) &&
        ::unlinkat(::dirfd(dir), entry->d_name, 0) == 0) {
      ++removed;
    }
  }
  ::closedir(dir);
  return removed;
}

}  // namespace gpuemu::wire
