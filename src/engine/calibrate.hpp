// Fits per-dtype tolerances from a trusted implementation: for every value kind (regular,
// boundary, adversarial) and layout the op is fuzzed with, atol and rtol are 1.5 x the 95th
// percentile of per-case error (the P2 method); a dtype takes the largest over its kinds and
// layouts. The fitted tolerances are then re-checked with the real pass rule on a fresh seed set.
// Fit, re-check, test and fuzz draw from disjoint seed streams.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/tolerance.hpp"
#include "config/config.hpp"
#include "proc/runner.hpp"
#include "result/run_result.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

struct CalibrateOptions {
  std::optional<tensor::DType> dtype;       // default: every dtype of the op
  int iterations = 50;                      // fit cases per dtype, spread evenly over the strata
  std::optional<config::Runnable> against;  // trusted implementation; default: the op itself
  std::uint64_t master_seed = 0;
  proc::RunnerFactory runners;  // empty: real scripts and workers; tests inject fakes
};

// One (value kind, layout) of a dtype: the cases it fitted on and their 95th percentiles.
struct CalibrationStratum {
  rng::ValueDistribution values = rng::ValueDistribution::regular;
  tensor::Layout layout = tensor::Layout::contiguous;
  int cases = 0;
  double p95_abs = 0;
  double p95_rel = 0;
  std::string name() const;  // "adversarial/strided"
};

// The fitted tolerances run on fresh seeds: every case must pass, or they are not written.
struct CalibrationCheck {
  int cases = 0;   // cases judged (both sides ran)
  int failed = 0;  // of them, cases the trusted implementation failed with the fitted tolerances
  int errors = 0;  // cases where either side failed to run (not a tolerance question)
  std::optional<result::CaseRecord> worst;  // the failing case that used the most of its tolerance
  std::string worst_stratum;
  bool passed() const { return cases > 0 && failed == 0; }
};

struct CalibrationRow {
  tensor::DType dtype = tensor::DType::float32;
  int cases = 0;       // fit cases that ran cleanly
  int errors = 0;      // fit cases where either side failed to run
  double p95_abs = 0;  // largest stratum 95th percentile of per-case max |out - ref| where |ref| < 1
  double p95_rel = 0;  // largest stratum 95th percentile of per-case max |out - ref| / |ref| where |ref| >= 1
  std::string atol_from;  // the stratum that set p95_abs
  std::string rtol_from;  // the stratum that set p95_rel
  std::vector<CalibrationStratum> strata;
  check::ToleranceSpec current;
  check::ToleranceSpec fitted;  // rounded up to what gpuemu.toml will say (3 significant digits)
  CalibrationCheck check;
};

// One row as JSON (calibrate --format json and the daemon's calibrate reply, docs/protocol.md).
nlohmann::json to_json(const CalibrationRow& row);

Expected<std::vector<CalibrationRow>> calibrate(const config::Config& config, const config::OpConfig& op,
                                                const CalibrateOptions& options);

// Rewrites [ops.tolerances] of one op in a gpuemu.toml: replaces or adds one line per dtype and
// leaves every other byte (comments, order, spacing) as it was. Written atomically.
Expected<void> write_tolerances(const std::filesystem::path& file, const std::string& op_name,
                                const std::vector<CalibrationRow>& rows);

// The same edit on text, for tests.
Expected<std::string> edit_tolerances_text(const std::string& text, const std::string& op_name,
                                           const std::vector<CalibrationRow>& rows);

}  // namespace gpuemu::engine
