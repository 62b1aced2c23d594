// The cold runner: `python <script>` once per case, speaking the JSON+base64 script protocol
// (docs/script-protocol.md) over stdin/stdout. Simple and isolated; costs an interpreter start per case.
#pragma once

#include <optional>

#include "proc/runner.hpp"

namespace gpuemu::proc {

// Runs a script per case. Every misbehaviour of the script becomes a RunOutcome, never an exception.
class ColdScriptRunner final : public Runner {
 public:
  ColdScriptRunner(config::Runnable runnable, RunnerSettings settings);
  RunOutcome run(const RunRequest& request) override;

 private:
  config::Runnable runnable_;
  RunnerSettings settings_;
  std::string what_;                    // "reference scripts/ref.py"
  std::optional<bool> interpreter_ok_;  // checked once, on the first case
};

}  // namespace gpuemu::proc
