// Runs a child process in its own process group: feeds stdin and drains stdout and stderr
// concurrently (no pipe deadlock), kills the whole group at the timeout, keeps a bounded stderr tail.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gpuemu::proc {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::filesystem::path cwd;
  std::vector<std::pair<std::string, std::string>> extra_env;
  std::string stdin_data;
  std::chrono::milliseconds timeout{60000};
  std::size_t max_stdout = 1ull << 30;  // beyond this the child is killed and the result is an error
  std::size_t stderr_tail = 16 * 1024;  // bytes of stderr kept (the end)
};

struct ProcessResult {
  int exit_code = -1;  // valid when !signaled && !timed_out
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  bool stdout_overflow = false;
  std::string stdout_data;
  std::string stderr_tail;       // last stderr_tail bytes
  std::size_t stderr_bytes = 0;  // total bytes written to stderr (more than the tail when truncated)
  std::chrono::milliseconds elapsed{0};
};

// Errors only when the process cannot be started at all (ErrorKind::environment).
Expected<ProcessResult> run_process(const ProcessSpec& spec);

}  // namespace gpuemu::proc
