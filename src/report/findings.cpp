// Grouping failures into findings and ordering them worst first (see findings.hpp). The order is
// total and deterministic so annotations and SARIF results never shuffle between runs.
#include "report/findings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "report/value_text.hpp"
#include "util/hash.hpp"

namespace gpuemu::report {

namespace {

// NaN tolerance usage means the comparison itself broke down: rank it above any finite value.
double severity(double tolerance_used) {
  return std::isnan(tolerance_used) ? std::numeric_limits<double>::infinity() : tolerance_used;
}

// The row of a failures[] entry's kind. The document reader accepted only case kinds
// (result/document_reader.cpp), and the table has a row for each (a static_assert says so).
const FailureKindInfo& kind_of(const result::FailureEntry& failure) {
  return check::failure_kind_info(
      check::parse_failure_kind(failure.kind).value_or(check::FailureKind::op_error));
}

int tier_of(const result::FailureEntry& failure) {
  return static_cast<int>(kind_of(failure).tier);
}

double finding_severity(const Finding& f) {
  return f.worst ? severity(f.worst->figures.tolerance_used) : 0.0;
}

}  // namespace

bool worse_case(const result::FailureEntry& a, const result::FailureEntry& b) {
  int tier_a = tier_of(a), tier_b = tier_of(b);
  if (tier_a != tier_b) return tier_a < tier_b;
  return severity(a.figures.tolerance_used) > severity(b.figures.tolerance_used);
}

std::string Finding::headline() const {
  if (regression) return regression->reason;
  if (violation) return violation->value("message", "");
  if (not_run) return "NOT RUN: no case of this op ran before the run reached its time budget";
  if (!worst) return "";
  return "seed " + std::to_string(worst->seed) + ": " + worst->message;
}

std::string Finding::replay() const {
  if (violation) return "gpuemu lint --kernel " + op;
  return worst ? worst->replay : "";
}

std::string Finding::fingerprint() const {
  return util::sha256_hex(op + '\0' + dtype + '\0' + std::string(kind->name)).substr(0, 32);
}

std::vector<Finding> collect_findings(const result::ResultDocument& result, std::string_view workspace,
                                      std::string_view project_root) {
  std::vector<Finding> findings;
  std::vector<Finding> not_run;
  std::map<std::pair<std::string, std::string>, SourceLocation> locations;
  for (const auto& op : result.ops) {
    auto location = op_location(op, workspace, project_root);
    std::map<std::string, std::size_t> by_dtype;  // dtype -> index in findings
    for (const auto& failure : op.failures) {
      auto [it, inserted] = by_dtype.try_emplace(failure.dtype, findings.size());
      if (inserted) {
        Finding f;
        f.op = op.op;
        f.dtype = failure.dtype;
        f.location = location;
        for (const auto& d : op.dtypes) {
          if (d.dtype == failure.dtype) f.total_cases = static_cast<int>(d.total);
        }
        findings.push_back(std::move(f));
      }
      Finding& f = findings[it->second];
      ++f.failing_cases;
      f.cases.push_back(&failure);
      if (!f.worst || worse_case(failure, *f.worst)) f.worst = &failure;
    }
    locations[{op.op, ""}] = location;
    if (op.status() == result::OpStatus::not_run) {
      Finding f;
      f.kind = &check::failure_kind_info(check::FailureKind::not_run);
      f.op = op.op;
      f.location = location;
      f.not_run = &op;
      not_run.push_back(std::move(f));
    }
  }
  for (auto& f : findings) f.kind = &kind_of(*f.worst);
  for (auto& f : not_run) findings.push_back(std::move(f));

  // Pointers into `result` itself, never into a copy: findings outlive this function.
  if (result.ci && result.ci->baseline) {
    for (const auto& r : result.ci->baseline->regressions) {
      Finding f;
      f.kind = &check::failure_kind_info(check::FailureKind::regression);
      f.op = r.op;
      f.dtype = r.dtype;
      f.regression = &r;
      if (auto it = locations.find({f.op, ""}); it != locations.end()) f.location = it->second;
      findings.push_back(std::move(f));
    }
  }

  // ci.lint keeps the JSON of `gpuemu lint` (its types belong to `artifact`); from_json checked
  // every field read here.
  if (result.ci && result.ci->lint.is_object()) {
    for (const auto& kernel : result.ci->lint["kernels"]) {
      for (const auto& violation : kernel["violations"]) {
        Finding f;
        f.kind = &check::failure_kind_info(check::FailureKind::lint_violation);
        f.op = kernel["name"];
        f.dtype = violation["check"];
        f.violation = &violation;
        // The offending instruction when the check found one, else the kernel's definition.
        const bool at_instruction = !violation["file"].get<std::string>().empty();
        const auto& where = at_instruction ? violation : kernel;
        f.location.path = repo_relative(where["file"].get<std::string>(), workspace, project_root);
        f.location.line = where["line"].get<int>();
        findings.push_back(std::move(f));
      }
    }
  }

  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    auto key = [](const Finding& f) {
      return std::make_tuple(static_cast<int>(f.kind->tier), -finding_severity(f), std::string_view(f.op),
                             std::string_view(f.dtype));
    };
    return key(a) < key(b);
  });
  return findings;
}

}  // namespace gpuemu::report
