// SharedMemoryFile (shared_memory_file.hpp): memfd_create where the build found it, else a file in a
// private directory of this process, which is also how GPUEMU_PORTABLE_PLATFORM=ON tests that path.
#include "platform/shared_memory_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <utility>

namespace gpuemu::platform {

namespace fs = std::filesystem;

namespace {

Expected<SharedMemoryFile> size_failed(int fd, std::uint64_t size) {
  const int err = errno;
  ::close(fd);
  return fail(ErrorKind::io,
              fmt::format("cannot size a shared-memory file to {} bytes: {}", size, std::strerror(err)));
}

#if !defined(GPUEMU_HAVE_MEMFD)

constexpr std::string_view kDirPrefix = "gpuemu-shared-";

// Where the private directories go: /dev/shm is memory (as a memfd is) where it exists.
fs::path base_directory() {
  if (::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  // Absolute and without "." or "..": workers accept only such a name (input_files.PATTERN).
  const char* tmp = std::getenv("TMPDIR");
  std::error_code ec;
  const fs::path dir = fs::absolute(tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp"), ec);
  return ec ? fs::path("/tmp") : dir.lexically_normal();
}

// Directories of gpuemu processes that have ended (killed before they could remove theirs): their
// files are no one's any more. Only this user's (another's cannot be listed or removed anyway).
void remove_stale_directories(const fs::path& base) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kDirPrefix)) continue;
    const long pid = std::strtol(name.c_str() + kDirPrefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

// This process's directory (mode 0700, so no other user can open, replace or list its files), made
// on first use. Never destroyed (a file let go during exit must still find it); removed with what is
// left in it (the files wire's pool keeps for the process's life) by an atexit handler.
struct PrivateDirectory {
  std::mutex mutex;
  std::string path;  // empty until made
  pid_t owner = 0;   // a forked child that exits must not remove its parent's directory
  std::atomic<std::uint64_t> next{0};
};

PrivateDirectory& private_directory() {
  static PrivateDirectory* const instance = new PrivateDirectory;
  return *instance;
}

void remove_private_directory() {
  PrivateDirectory& dir = private_directory();
  std::lock_guard lock(dir.mutex);
  if (dir.path.empty() || dir.owner != ::getpid()) return;
  std::error_code ignored;
  fs::remove_all(dir.path, ignored);
}

Expected<std::string> private_directory_path() {
  PrivateDirectory& dir = private_directory();
  std::lock_guard lock(dir.mutex);
  if (!dir.path.empty()) return dir.path;
  const fs::path base = base_directory();
  remove_stale_directories(base);
  std::random_device random;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const fs::path path = base / fmt::format("{}{}-{:08x}", kDirPrefix, ::getpid(), random());
    if (::mkdir(path.c_str(), 0700) == 0) {
      dir.path = path.string();
      dir.owner = ::getpid();
      std::atexit(remove_private_directory);
      return dir.path;
    }
    if (errno != EEXIST) {
      return fail(ErrorKind::io, fmt::format("cannot create a directory for shared-memory files in {}: {} "
                                             "(set TMPDIR to a writable directory)",
                                             base.string(), std::strerror(errno)));
    }
  }
  return fail(ErrorKind::io,
              fmt::format("cannot create a directory for shared-memory files in {}", base.string()));
}

#endif

}  // namespace

Expected<SharedMemoryFile> SharedMemoryFile::create(std::uint64_t size) {
#if defined(GPUEMU_HAVE_MEMFD)
  const int fd = ::memfd_create("gpuemu-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail(ErrorKind::io, fmt::format("memfd_create failed: {}", std::strerror(errno)));
  // Sealed against shrinking: a worker can open the file by its /proc name, and one that truncated
  // it would make our next write through the mapping a SIGBUS.
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return size_failed(fd, size);
#if defined(GPUEMU_HAVE_FILE_SEALS)
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) return size_failed(fd, size);
  constexpr bool sealed = true;
#else
  constexpr bool sealed = false;
#endif
  return SharedMemoryFile(fd, fmt::format("/proc/{}/fd/{}", ::getpid(), fd), false, sealed);
#else
  const std::string dir = TRY(private_directory_path());
  const std::string path = fmt::format("{}/{}", dir, private_directory().next.fetch_add(1));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return fail(ErrorKind::io,
                fmt::format("cannot create shared-memory file {}: {}", path, std::strerror(errno)));
  }
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::unlink(path.c_str());
    return size_failed(fd, size);
  }
  return SharedMemoryFile(fd, path, true, false);
#endif
}

SharedMemoryFile::SharedMemoryFile(int fd, std::string name, bool unlink_on_close, bool sealed)
    : fd_(fd), name_(std::move(name)), unlink_on_close_(unlink_on_close), sealed_(sealed) {}

SharedMemoryFile::SharedMemoryFile(SharedMemoryFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      name_(std::move(other.name_)),
      unlink_on_close_(std::exchange(other.unlink_on_close_, false)),
      sealed_(other.sealed_) {}

SharedMemoryFile& SharedMemoryFile::operator=(SharedMemoryFile&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    name_ = std::move(other.name_);
    unlink_on_close_ = std::exchange(other.unlink_on_close_, false);
    sealed_ = other.sealed_;
  }
  return *this;
}

SharedMemoryFile::~SharedMemoryFile() {
  release();
}

void SharedMemoryFile::release() {
  if (fd_ < 0) return;
  // A worker that still maps the file keeps its pages; the name goes now, so no one opens it again.
  if (unlink_on_close_) ::unlink(name_.c_str());
  ::close(fd_);
  fd_ = -1;
}

bool names_shared_memory_file(std::string_view path) {
#if defined(GPUEMU_HAVE_MEMFD)
  return path.starts_with("/proc/");
#else
  PrivateDirectory& dir = private_directory();
  std::lock_guard lock(dir.mutex);
  return !dir.path.empty() && path.size() > dir.path.size() + 1 && path.starts_with(dir.path) &&
         path[dir.path.size()] == '/' && path.find('/', dir.path.size() + 1) == std::string_view::npos;
#endif
}

}  // namespace gpuemu::platform
