// Low-level child process plumbing shared by run_process and warm workers: owning file
// descriptors, spawning into a new process group with piped stdio, and killing/reaping the group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::proc {

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

// How a child ended, as waitpid reported it.
struct ExitStatus {
  bool exited = false;  // normal exit with `code`
  int code = -1;
  bool signaled = false;
  int signal = 0;
};

// Reaps a child another process started for us (a fork server's, proc/fork_server.hpp), which
// waitpid cannot: blocks until it has ended and says how.
class ForeignReaper {
 public:
  virtual ~ForeignReaper() = default;
  virtual ExitStatus reap(pid_t pid) = 0;
};

// A started child: the leader of its own process group (pgid == pid), with our ends of its
// stdin/stdout/stderr pipes (non-blocking, close-on-exec) and a descriptor that polls readable on exit.
struct SpawnedChild {
  pid_t pid = -1;
  Fd stdin_w;
  Fd stdout_r;
  Fd stderr_r;
  // platform::open_exit_watch's pidfd or kqueue; invalid where the system has neither (or
  // GPUEMU_PORTABLE_PLATFORM=ON): callers then poll with waitid.
  Fd exit_watch;
  // Set when the child is not ours but a fork server's (it then always has an exit_watch).
  std::shared_ptr<ForeignReaper> reaper;
};

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH unless it contains '/'
  std::filesystem::path cwd;      // empty = inherit
  std::vector<std::pair<std::string, std::string>> extra_env;  // override or add
  // The child's stdin is this descriptor instead of a pipe (child.stdin_w stays invalid), and
  // its stdout and stderr /dev/null: for a fork server, which talks over a socket.
  int stdin_fd = -1;
  // Modules a fork server started for this worker imports once for all of its workers (torch for a
  // pytorch op's: fork_server.hpp); spawn_child ignores them.
  std::vector<std::string> preload;
};

// Gives `child` our ends of its stdio pipes, made non-blocking (spawn_child and the fork server
// both hand children over this way).
void adopt_stdio(SpawnedChild& child, Fd stdin_w, Fd stdout_r, Fd stderr_r);

// platform::open_exit_watch for `pid` (any process, ours or not) as an owned descriptor; invalid
// where the system has none.
Fd open_exit_watch(pid_t pid);

// Starts the child. Fails (ErrorKind::environment) only when it cannot be started: the program
// is missing or not executable, or the working directory does not exist.
Expected<SpawnedChild> spawn_child(const SpawnSpec& spec);

// True once the child has exited (it stays a zombie until reap(), so its pgid cannot be reused).
bool has_exited(const SpawnedChild& child);

// SIGKILL to the child's whole process group (children and grandchildren).
void kill_group(pid_t pid);

// Blocks until the child is reaped and returns how it ended.
ExitStatus reap(pid_t pid);
// The same for a child of ours or of a fork server.
ExitStatus reap(const SpawnedChild& child);

// Where `program` resolves on PATH (or itself when it contains '/'), if it is executable.
std::optional<std::filesystem::path> find_program(const std::string& program);

// Ignores SIGPIPE process-wide, once: a child that closes its stdin early must give us EPIPE,
// not kill gpuemu. Children get the default disposition back (spawn_child resets it).
void ignore_sigpipe();

// Milliseconds left until `deadline`, clamped to [0, cap_ms], for poll().
int poll_timeout_ms(std::chrono::steady_clock::time_point deadline, int cap_ms);

}  // namespace gpuemu::proc
