// The one table of failure kinds (failure_kinds.cpp), keyed by FailureKind: each kind's result.json
// name, SARIF rule, title, help and report tier. Every other list of kinds is generated from it or checked
// against it.
#pragma once

#include <span>
#include <string_view>

#include "check/verdict.hpp"

namespace gpuemu::check {

// Lower tiers are worse. Wrong results the kernel produced outrank numeric drift, which outranks a
// baseline regression, which outranks a kernel artifact check (registers, spills: cost, not
// correctness); a crashing reference is the test setup's fault and sorts last.
enum class Tier : int { wrong_result = 0, numeric = 1, regression = 2, artifact = 3, setup = 4 };

struct FailureKindInfo {
  FailureKind kind;
  std::string_view name;     // as in result.json ("mismatch"), the enum's spelling
  std::string_view rule_id;  // SARIF ruleId; published in code-scanning history: never change
  std::string_view title;    // short, for headings and annotation titles
  std::string_view help;     // what it means and what to do
  Tier tier;
  bool compares_values;  // a case of this kind compared values, so its error statistics mean something
};

// Every kind but `none`, in a fixed order (SARIF ruleIndex): new rows go last.
std::span<const FailureKindInfo> failure_kinds();
// The row of a kind; `kind` is not `none` (a pass has no row).
const FailureKindInfo& failure_kind_info(FailureKind kind);
// The row of any kind by name, report-only kinds included; null for an unknown name.
const FailureKindInfo* find_failure_kind(std::string_view name);
// Whether a case's verdict may have this kind: not `none`, not a report-only kind.
bool is_case_kind(FailureKind kind);
// Whether a case of the kind named compared values (false for an unknown name).
bool compares_values(std::string_view name);

}  // namespace gpuemu::check
