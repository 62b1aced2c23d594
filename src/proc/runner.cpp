// make_runner: the table from a Runnable's form to the runner that runs it (runner.hpp).
#include "proc/runner.hpp"

#include "proc/cold_runner.hpp"
#include "proc/fork_server.hpp"
#include "proc/interpreter.hpp"
#include "proc/warm_worker.hpp"

namespace gpuemu::proc {

std::unique_ptr<Runner> make_runner(const config::Runnable& runnable, const RunnerSettings& given) {
  // Processes started on their own (cold scripts, every case; workers without the fork server) start
  // the interpreter a launcher shim would, asked once per run (proc/interpreter.hpp). Warm workers are
  // forks of the fork server, which goes through the shim once: asking it too would cost a start.
  const bool own_processes =
      (runnable.kind == config::Runnable::Kind::script && !runnable.persistent) || !fork_server_enabled();
  const RunnerSettings settings = own_processes ? with_resolved_interpreter(given) : given;
  switch (runnable.kind) {
    case config::Runnable::Kind::callable:
      return std::make_unique<WarmWorkerRunner>(runnable, settings);
    case config::Runnable::Kind::script:
      if (runnable.persistent) return std::make_unique<WarmWorkerRunner>(runnable, settings);
      return std::make_unique<ColdScriptRunner>(runnable, settings);
    case config::Runnable::Kind::none:
      break;
  }
  return nullptr;
}

void start_fork_server_ahead(const config::Runnable& runnable, const RunnerSettings& settings) {
  const bool warm = runnable.kind == config::Runnable::Kind::callable ||
                    (runnable.kind == config::Runnable::Kind::script && runnable.persistent);
  if (warm && fork_server_enabled())
    start_fork_server_ahead(WarmWorkerRunner(runnable, settings).spawn_spec());
}

}  // namespace gpuemu::proc
