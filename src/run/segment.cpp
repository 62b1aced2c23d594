// Mapping shared-memory segments (segment.hpp): the checks that keep a peer from pointing us at
// arbitrary files, and a cache of read-only shared mappings that peers refill request after request.
#include "run/segment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>

namespace gpuemu::run {
namespace {

constexpr std::size_t kCachedMappings = 16;

// Mappings by (device, inode): a peer's file keeps its inode while it is refilled, and an inode
// cannot be reused while we hold the file open.
struct MappingCache {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, std::pair<std::shared_ptr<const MappedSegment>, std::uint64_t>> entries;
  std::uint64_t clock = 0;

  // Forgets files that were removed, then the least recently used beyond the limit.
  void trim() {
    std::erase_if(entries, [](const auto& entry) { return !entry.second.first->still_linked(); });
    while (entries.size() > kCachedMappings) {
      auto oldest = std::min_element(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return a.second.second < b.second.second;
      });
      entries.erase(oldest);
    }
  }
};

MappingCache& cache() {
  static MappingCache instance;
  return instance;
}

}  // namespace

MappedSegment::~MappedSegment() {
  if (size_ != 0) ::munmap(const_cast<std::byte*>(bytes_), size_);
  ::close(fd_);
}

bool MappedSegment::still_linked() const {
  struct stat st {};
  return ::fstat(fd_, &st) == 0 && st.st_nlink > 0;
}

void SegmentReleases::add(std::string path) {
  std::lock_guard lock(mutex_);
  paths_.push_back(std::move(path));
}

std::vector<std::string> SegmentReleases::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(paths_, {});
}

Expected<std::shared_ptr<const MappedSegment>> map_segment(const std::string& path, SegmentUse use,
                                                           const std::string& what) {
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
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
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
  const auto size = static_cast<std::size_t>(st.st_size);
  auto& c = cache();
  std::lock_guard lock(c.mutex);
  const auto key = std::make_pair(st.st_dev, st.st_ino);
  if (auto it = c.entries.find(key); it != c.entries.end() && it->second.first->bytes().size() == size) {
    ::close(fd);
    it->second.second = ++c.clock;
    return it->second.first;
  }
  const std::byte* bytes = nullptr;
  if (size != 0) {
    void* at = ::mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (at == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return fail(ErrorKind::io, fmt::format("{} named segment '{}' ({} bytes), which cannot be mapped: {}",
                                             what, path, size, std::strerror(err)));
    }
    bytes = static_cast<const std::byte*>(at);
  }
  auto mapped = std::make_shared<const MappedSegment>(path, fd, bytes, size);
  c.entries[key] = {mapped, ++c.clock};
  c.trim();
  return mapped;
}

void forget_removed_segments() {
  auto& c = cache();
  std::lock_guard lock(c.mutex);
  c.trim();
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

}  // namespace gpuemu::run
