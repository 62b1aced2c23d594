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
#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

// NaN tolerance usage means the comparison itself broke down: rank it above any finite value.
double severity(double tolerance_used) {
  return std::isnan(tolerance_used) ? std::numeric_limits<double>::infinity() : tolerance_used;
}

int tier_of(const nlohmann::json& failure) {
  const auto* kind = find_failure_kind(failure.value("kind", ""));
  return kind ? static_cast<int>(kind->tier) : static_cast<int>(Tier::setup);
}

double finding_severity(const Finding& f) {
  return f.worst ? severity(number_field(*f.worst, keys::kToleranceUsed)) : 0.0;
}

}  // namespace

bool worse_case(const nlohmann::json& a, const nlohmann::json& b) {
  int tier_a = tier_of(a), tier_b = tier_of(b);
  if (tier_a != tier_b) return tier_a < tier_b;
  return severity(number_field(a, keys::kToleranceUsed)) > severity(number_field(b, keys::kToleranceUsed));
}

std::string Finding::headline() const {
  if (regression) return regression->value("reason", "");
  if (violation) return violation->value("message", "");
  if (not_run) return "NOT RUN: no case of this op ran before the run reached its time budget";
  if (!worst) return "";
  return "seed " + worst->value("seed", "") + ": " + worst->value("message", "");
}

std::string Finding::replay() const {
  if (violation) return "gpuemu lint --kernel " + op;
  return worst ? worst->value("replay", "") : "";
}

std::string Finding::fingerprint() const {
  return util::sha256_hex(op + '\0' + dtype + '\0' + std::string(kind->name)).substr(0, 32);
}

std::vector<Finding> collect_findings(const nlohmann::json& result, std::string_view workspace) {
  std::vector<Finding> findings;
  std::vector<Finding> not_run;
  std::map<std::pair<std::string, std::string>, SourceLocation> locations;
  for (const auto& op : result["ops"]) {
    const std::string name = op["op"];
    auto location = op_location(op, workspace);
    std::map<std::string, std::size_t> by_dtype;  // dtype -> index in findings
    for (const auto& failure : op["failures"]) {
      const std::string dtype = failure["dtype"];
      auto [it, inserted] = by_dtype.try_emplace(dtype, findings.size());
      if (inserted) {
        Finding f;
        f.op = name;
        f.dtype = dtype;
        f.location = location;
        for (const auto& d : op["dtypes"]) {
          if (d["dtype"] == dtype) f.total_cases = d["total"].get<int>();
        }
        findings.push_back(std::move(f));
      }
      Finding& f = findings[it->second];
      ++f.failing_cases;
      f.cases.push_back(&failure);
      if (!f.worst || worse_case(failure, *f.worst)) f.worst = &failure;
    }
    locations[{name, ""}] = location;
    if (op_status(op) == "not_run") {
      Finding f;
      f.kind = find_failure_kind("not_run");
      f.op = name;
      f.location = location;
      f.not_run = &op;
      not_run.push_back(std::move(f));
    }
  }
  for (auto& f : findings) f.kind = find_failure_kind((*f.worst)["kind"].get<std::string>());
  for (auto& f : not_run) findings.push_back(std::move(f));

  // Pointers into `result` itself, never into a copy: findings outlive this function.
  const auto ci = result.find("ci");
  if (ci != result.end() && ci->is_object() && ci->contains("baseline")) {
    const nlohmann::json& baseline = (*ci)["baseline"];
    if (baseline.is_object() && baseline.contains("regressions")) {
      for (const auto& r : baseline["regressions"]) {
        Finding f;
        f.kind = find_failure_kind("regression");
        f.op = r["op"];
        f.dtype = r["dtype"];
        f.regression = &r;
        if (auto it = locations.find({f.op, ""}); it != locations.end()) f.location = it->second;
        findings.push_back(std::move(f));
      }
    }
  }

  if (ci != result.end() && ci->is_object() && ci->contains("lint") && (*ci)["lint"].is_object()) {
    for (const auto& kernel : (*ci)["lint"]["kernels"]) {
      for (const auto& violation : kernel["violations"]) {
        Finding f;
        f.kind = find_failure_kind("lint_violation");
        f.op = kernel["name"];
        f.dtype = violation["check"];
        f.violation = &violation;
        // The offending instruction when the check found one, else the kernel's definition.
        const bool at_instruction = !violation["file"].get<std::string>().empty();
        const auto& where = at_instruction ? violation : kernel;
        f.location.path = repo_relative(where["file"].get<std::string>(), workspace);
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
