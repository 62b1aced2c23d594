// Shared-memory segments (docs/protocol.md "Shared-memory segments"): files under /dev/shm that a
// peer on the same machine writes tensors into, so large tensors cross processes without copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::run {

// Where segments live and what their file names start with; anything else is refused.
inline constexpr const char* kSegmentDir = "/dev/shm/";
inline constexpr const char* kSegmentPrefix = "gpuemu-";

// A segment mapped read-only into this process; unmapped when the last reference goes. It keeps
// the file open, so its inode cannot be reused while it is mapped.
class MappedSegment {
 public:
  MappedSegment(std::string path, int fd, const std::byte* bytes, std::size_t size)
      : path_(std::move(path)), fd_(fd), bytes_(bytes), size_(size) {}
  ~MappedSegment();
  MappedSegment(const MappedSegment&) = delete;
  MappedSegment& operator=(const MappedSegment&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {bytes_, size_}; }
  // False once the file was removed (its owner closed it): the mapping then serves no one new.
  bool still_linked() const;

 private:
  std::string path_;
  int fd_;
  const std::byte* bytes_;
  std::size_t size_;
};

// Segments a warm worker lent us that we no longer read: the next call hands them back
// ("released"), so the worker refills them instead of making new files. Thread-safe.
class SegmentReleases {
 public:
  void add(std::string path);
  std::vector<std::string> take();

 private:
  std::mutex mutex_;
  std::vector<std::string> paths_;
};

// How a receiver treats a segment a message names.
enum class SegmentUse {
  refuse,  // segments are not allowed here
  borrow,  // the sender owns it and leaves it unchanged until our reply (client -> daemon, daemon -> worker)
  lend,    // the sender (a worker) lends it until we release it through a SegmentReleases
};

// Maps `path` read-only after checking it is a segment of ours: /dev/shm/gpuemu-*, a regular
// file owned by this user with no group or other permissions. Mappings are kept and reused while
// the file exists (peers refill the same file for every request; mapping 64 MiB costs ~5 ms).
// `what` names the sender in errors.
Expected<std::shared_ptr<const MappedSegment>> map_segment(const std::string& path, SegmentUse use,
                                                           const std::string& what);

// Drops cached mappings of files that were removed (a client that closed), so their memory is
// freed without waiting for the next segment; cheap (one fstat per cached mapping).
void forget_removed_segments();

// Removes the segments a process (pid) created, e.g. a killed worker's; returns how many.
int remove_segments_of(long pid);

}  // namespace gpuemu::run
