// The load-time check of docs/worker-protocol.md ("--check"): one Python process imports every
// callable and warm script a run needs, once, and says for each whether it loaded and where it lives.
#pragma once

#include <string>
#include <vector>

#include "proc/runner.hpp"
#include "util/error.hpp"

namespace gpuemu::proc {

// An @triton.autotune kernel the check found reachable from a runnable (docs/worker-protocol.md).
struct AutotunedKernel {
  std::string kernel;                // "module:qualname" of the kernel's Python function
  std::string name;                  // the function's name
  std::vector<std::string> configs;  // one label per config, in the decorator's order
};

// What the check found for one runnable.
struct LoadCheck {
  std::string target;  // "module:function", or the script's absolute path
  bool ok = false;
  std::string error;  // "ModuleNotFoundError: No module named 'kernels.nope'" when !ok
  std::string traceback;
  std::string file;  // absolute path of the function's file, when ok and Python knows it
  int line = 0;      // its first line (1-based), 0 when unknown
  std::vector<AutotunedKernel> autotune;
};

// Loads `runnables` (callables and persistent scripts; others are ignored) in one
// `python -m gpuemu.worker --check` with `settings`' interpreter, paths and environment, bounded
// by settings.timeout. One entry per runnable given, in order (cold scripts get ok = true, no
// line). Errors only when the check itself cannot run: no interpreter, gpuemu or numpy missing
// (ErrorKind::environment), a timeout or a garbled answer.
Expected<std::vector<LoadCheck>> check_loads(const RunnerSettings& settings,
                                             const std::vector<config::Runnable>& runnables);

}  // namespace gpuemu::proc
