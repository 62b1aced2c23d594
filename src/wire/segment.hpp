// Shared-memory segments (docs/protocol.md "Shared-memory segments"): files under /dev/shm that a
// peer on the same machine writes tensors into, so large tensors skip the socket and the pipes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::wire {

// Where segments live and what their file names start with; anything else is refused.
inline constexpr const char* kSegmentDir = "/dev/shm/";
inline constexpr const char* kSegmentPrefix = "gpuemu-";

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

// A segment opened for reading after checking it is one of ours: /dev/shm/gpuemu-*, a regular
// file owned by this user with no group or other permissions. Opened without blocking (a FIFO
// of that name is refused, never waited on) and never mapped: a peer can shrink or rewrite its
// file at any time, and a mapping would turn that into a SIGBUS of the reader. Closed with it.
class OpenSegment {
 public:
  // `what` names the sender in errors.
  static Expected<OpenSegment> open(const std::string& path, SegmentUse use, const std::string& what);
  OpenSegment(OpenSegment&& other) noexcept;
  OpenSegment& operator=(OpenSegment&&) = delete;
  OpenSegment(const OpenSegment&) = delete;
  ~OpenSegment();

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }  // at open time
  // A copy of [offset, offset + nbytes) in memory this process owns. The range must lie in the
  // file as it was opened; a file that shrank since is an error naming `what`, never a signal.
  Expected<std::shared_ptr<const std::byte[]>> read(std::uint64_t offset, std::uint64_t nbytes,
                                                    const std::string& what) const;

 private:
  OpenSegment(std::string path, int fd, std::uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Removes the segments a process (pid) created, e.g. a killed worker's; returns how many.
int remove_segments_of(long pid);

}  // namespace gpuemu::wire
