// The calls gpuemu needs that differ between Linux, macOS and other POSIX systems (docs/platforms.md):
// which implementation this build has of each, and the small ones (pipes, paths, memory, CPUs).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace gpuemu::platform {

// Which implementation this build uses for each call that differs, chosen at build time by what the
// system has (src/platform/CMakeLists.txt); GPUEMU_PORTABLE_PLATFORM=ON takes the portable one of each.
struct Implementations {
  std::string_view shared_files;     // "memfd" (Linux) or "private-directory"
  std::string_view process_exit;     // "pidfd" (Linux), "kqueue" (macOS, BSD) or "waitid-polling"
  std::string_view executable_path;  // "proc-self-exe" or "NSGetExecutablePath" (macOS)
  std::string_view prefault;         // "MAP_POPULATE" (Linux) or "none"
  std::string_view usable_cpus;      // "sched_getaffinity" (Linux) or "sysconf"
  bool portable_forced = false;      // built with GPUEMU_PORTABLE_PLATFORM=ON
};
const Implementations& implementations();

// pipe() with both ends close-on-exec: pipe2 where it exists; elsewhere pipe and FD_CLOEXEC, which a
// fork in another thread between the two calls could inherit (proc::spawn_child closes that window
// on macOS with POSIX_SPAWN_CLOEXEC_DEFAULT). 0 or -1 with errno, as pipe().
int make_pipe(int fds[2]);
// socketpair(AF_UNIX, type) with both ends close-on-exec, as make_pipe.
int make_socketpair(int type, int fds[2]);
// The flag that keeps send() on a closed socket from raising SIGPIPE where the system has one
// (MSG_NOSIGNAL); elsewhere 0, and proc::ignore_sigpipe's process-wide SIG_IGN is what protects us.
int send_without_sigpipe_flag();

// The running executable's absolute path (/proc/self/exe; _NSGetExecutablePath on macOS); empty when
// the system cannot say.
std::filesystem::path executable_path();

// `nbytes` of anonymous private read-write memory, its pages allocated at once where the system can
// (MAP_POPULATE: one call instead of a page fault per page), else on first touch; nullptr when it
// cannot be mapped. Release with ::munmap(p, nbytes).
void* map_prefaulted(std::size_t nbytes);

// The CPUs this process may run on (its affinity mask where the system has one), at least 1.
int usable_cpus();

// "Segmentation fault" for SIGSEGV: sigdescr_np where it exists (thread-safe, glibc 2.32), else
// strsignal; nullptr for a number no signal has.
const char* signal_description(int signal);

// Waits up to `timeout` for one of the signals of `set` (blocked in every thread) and takes it:
// sigtimedwait where it exists; elsewhere (macOS) sigpending every 10 ms, then sigwait. The signal,
// or -1 when none came.
int wait_for_signal(const sigset_t& set, std::chrono::milliseconds timeout);

// Whether process `pid` still runs: false once it has ended, a zombie (ended, not yet reaped by its
// parent) included. Linux reads /proc/<pid>/stat, macOS asks sysctl; elsewhere a zombie that is not
// our own child counts as running.
bool process_running(pid_t pid);

}  // namespace gpuemu::platform
