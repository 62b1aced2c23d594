// Runs a plan of cases (op, case seed) on N job threads and folds the records into a
// RunResult whose content and order do not depend on the number of jobs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proc/runner.hpp"
#include "result/run_result.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

struct OpPlan {
  const config::OpConfig* op = nullptr;
  std::vector<std::uint64_t> seeds;  // case seeds, in report order
  // Each seed's position in the op's unsharded plan; empty means 0, 1, 2, ... (unsharded).
  std::vector<std::uint64_t> indices;
  // The names of the op's corner cases (fuzz/corners.hpp) the plan has no room for (`--cases N`
  // below the corner count), reported so a short run says what it left out.
  std::vector<std::string> corners_dropped;
};

struct RunPlan {
  std::string command;  // "test", "fuzz", "ci"
  std::uint64_t master_seed = 0;
  std::vector<OpPlan> ops;
  int jobs = 1;
  bool fail_fast = false;  // stop after the first failing case (in plan order)
  std::optional<std::chrono::steady_clock::time_point> deadline;  // then stop: result is partial
  proc::RunnerFactory runners;  // empty: real scripts and workers; tests inject fakes
};

// Receives records as they complete (from any job thread, one call at a time). The store uses
// it to persist each failure before the run goes on; an error aborts the run.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual Expected<void> on_case(const result::CaseRecord& record) = 0;
};

// Progress for people: called after each case with counts for the case's op.
using ProgressFn =
    std::function<void(const std::string& op, std::size_t done, std::size_t total, std::size_t not_passed)>;

Expected<result::RunResult> execute(const config::Config& config, const RunPlan& plan,
                                    ResultSink* sink = nullptr, const ProgressFn& progress = {});

// [policies] warn_threshold: the warning for a case that passed using more than that share of its
// tolerance (close to failing), naming its seed and the replay; nullopt otherwise.
std::optional<std::string> tolerance_warning(const config::Config& config, const result::CaseRecord& record);
// One warning per (op, dtype), for its worst passing case, in the order the records come.
std::vector<std::string> tolerance_warnings(const config::Config& config,
                                            const std::vector<result::CaseRecord>& records);

// Folds case records (in order) into one OpResult; exposed for the daemon's client-side runs.
result::OpResult summarize_op(const config::Config& config, const config::OpConfig& op,
                              const std::vector<result::CaseRecord>& records);

}  // namespace gpuemu::engine
