// make_runner: the table from a Runnable's form to the runner that runs it (runner.hpp).
#include "run/runner.hpp"

#include "run/cold_runner.hpp"
#include "run/interpreter.hpp"
#include "run/warm_worker.hpp"

namespace gpuemu::run {

std::unique_ptr<Runner> make_runner(const config::Runnable& runnable, const RunnerSettings& given) {
  // A launcher shim is asked once per run which interpreter it starts (run/interpreter.hpp).
  const RunnerSettings settings = with_resolved_interpreter(given);
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

}  // namespace gpuemu::run
