// The op's and the reference's runners of one OpSession and the threads that call them: a case's two
// calls (at the same time, one after the other, or queued for a case started ahead) and how long they
// overlapped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "engine/task_thread.hpp"
#include "fuzz/case.hpp"
#include "proc/cancel.hpp"
#include "proc/runner.hpp"
#include "util/error.hpp"
#include "util/time_spans.hpp"

namespace gpuemu::engine {

// Settings shared by every session of a run.
proc::RunnerSettings runner_settings(const config::Config& config, const config::OpConfig& op,
                                     std::string role);

// Fatal when a script could not even start: every case would fail the same way.
Expected<void> fatal_if_unstartable(const proc::RunOutcome& outcome);

// A case ready to run (OpSession makes it): generated, and its inputs placed in the session's input
// file `arena` (no placement when the file is off or the op runs elsewhere).
struct PreparedCase {
  std::uint64_t seed = 0;
  int arena = 0;
  Expected<fuzz::Case> c;
  std::optional<tensor::NamedTensors> placed;
};

// Both raw answers to one case.
struct RawOutputs {
  proc::RunOutcome op;
  proc::RunOutcome reference;
};

// A case's op and reference calls queued on their threads behind the calls of the case before.
struct StartedCalls {
  std::future<proc::RunOutcome> op;
  std::future<proc::RunOutcome> reference;
  // Set when the case is abandoned: its calls stop as if cancelled.
  proc::CancelToken abandoned = std::make_shared<std::atomic<bool>>(false);

  // Both answers, once both calls came back; what a call threw is rethrown here, where the
  // request's handler catches it.
  RawOutputs wait();
  // Cancels both calls and waits for them, throwing their outcome away: they end before another
  // call reaches the same workers, and what they threw is no result.
  void abandon();
};

class RunnerPair {
 public:
  // `runners` makes the op's and the reference's runners (empty: proc::make_runner); no op runner
  // when the op runs elsewhere (no op_script).
  RunnerPair(const config::Config& config, const config::OpConfig& op, const proc::RunnerFactory& runners);
  RunnerPair(const RunnerPair&) = delete;
  RunnerPair& operator=(const RunnerPair&) = delete;

  // Whether the op under test runs here (else only the reference does: client-side modes).
  bool has_op() const { return op_runner_ != nullptr; }
  // Whether the op and the reference run at the same time (GPUEMU_PARALLEL_REFERENCE).
  bool parallel() const { return parallel_reference_; }
  // The run's time budget, sent with every call.
  void set_stop_at(std::chrono::steady_clock::time_point stop_at) { stop_at_ = stop_at; }

  // Starts both workers without waiting for them (Runner::warm_up).
  void warm_up();

  // `placed`: c's inputs as views in the input file (same values), sent when the layout is plain.
  proc::RunOutcome run_reference(const fuzz::Case& c, const nlohmann::json* kwargs,
                                 const tensor::NamedTensors* placed = nullptr);
  // Calls the op (on its thread when parallel()) and the reference on `c`, from this thread.
  Expected<RawOutputs> run_both(const fuzz::Case& c, const std::optional<tensor::NamedTensors>& placed);
  // Queues the op's and the reference's calls of a case being made (or made) on their threads.
  StartedCalls start(std::shared_future<PreparedCase> prepared);

  // How long this case's calls ran at the same time as another call of this session: each other's,
  // or (a case started ahead) the calls of the case before. Remembers this case's spans.
  double overlap_secs(const proc::RunOutcome& op, const proc::RunOutcome& reference);

 private:
  const config::OpConfig& op_;
  std::unique_ptr<proc::Runner> op_runner_;
  std::unique_ptr<proc::Runner> reference_runner_;
  std::optional<std::chrono::steady_clock::time_point> stop_at_;
  bool parallel_reference_;  // the op and the reference run at the same time
  // The spans of the last case's calls (overlap_secs).
  std::vector<util::TimeSpan> last_spans_;
  // The threads that call the op (while this one runs the reference, or judges) and the reference
  // (cases started ahead), kept for the session (declared after the runners their jobs use: joined
  // first, after running what is queued).
  TaskThread op_caller_;
  TaskThread reference_caller_;
};

}  // namespace gpuemu::engine
