// The failure kinds of result.json as reports present them: a stable SARIF rule id, a title, a
// short help text and a severity tier that orders "worst first" in every report.
#pragma once

#include <span>
#include <string_view>

namespace gpuemu::report {

// Lower tiers are worse. Wrong results the kernel produced outrank numeric drift, which outranks a
// baseline regression, which outranks a kernel artifact check (registers, spills: cost, not
// correctness); a crashing reference is the test setup's fault and sorts last.
enum class Tier : int { wrong_result = 0, numeric = 1, regression = 2, artifact = 3, setup = 4 };

struct FailureKindInfo {
  std::string_view name;     // as in result.json ("mismatch"); "regression" for baseline regressions
  std::string_view rule_id;  // SARIF ruleId; published in code-scanning history: never change
  std::string_view title;    // short, for headings and annotation titles
  std::string_view help;     // what it means and what to do
  Tier tier;
};

// Every kind result.json version 1 may hold, plus "regression", "lint_violation" (ci.lint) and
// "not_run" (an op no case of which ran), in a fixed order (SARIF ruleIndex): new rows go last.
std::span<const FailureKindInfo> failure_kinds();
const FailureKindInfo* find_failure_kind(std::string_view name);
// Whether a case in ops[].failures may have this kind (not the report-only rows above).
bool is_case_kind(std::string_view name);

// Whether a case of this kind compared values, so its error statistics mean something.
bool compares_values(std::string_view kind);

}  // namespace gpuemu::report
