// The small calls of platform.hpp (pipes, the executable's path, prefaulted memory, CPUs, whether a
// process runs), each its system's call where the build found it and a portable one elsewhere.
#include "platform/platform.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#if defined(GPUEMU_HAVE_SCHED_GETAFFINITY)
#include <sched.h>
#endif
#if defined(GPUEMU_HAVE_NSGETEXECUTABLEPATH)
#include <mach-o/dyld.h>
#endif
#if defined(GPUEMU_HAVE_SYSCTL_KERN_PROC)
#include <sys/proc.h>
#include <sys/sysctl.h>
#endif

namespace gpuemu::platform {

const Implementations& implementations() {
  static const Implementations chosen = {
#if defined(GPUEMU_HAVE_MEMFD)
    .shared_files = "memfd",
#else
    .shared_files = "private-directory",
#endif
#if defined(GPUEMU_HAVE_PIDFD)
    .process_exit = "pidfd",
#elif defined(GPUEMU_HAVE_KQUEUE_PROC)
    .process_exit = "kqueue",
#else
    .process_exit = "waitid-polling",
#endif
#if defined(GPUEMU_HAVE_NSGETEXECUTABLEPATH)
    .executable_path = "NSGetExecutablePath",
#else
    .executable_path = "proc-self-exe",
#endif
#if defined(GPUEMU_HAVE_MAP_POPULATE)
    .prefault = "MAP_POPULATE",
#else
    .prefault = "none",
#endif
#if defined(GPUEMU_HAVE_SCHED_GETAFFINITY)
    .usable_cpus = "sched_getaffinity",
#else
    .usable_cpus = "sysconf",
#endif
#if defined(GPUEMU_PORTABLE_PLATFORM)
    .portable_forced = true,
#else
    .portable_forced = false,
#endif
  };
  return chosen;
}

namespace {

[[maybe_unused]] int set_close_on_exec(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (::fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      errno = err;
      return -1;
    }
  }
  return 0;
}

}  // namespace

int make_pipe(int fds[2]) {
#if defined(GPUEMU_HAVE_PIPE2)
  return ::pipe2(fds, O_CLOEXEC);
#else
  if (::pipe(fds) != 0) return -1;
  return set_close_on_exec(fds);
#endif
}

int make_socketpair(int type, int fds[2]) {
#if defined(GPUEMU_HAVE_SOCK_CLOEXEC)
  return ::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds);
#else
  if (::socketpair(AF_UNIX, type, 0, fds) != 0) return -1;
  return set_close_on_exec(fds);
#endif
}

int send_without_sigpipe_flag() {
#if defined(GPUEMU_HAVE_MSG_NOSIGNAL)
  return MSG_NOSIGNAL;
#else
  return 0;
#endif
}

std::filesystem::path executable_path() {
#if defined(GPUEMU_HAVE_NSGETEXECUTABLEPATH)
  std::uint32_t size = 0;
  ::_NSGetExecutablePath(nullptr, &size);  // says how long the path is
  std::string path(size, '\0');
  if (::_NSGetExecutablePath(path.data(), &size) != 0) return {};
  path.resize(path.find('\0'));
  std::error_code ec;
  auto resolved = std::filesystem::canonical(path, ec);  // the path may hold symlinks and ".."
  return ec ? std::filesystem::path(path) : resolved;
#else
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : path;
#endif
}

void* map_prefaulted(std::size_t nbytes) {
#if defined(GPUEMU_HAVE_MAP_POPULATE)
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
#else
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS;
#endif
  void* at = ::mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
  return at == MAP_FAILED ? nullptr : at;
}

int usable_cpus() {
#if defined(GPUEMU_HAVE_SCHED_GETAFFINITY)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
}

const char* signal_description(int signal) {
#if defined(GPUEMU_HAVE_SIGDESCR_NP)
  return ::sigdescr_np(signal);
#else
  return ::strsignal(signal);
#endif
}

int wait_for_signal(const sigset_t& set, std::chrono::milliseconds timeout) {
#if defined(GPUEMU_HAVE_SIGTIMEDWAIT)
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  const timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  return ::sigtimedwait(&set, nullptr, &wait);
#else
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    for (int signal = 1; signal < NSIG; ++signal) {
      if (sigismember(&set, signal) == 1 && sigismember(&pending, signal) == 1) {
        int taken = -1;
        return ::sigwait(&set, &taken) == 0 ? taken : -1;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    ::usleep(10 * 1000);
  }
#endif
}

bool process_running(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == EPERM;
  // A child of ours that has ended is a zombie until we reap it: waitid sees that without reaping.
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0)
    return info.si_pid != pid;
#if defined(GPUEMU_HAVE_SYSCTL_KERN_PROC)
  int query[] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, static_cast<int>(pid)};
  struct kinfo_proc process {};
  std::size_t size = sizeof(process);
  if (::sysctl(query, 4, &process, &size, nullptr, 0) != 0 || size == 0) return false;
  return process.kp_proc.p_stat != SZOMB;
#else
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: a live process (kill said so)
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
#endif
}

}  // namespace gpuemu::platform
