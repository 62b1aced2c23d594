// Pieces every runner shares: how a runnable is named in messages, the Python environment of
// children (PYTHONPATH, thread pools), the interpreter check, and one-line failure messages.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proc/runner.hpp"

namespace gpuemu::proc {

// "reference scripts/ref.py" or "op kernels.softmax:run": role plus the runnable, with script
// paths relative to the project root when they are inside it.
std::string describe_runnable(const config::Runnable& runnable, const RunnerSettings& settings);

// Environment additions for a Python child: PYTHONPATH = package dir, python_path..., old value;
// the interpreter switches; the thread pools' sizes (RunnerSettings::pool_threads).
std::vector<std::pair<std::string, std::string>> python_env(const RunnerSettings& settings);

// python_env for a cold script of a bfloat16 case: the package's script_startup folder first on
// PYTHONPATH, whose sitecustomize makes numpy know the dtype name "bfloat16" (ml_dtypes), so a plain
// protocol script's np.dtype(t["dtype"]) decodes the case (docs/script-protocol.md).
std::vector<std::pair<std::string, std::string>> bfloat16_script_env(const RunnerSettings& settings);

// The CPUs this process may run on (its affinity mask; at least 1).
int usable_cpus();

// A start_failed outcome when the interpreter cannot be found on PATH, else nullopt.
std::optional<RunOutcome> check_interpreter(const RunnerSettings& settings);

// The message of a case killed at the run's time budget (RunFailure::cut).
std::string cut_message(const std::string& what, std::chrono::milliseconds elapsed);

// "5.0 s"
std::string format_seconds(std::chrono::milliseconds duration);

// "killed by signal 11 (Segmentation fault)"
std::string describe_signal(int signal);

// The first line of a Python error, bounded, for a one-line message.
std::string first_line(std::string text);

// The stderr tail as shown to users: says how much was cut when the tail is not all of it.
std::string shown_stderr(const std::string& tail, std::size_t total_bytes);

}  // namespace gpuemu::proc
