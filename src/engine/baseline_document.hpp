// Baseline documents (docs/baselines.md): the per-(op, dtype) outcome of a run, versioned JSON,
// and the comparison that finds regressions against one under the [policies] thresholds.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "result/document.hpp"
#include "result/run_result.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

inline constexpr int kBaselineSchemaVersion = 1;

struct BaselineEntry {
  std::string op;
  result::DtypeSummary summary;
};

// The document for a set of entries. `tag` may be empty (export fills it).
nlohmann::json make_baseline(const std::string& tag, const std::string& config_digest,
                             std::uint64_t master_seed, const std::vector<BaselineEntry>& entries);
std::vector<BaselineEntry> baseline_entries(const result::RunResult& result);

// Validates a document read from a file or a remote store; errors name `source`.
Expected<std::vector<BaselineEntry>> parse_baseline(const nlohmann::json& document,
                                                    const std::string& source);

// An (op, dtype) that got worse: reason is one line, before and after the baseline entries compared.
using Regression = result::RegressionEntry;

struct BaselineComparison {
  std::vector<Regression> regressions;
  std::vector<std::string> warnings;  // warn_threshold, and (op, dtype) missing on one side
  // result.json's ci.baseline, compared with the baseline named `source`.
  result::BaselineSection to_section(const std::string& source) const;
};

// A regression: an (op, dtype) that passed in the baseline and fails now, or that still passes but
// whose max_abs grew by more than policies.max_error_growth while its share of the tolerance grew by
// more than policies.regression_margin (docs/ci.md). A passing (op, dtype) that used more than
// policies.warn_threshold of its tolerance is a warning.
BaselineComparison compare_with_baseline(const std::vector<BaselineEntry>& baseline,
                                         const std::vector<BaselineEntry>& current,
                                         const config::PolicyConfig& policies);

}  // namespace gpuemu::engine
