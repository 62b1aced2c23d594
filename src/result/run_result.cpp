// JSON form of run results (docs/result-json.md) and the replay command line.
// Seeds travel as decimal strings so JavaScript and other double-only readers keep them exact.
#include "result/run_result.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "check/compare.hpp"
#include "rng/values.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::result {

namespace keys = util::result_keys;

bool RunResult::passed() const {
  for (const auto& op : ops) {
    if (op.failed > 0 || op.errors > 0) return false;
  }
  return true;
}

OpStatus op_status(const OpResult& op) {
  if (op.total == 0) return OpStatus::not_run;
  return op.failed > 0 || op.errors > 0 ? OpStatus::failed : OpStatus::passed;
}

std::string_view op_status_name(OpStatus status) {
  switch (status) {
    case OpStatus::passed:
      return "passed";
    case OpStatus::failed:
      return "failed";
    case OpStatus::not_run:
      return "not_run";
  }
  return "not_run";
}

double Timing::gpuemu_secs() const {
  return std::max(0.0, wall_secs - op_secs - reference_secs);
}

Timing& Timing::operator+=(const Timing& other) {
  wall_secs += other.wall_secs;
  op_secs += other.op_secs;
  reference_secs += other.reference_secs;
  return *this;
}

nlohmann::json timing_to_json(const Timing& t) {
  const double gpuemu = t.gpuemu_secs();
  return {{"wall_secs", t.wall_secs},
          {"op_secs", t.op_secs},
          {"reference_secs", t.reference_secs},
          {"gpuemu_secs", gpuemu},
          {"gpuemu_share", t.wall_secs > 0 ? gpuemu / t.wall_secs : 0.0}};
}

nlohmann::json json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

std::string replay_command(const CaseRecord& record) {
  return fmt::format("gpuemu reproduce {} --op {}", record.seed, record.op);
}

nlohmann::json case_to_json(const CaseRecord& r) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, shape] : r.shapes) shapes[name] = shape;
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : r.verdict.stats.worst) {
    worst.push_back({{"output", w.output},
                     {"index", w.index},
                     {"actual", json_number(w.actual)},
                     {"expected", json_number(w.expected)},
                     {"abs_err", json_number(w.abs_err)},
                     {"rel_err", json_number(w.rel_err)}});
  }
  const auto& s = r.verdict.stats;
  return {{"seed", std::to_string(r.seed)},
          {"case", r.index},
          {"op", r.op},
          {"kind", check::failure_kind_name(r.verdict.kind)},
          {"dtype", tensor::dtype_name(r.params.dtype)},
          {"layout", tensor::layout_name(r.params.layout)},
          {"distribution", rng::distribution_name(r.params.distribution)},
          {"shapes", shapes},
          {"dims", r.dims},
          {keys::kMaxAbs, json_number(s.max_abs)},
          {keys::kMaxRel, json_number(s.max_rel)},
          {keys::kMaxUlp, json_number(s.max_ulp)},
          {"mismatches", s.mismatches},
          {"elements", s.elements},
          {keys::kToleranceUsed, json_number(s.tolerance_used)},
          {keys::kAtol, r.tolerance.atol},
          {keys::kRtol, r.tolerance.rtol},
          {"message", r.verdict.message},
          {"worst", worst},
          {"stderr", r.stderr_tail},
          {"replay", replay_command(r)}};
}

nlohmann::json dtype_summary_to_json(const DtypeSummary& d) {
  return {{"dtype", tensor::dtype_name(d.dtype)},
          {"total", d.total},
          {"passed", d.passed},
          {"failed", d.failed},
          {"errors", d.errors},
          {keys::kMaxAbs, json_number(d.max_abs)},
          {keys::kMaxRel, json_number(d.max_rel)},
          {keys::kMaxUlp, json_number(d.max_ulp)},
          {keys::kToleranceUsed, json_number(d.tolerance_used)},
          {keys::kAtol, d.tolerance.atol},
          {keys::kRtol, d.tolerance.rtol}};
}

nlohmann::json to_json(const RunResult& result) {
  // Ops sorted by name (docs/result-json.md), so sharded runs merge into the same document.
  std::vector<const OpResult*> sorted;
  for (const auto& op : result.ops) sorted.push_back(&op);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const OpResult* a, const OpResult* b) { return a->op < b->op; });
  nlohmann::json ops = nlohmann::json::array();
  Timing total_timing;
  for (const OpResult* op_ptr : sorted) {
    const OpResult& op = *op_ptr;
    nlohmann::json dtypes = nlohmann::json::array();
    for (const auto& d : op.dtypes) {
      dtypes.push_back(dtype_summary_to_json(d));
    }
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : op.failures) failures.push_back(case_to_json(f));
    nlohmann::json entry = {{"op", op.op},
                            {"source", op.source},
                            {"status", op_status_name(op_status(op))},
                            {"total", op.total},
                            {"passed", op.passed},
                            {"failed", op.failed},
                            {"errors", op.errors},
                            {"dtypes", dtypes},
                            {"failures", failures},
                            {"timing", timing_to_json(op.timing)},
                            {"runtime", op.runtime}};
    // Optional (docs/result-json.md): only an implementation's entry has them.
    if (!op.implementation.empty()) {
      entry["spec"] = op.spec;
      entry["implementation"] = op.implementation;
    }
    ops.push_back(std::move(entry));
    total_timing += op.timing;
  }
  // Cut cases by (op, case), the order report merge rebuilds from shards.
  std::vector<const CutCase*> cut_sorted;
  for (const auto& c : result.cut) cut_sorted.push_back(&c);
  std::ranges::stable_sort(cut_sorted, [](const CutCase* a, const CutCase* b) {
    return std::tie(a->op, a->index) < std::tie(b->op, b->index);
  });
  nlohmann::json cut = nlohmann::json::array();
  for (const CutCase* c_ptr : cut_sorted) {
    const CutCase& c = *c_ptr;
    cut.push_back(
        {{"op", c.op}, {"seed", std::to_string(c.seed)}, {"case", c.index}, {"message", c.message}});
  }
  return {{"schema_version", 1},
          {"tool", {{"name", "gpuemu"}, {"version", GPUEMU_VERSION}}},
          {"command", result.command},
          {"passed", result.passed()},
          {"partial", result.partial},
          {"seed", std::to_string(result.master_seed)},
          {"config_digest", result.config_digest},
          {"project", result.project},
          {"duration_secs", result.duration_secs},
          {"timing", timing_to_json(total_timing)},
          {"ops", ops},
          {"cut", cut}};
}

}  // namespace gpuemu::result
