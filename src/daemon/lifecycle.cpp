// The daemon process (lifecycle.hpp). The pid file carries an exclusive flock for the daemon's
// whole life: that, not the pid it contains, is what makes a second start refuse and what tells
// a stale pid file (a daemon killed with -9) from a live one.
#include "daemon/lifecycle.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <thread>

#include "daemon/client.hpp"
#include "daemon/server.hpp"
#include "daemon/state.hpp"
#include "platform/platform.hpp"
#include "store/store.hpp"
#include "util/private_dir.hpp"
#include "util/read_file.hpp"
#include "util/time.hpp"

extern char** environ;

namespace gpuemu::daemon {
namespace {

namespace fs = std::filesystem;

// GPUEMU_HOME and the log directory are gpuemu's own: made private even when they exist.
Expected<void> make_private_dir(const fs::path& dir) {
  return util::make_private_dirs(dir, util::ExistingDir::make_private, "check GPUEMU_HOME");
}

// The pid written in the pid file (0 if unreadable).
pid_t read_pid(const fs::path& file) {
  const auto text = util::read_text_file(file, "pid file", {.max_bytes = 64});
  if (!text) return 0;
  long pid = 0;
  std::from_chars(text->data(), text->data() + text->size(), pid);
  return static_cast<pid_t>(pid > 0 ? pid : 0);
}

// Appends timestamped lines to the daemon log (and stderr in the foreground); thread-safe.
class Logger {
 public:
  Logger(const fs::path& file, bool mirror) : mirror_(mirror) {
    fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  }
  ~Logger() {
    if (fd_ >= 0) ::close(fd_);
  }
  void operator()(const std::string& line) {
    const auto text =
        fmt::format("{} gpuemu daemon[{}]: {}\n", util::iso_time(util::now_millis()), ::getpid(), line);
    std::lock_guard lock(mutex_);
    if (fd_ >= 0 && ::write(fd_, text.data(), text.size()) < 0) fd_ = -1;
    if (mirror_ && ::write(STDERR_FILENO, text.data(), text.size()) < 0) mirror_ = false;
  }

 private:
  std::mutex mutex_;
  int fd_ = -1;
  bool mirror_;
};

// Holds the pid file's lock; removes the file when the daemon ends normally.
class PidLock {
 public:
  static Expected<PidLock> acquire(const DaemonPaths& paths) {
    const int fd = ::open(paths.pid_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return fail(ErrorKind::io,
                  fmt::format("cannot open {}: {}", paths.pid_file.string(), std::strerror(errno)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      const pid_t pid = read_pid(paths.pid_file);
      return fail(ErrorKind::usage,
                  fmt::format("a gpuemu daemon is already running{} on {}; use it, or stop it with "
                              "'gpuemu daemon stop'",
                              pid ? fmt::format(" (pid {})", pid) : "", paths.socket.string()));
    }
    const auto text = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      ::close(fd);
      return fail(ErrorKind::io,
                  fmt::format("cannot write {}: {}", paths.pid_file.string(), std::strerror(errno)));
    }
    return PidLock(fd, paths.pid_file);
  }
  PidLock(PidLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), file_(std::move(other.file_)) {}
  PidLock& operator=(PidLock&&) = delete;
  ~PidLock() {
    if (fd_ < 0) return;
    std::error_code ec;
    fs::remove(file_, ec);  // still locked here, so no new daemon can have written it
    ::close(fd_);
  }

 private:
  PidLock(int fd, fs::path file) : fd_(fd), file_(std::move(file)) {}
  int fd_;
  fs::path file_;
};

int worker_count(const RunOptions& options) {
  if (const char* env = std::getenv("GPUEMU_DAEMON_WORKERS"); env && *env) {
    const int n = std::atoi(env);
    if (n >= 1 && n <= 256) return n;
  }
  return options.workers;
}

int max_long_requests(const RunOptions& options) {
  if (const char* env = std::getenv("GPUEMU_DAEMON_MAX_LONG_REQUESTS"); env && *env) {
    const int n = std::atoi(env);
    if (n >= 1 && n <= 256) return n;
  }
  return options.max_long_requests;
}

}  // namespace

Expected<DaemonPaths> daemon_paths() {
  DaemonPaths paths;
  const auto db = TRY(store::default_db_path());  // $GPUEMU_HOME/db/gpuemu.db
  paths.db = db;
  paths.home = db.parent_path().parent_path();
  paths.socket = paths.home / "gpuemu.sock";
  paths.pid_file = paths.home / "gpuemu.pid";
  paths.log_file = paths.home / "logs" / "daemon.log";
  // sockaddr_un holds 107 bytes of path: say so instead of failing obscurely at listen time.
  if (paths.socket.string().size() > 100) {
    return fail(ErrorKind::environment,
                fmt::format("the daemon socket path {} is longer than Unix sockets allow "
                            "(100 bytes); set GPUEMU_HOME to a shorter directory",
                            paths.socket.string()));
  }
  return paths;
}

std::optional<pid_t> running_daemon(const DaemonPaths& paths) {
  const int fd = ::open(paths.pid_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // also drops a shared lock we may have taken
  if (!locked) return std::nullopt;
  const pid_t pid = read_pid(paths.pid_file);
  return pid > 0 ? std::optional(pid) : std::nullopt;
}

Expected<void> run_daemon(const DaemonPaths& paths, const RunOptions& options) {
  TRY(make_private_dir(paths.home));
  TRY(make_private_dir(paths.log_file.parent_path()));
  auto lock = TRY(PidLock::acquire(paths));
  Logger logger(paths.log_file, options.log_to_stderr);

  // Signals are taken synchronously by this thread only; workers (and the scripts they spawn,
  // which get a clean mask from proc::spawn_child) never see them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &old_mask);

  std::error_code ec;
  fs::remove(paths.socket, ec);  // left by a daemon killed with -9; we hold the lock, so it is stale
  DaemonOptions state_options{paths.socket, paths.db, options.config,
                              [&logger](const std::string& line) { logger(line); }};
  auto state = DaemonState::open(state_options);
  if (!state) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return std::unexpected(state.error());
  }
  auto server = Server::listen(**state, {.url = paths.url(),
                                         .workers = worker_count(options),
                                         .max_long_requests = max_long_requests(options),
                                         .ipc_permissions = 0600});
  if (!server) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    return std::unexpected(server.error());
  }
  ::chmod(paths.socket.c_str(), 0600);
  (*server)->start();
  logger(fmt::format("listening on {} with {} workers (pid {}, store {}, default config {})", paths.url(),
                     worker_count(options), ::getpid(), paths.db.string(),
                     options.config ? options.config->string() : "none"));

  while (!(*state)->stopping) {
    const int sig = platform::wait_for_signal(signals, std::chrono::milliseconds(200));
    if (sig > 0) {
      logger(fmt::format("received signal {} ({}): finishing in-flight requests", sig, strsignal(sig)));
      (*state)->stopping = true;
    }
  }
  logger(fmt::format("stopping: {} request(s) in flight", (*state)->in_flight.load()));
  (*server)->join();
  server->reset();
  fs::remove(paths.socket, ec);
  logger(fmt::format("stopped after serving {} request(s)", (*state)->served.load()));
  state->reset();  // ends warm workers
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return {};
}

Expected<pid_t> start_background(const DaemonPaths& paths, const std::vector<std::string>& self_argv,
                                 int wait_ms) {
  if (auto pid = running_daemon(paths)) {
    return fail(ErrorKind::usage,
                fmt::format("a gpuemu daemon is already running (pid {}) on {}; use it, or stop it "
                            "with 'gpuemu daemon stop'",
                            *pid, paths.socket.string()));
  }
  TRY(make_private_dir(paths.home));
  TRY(make_private_dir(paths.log_file.parent_path()));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, paths.log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  for (const auto& a : self_argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).starts_with("GPUEMU_DAEMON_BACKGROUND=")) continue;
    env_strings.emplace_back(*e);
  }
  env_strings.emplace_back("GPUEMU_DAEMON_BACKGROUND=1");
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int rv = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rv != 0) {
    return fail(ErrorKind::environment,
                fmt::format("cannot start the daemon ({}): {}", argv[0], std::strerror(rv)));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return fail(ErrorKind::environment,
                  fmt::format("the daemon exited at start ({}); see {}",
                              WIFEXITED(status) ? fmt::format("status {}", WEXITSTATUS(status))
                                                : fmt::format("signal {}", WTERMSIG(status)),
                              paths.log_file.string()));
    }
    if (auto client = Client::connect(paths.url(), 2000)) {
      if (client->request({{"type", "ping"}}, {}, 2000)) return pid;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return fail(ErrorKind::environment,
              fmt::format("the daemon (pid {}) did not answer on {} within {} ms; see {}", pid, paths.url(),
                          wait_ms, paths.log_file.string()));
}

Expected<std::optional<pid_t>> stop_daemon(const DaemonPaths& paths, int wait_ms) {
  const auto pid = running_daemon(paths);
  if (!pid) return std::optional<pid_t>();
  bool asked = false;
  if (auto client = Client::connect(paths.url(), 5000))
    asked = client->request({{"type", "shutdown"}}, {}, 5000).has_value();
  if (!asked) ::kill(*pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    // The lock goes before the process does (it still reaps its fork servers): "stopped" means
    // the process has ended, so a start right after never meets the old one's children.
    if (!running_daemon(paths) && !platform::process_running(*pid)) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return fail(ErrorKind::environment,
              fmt::format("the daemon (pid {}) is still running after {} ms (a long request "
                          "may be finishing); see {}, or kill {}",
                          *pid, wait_ms, paths.log_file.string(), *pid));
}

}  // namespace gpuemu::daemon
