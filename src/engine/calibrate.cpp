// Tolerance calibration (see calibrate.hpp). Errors are split by the reference's magnitude so
// atol covers values near zero and rtol the rest; both are floored at the dtype's unit roundoff.
// Each (value kind, layout) is fitted on its own: pooled, the rare large errors of boundary and
// adversarial cases fall above a 95th percentile that regular cases dominate.
#include "engine/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "check/compare.hpp"
#include "engine/op_session.hpp"
#include "fuzz/case.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::engine {
namespace {

namespace keys = util::result_keys;

// A tolerance under result.json's key names (util/result_keys.hpp).
nlohmann::json tolerance_json(const check::ToleranceSpec& tolerance) {
  return {{keys::kAtol, tolerance.atol}, {keys::kRtol, tolerance.rtol}};
}

constexpr std::array<rng::ValueDistribution, 3> kValueKinds = {
    rng::ValueDistribution::regular, rng::ValueDistribution::boundary, rng::ValueDistribution::adversarial};

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

// What gpuemu.toml will hold (tolerance_edit.cpp writes 3 significant digits), rounded up so the
// written tolerance is never tighter than the fit; the re-check runs with exactly this value.
double as_written(double v) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  auto parse = [](double x) { return std::strtod(fmt::format("{:.3g}", x).c_str(), nullptr); };
  double r = parse(v);
  while (r < v) r = parse(r + std::pow(10.0, std::floor(std::log10(r)) - 2));
  return r;
}

// Per-case errors of the trusted op against the reference, over the outputs paired as compare pairs
// them (by name, or one output on each side whatever the names); false when no output paired, which
// would fit a tolerance on nothing.
bool case_errors(const wire::Tensors& given, const wire::Tensors& ref, double& abs_small, double& rel_large) {
  const std::optional<wire::Tensors> paired = check::paired_single_output(given, ref);
  const wire::Tensors& out = paired ? *paired : given;
  bool compared = false;
  for (const auto& [name, r] : ref) {
    auto it = out.find(name);
    if (it == out.end() || it->second.shape != r.shape) continue;
    compared = true;
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
  return compared;
}

// The strata of a dtype: every value kind in every layout the op declares.
std::vector<CalibrationStratum> strata_of(const config::OpConfig& op) {
  std::vector<tensor::Layout> layouts = op.layouts;
  if (layouts.empty()) layouts.push_back(tensor::Layout::contiguous);
  std::vector<CalibrationStratum> strata;
  for (auto layout : layouts) {
    for (auto values : kValueKinds) {
      CalibrationStratum s;
      s.values = values;
      s.layout = layout;
      strata.push_back(s);
    }
  }
  return strata;
}

fuzz::CaseFilter filter_of(tensor::DType dtype, const CalibrationStratum& s) {
  fuzz::CaseFilter filter;
  filter.dtype = dtype;
  filter.layout = s.layout;
  filter.distribution = s.values;
  return filter;
}

int cases_per_stratum(const CalibrateOptions& options, std::size_t strata) {
  return std::max(
      1, static_cast<int>((options.iterations + static_cast<int>(strata) - 1) / static_cast<int>(strata)));
}

Expected<void> fit(OpSession& session, const config::OpConfig& trusted, const CalibrateOptions& options,
                   CalibrationRow& row) {
  row.strata = strata_of(trusted);
  const int per_stratum = cases_per_stratum(options, row.strata.size());
  std::uint64_t index = 0;
  for (auto& stratum : row.strata) {
    std::vector<double> abs_errors;
    std::vector<double> rel_errors;
    for (int i = 0; i < per_stratum; ++i) {
      // The "calibrate" stream never yields the seeds of "calibrate-check", "test" or "fuzz".
      const auto seed =
          fuzz::case_seed(trusted, options.master_seed, "calibrate", index++, filter_of(row.dtype, stratum));
      auto c = TRY(fuzz::generate_case(trusted, seed));
      auto raw = TRY(session.run_raw(c));
      if (!raw.op.ok() || !raw.reference.ok()) {
        ++row.errors;
        continue;
      }
      double abs_small = 0;
      double rel_large = 0;
      if (!case_errors(raw.op.outputs, raw.reference.outputs, abs_small, rel_large)) {
        ++row.errors;  // nothing to compare (outputs named apart, or of other shapes): no error measured
        continue;
      }
      abs_errors.push_back(abs_small);
      rel_errors.push_back(rel_large);
      ++stratum.cases;
      ++row.cases;
    }
    stratum.p95_abs = p95(abs_errors);
    stratum.p95_rel = p95(rel_errors);
    if (row.atol_from.empty() || stratum.p95_abs > row.p95_abs) {
      row.p95_abs = stratum.p95_abs;
      row.atol_from = stratum.name();
    }
    if (row.rtol_from.empty() || stratum.p95_rel > row.p95_rel) {
      row.p95_rel = stratum.p95_rel;
      row.rtol_from = stratum.name();
    }
  }
  const double floor = unit_roundoff(row.dtype);
  row.fitted.atol = as_written(std::max(1.5 * row.p95_abs, floor));
  row.fitted.rtol = as_written(std::max(1.5 * row.p95_rel, floor));
  return {};
}

// Runs the trusted implementation with the fitted tolerances, through the real pass rule, on as
// many fresh cases as the fit had.
Expected<void> recheck(OpSession& session, const config::OpConfig& checked, const CalibrateOptions& options,
                       CalibrationRow& row) {
  const int per_stratum = cases_per_stratum(options, row.strata.size());
  std::uint64_t index = 0;
  for (const auto& stratum : row.strata) {
    for (int i = 0; i < per_stratum; ++i) {
      const auto seed = fuzz::case_seed(checked, options.master_seed, "calibrate-check", index++,
                                        filter_of(row.dtype, stratum));
      auto record = TRY(session.run_seed(seed));
      if (check::is_script_error(record.verdict.kind)) {
        ++row.check.errors;
        continue;
      }
      ++row.check.cases;
      if (record.verdict.passed()) continue;
      ++row.check.failed;
      if (!row.check.worst ||
          record.verdict.stats.tolerance_used > row.check.worst->verdict.stats.tolerance_used) {
        row.check.worst = std::move(record);
        row.check.worst_stratum = stratum.name();
      }
    }
  }
  return {};
}

}  // namespace

std::string CalibrationStratum::name() const {
  return fmt::format("{}/{}", rng::distribution_name(values), tensor::layout_name(layout));
}

Expected<std::vector<CalibrationRow>> calibrate(const config::Config& config, const config::OpConfig& op,
                                                const CalibrateOptions& options) {
  config::OpConfig trusted = op;
  if (options.against) trusted.op_script = *options.against;
  if (trusted.op_script.empty()) {
    return fail(ErrorKind::usage, "op '" + op.name +
                                      "' has no op_script to calibrate from; pass --against "
                                      "module:function or a script path of a trusted implementation");
  }
  std::vector<CalibrationRow> rows;
  {
    OpSession session(config, trusted, options.runners);
    for (auto dtype : op.dtypes) {
      if (options.dtype && dtype != *options.dtype) continue;
      CalibrationRow row;
      row.dtype = dtype;
      row.current = config.tolerance_for(op, dtype);
      TRY(fit(session, trusted, options, row));
      rows.push_back(std::move(row));
    }
  }
  if (rows.empty()) {
    return fail(ErrorKind::usage, "op '" + op.name + "' is not tested in the requested dtype");
  }
  config::OpConfig checked = trusted;
  for (const auto& row : rows) checked.tolerances[row.dtype] = row.fitted;
  OpSession session(config, checked, options.runners);
  for (auto& row : rows) TRY(recheck(session, checked, options, row));
  return rows;
}

nlohmann::json to_json(const CalibrationRow& r) {
  nlohmann::json strata = nlohmann::json::array();
  for (const auto& s : r.strata) {
    strata.push_back({{"values", rng::distribution_name(s.values)},
                      {"layout", tensor::layout_name(s.layout)},
                      {"cases", s.cases},
                      {"p95_abs", result::json_number(s.p95_abs)},
                      {"p95_rel", result::json_number(s.p95_rel)}});
  }
  nlohmann::json recheck_json = {{"cases", r.check.cases},
                                 {"failed", r.check.failed},
                                 {"errors", r.check.errors},
                                 {"passed", r.check.passed()},
                                 {"worst", nullptr}};
  if (r.check.worst) {
    recheck_json["worst"] = {{"seed", std::to_string(r.check.worst->seed)},
                             {"stratum", r.check.worst_stratum},
                             {"kind", check::failure_kind_name(r.check.worst->verdict.kind)},
                             {"message", r.check.worst->verdict.message}};
  }
  return {{"dtype", tensor::dtype_name(r.dtype)},
          {"cases", r.cases},
          {"errors", r.errors},
          {"p95_abs", result::json_number(r.p95_abs)},
          {"p95_rel", result::json_number(r.p95_rel)},
          {"atol_from", r.atol_from},
          {"rtol_from", r.rtol_from},
          {"strata", std::move(strata)},
          {"current", tolerance_json(r.current)},
          {"fitted", tolerance_json(r.fitted)},
          {"check", std::move(recheck_json)}};
}

}  // namespace gpuemu::engine
