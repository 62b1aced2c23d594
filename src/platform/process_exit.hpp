// Watching a process end through a descriptor poll() can wait on beside a child's pipes: a pidfd on
// Linux, a kqueue with EVFILT_PROC on macOS, none elsewhere (callers then poll with waitid).
#pragma once

#include <sys/types.h>

namespace gpuemu::platform {

// A close-on-exec descriptor that polls readable (POLLIN) once process `pid` has ended, and stays
// so; the caller owns it. -1 where the system has no such call (or GPUEMU_PORTABLE_PLATFORM=ON): the
// caller then asks waitid (WNOHANG | WNOWAIT) every few milliseconds, which works for its own
// children only.
int open_exit_watch(pid_t pid);

// Whether open_exit_watch works here, so a process that is not our child (a fork server's worker)
// can be watched at all.
bool watches_process_exit();

}  // namespace gpuemu::platform
