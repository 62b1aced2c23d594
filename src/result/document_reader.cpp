// The one reader of result.json (docs/result-json.md): one pass that validates and decodes, naming
// the first field that is wrong, so a damaged or foreign file fails with a message, not a half report.
#include <cmath>
#include <limits>

#include "result/case_reader.hpp"
#include "result/document.hpp"
#include "result/field_reader.hpp"
#include "util/json_number.hpp"
#include "util/read_file.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::result {

namespace keys = util::result_keys;
namespace {

using Json = nlohmann::json;

std::string at(const std::string& where, std::string_view list, std::size_t i) {
  return where + "." + std::string(list) + "[" + std::to_string(i) + "]";
}

// result.json's words for the first problem: its path and what is wrong, and how to get a good file.
Error document_error(std::string_view name, const FieldProblem& problem) {
  return Error{ErrorKind::parse, std::string(name) + ": " + problem.path + " " + problem.what +
                                     "; the file is not a gpuemu result.json version 1 (regenerate it "
                                     "with this gpuemu, or use the gpuemu that wrote it)"};
}

bool is_case_kind(const std::string& name) {
  const auto kind = check::parse_failure_kind(name);
  return kind && *kind != check::FailureKind::none;
}

void read_worst(FieldReader& r, const Json& list, const std::string& where, std::vector<WorstElement>& out) {
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const Json& w = list[i];
    const std::string here = at(where, "worst", i);
    if (!w.is_object()) return r.problem(here, "should be an object");
    WorstElement e;
    if (const Json* index = r.field(w, here, "index", FieldType::array, false))
      e.index = r.integers(*index, here + ".index");
    e.actual = r.number(w, here, "actual", false);
    e.expected = r.number(w, here, "expected", false);
    e.abs_err = r.number(w, here, "abs_err", false);
    e.rel_err = r.number(w, here, "rel_err", false);
    e.output = r.text(w, here, "output", false);
    out.push_back(std::move(e));
  }
}

// The optional "corners" and "corners_dropped" of an op entry.
void read_corners(FieldReader& r, const Json& op, const std::string& where, OpEntry& out) {
  if (const Json* corners = r.field(op, where, "corners", FieldType::array, false)) {
    for (std::size_t i = 0; i < corners->size() && r.ok(); ++i) {
      const Json& c = (*corners)[i];
      const std::string here = at(where, "corners", i);
      if (!c.is_object()) return r.problem(here, "should be an object");
      CornerCase corner;
      if (const Json* index = r.field(c, here, "case", FieldType::count))
        corner.index = index->get<std::uint64_t>();
      corner.seed = r.seed(c, here, "seed");
      corner.name = r.text(c, here, "name");
      out.corners.push_back(std::move(corner));
    }
  }
  if (const Json* dropped = r.field(op, where, "corners_dropped", FieldType::array, false)) {
    for (std::size_t i = 0; i < dropped->size() && r.ok(); ++i) {
      if (!(*dropped)[i].is_string()) return r.problem(at(where, "corners_dropped", i), "should be a string");
      out.corners_dropped.push_back((*dropped)[i].get<std::string>());
    }
  }
}

// A failures[] entry; a case record (`passing` allowed) may also have passed, kind "none".
FailureEntry read_failure(FieldReader& r, const Json& f, const std::string& where, bool passing = false) {
  FailureEntry out;
  if (!f.is_object()) {
    r.problem(where, "should be an object");
    return out;
  }
  out.seed = r.seed(f, where, "seed");
  out.op = r.text(f, where, "op");
  out.kind = r.text(f, where, "kind");
  if (f.contains("kind") && f["kind"].is_string() && !is_case_kind(out.kind) &&
      !(passing && out.kind == "none")) {
    r.problem(where + ".kind", "names an unknown failure kind \"" + out.kind + "\"");
  }
  out.dtype = r.text(f, where, "dtype");
  out.message = r.text(f, where, "message");
  out.replay = r.text(f, where, "replay");
  out.layout = r.text(f, where, "layout", false);
  out.distribution = r.text(f, where, "distribution", false);
  out.stderr_text = r.text(f, where, "stderr", false);
  const Json* shapes = r.field(f, where, "shapes", FieldType::object, false);
  const Json* dims = r.field(f, where, "dims", FieldType::object, false);
  // Statistics in the order of kErrorStatsAndTolerance, as the checks always ran.
  out.figures.max_abs = r.number(f, where, keys::kMaxAbs, false);
  out.figures.max_rel = r.number(f, where, keys::kMaxRel, false);
  out.figures.max_ulp = r.number(f, where, keys::kMaxUlp, false);
  out.figures.tolerance_used = r.number(f, where, keys::kToleranceUsed, false);
  out.atol = r.number(f, where, keys::kAtol, false);
  out.rtol = r.number(f, where, keys::kRtol, false);
  out.mismatches = r.count(f, where, "mismatches", false);
  out.elements = r.count(f, where, "elements", false);
  if (const Json* index = r.field(f, where, "case", FieldType::count, false))
    out.case_index = index->get<std::uint64_t>();
  if (const Json* worst = r.field(f, where, "worst", FieldType::array, false))
    read_worst(r, *worst, where, out.worst);
  if (const Json* corner = r.field(f, where, "corner", FieldType::string, false))
    out.corner = corner->get<std::string>();
  // Checked after the fields the reader always checked, so their messages come first.
  static const Json kNone = Json::object();
  for (const auto& [name, shape] : (shapes ? *shapes : kNone).items()) {
    if (!shape.is_array()) {
      r.problem(where + ".shapes." + name, "should be an array, found " + shape.dump());
      break;
    }
    out.shapes[name] = r.integers(shape, where + ".shapes." + name);
  }
  for (const auto& [name, size] : (dims ? *dims : kNone).items()) {
    if (!size.is_number_integer()) {
      r.problem(where + ".dims." + name, "should be an integer, found " + size.dump());
      break;
    }
    out.dims[name] = size.get<std::int64_t>();
  }
  return out;
}

std::optional<Timing> read_timing(FieldReader& r, const Json& o, const std::string& where) {
  const Json* t = r.field(o, where, "timing", FieldType::object, false);
  if (!t) return std::nullopt;
  const std::string here = where + ".timing";
  Timing timing;
  timing.wall_secs = r.number(*t, here, "wall_secs");
  timing.op_secs = r.number(*t, here, "op_secs");
  timing.reference_secs = r.number(*t, here, "reference_secs");
  // Documents of before the op and the reference ran at the same time have none: they never overlapped.
  if (const double overlap = r.number(*t, here, "overlap_secs", false); !std::isnan(overlap))
    timing.overlap_secs = overlap;
  return timing;
}

OpEntry read_op(FieldReader& r, const Json& op, const std::string& where) {
  OpEntry out;
  if (!op.is_object()) {
    r.problem(where, "should be an object");
    return out;
  }
  out.op = r.text(op, where, "op");
  out.source = r.text(op, where, "source");
  if (const Json* spec = r.field(op, where, "spec", FieldType::string, false))
    out.spec = spec->get<std::string>();
  if (const Json* impl = r.field(op, where, "implementation", FieldType::string, false))
    out.implementation = impl->get<std::string>();
  out.total = r.count(op, where, "total");
  out.passed = r.count(op, where, "passed");
  out.failed = r.count(op, where, "failed");
  out.errors = r.count(op, where, "errors");
  if (const Json* status = r.field(op, where, "status", FieldType::string, false)) {
    if (*status == "passed")
      out.written_status = OpStatus::passed;
    else if (*status == "failed")
      out.written_status = OpStatus::failed;
    else if (*status == "not_run")
      out.written_status = OpStatus::not_run;
    else
      r.problem(where + ".status", "is " + status->dump() + ", not \"passed\", \"failed\" or \"not_run\"");
  }
  if (const Json* dtypes = r.field(op, where, "dtypes", FieldType::array)) {
    for (std::size_t i = 0; i < dtypes->size() && r.ok(); ++i) {
      out.dtypes.push_back(read_dtype_entry(r, (*dtypes)[i], at(where, "dtypes", i)));
    }
  }
  if (const Json* failures = r.field(op, where, "failures", FieldType::array)) {
    for (std::size_t i = 0; i < failures->size() && r.ok(); ++i) {
      out.failures.push_back(read_failure(r, (*failures)[i], at(where, "failures", i)));
    }
  }
  if (!r.ok()) return out;
  out.timing = read_timing(r, op, where);
  if (auto it = op.find("runtime"); it != op.end()) out.runtime = *it;
  read_corners(r, op, where, out);
  if (const Json* launches = r.field(op, where, "launches", FieldType::object, false)) {
    const std::string here = where + ".launches";
    LaunchCounts counts{.calls = r.count(*launches, here, "calls"),
                        .without_launch = r.count(*launches, here, "without_launch")};
    if (const Json* kernels = r.field(*launches, here, "kernels", FieldType::object)) {
      for (const auto& [kernel, n] : kernels->items())
        counts.kernels[kernel] = r.count(*kernels, here + ".kernels", kernel);
    }
    out.launches = std::move(counts);
  }
  return out;
}

// The lint section keeps its JSON; these are the fields the reports read from it.
void check_lint(FieldReader& r, const Json& lint) {
  const Json* kernels = r.field(lint, "ci.lint", "kernels", FieldType::array);
  if (!kernels) return;
  r.field(lint, "ci.lint", "passed", FieldType::boolean);
  for (std::size_t i = 0; i < kernels->size() && r.ok(); ++i) {
    const Json& k = (*kernels)[i];
    const std::string here = "ci.lint.kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) return r.problem(here, "should be an object");
    for (const char* key : {"name", "file"}) r.field(k, here, key, FieldType::string);
    r.field(k, here, "line", FieldType::count);
    r.field(k, here, "passed", FieldType::boolean);
    const Json* violations = r.field(k, here, "violations", FieldType::array);
    if (!violations) continue;
    for (std::size_t j = 0; j < violations->size() && r.ok(); ++j) {
      const Json& v = (*violations)[j];
      const std::string vat = here + ".violations[" + std::to_string(j) + "]";
      if (!v.is_object()) return r.problem(vat, "should be an object");
      for (const char* key : {"check", "message", "file"}) r.field(v, vat, key, FieldType::string);
      r.field(v, vat, "line", FieldType::count);
    }
  }
}

std::optional<BaselineSection> read_baseline(FieldReader& r, const Json& ci) {
  if (!ci.contains("baseline") || ci["baseline"].is_null()) return std::nullopt;
  const Json* baseline = r.field(ci, "ci", "baseline", FieldType::object);
  if (!baseline) return std::nullopt;
  BaselineSection out;
  const Json* regressions = r.field(*baseline, "ci.baseline", "regressions", FieldType::array, false);
  const Json* warnings = r.field(*baseline, "ci.baseline", "warnings", FieldType::array, false);
  for (std::size_t i = 0; regressions && i < regressions->size() && r.ok(); ++i) {
    const Json& g = (*regressions)[i];
    const std::string here = "ci.baseline.regressions[" + std::to_string(i) + "]";
    if (!g.is_object()) {
      r.problem(here, "should be an object");
      return out;
    }
    RegressionEntry entry;
    entry.op = r.text(g, here, "op");
    entry.dtype = r.text(g, here, "dtype");
    entry.reason = r.text(g, here, "reason");
    entry.before = g.value("before", Json());
    entry.after = g.value("after", Json());
    out.regressions.push_back(std::move(entry));
  }
  out.tag_or_source = r.text(*baseline, "ci.baseline", "tag_or_source", false);
  for (std::size_t i = 0; warnings && i < warnings->size() && r.ok(); ++i) {
    if (!(*warnings)[i].is_string()) {
      r.problem("ci.baseline.warnings[" + std::to_string(i) + "]",
                "should be a string, found " + (*warnings)[i].dump());
      break;
    }
    out.warnings.push_back((*warnings)[i].get<std::string>());
  }
  return out;
}

CiSection read_ci(FieldReader& r, const Json& ci) {
  CiSection out;
  out.quick = r.boolean(ci, "ci", "quick");
  if (const Json* allow = r.field(ci, "ci", "allow_partial", FieldType::boolean, false))
    out.allow_partial = allow->get<bool>();
  if (ci.contains("shard") && !ci["shard"].is_null()) {
    if (const Json* shard = r.field(ci, "ci", "shard", FieldType::string))
      out.shard = shard->get<std::string>();
  }
  if (ci.contains("lint") && !ci["lint"].is_null()) {
    if (r.field(ci, "ci", "lint", FieldType::object)) {
      check_lint(r, ci["lint"]);
      out.lint = ci["lint"];
    }
  }
  out.baseline = read_baseline(r, ci);
  return out;
}

std::vector<CutCase> read_cut(FieldReader& r, const Json& cut) {
  std::vector<CutCase> out;
  for (std::size_t i = 0; i < cut.size() && r.ok(); ++i) {
    const Json& c = cut[i];
    const std::string here = "cut[" + std::to_string(i) + "]";
    if (!c.is_object()) {
      r.problem(here, "should be an object");
      break;
    }
    CutCase entry;
    entry.op = r.text(c, here, "op");
    entry.seed = r.seed(c, here, "seed");
    if (const Json* index = r.field(c, here, "case", FieldType::count))
      entry.index = index->get<std::uint64_t>();
    entry.message = r.text(c, here, "message");
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Expected<ResultDocument> from_json(const Json& document, std::string_view name) {
  FieldReader r;
  ResultDocument out;
  if (!document.is_object()) {
    r.problem("(document)", "should be a JSON object");
    return std::unexpected(document_error(name, r.first_problem()));
  }
  if (const Json* version = r.field(document, "", "schema_version", FieldType::count);
      version && *version != kSchemaVersion) {
    r.problem("schema_version",
              "is " + version->dump() + " but this gpuemu reads version " + std::to_string(kSchemaVersion));
  }
  if (const Json* tool = r.field(document, "", "tool", FieldType::object)) {
    out.tool.name = r.text(*tool, "tool", "name");
    out.tool.version = r.text(*tool, "tool", "version");
  }
  out.command = r.text(document, "", "command");
  out.passed = r.boolean(document, "", "passed");
  out.partial = r.boolean(document, "", "partial");
  out.seed = r.seed(document, "", "seed");
  out.config_digest = r.text(document, "", "config_digest");
  out.project = r.text(document, "", "project");
  out.duration_secs = r.number(document, "", "duration_secs");
  if (const Json* ops = r.field(document, "", "ops", FieldType::array)) {
    for (std::size_t i = 0; i < ops->size() && r.ok(); ++i) {
      out.ops.push_back(read_op(r, (*ops)[i], "ops[" + std::to_string(i) + "]"));
    }
  }
  if (r.ok()) {
    if (const Json* cut = r.field(document, "", "cut", FieldType::array, false)) out.cut = read_cut(r, *cut);
  }
  if (r.ok()) {
    if (const Json* warnings = r.field(document, "", "warnings", FieldType::array, false)) {
      for (std::size_t i = 0; i < warnings->size() && r.ok(); ++i) {
        if (!(*warnings)[i].is_string()) {
          r.problem("warnings[" + std::to_string(i) + "]",
                    "should be a string, found " + (*warnings)[i].dump());
          break;
        }
        out.warnings.push_back((*warnings)[i].get<std::string>());
      }
    }
  }
  if (r.ok() && document.contains("ci") && !document["ci"].is_null()) {
    if (const Json* ci = r.field(document, "", "ci", FieldType::object)) out.ci = read_ci(r, *ci);
  }
  if (r.ok()) out.timing = read_timing(r, document, "");
  if (!r.ok()) return std::unexpected(document_error(name, r.first_problem()));
  return out;
}

Expected<FailureEntry> case_from_json(const Json& record, std::string_view name) {
  FieldReader r;
  auto out = read_failure(r, record, "", true);
  if (!r.ok()) return std::unexpected(document_error(name, r.first_problem()));
  return out;
}

Expected<nlohmann::json> read_document_json(const std::filesystem::path& path) {
  auto text = util::read_text_file(path, "the result document", {.kind = ErrorKind::io});
  if (!text) {
    return fail(ErrorKind::io,
                text.error().message + " (a `gpuemu ci run --out DIR` writes DIR/result.json)");
  }
  auto document = Json::parse(*text, nullptr, false);
  if (document.is_discarded()) {
    return fail(ErrorKind::parse, path.string() +
                                      ": not valid JSON (truncated or not a result.json); "
                                      "regenerate it with `gpuemu ci run`");
  }
  return document;
}

Expected<ResultDocument> load_document(const std::filesystem::path& path) {
  return from_json(TRY(read_document_json(path)), path.string());
}

double decode_number(const Json& value) {
  return util::read_json_number(value).value_or(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace gpuemu::result
