// Helpers shared by the run module's tests: paths to the test scripts, runner settings rooted at
// the repository, tensors to send, and checks that a process is gone.
#pragma once

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "proc/runner.hpp"

namespace gpuemu::proc::testing {

inline std::filesystem::path source_dir() {
  return GPUEMU_SOURCE_DIR;
}
inline std::filesystem::path script_dir() {
  return source_dir() / "tests" / "scripts" / "run";
}
inline std::filesystem::path script(const std::string& name) {
  return script_dir() / name;
}

inline RunnerSettings settings(std::string role = "reference",
                               std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  RunnerSettings s;
  s.cwd = source_dir();
  s.python_path = {script_dir()};
  s.package_dir = source_dir() / "python";
  s.timeout = timeout;
  s.role = std::move(role);
  return s;
}

inline config::Runnable script_runnable(const std::string& name, bool persistent = false) {
  config::Runnable r;
  r.kind = config::Runnable::Kind::script;
  r.script = script(name);
  r.persistent = persistent;
  r.spelling = "tests/scripts/run/" + name;
  return r;
}

inline config::Runnable callable(const std::string& module, const std::string& function) {
  config::Runnable r;
  r.kind = config::Runnable::Kind::callable;
  r.module = module;
  r.function = function;
  r.spelling = module + ":" + function;
  return r;
}

inline tensor::Tensor vector_of(tensor::DType dtype, std::vector<double> values) {
  tensor::Shape shape = {static_cast<std::int64_t>(values.size())};
  return tensor::Tensor::from_doubles(dtype, shape, values);
}

// A request over caller-owned storage.
struct Case {
  Tensors inputs;
  std::vector<std::string> order;
  nlohmann::json kwargs = nlohmann::json::object();
  tensor::DType dtype = tensor::DType::float32;
  RunRequest request() const { return RunRequest{"testop", dtype, &inputs, &order, &kwargs}; }
};

inline Case case_x(tensor::Tensor x) {
  Case c;
  c.inputs["x"] = std::move(x);
  c.order = {"x"};
  return c;
}

// x = [v, 2, 3] in float32: the smallest case every runner test starts from.
inline Case simple_case(double v = 1) {
  return case_x(vector_of(tensor::DType::float32, {v, 2, 3}));
}

// True once `pid` no longer runs (gone, or a zombie waiting for its reaper), within `wait`.
inline bool process_gone(pid_t pid, std::chrono::milliseconds wait = std::chrono::seconds(3)) {
  auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

inline pid_t read_pid_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

inline std::size_t open_fd_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

}  // namespace gpuemu::proc::testing
