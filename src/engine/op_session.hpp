// Runs single cases of one op: builds the case, runs the op under test and the reference
// through their runners, and compares. One OpSession per (op, worker thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "check/compare.hpp"
#include "config/config.hpp"
#include "fuzz/case.hpp"
#include "result/run_result.hpp"
#include "run/runner.hpp"
#include "run/shared_file.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

// Settings shared by every session of a run.
run::RunnerSettings runner_settings(const config::Config& config, const config::OpConfig& op,
                                    std::string role);

class OpSession {
 public:
  // `runners` makes the op's and the reference's runners (empty: run::make_runner).
  OpSession(const config::Config& config, const config::OpConfig& op, const run::RunnerFactory& runners = {});

  // Generates the case for `seed` and runs it. Errors only for fatal conditions (the
  // interpreter cannot start, the schema cannot be resolved); script misbehaviour is a verdict.
  Expected<result::CaseRecord> run_seed(std::uint64_t seed);

  // Runs a case whose inputs are given (a stored snapshot, or a minimizer's candidate).
  Expected<result::CaseRecord> run_case(const fuzz::Case& c);

  // Client-side modes: the op ran elsewhere and produced `outputs`; runs only the reference (with
  // `kwargs`, default the op's [ops.kwargs]) on the case's inputs and compares the same way, except
  // that the case dtype only picks the tolerance: a client's kernel may return any dtype (the
  // python-api's validate_op(dtype=...) is "the data type used for tolerance lookup").
  Expected<result::CaseRecord> check_output(const fuzz::Case& c, tensor::NamedTensors outputs,
                                            const nlohmann::json* kwargs = nullptr);

  // Runs op and reference on a case and hands back both raw answers (for calibration).
  struct RawOutputs {
    run::RunOutcome op;
    run::RunOutcome reference;
  };
  Expected<RawOutputs> run_raw(const fuzz::Case& c);

  const config::OpConfig& op() const { return op_; }

  // The run's time budget: a case still running then is killed and its record marked `cut`.
  void set_stop_at(std::chrono::steady_clock::time_point stop_at) { stop_at_ = stop_at; }

 private:
  result::CaseRecord new_record(const fuzz::Case& c) const;
  static void keep_inputs_if_failed(result::CaseRecord& record, const fuzz::Case& c);
  // Fills record.verdict from the reference's and the op's answers.
  void judge(result::CaseRecord& record, const fuzz::Case& c, const run::RunOutcome& ref,
             const run::RunOutcome& out, bool expect_case_dtype) const;
  // `placed`: c's inputs as views in the input file (same values), sent when the layout is plain.
  run::RunOutcome run_reference(const fuzz::Case& c, const nlohmann::json* kwargs,
                                const tensor::NamedTensors* placed = nullptr);
  void declare_output_shape(check::CompareOptions& options, const fuzz::Case& c) const;

  const config::Config& config_;
  const config::OpConfig& op_;
  std::unique_ptr<run::Runner> op_runner_;
  std::unique_ptr<run::Runner> reference_runner_;
  run::InputArena input_arena_;
  std::optional<std::chrono::steady_clock::time_point> stop_at_;
};

}  // namespace gpuemu::engine
