// Tolerance calibration (see calibrate.hpp). Errors are split by the reference's magnitude so
// atol covers values near zero and rtol the rest; both are floored at the dtype's unit roundoff.
#include "engine/calibrate.hpp"

#include <algorithm>
#include <cmath>

#include "engine/op_session.hpp"
#include "fuzz/case.hpp"

namespace gpuemu::engine {
namespace {

double unit_roundoff(tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::float16:
      return std::ldexp(1.0, -11);
    case tensor::DType::bfloat16:
      return std::ldexp(1.0, -8);
    case tensor::DType::float32:
      return std::ldexp(1.0, -24);
    case tensor::DType::float64:
      return std::ldexp(1.0, -53);
    default:
      return 0;
  }
}

double p95(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

// Per-case errors of the trusted op against the reference, over every output they share.
void case_errors(const run::Tensors& out, const run::Tensors& ref, double& abs_small, double& rel_large) {
  for (const auto& [name, r] : ref) {
    auto it = out.find(name);
    if (it == out.end() || it->second.shape != r.shape) continue;
    const auto a = it->second.to_doubles();
    const auto b = r.to_doubles();
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
      const double d = std::fabs(a[i] - b[i]);
      if (std::fabs(b[i]) < 1.0) {
        abs_small = std::max(abs_small, d);
      } else {
        rel_large = std::max(rel_large, d / std::fabs(b[i]));
      }
    }
  }
}

}  // namespace

Expected<std::vector<CalibrationRow>> calibrate(const config::Config& config, const config::OpConfig& op,
                                                const CalibrateOptions& options) {
  config::OpConfig trusted = op;
  if (options.against) trusted.op_script = *options.against;
  if (trusted.op_script.empty()) {
    return fail(ErrorKind::usage, "op '" + op.name + "' has no op_script to calibrate from; pass --against "
                                  "module:function or a script path of a trusted implementation");
  }
  OpSession session(config, trusted);
  std::vector<CalibrationRow> rows;
  for (auto dtype : op.dtypes) {
    if (options.dtype && dtype != *options.dtype) continue;
    CalibrationRow row;
    row.dtype = dtype;
    row.current = config.tolerance_for(op, dtype);
    std::vector<double> abs_errors;
    std::vector<double> rel_errors;
    fuzz::CaseFilter filter;
    filter.dtype = dtype;
    for (int i = 0; i < options.iterations; ++i) {
      // The "calibrate" stream never yields the seeds of the "test" and "fuzz" streams.
      const auto seed = fuzz::case_seed(trusted, options.master_seed, "calibrate", static_cast<std::uint64_t>(i), filter);
      auto c = TRY(fuzz::generate_case(trusted, seed));
      auto raw = TRY(session.run_raw(c));
      if (!raw.op.ok() || !raw.reference.ok()) {
        ++row.errors;
        continue;
      }
      double abs_small = 0;
      double rel_large = 0;
      case_errors(raw.op.outputs, raw.reference.outputs, abs_small, rel_large);
      abs_errors.push_back(abs_small);
      rel_errors.push_back(rel_large);
      ++row.cases;
    }
    row.p95_abs = p95(abs_errors);
    row.p95_rel = p95(rel_errors);
    const double floor = unit_roundoff(dtype);
    row.fitted.atol = std::max(1.5 * row.p95_abs, floor);
    row.fitted.rtol = std::max(1.5 * row.p95_rel, floor);
    rows.push_back(row);
  }
  if (rows.empty()) {
    return fail(ErrorKind::usage, "op '" + op.name + "' is not tested in the requested dtype");
  }
  return rows;
}

}  // namespace gpuemu::engine
