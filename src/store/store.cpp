// Opening the store: where it lives, private directories, the checks that keep a foreign or
// corrupt file untouched, connection settings (WAL, synchronous, foreign keys) and migration.
#include "store/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "store/schema.hpp"
#include "store/store_impl.hpp"
#include "util/private_dir.hpp"
#include "util/time.hpp"

namespace gpuemu::store {
namespace {

namespace fs = std::filesystem;

// Serialises Store::open across processes: creating the file, checking what it holds, switching
// it to WAL and migrating must not interleave. Without it a second process could read a schema
// half made by the first, or write through a connection that opened the file before it was a WAL
// database (tests/unit/store/concurrency_test.cpp races two processes on a new file). Held only
// while opening; normal reads and writes rely on SQLite's own locking. Where the lock file cannot
// be made (a read-only directory), opening goes on without it: nothing can be created there.
class OpenLock {
 public:
  explicit OpenLock(const fs::path& db_file) {
    const fs::path lock_file = db_file.string() + ".open-lock";
    fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~OpenLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  OpenLock(const OpenLock&) = delete;
  OpenLock& operator=(const OpenLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

RunInfo run_info(const result::RunResult& result) {
  return RunInfo{result.command, result.master_seed, result.config_digest, result.project};
}

Expected<fs::path> default_db_path() {
  const char* home = std::getenv("GPUEMU_HOME");
  if (home != nullptr && *home != '\0') return fs::path(home) / "db" / "gpuemu.db";
  const char* user_home = std::getenv("HOME");
  if (user_home == nullptr || *user_home == '\0') {
    return fail(
        ErrorKind::environment,
        "neither GPUEMU_HOME nor HOME is set, so gpuemu cannot place its database; set GPUEMU_HOME to a "
        "writable directory");
  }
  return fs::path(user_home) / ".gpuemu" / "db" / "gpuemu.db";
}

Expected<Store> Store::open(const fs::path& db_file) {
  // Refuse what is plainly not ours before SQLite opens (and might recover into) the file.
  TRY(check_file_header(db_file));
  // The directories above the database are created private (the store holds inputs of the
  // user's kernels); existing ones keep their mode: they are not ours.
  TRY(util::make_private_dirs(
      db_file.parent_path(), util::ExistingDir::keep_mode,
      fmt::format("the gpuemu database {} goes there: point GPUEMU_HOME at a writable directory",
                  db_file.string())));
  const OpenLock lock(db_file);
  auto connection = TRY(sqlite::Connection::open(db_file));
  // Read-only identity check before the first write: journal_mode=WAL rewrites the header.
  TRY(check_identity(connection));
  const auto mode = TRY(connection.query_text("PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return fail(ErrorKind::io,
                fmt::format("gpuemu database {}: cannot switch to WAL mode (journal_mode is '{}'); "
                            "WAL needs a local file system with shared memory, so move GPUEMU_HOME "
                            "off network storage",
                            db_file.string(), mode));
  }
  // NORMAL in WAL mode: commits survive any process crash; see store.hpp for power loss.
  TRY(connection.exec("PRAGMA synchronous=NORMAL"));
  TRY(connection.exec("PRAGMA foreign_keys=ON"));
  TRY(migrate(connection));
  std::unique_ptr<Impl> impl(new Impl{std::move(connection), Clock(util::now_millis)});
  return Store(std::move(impl));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

const fs::path& Store::file() const {
  return impl_->db.file();
}

void Store::set_clock(Clock clock) {
  std::lock_guard lock(impl_->mutex);
  impl_->clock = clock ? std::move(clock) : Clock(util::now_millis);
}

}  // namespace gpuemu::store
