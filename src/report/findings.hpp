// What the reports flag, worst first: one finding per failing (op, dtype), represented by its
// worst case, one per baseline regression, one per op not run and one per kernel lint violation
// (ci.lint). SARIF,
// annotations and the summary share this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/kind_table.hpp"
#include "report/result_document.hpp"
#include "result/document.hpp"

namespace gpuemu::report {

struct Finding {
  const FailureKindInfo* kind = nullptr;  // of the worst case, or the "regression" row
  std::string op;
  std::string dtype;
  SourceLocation location;                              // repo-relative; unknown when the op names no source
  const result::FailureEntry* worst = nullptr;          // the worst failures[] entry; null for a regression
  const result::RegressionEntry* regression = nullptr;  // the ci.baseline.regressions[] entry
  const nlohmann::json* violation = nullptr;            // a ci.lint.kernels[].violations[] entry: op is the
                                                        // kernel's name, dtype the check ("max_registers")
  const result::OpEntry* not_run = nullptr;  // the ops[] entry of an op of which no case ran; dtype ""

  std::vector<const result::FailureEntry*> cases;  // every failures[] entry of this (op, dtype), in order
  int failing_cases = 0;                           // cases.size()
  int total_cases = 0;                             // cases of this (op, dtype), 0 when unknown

  // "seed 123: <message>" for a case, "<reason>" for a regression, the check's message for a lint
  // violation: the finding in one line.
  std::string headline() const;
  // The command that replays the worst case, or re-runs the lint; empty for a regression.
  std::string replay() const;
  // The finding's identity across runs, seeds and message wording: the first 32 hex digits of
  // SHA-256(op \0 dtype \0 kind), as SARIF's partialFingerprints["gpuemuFinding/v1"] and the
  // markers of PR review comments carry it.
  std::string fingerprint() const;
};

// Findings of a validated result document, worst first: by tier (failure_kinds.hpp), then by the
// share of the tolerance used (NaN counts as the worst), then by op and dtype for a stable order.
// The pointers refer into `result`, which must outlive the findings.
// Locations are relative to `workspace`; result.json's relative paths to `project_root`
// (result_document.hpp).
std::vector<Finding> collect_findings(const result::ResultDocument& result, std::string_view workspace,
                                      std::string_view project_root = {});

// How much worse `a` is than `b` under that order, for picking a group's worst case.
bool worse_case(const result::FailureEntry& a, const result::FailureEntry& b);

}  // namespace gpuemu::report
