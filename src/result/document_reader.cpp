// The one reader of result.json (docs/result-json.md): one pass that validates and decodes, naming
// the first field that is wrong, so a damaged or foreign file fails with a message, not a half report.
#include <charconv>
#include <cmath>
#include <limits>

#include "result/case_reader.hpp"
#include "result/document.hpp"
#include "util/read_file.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::result {

namespace keys = util::result_keys;
namespace {

using Json = nlohmann::json;

enum class Want { string, boolean, count, number, array, object, seed, integer };

std::string_view describe(Want want) {
  switch (want) {
    case Want::string:
      return "a string";
    case Want::boolean:
      return "true or false";
    case Want::count:
      return "a non-negative integer";
    case Want::number:
      return "a number or \"NaN\", \"Infinity\", \"-Infinity\"";
    case Want::array:
      return "an array";
    case Want::object:
      return "an object";
    case Want::seed:
      return "a seed as a decimal string";
    case Want::integer:
      return "an integer";
  }
  return "a value";
}

bool is_seed(const Json& value) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  // 20 digits may still exceed 2^64 - 1; compare as text of equal length.
  return text.size() < 20 || text <= "18446744073709551615";
}

bool matches(const Json& value, Want want) {
  switch (want) {
    case Want::string:
      return value.is_string();
    case Want::boolean:
      return value.is_boolean();
    case Want::count:
      return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
    case Want::number:
      return value.is_number() ||
             (value.is_string() && (value == "NaN" || value == "Infinity" || value == "-Infinity"));
    case Want::array:
      return value.is_array();
    case Want::object:
      return value.is_object();
    case Want::seed:
      return is_seed(value);
    case Want::integer:
      return value.is_number_integer();
  }
  return false;
}

std::uint64_t seed_of(const Json& value) {
  const auto& text = value.get_ref<const std::string&>();
  std::uint64_t seed = 0;
  std::from_chars(text.data(), text.data() + text.size(), seed);
  return seed;
}

std::string at(const std::string& where, std::string_view list, std::size_t i) {
  return where + "." + std::string(list) + "[" + std::to_string(i) + "]";
}

// Walks the document once, decoding as it checks; the first problem found becomes the error,
// naming its JSON path. After a problem the values read are meaningless and thrown away.
class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  // The field when it is present with the right type, else null (and, if required or mistyped, a
  // problem).
  const Json* field(const Json& object, const std::string& where, std::string_view key, Want want,
                    bool required = true) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) problem(where + "." + std::string(key), "is missing");
      return nullptr;
    }
    if (!matches(*it, want)) {
      std::string shown = it->dump(-1, ' ', false, Json::error_handler_t::replace);
      if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
      problem(where + "." + std::string(key),
              "should be " + std::string(describe(want)) + ", found " + shown);
      return nullptr;
    }
    return &*it;
  }

  std::string text(const Json& o, const std::string& where, std::string_view key, bool required = true) {
    const Json* v = field(o, where, key, Want::string, required);
    return v ? v->get<std::string>() : std::string();
  }
  std::int64_t count(const Json& o, const std::string& where, std::string_view key, bool required = true) {
    const Json* v = field(o, where, key, Want::count, required);
    return v ? v->get<std::int64_t>() : 0;
  }
  // An absent optional statistic reads as NaN: nothing was measured.
  double number(const Json& o, const std::string& where, std::string_view key, bool required = true) {
    const Json* v = field(o, where, key, Want::number, required);
    return v ? decode_number(*v) : std::numeric_limits<double>::quiet_NaN();
  }
  bool boolean(const Json& o, const std::string& where, std::string_view key) {
    const Json* v = field(o, where, key, Want::boolean);
    return v && v->get<bool>();
  }
  std::uint64_t seed(const Json& o, const std::string& where, std::string_view key) {
    const Json* v = field(o, where, key, Want::seed);
    return v ? seed_of(*v) : 0;
  }
  // An array of integers (shapes, element coordinates).
  std::vector<std::int64_t> integers(const Json& list, const std::string& where) {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_number_integer()) {
        problem(where + "[" + std::to_string(i) + "]", "should be an integer, found " + list[i].dump());
        return out;
      }
      out.push_back(list[i].get<std::int64_t>());
    }
    return out;
  }

  void problem(const std::string& where, const std::string& what) {
    if (error_) return;
    std::string path = where.starts_with(".") ? where.substr(1) : where;
    error_ = Error{ErrorKind::parse, std::string(name_) + ": " + path + " " + what +
                                         "; the file is not a gpuemu result.json version 1 (regenerate it "
                                         "with this gpuemu, or use the gpuemu that wrote it)"};
  }

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

 private:
  std::string_view name_;
  std::optional<Error> error_;
};

bool is_case_kind(const std::string& name) {
  const auto kind = check::parse_failure_kind(name);
  return kind && *kind != check::FailureKind::none;
}

ErrorFigures read_figures(Reader& r, const Json& o, const std::string& where, bool required) {
  ErrorFigures f;
  f.max_abs = r.number(o, where, keys::kMaxAbs, required);
  f.max_rel = r.number(o, where, keys::kMaxRel, required);
  f.max_ulp = r.number(o, where, keys::kMaxUlp, required);
  f.tolerance_used = r.number(o, where, keys::kToleranceUsed, required);
  return f;
}

void read_worst(Reader& r, const Json& list, const std::string& where, std::vector<WorstElement>& out) {
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const Json& w = list[i];
    const std::string here = at(where, "worst", i);
    if (!w.is_object()) return r.problem(here, "should be an object");
    WorstElement e;
    if (const Json* index = r.field(w, here, "index", Want::array, false))
      e.index = r.integers(*index, here + ".index");
    e.actual = r.number(w, here, "actual", false);
    e.expected = r.number(w, here, "expected", false);
    e.abs_err = r.number(w, here, "abs_err", false);
    e.rel_err = r.number(w, here, "rel_err", false);
    e.output = r.text(w, here, "output", false);
    out.push_back(std::move(e));
  }
}

// A failures[] entry; a case record (`passing` allowed) may also have passed, kind "none".
FailureEntry read_failure(Reader& r, const Json& f, const std::string& where, bool passing = false) {
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
  const Json* shapes = r.field(f, where, "shapes", Want::object, false);
  const Json* dims = r.field(f, where, "dims", Want::object, false);
  // Statistics in the order of kErrorStatsAndTolerance, as the checks always ran.
  out.figures.max_abs = r.number(f, where, keys::kMaxAbs, false);
  out.figures.max_rel = r.number(f, where, keys::kMaxRel, false);
  out.figures.max_ulp = r.number(f, where, keys::kMaxUlp, false);
  out.figures.tolerance_used = r.number(f, where, keys::kToleranceUsed, false);
  out.atol = r.number(f, where, keys::kAtol, false);
  out.rtol = r.number(f, where, keys::kRtol, false);
  out.mismatches = r.count(f, where, "mismatches", false);
  out.elements = r.count(f, where, "elements", false);
  if (const Json* index = r.field(f, where, "case", Want::count, false))
    out.case_index = index->get<std::uint64_t>();
  if (const Json* worst = r.field(f, where, "worst", Want::array, false))
    read_worst(r, *worst, where, out.worst);
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

DtypeEntry read_dtype(Reader& r, const Json& d, const std::string& where) {
  DtypeEntry out;
  out.dtype = r.text(d, where, "dtype");
  out.total = r.count(d, where, "total");
  out.passed = r.count(d, where, "passed");
  out.failed = r.count(d, where, "failed");
  out.errors = r.count(d, where, "errors");
  out.figures = read_figures(r, d, where, true);
  out.atol = r.number(d, where, keys::kAtol);
  out.rtol = r.number(d, where, keys::kRtol);
  return out;
}

std::optional<Timing> read_timing(Reader& r, const Json& o, const std::string& where) {
  const Json* t = r.field(o, where, "timing", Want::object, false);
  if (!t) return std::nullopt;
  const std::string here = where + ".timing";
  Timing timing;
  timing.wall_secs = r.number(*t, here, "wall_secs");
  timing.op_secs = r.number(*t, here, "op_secs");
  timing.reference_secs = r.number(*t, here, "reference_secs");
  return timing;
}

OpEntry read_op(Reader& r, const Json& op, const std::string& where) {
  OpEntry out;
  if (!op.is_object()) {
    r.problem(where, "should be an object");
    return out;
  }
  out.op = r.text(op, where, "op");
  out.source = r.text(op, where, "source");
  if (const Json* spec = r.field(op, where, "spec", Want::string, false)) out.spec = spec->get<std::string>();
  if (const Json* impl = r.field(op, where, "implementation", Want::string, false))
    out.implementation = impl->get<std::string>();
  out.total = r.count(op, where, "total");
  out.passed = r.count(op, where, "passed");
  out.failed = r.count(op, where, "failed");
  out.errors = r.count(op, where, "errors");
  if (const Json* status = r.field(op, where, "status", Want::string, false)) {
    if (*status == "passed")
      out.written_status = OpStatus::passed;
    else if (*status == "failed")
      out.written_status = OpStatus::failed;
    else if (*status == "not_run")
      out.written_status = OpStatus::not_run;
    else
      r.problem(where + ".status", "is " + status->dump() + ", not \"passed\", \"failed\" or \"not_run\"");
  }
  if (const Json* dtypes = r.field(op, where, "dtypes", Want::array)) {
    for (std::size_t i = 0; i < dtypes->size() && r.ok(); ++i) {
      const Json& d = (*dtypes)[i];
      if (!d.is_object()) {
        r.problem(at(where, "dtypes", i), "should be an object");
        return out;
      }
      out.dtypes.push_back(read_dtype(r, d, at(where, "dtypes", i)));
    }
  }
  if (const Json* failures = r.field(op, where, "failures", Want::array)) {
    for (std::size_t i = 0; i < failures->size() && r.ok(); ++i) {
      out.failures.push_back(read_failure(r, (*failures)[i], at(where, "failures", i)));
    }
  }
  if (!r.ok()) return out;
  out.timing = read_timing(r, op, where);
  if (auto it = op.find("runtime"); it != op.end()) out.runtime = *it;
  return out;
}

// The lint section keeps its JSON; these are the fields the reports read from it.
void check_lint(Reader& r, const Json& lint) {
  const Json* kernels = r.field(lint, "ci.lint", "kernels", Want::array);
  if (!kernels) return;
  r.field(lint, "ci.lint", "passed", Want::boolean);
  for (std::size_t i = 0; i < kernels->size() && r.ok(); ++i) {
    const Json& k = (*kernels)[i];
    const std::string here = "ci.lint.kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) return r.problem(here, "should be an object");
    for (const char* key : {"name", "file"}) r.field(k, here, key, Want::string);
    r.field(k, here, "line", Want::count);
    r.field(k, here, "passed", Want::boolean);
    const Json* violations = r.field(k, here, "violations", Want::array);
    if (!violations) continue;
    for (std::size_t j = 0; j < violations->size() && r.ok(); ++j) {
      const Json& v = (*violations)[j];
      const std::string vat = here + ".violations[" + std::to_string(j) + "]";
      if (!v.is_object()) return r.problem(vat, "should be an object");
      for (const char* key : {"check", "message", "file"}) r.field(v, vat, key, Want::string);
      r.field(v, vat, "line", Want::count);
    }
  }
}

std::optional<BaselineSection> read_baseline(Reader& r, const Json& ci) {
  if (!ci.contains("baseline") || ci["baseline"].is_null()) return std::nullopt;
  const Json* baseline = r.field(ci, "ci", "baseline", Want::object);
  if (!baseline) return std::nullopt;
  BaselineSection out;
  const Json* regressions = r.field(*baseline, "ci.baseline", "regressions", Want::array, false);
  const Json* warnings = r.field(*baseline, "ci.baseline", "warnings", Want::array, false);
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

CiSection read_ci(Reader& r, const Json& ci) {
  CiSection out;
  out.quick = r.boolean(ci, "ci", "quick");
  if (const Json* allow = r.field(ci, "ci", "allow_partial", Want::boolean, false))
    out.allow_partial = allow->get<bool>();
  if (ci.contains("shard") && !ci["shard"].is_null()) {
    if (const Json* shard = r.field(ci, "ci", "shard", Want::string)) out.shard = shard->get<std::string>();
  }
  if (ci.contains("lint") && !ci["lint"].is_null()) {
    if (r.field(ci, "ci", "lint", Want::object)) {
      check_lint(r, ci["lint"]);
      out.lint = ci["lint"];
    }
  }
  out.baseline = read_baseline(r, ci);
  return out;
}

std::vector<CutCase> read_cut(Reader& r, const Json& cut) {
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
    if (const Json* index = r.field(c, here, "case", Want::count)) entry.index = index->get<std::uint64_t>();
    entry.message = r.text(c, here, "message");
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Expected<ResultDocument> from_json(const Json& document, std::string_view name) {
  Reader r(name);
  ResultDocument out;
  if (!document.is_object()) {
    r.problem("(document)", "should be a JSON object");
    return std::unexpected(r.error());
  }
  if (const Json* version = r.field(document, "", "schema_version", Want::count);
      version && *version != kSchemaVersion) {
    r.problem("schema_version",
              "is " + version->dump() + " but this gpuemu reads version " + std::to_string(kSchemaVersion));
  }
  if (const Json* tool = r.field(document, "", "tool", Want::object)) {
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
  if (const Json* ops = r.field(document, "", "ops", Want::array)) {
    for (std::size_t i = 0; i < ops->size() && r.ok(); ++i) {
      out.ops.push_back(read_op(r, (*ops)[i], "ops[" + std::to_string(i) + "]"));
    }
  }
  if (r.ok()) {
    if (const Json* cut = r.field(document, "", "cut", Want::array, false)) out.cut = read_cut(r, *cut);
  }
  if (r.ok() && document.contains("ci") && !document["ci"].is_null()) {
    if (const Json* ci = r.field(document, "", "ci", Want::object)) out.ci = read_ci(r, *ci);
  }
  if (r.ok()) out.timing = read_timing(r, document, "");
  if (!r.ok()) return std::unexpected(r.error());
  return out;
}

Expected<FailureEntry> case_from_json(const Json& record, std::string_view name) {
  Reader r(name);
  auto out = read_failure(r, record, "", true);
  if (!r.ok()) return std::unexpected(r.error());
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
  if (value.is_number()) return value.get<double>();
  if (value == "Infinity") return std::numeric_limits<double>::infinity();
  if (value == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace gpuemu::result
