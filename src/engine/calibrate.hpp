// Fits per-dtype tolerances from a trusted implementation: atol and rtol are 1.5 x the 95th
// percentile of per-case error (the P2 method), on case seeds disjoint from test and fuzz.
#pragma once

#include <optional>
#include <vector>

#include "check/tolerance.hpp"
#include "config/config.hpp"
#include "util/error.hpp"

namespace gpuemu::engine {

struct CalibrateOptions {
  std::optional<tensor::DType> dtype;     // default: every dtype of the op
  int iterations = 50;                    // cases per dtype
  std::optional<config::Runnable> against;  // trusted implementation; default: the op itself
  std::uint64_t master_seed = 0;
};

struct CalibrationRow {
  tensor::DType dtype = tensor::DType::float32;
  int cases = 0;       // cases that ran cleanly
  int errors = 0;      // cases where either side failed to run
  double p95_abs = 0;  // 95th percentile of per-case max |out - ref| where |ref| < 1
  double p95_rel = 0;  // 95th percentile of per-case max |out - ref| / |ref| where |ref| >= 1
  check::ToleranceSpec current;
  check::ToleranceSpec fitted;
};

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
