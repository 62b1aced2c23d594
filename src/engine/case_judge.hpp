// The judging room of a case run (OpSession runs the case pipeline and the runner calls): the record
// of a case, its verdict from the reference's and the op's answers, the inputs a failure keeps.
#pragma once

#include "check/compare.hpp"
#include "config/config.hpp"
#include "fuzz/case.hpp"
#include "proc/runner.hpp"
#include "result/run_result.hpp"

namespace gpuemu::engine {

class CaseJudge {
 public:
  CaseJudge(const config::Config& config, const config::OpConfig& op) : config_(config), op_(op) {}

  // The record of case `c`: its op, seed, parameters, shapes and tolerance, no verdict yet.
  result::CaseRecord new_record(const fuzz::Case& c) const;
  // Fills record.verdict from the reference's and the op's answers: a failed call is its error kind
  // (a broken reference wins over a broken op), else check::compare_outputs with the op's rules.
  // `expect_case_dtype`: floating outputs must have the case's dtype (false for a client's outputs).
  void judge(result::CaseRecord& record, const fuzz::Case& c, const proc::RunOutcome& ref,
             const proc::RunOutcome& out, bool expect_case_dtype) const;
  // A failure keeps an owned snapshot of its inputs (the store replays and minimizes from it).
  static void keep_inputs_if_failed(result::CaseRecord& record, const fuzz::Case& c);

 private:
  void declare_output_shape(check::CompareOptions& options, const fuzz::Case& c) const;

  const config::Config& config_;
  const config::OpConfig& op_;
};

}  // namespace gpuemu::engine
