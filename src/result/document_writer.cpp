// The one JSON writer of result.json (docs/result-json.md), and the typed document made from what
// the engine produced: every result.json, case record and baseline entry gpuemu writes comes here.
#include <algorithm>
#include <tuple>

#include "result/document.hpp"
#include "rng/values.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::result {

namespace keys = util::result_keys;
namespace {

void put_figures(nlohmann::json& object, const ErrorFigures& figures) {
  object[keys::kMaxAbs] = json_number(figures.max_abs);
  object[keys::kMaxRel] = json_number(figures.max_rel);
  object[keys::kMaxUlp] = json_number(figures.max_ulp);
  object[keys::kToleranceUsed] = json_number(figures.tolerance_used);
}

nlohmann::json worst_json(const WorstElement& w) {
  return {{"output", w.output},
          {"index", w.index},
          {"actual", json_number(w.actual)},
          {"expected", json_number(w.expected)},
          {"abs_err", json_number(w.abs_err)},
          {"rel_err", json_number(w.rel_err)}};
}

nlohmann::json op_json(const OpEntry& op) {
  nlohmann::json dtypes = nlohmann::json::array();
  for (const auto& d : op.dtypes) dtypes.push_back(to_json(d));
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : op.failures) failures.push_back(to_json(f));
  nlohmann::json entry = {{"op", op.op},         {"source", op.source}, {"total", op.total},
                          {"passed", op.passed}, {"failed", op.failed}, {"errors", op.errors},
                          {"dtypes", dtypes},    {"failures", failures}};
  if (op.written_status) entry["status"] = op_status_name(*op.written_status);
  if (op.timing) entry["timing"] = timing_to_json(*op.timing);
  if (op.runtime) entry["runtime"] = *op.runtime;
  if (op.spec) entry["spec"] = *op.spec;
  if (op.implementation) entry["implementation"] = *op.implementation;
  if (!op.corners.empty()) {
    nlohmann::json corners = nlohmann::json::array();
    for (const auto& c : op.corners)
      corners.push_back({{"case", c.index}, {"seed", std::to_string(c.seed)}, {"name", c.name}});
    entry["corners"] = std::move(corners);
  }
  if (!op.corners_dropped.empty()) entry["corners_dropped"] = op.corners_dropped;
  if (op.launches) {
    entry["launches"] = {{"calls", op.launches->calls},
                         {"without_launch", op.launches->without_launch},
                         {"kernels", op.launches->kernels}};
  }
  return entry;
}

nlohmann::json ci_json(const CiSection& ci) {
  nlohmann::json out = {{"quick", ci.quick},
                        {"shard", ci.shard ? nlohmann::json(*ci.shard) : nlohmann::json()},
                        {"baseline", nullptr},
                        {"lint", ci.lint}};
  if (ci.allow_partial) out["allow_partial"] = *ci.allow_partial;
  if (ci.baseline) out["baseline"] = to_json(*ci.baseline);
  return out;
}

}  // namespace

FailureEntry make_failure(const CaseRecord& r) {
  const auto& s = r.verdict.stats;
  FailureEntry f;
  f.seed = r.seed;
  f.case_index = r.index;
  f.op = r.op;
  f.kind = std::string(check::failure_kind_name(r.verdict.kind));
  f.dtype = std::string(tensor::dtype_name(r.params.dtype));
  f.layout = std::string(tensor::layout_name(r.params.layout));
  f.distribution = std::string(rng::distribution_name(r.params.distribution));
  for (const auto& [name, shape] : r.shapes) f.shapes[name] = shape;
  f.dims = r.dims;
  f.figures = {s.max_abs, s.max_rel, s.max_ulp, s.tolerance_used};
  f.atol = r.tolerance.atol;
  f.rtol = r.tolerance.rtol;
  f.mismatches = s.mismatches;
  f.elements = s.elements;
  f.message = r.verdict.message;
  for (const auto& w : s.worst)
    f.worst.push_back({w.output, w.index, w.actual, w.expected, w.abs_err, w.rel_err});
  f.stderr_text = r.stderr_tail;
  f.replay = replay_command(r);
  if (!r.corner.empty()) f.corner = r.corner;
  return f;
}

DtypeEntry make_dtype_entry(const DtypeSummary& d) {
  return {.dtype = std::string(tensor::dtype_name(d.dtype)),
          .total = d.total,
          .passed = d.passed,
          .failed = d.failed,
          .errors = d.errors,
          .figures = {d.max_abs, d.max_rel, d.max_ulp, d.tolerance_used},
          .atol = d.tolerance.atol,
          .rtol = d.tolerance.rtol};
}

ResultDocument make_document(const RunResult& result) {
  ResultDocument doc;
  doc.tool.version = GPUEMU_VERSION;
  doc.command = result.command;
  doc.passed = result.passed();
  doc.partial = result.partial;
  doc.seed = result.master_seed;
  doc.config_digest = result.config_digest;
  doc.project = result.project;
  doc.duration_secs = result.duration_secs;
  // Ops sorted by name (docs/result-json.md), so sharded runs merge into the same document.
  std::vector<const OpResult*> sorted;
  for (const auto& op : result.ops) sorted.push_back(&op);
  std::ranges::stable_sort(sorted, [](const OpResult* a, const OpResult* b) { return a->op < b->op; });
  Timing total;
  for (const OpResult* op : sorted) {
    OpEntry entry;
    entry.op = op->op;
    // Optional (docs/result-json.md): only an implementation's entry has them.
    if (!op->implementation.empty()) {
      entry.spec = op->spec;
      entry.implementation = op->implementation;
    }
    entry.source = op->source;
    entry.written_status = op_status(*op);
    entry.total = op->total;
    entry.passed = op->passed;
    entry.failed = op->failed;
    entry.errors = op->errors;
    for (const auto& d : op->dtypes) entry.dtypes.push_back(make_dtype_entry(d));
    for (const auto& f : op->failures) entry.failures.push_back(make_failure(f));
    entry.timing = op->timing;
    entry.runtime = op->runtime;
    entry.corners = op->corners;
    entry.corners_dropped = op->corners_dropped;
    entry.launches = op->launches;
    total += op->timing;
    doc.ops.push_back(std::move(entry));
  }
  doc.timing = total;
  // Cut cases by (op, case), the order report merge rebuilds from shards.
  doc.cut = result.cut;
  doc.warnings = result.warnings;
  std::ranges::stable_sort(*doc.cut, [](const CutCase& a, const CutCase& b) {
    return std::tie(a.op, a.index) < std::tie(b.op, b.index);
  });
  return doc;
}

nlohmann::json to_json(const FailureEntry& f) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, shape] : f.shapes) shapes[name] = shape;
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& [name, size] : f.dims) dims[name] = size;
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : f.worst) worst.push_back(worst_json(w));
  nlohmann::json out = {{"seed", std::to_string(f.seed)},
                        {"op", f.op},
                        {"kind", f.kind},
                        {"dtype", f.dtype},
                        {"layout", f.layout},
                        {"distribution", f.distribution},
                        {"shapes", shapes},
                        {"dims", dims},
                        {"mismatches", f.mismatches},
                        {"elements", f.elements},
                        {keys::kAtol, json_number(f.atol)},
                        {keys::kRtol, json_number(f.rtol)},
                        {"message", f.message},
                        {"worst", worst},
                        {"stderr", f.stderr_text},
                        {"replay", f.replay}};
  put_figures(out, f.figures);
  if (f.case_index) out["case"] = *f.case_index;
  if (f.corner) out["corner"] = *f.corner;
  return out;
}

nlohmann::json to_json(const BaselineSection& baseline) {
  nlohmann::json regressions = nlohmann::json::array();
  for (const auto& r : baseline.regressions) {
    regressions.push_back(
        {{"op", r.op}, {"dtype", r.dtype}, {"reason", r.reason}, {"before", r.before}, {"after", r.after}});
  }
  return {{"tag_or_source", baseline.tag_or_source},
          {"regressions", regressions},
          {"warnings", baseline.warnings}};
}

nlohmann::json to_json(const DtypeEntry& d) {
  nlohmann::json out = {{"dtype", d.dtype},
                        {"total", d.total},
                        {"passed", d.passed},
                        {"failed", d.failed},
                        {"errors", d.errors},
                        {keys::kAtol, json_number(d.atol)},
                        {keys::kRtol, json_number(d.rtol)}};
  put_figures(out, d.figures);
  return out;
}

nlohmann::json to_json(const ResultDocument& doc) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : doc.ops) ops.push_back(op_json(op));
  nlohmann::json out = {{"schema_version", kSchemaVersion},
                        {"tool", {{"name", doc.tool.name}, {"version", doc.tool.version}}},
                        {"command", doc.command},
                        {"passed", doc.passed},
                        {"partial", doc.partial},
                        {"seed", std::to_string(doc.seed)},
                        {"config_digest", doc.config_digest},
                        {"project", doc.project},
                        {"duration_secs", json_number(doc.duration_secs)},
                        {"ops", ops}};
  if (doc.timing) out["timing"] = timing_to_json(*doc.timing);
  if (doc.cut) {
    nlohmann::json cut = nlohmann::json::array();
    for (const auto& c : *doc.cut) {
      cut.push_back(
          {{"op", c.op}, {"seed", std::to_string(c.seed)}, {"case", c.index}, {"message", c.message}});
    }
    out["cut"] = std::move(cut);
  }
  if (!doc.warnings.empty()) out["warnings"] = doc.warnings;
  if (doc.ci) out["ci"] = ci_json(*doc.ci);
  return out;
}

OpStatus OpEntry::status() const {
  if (written_status) return *written_status;
  if (total == 0) return OpStatus::not_run;
  return failed > 0 || errors > 0 ? OpStatus::failed : OpStatus::passed;
}

}  // namespace gpuemu::result
