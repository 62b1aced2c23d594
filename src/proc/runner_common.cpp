// Shared runner helpers (runner_common.hpp) and python_package_dir().
#include "proc/runner_common.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <span>

#include "platform/platform.hpp"
#include "proc/spawn.hpp"

namespace gpuemu::proc {

namespace fs = std::filesystem;

namespace {

bool has_worker(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "gpuemu" / "worker.py", ec);
}

}  // namespace

fs::path python_package_dir() {
  if (const char* env = std::getenv("GPUEMU_PACKAGE_DIR"); env != nullptr && *env != '\0')
    return fs::path(env);
  const fs::path exe = platform::executable_path();
  if (exe.empty()) return {};
  // A build tree (build/gpuemu, build/tests/unit/unit_proc) sits a few levels below the
  // repository's python/ folder; an install keeps it in <prefix>/share/gpuemu/python.
  fs::path dir = exe.parent_path();
  for (int level = 0; level < 5 && !dir.empty(); ++level) {
    if (has_worker(dir / "python")) return dir / "python";
    if (has_worker(dir / "share" / "gpuemu" / "python")) return dir / "share" / "gpuemu" / "python";
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

CaseDeadline case_deadline(std::chrono::steady_clock::time_point start, std::chrono::milliseconds timeout,
                           const std::optional<std::chrono::steady_clock::time_point>& stop_at) {
  const auto own = start + timeout;
  if (stop_at && *stop_at < own) return {*stop_at, true};
  return {own, false};
}

std::string cut_message(const std::string& what, std::chrono::milliseconds elapsed) {
  return fmt::format("{} was cut after {}: the run reached its time budget ([ci] thorough_timeout)", what,
                     format_seconds(elapsed));
}

std::string describe_runnable(const config::Runnable& runnable, const RunnerSettings& settings) {
  std::string role = settings.role.empty() ? "script" : settings.role;
  if (runnable.kind == config::Runnable::Kind::callable) {
    return fmt::format("{} {}:{}", role, runnable.module, runnable.function);
  }
  fs::path shown = runnable.script;
  if (!settings.cwd.empty()) {
    fs::path rel = runnable.script.lexically_relative(settings.cwd);
    if (!rel.empty() && !rel.string().starts_with("..")) shown = rel;
  }
  return fmt::format("{} {}", role, shown.string());
}

std::vector<std::pair<std::string, std::string>> bfloat16_script_env(const RunnerSettings& settings) {
  auto env = python_env(settings);
  const fs::path package = settings.package_dir.empty() ? python_package_dir() : settings.package_dir;
  if (package.empty()) return env;
  const std::string startup = (package / "gpuemu" / "script_startup").string();
  for (auto& [name, value] : env) {
    if (name == "PYTHONPATH") {
      value = startup + ":" + value;
      return env;
    }
  }
  env.emplace_back("PYTHONPATH", startup);
  return env;
}

std::vector<std::pair<std::string, std::string>> python_env(const RunnerSettings& settings) {
  std::vector<std::string> parts;
  fs::path package = settings.package_dir.empty() ? python_package_dir() : settings.package_dir;
  if (!package.empty()) parts.push_back(package.string());
  for (const auto& p : settings.python_path) parts.push_back(p.string());
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') parts.emplace_back(old);
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ":") + p;
  std::vector<std::pair<std::string, std::string>> env;
  if (!joined.empty()) env.emplace_back("PYTHONPATH", joined);
  // Set for this runner's processes only, and before the user's module is imported: @triton.jit
  // reads TRITON_INTERPRET when the kernel is defined (docs/frameworks.md).
  env.emplace_back("TRITON_INTERPRET", settings.triton_interpret ? "1" : "0");
  env.emplace_back("GPUEMU_PALLAS_INTERPRET", settings.pallas_interpret ? "1" : "0");
  env.emplace_back("GPUEMU_TRITON_CUDA_SHIM", settings.triton_cuda_shim ? "1" : "0");
  env.emplace_back("GPUEMU_SANITIZE", settings.sanitize && settings.triton_interpret ? "1" : "0");
  env.emplace_back("GPUEMU_REQUIRE_LAUNCH", settings.require_launch && settings.triton_interpret ? "1" : "0");
  if (!settings.autotune_pin.empty()) env.emplace_back("GPUEMU_AUTOTUNE_PIN", settings.autotune_pin);
  // A user who sized any thread pool (OpenBLAS also reads GOTO_ and OMP_) keeps all of them as set;
  // gpuemu sets the first three.
  constexpr std::array<const char*, 4> kPools = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                                 "GOTO_NUM_THREADS"};
  const bool sized = std::ranges::any_of(kPools, [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0';
  });
  if (settings.pool_threads > 0 && !sized) {
    for (const char* name : std::span(kPools).first(3))
      env.emplace_back(name, std::to_string(settings.pool_threads));
  }
  // The launcher's environment first; a variable set above wins over it (each name once).
  std::vector<std::pair<std::string, std::string>> with_launcher;
  for (const auto& entry : settings.interpreter_env) {
    if (std::ranges::none_of(env, [&](const auto& own) { return own.first == entry.first; }))
      with_launcher.push_back(entry);
  }
  with_launcher.insert(with_launcher.end(), env.begin(), env.end());
  return with_launcher;
}

int usable_cpus() {
  return platform::usable_cpus();
}

std::optional<RunOutcome> check_interpreter(const RunnerSettings& settings) {
  if (find_program(settings.python)) return std::nullopt;
  RunOutcome outcome;
  outcome.failure = RunFailure::start_failed;
  outcome.message = fmt::format("python interpreter '{}' not found: set [validation] python or GPUEMU_PYTHON",
                                settings.python);
  return outcome;
}

std::string format_seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:.1f} s", static_cast<double>(duration.count()) / 1000.0);
}

std::string describe_signal(int signal) {
  // Thread-safe where the system has sigdescr_np (runners run on several job threads).
  const char* name = platform::signal_description(signal);
  return name != nullptr ? fmt::format("killed by signal {} ({})", signal, name)
                         : fmt::format("killed by signal {}", signal);
}

std::string first_line(std::string text) {
  if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

std::string shown_stderr(const std::string& tail, std::size_t total_bytes) {
  if (total_bytes <= tail.size()) return tail;
  return fmt::format("[... {} earlier bytes of stderr omitted ...]\n{}", total_bytes - tail.size(), tail);
}

}  // namespace gpuemu::proc
