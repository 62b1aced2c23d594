// check_loads (load_check.hpp): spawns the check, reads its one `checked` frame, and maps each
// entry back to the runnable that asked for it.
#include "proc/load_check.hpp"

#include <fmt/format.h>

#include "proc/fork_server.hpp"
#include "proc/interpreter.hpp"
#include "proc/runner_common.hpp"
#include "proc/worker_channel.hpp"

namespace gpuemu::proc {

namespace {

constexpr std::size_t kMaxCheckFrame = 16u << 20;

bool loads_in_python(const config::Runnable& r) {
  return r.kind == config::Runnable::Kind::callable ||
         (r.kind == config::Runnable::Kind::script && r.persistent);
}

std::string target_of(const config::Runnable& r) {
  return r.kind == config::Runnable::Kind::callable ? r.module + ":" + r.function : r.script.string();
}

}  // namespace

Expected<std::vector<LoadCheck>> check_loads(const RunnerSettings& given,
                                             const std::vector<config::Runnable>& runnables) {
  // A fork of the fork server, or without one an interpreter of its own (proc/interpreter.hpp).
  const RunnerSettings settings = fork_server_enabled() ? given : with_resolved_interpreter(given);
  std::vector<LoadCheck> out;
  SpawnSpec spec;
  spec.argv = {settings.python, "-m", "gpuemu.worker", "--check"};
  if (!settings.cwd.empty()) spec.argv.insert(spec.argv.end(), {"--path", settings.cwd.string()});
  for (const auto& p : settings.python_path) spec.argv.insert(spec.argv.end(), {"--path", p.string()});
  bool any = false;
  for (const auto& r : runnables) {
    out.push_back(LoadCheck{.target = target_of(r), .ok = true});
    if (!loads_in_python(r)) continue;
    any = true;
    spec.argv.insert(spec.argv.end(),
                     {r.kind == config::Runnable::Kind::callable ? "--callable" : "--script", target_of(r)});
  }
  if (!any) return out;
  if (auto missing = check_interpreter(settings)) return fail(ErrorKind::environment, missing->message);
  spec.cwd = settings.cwd;
  spec.extra_env = python_env(settings);
  // Forked from the server that imported torch, as the workers of a pytorch op are (warm_worker.cpp):
  // the check imports the same code, and torch was most of its time.
  if (settings.framework == config::Framework::pytorch) {
    spec.preload = {"torch"};
    if (settings.triton_interpret) spec.preload.emplace_back("triton");
  }
  auto channel = TRY(WorkerChannel::start(spec, settings.stderr_tail, "load check"));
  wire::IncomingFrame frame;
  const auto status =
      channel->exchange(nullptr, frame, WorkerChannel::Clock::now() + settings.timeout, kMaxCheckFrame);
  const std::string stderr_text = channel->stderr_tail().str();
  channel->stop();
  const auto type = frame.header.is_object() ? frame.header.value("type", "") : "";
  if (status != WorkerChannel::Status::ok || (type != "checked" && type != "fatal")) {
    if (stderr_text.find("No module named 'gpuemu'") != std::string::npos ||
        stderr_text.find("gpuemu.worker") != std::string::npos) {
      return fail(
          ErrorKind::environment,
          fmt::format("{} cannot import gpuemu.worker: install the gpuemu Python package (pip install "
                      "./python) or set GPUEMU_PACKAGE_DIR to the folder holding it",
                      settings.python));
    }
    const std::string why = status == WorkerChannel::Status::timed_out
                                ? fmt::format("did not answer within {}", format_seconds(settings.timeout))
                            : status == WorkerChannel::Status::ok ? "answered a '" + type + "' frame"
                                                                  : channel->error();
    return fail(ErrorKind::environment,
                fmt::format("the load check of the op and reference code ({} -m gpuemu.worker --check) {}{}",
                            settings.python, why.empty() ? "failed" : why,
                            stderr_text.empty() ? "" : "; its stderr:\n" + stderr_text));
  }
  if (type == "fatal") {  // gpuemu's own dependencies are missing: no case could run
    return fail(ErrorKind::environment, fmt::format("{} cannot run gpuemu's worker: {}", settings.python,
                                                    frame.header.value("error", "")));
  }
  const auto& entries = frame.header.value("entries", nlohmann::json::array());
  std::size_t next = 0;
  for (std::size_t i = 0; i < runnables.size(); ++i) {
    if (!loads_in_python(runnables[i])) continue;
    if (next >= entries.size() || !entries[next].is_object()) {
      return fail(ErrorKind::environment, "the load check answered fewer entries than it was asked for");
    }
    const auto& e = entries[next++];
    LoadCheck& check = out[i];
    check.ok = e.value("ok", false);
    check.error = e.value("error", "");
    check.traceback = e.value("traceback", "");
    check.file = e.value("file", "");
    check.line = e.value("line", 0);
    for (const auto& k : e.value("autotune", nlohmann::json::array())) {
      if (!k.is_object()) continue;
      AutotunedKernel kernel{.kernel = k.value("kernel", ""), .name = k.value("name", ""), .configs = {}};
      for (const auto& label : k.value("configs", nlohmann::json::array())) {
        if (label.is_string()) kernel.configs.push_back(label.get<std::string>());
      }
      if (!kernel.kernel.empty() && !kernel.configs.empty()) check.autotune.push_back(std::move(kernel));
    }
  }
  return out;
}

}  // namespace gpuemu::proc
