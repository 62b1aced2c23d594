// runs_interpreted (interpret.hpp): device nodes first, then one cached probe of the framework
// in the configured interpreter, so `auto` never costs a CPU-only runner a torch import.
#include "proc/interpret.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "proc/process.hpp"

namespace gpuemu::proc {

namespace {

namespace fs = std::filesystem;

bool has_accelerator_node(KernelLanguage language) {
  std::error_code ec;
  if (fs::exists("/dev/kfd", ec)) return true;  // ROCm
  for (fs::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto numbered = [&](std::string_view prefix) {
      return name.size() > prefix.size() && name.starts_with(prefix) &&
             name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
    };
    if (numbered("nvidia")) return true;
    if (language == KernelLanguage::pallas && numbered("accel")) return true;  // TPU
  }
  return false;
}

// Prints 1 when the framework sees an accelerator; anything else (no framework, an error) is 0.
bool framework_sees_accelerator(KernelLanguage language, const std::string& python) {
  const char* code = language == KernelLanguage::triton
                         ? "import torch; print(int(torch.cuda.is_available()))"
                         : "import jax; print(int(any(d.platform != 'cpu' for d in jax.devices())))";
  ProcessSpec spec;
  spec.argv = {python, "-c", code};
  spec.timeout = std::chrono::milliseconds(120000);
  auto result = run_process(spec);
  return result && !result->timed_out && !result->signaled && result->exit_code == 0 &&
         result->stdout_data.starts_with("1");
}

}  // namespace

bool runs_interpreted(config::InterpretMode mode, KernelLanguage language, const std::string& python) {
  if (mode == config::InterpretMode::always) return true;
  if (mode == config::InterpretMode::never) return false;
  static std::mutex mutex;
  // Both answers are kept for the process: every op's runners ask (a /dev scan took ~0.1 ms, and a
  // ci run of twelve ops asked 168 times before its first case).
  static std::map<KernelLanguage, bool> nodes;
  static std::map<std::pair<KernelLanguage, std::string>, bool> seen;
  std::lock_guard lock(mutex);
  auto node = nodes.find(language);
  if (node == nodes.end()) node = nodes.emplace(language, has_accelerator_node(language)).first;
  if (!node->second) return true;
  const auto key = std::pair{language, python};
  auto it = seen.find(key);
  if (it == seen.end()) it = seen.emplace(key, !framework_sees_accelerator(language, python)).first;
  return it->second;
}

}  // namespace gpuemu::proc
