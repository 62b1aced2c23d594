// The daemon process: where it lives ($GPUEMU_HOME: socket, pid file, logs), starting it in the
// foreground or the background, refusing a second one, and stopping on shutdown or SIGTERM.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::daemon {

struct DaemonPaths {
  std::filesystem::path home;      // $GPUEMU_HOME, default ~/.gpuemu (mode 0700)
  std::filesystem::path socket;    // home/gpuemu.sock (0600)
  std::filesystem::path pid_file;  // home/gpuemu.pid, locked while the daemon runs
  std::filesystem::path log_file;  // home/logs/daemon.log
  std::filesystem::path db;        // home/db/gpuemu.db
  std::string url() const { return "ipc://" + socket.string(); }
};

Expected<DaemonPaths> daemon_paths();

// The pid of the daemon that holds the pid-file lock, if one is running.
std::optional<pid_t> running_daemon(const DaemonPaths& paths);

struct RunOptions {
  std::optional<std::filesystem::path> config;  // default project for requests without "config"
  bool log_to_stderr = true;                    // also mirror the log on stderr (foreground)
  int workers = 8;                              // GPUEMU_DAEMON_WORKERS overrides
  int max_long_requests = 4;                    // GPUEMU_DAEMON_MAX_LONG_REQUESTS overrides
};

// Runs the daemon in this process until a shutdown request, SIGTERM or SIGINT; returns after the
// in-flight requests finished and the socket and pid file are removed. Errors (usage) when a
// daemon already runs for this GPUEMU_HOME.
Expected<void> run_daemon(const DaemonPaths& paths, const RunOptions& options);

// Starts `self_argv` (this binary with arguments that run the daemon in the foreground) detached,
// in a new session, with its output appended to the log; returns once it answers ping.
Expected<pid_t> start_background(const DaemonPaths& paths, const std::vector<std::string>& self_argv,
                                 int wait_ms = 20000);

// Asks the running daemon to shut down (falling back to SIGTERM) and waits until it is gone.
// Returns the pid that stopped, or nullopt when none was running.
Expected<std::optional<pid_t>> stop_daemon(const DaemonPaths& paths, int wait_ms = 60000);

}  // namespace gpuemu::daemon
