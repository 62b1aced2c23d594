// Spawning children into their own process group with piped stdio (posix_spawnp), and the
// kill/reap helpers. Every descriptor is close-on-exec so concurrent spawns never inherit ours.
#include "proc/spawn.hpp"

#include "platform/platform.hpp"
#include "platform/process_exit.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

extern char** environ;

namespace gpuemu::proc {

namespace fs = std::filesystem;

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

namespace {

struct Pipe {
  Fd read;
  Fd write;
};

Expected<Pipe> make_pipe() {
  int fds[2];
  if (platform::make_pipe(fds) != 0) {
    return fail(ErrorKind::environment,
                std::string("cannot create a pipe for a child process: ") + std::strerror(errno));
  }
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// The parent's environment with `extra` applied (same name replaces, new names are added).
std::vector<std::string> build_env(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    bool overridden =
        std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == name; });
    if (!overridden) env.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// RAII for the posix_spawn attribute objects.
struct SpawnAttrs {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnAttrs() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnAttrs() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnAttrs(const SpawnAttrs&) = delete;
  SpawnAttrs& operator=(const SpawnAttrs&) = delete;
};

}  // namespace

void adopt_stdio(SpawnedChild& child, Fd stdin_w, Fd stdout_r, Fd stderr_r) {
  child.stdin_w = std::move(stdin_w);
  child.stdout_r = std::move(stdout_r);
  child.stderr_r = std::move(stderr_r);
  for (const Fd* fd : {&child.stdin_w, &child.stdout_r, &child.stderr_r}) set_nonblocking(fd->get());
}

Fd open_exit_watch(pid_t pid) {
  return Fd(platform::open_exit_watch(pid));
}

void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

Expected<SpawnedChild> spawn_child(const SpawnSpec& spec) {
  ignore_sigpipe();
  if (spec.argv.empty()) return fail(ErrorKind::internal, "spawn_child called with an empty argv");
  if (!spec.cwd.empty()) {
    std::error_code ec;
    if (!fs::is_directory(spec.cwd, ec)) {
      return fail(ErrorKind::environment, "cannot start '" + spec.argv[0] + "': working directory " +
                                              spec.cwd.string() + " does not exist");
    }
  }
  const bool given_stdin = spec.stdin_fd >= 0;
  Pipe in, out, err;
  SpawnAttrs sa;
  if (given_stdin) {
    posix_spawn_file_actions_adddup2(&sa.actions, spec.stdin_fd, STDIN_FILENO);
    posix_spawn_file_actions_addopen(&sa.actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&sa.actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  } else {
    in = TRY(make_pipe());
    out = TRY(make_pipe());
    err = TRY(make_pipe());
    posix_spawn_file_actions_adddup2(&sa.actions, in.read.get(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&sa.actions, out.write.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&sa.actions, err.write.get(), STDERR_FILENO);
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&sa.actions, spec.cwd.c_str());
  // A new process group (so a timeout can kill grandchildren too), default signal handling
  // (SIG_IGN for SIGPIPE would otherwise be inherited across exec) and an empty signal mask.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigset_t empty;
  sigemptyset(&empty);
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
#if defined(POSIX_SPAWN_CLOEXEC_DEFAULT)
  // macOS: only the descriptors dup2'd above reach the child, so one another thread's pipe() made
  // before its FD_CLOEXEC (platform::make_pipe without pipe2) cannot leak into it.
  flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
  posix_spawnattr_setflags(&sa.attr, flags);
  posix_spawnattr_setpgroup(&sa.attr, 0);
  posix_spawnattr_setsigdefault(&sa.attr, &defaults);
  posix_spawnattr_setsigmask(&sa.attr, &empty);

  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = build_env(spec.extra_env);
  std::vector<char*> argv = c_strings(args);
  std::vector<char*> envp = c_strings(env);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &sa.actions, &sa.attr, argv.data(), envp.data());
  if (rc != 0) {
    std::string reason = rc == ENOENT ? "not found on PATH" : std::strerror(rc);
    return fail(ErrorKind::environment, "cannot start '" + spec.argv[0] + "': " + reason);
  }

  SpawnedChild child;
  child.pid = pid;
  if (!given_stdin) adopt_stdio(child, std::move(in.write), std::move(out.read), std::move(err.read));
  child.exit_watch = open_exit_watch(pid);
  return child;
}

bool has_exited(const SpawnedChild& child) {
  if (child.exit_watch.valid()) {
    pollfd p{child.exit_watch.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  siginfo_t info{};
  // WNOWAIT leaves the zombie in place so the process group id stays reserved until reap().
  if (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
  return info.si_pid != 0;
}

void kill_group(pid_t pid) {
  if (pid > 0) ::kill(-pid, SIGKILL);
}

ExitStatus reap(pid_t pid) {
  ExitStatus status;
  int raw = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &raw, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return status;
  if (WIFEXITED(raw)) {
    status.exited = true;
    status.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  }
  return status;
}

ExitStatus reap(const SpawnedChild& child) {
  return child.reaper ? child.reaper->reap(child.pid) : reap(child.pid);
}

std::optional<fs::path> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return fs::path(program);
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  std::string_view path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    std::size_t colon = path.find(':');
    std::string dir(path.substr(0, colon));
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate, ec)) return candidate;
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

int poll_timeout_ms(std::chrono::steady_clock::time_point deadline, int cap_ms) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
          .count();
  // Round up so we never spin with a 0 ms timeout while time is still left.
  if (left < 0) return 0;
  return static_cast<int>(std::min<long long>(left + 1, cap_ms));
}

}  // namespace gpuemu::proc
