// open_exit_watch (process_exit.hpp): pidfd_open on Linux, a kqueue with EVFILT_PROC/NOTE_EXIT on
// macOS and the BSDs, nothing elsewhere (GPUEMU_PORTABLE_PLATFORM=ON compiles neither in).
#include "platform/process_exit.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#if defined(GPUEMU_HAVE_PIDFD)
#include <sys/syscall.h>
#elif defined(GPUEMU_HAVE_KQUEUE_PROC)
#include <sys/event.h>
#include <sys/time.h>

#include "platform/platform.hpp"
#endif

namespace gpuemu::platform {

namespace {

[[maybe_unused]] int close_on_exec(int fd) {
  if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

#if defined(GPUEMU_HAVE_KQUEUE_PROC) && !defined(GPUEMU_HAVE_PIDFD)
// A descriptor that polls readable at once: the watch of a process that had already ended when it
// was asked for (kevent refuses to watch it, ESRCH). A pipe whose write end is closed reads EOF.
int already_ended() {
  int fds[2];
  if (make_pipe(fds) != 0) return -1;
  ::close(fds[1]);
  return fds[0];
}
#endif

}  // namespace

int open_exit_watch([[maybe_unused]] pid_t pid) {
#if defined(GPUEMU_HAVE_PIDFD)
  // Through syscall(): glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++ callers.
  return close_on_exec(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#elif defined(GPUEMU_HAVE_KQUEUE_PROC)
  // A kqueue polls readable while an event is pending; NOTE_EXIT stays pending until read, which
  // no one does, so it stays readable once the process has ended.
  const int queue = close_on_exec(::kqueue());
  if (queue < 0) return -1;
  struct kevent change;
  EV_SET(&change, static_cast<uintptr_t>(pid), EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  const struct timespec now = {0, 0};
  if (::kevent(queue, &change, 1, nullptr, 0, &now) != 0) {
    const int err = errno;
    ::close(queue);
    return err == ESRCH ? already_ended() : -1;
  }
  return queue;
#else
  return -1;
#endif
}

bool watches_process_exit() {
#if defined(GPUEMU_HAVE_PIDFD)
  // A kernel before 5.3 has the header's number but not the call.
  static const bool works = [] {
    const int fd = open_exit_watch(::getpid());
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }();
  return works;
#elif defined(GPUEMU_HAVE_KQUEUE_PROC)
  return true;
#else
  return false;
#endif
}

}  // namespace gpuemu::platform
