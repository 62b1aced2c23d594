// Loading and validating result.json (docs/result-json.md): one pass that names the first field
// that is wrong, so a damaged or foreign file fails with a message instead of a half report.
#include "report/result_document.hpp"

#include <cmath>
#include <limits>

#include "report/failure_kinds.hpp"
#include "util/read_file.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

enum class Want { string, boolean, count, number, array, object, seed };

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
  }
  return "a value";
}

bool is_seed(const nlohmann::json& value) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  // 20 digits may still exceed 2^64 - 1; compare as text of equal length.
  return text.size() < 20 || text <= "18446744073709551615";
}

bool matches(const nlohmann::json& value, Want want) {
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
  }
  return false;
}

// Walks the document; the first problem found becomes the error, naming its JSON path.
class Validator {
 public:
  explicit Validator(std::string_view name) : name_(name) {}

  bool field(const nlohmann::json& object, const std::string& where, std::string_view key, Want want,
             bool required = true) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) problem(where + "." + std::string(key), "is missing");
      return !required;
    }
    if (!matches(*it, want)) {
      std::string shown = it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
      problem(where + "." + std::string(key),
              "should be " + std::string(describe(want)) + ", found " + shown);
      return false;
    }
    return true;
  }

  void problem(const std::string& where, const std::string& what) {
    if (error_) return;
    std::string path = where.starts_with(".") ? where.substr(1) : where;
    error_ = Error{ErrorKind::parse, std::string(name_) + ": " + path + " " + what +
                                         "; the file is not a gpuemu result.json version 1 (regenerate it "
                                         "with this gpuemu, or use the gpuemu that wrote it)"};
  }

  bool ok() const { return !error_.has_value(); }
  Expected<void> result() const {
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  std::string_view name_;
  std::optional<Error> error_;
};

void validate_failure(Validator& v, const nlohmann::json& f, const std::string& where) {
  if (!f.is_object()) return v.problem(where, "should be an object");
  v.field(f, where, "seed", Want::seed);
  v.field(f, where, "op", Want::string);
  if (v.field(f, where, "kind", Want::string) && !is_case_kind(f["kind"].get<std::string>())) {
    v.problem(where + ".kind", "names an unknown failure kind \"" + f["kind"].get<std::string>() + "\"");
  }
  v.field(f, where, "dtype", Want::string);
  v.field(f, where, "message", Want::string);
  v.field(f, where, "replay", Want::string);
  for (const char* key : {"layout", "distribution", "stderr"}) v.field(f, where, key, Want::string, false);
  for (const char* key : {"shapes", "dims"}) v.field(f, where, key, Want::object, false);
  for (const char* key : keys::kErrorStatsAndTolerance) {
    v.field(f, where, key, Want::number, false);
  }
  for (const char* key : {"mismatches", "elements", "case"}) v.field(f, where, key, Want::count, false);
  if (v.field(f, where, "worst", Want::array, false) && f.contains("worst")) {
    for (std::size_t i = 0; i < f["worst"].size(); ++i) {
      const auto& w = f["worst"][i];
      std::string at = where + ".worst[" + std::to_string(i) + "]";
      if (!w.is_object()) return v.problem(at, "should be an object");
      v.field(w, at, "index", Want::array, false);
      for (const char* key : {"actual", "expected", "abs_err", "rel_err"})
        v.field(w, at, key, Want::number, false);
    }
  }
}

void validate_op(Validator& v, const nlohmann::json& op, const std::string& where) {
  if (!op.is_object()) return v.problem(where, "should be an object");
  v.field(op, where, "op", Want::string);
  v.field(op, where, "source", Want::string);
  for (const char* key : {"spec", "implementation"}) v.field(op, where, key, Want::string, false);
  for (const char* key : {"total", "passed", "failed", "errors"}) v.field(op, where, key, Want::count);
  if (v.field(op, where, "status", Want::string, false) && op.contains("status") &&
      op["status"] != "passed" && op["status"] != "failed" && op["status"] != "not_run") {
    v.problem(where + ".status", "is " + op["status"].dump() + ", not \"passed\", \"failed\" or \"not_run\"");
  }
  if (v.field(op, where, "dtypes", Want::array)) {
    for (std::size_t i = 0; i < op["dtypes"].size() && v.ok(); ++i) {
      const auto& d = op["dtypes"][i];
      std::string at = where + ".dtypes[" + std::to_string(i) + "]";
      if (!d.is_object()) return v.problem(at, "should be an object");
      v.field(d, at, "dtype", Want::string);
      for (const char* key : {"total", "passed", "failed", "errors"}) v.field(d, at, key, Want::count);
      for (const char* key : keys::kErrorStatsAndTolerance) {
        v.field(d, at, key, Want::number);
      }
    }
  }
  if (v.field(op, where, "failures", Want::array)) {
    for (std::size_t i = 0; i < op["failures"].size() && v.ok(); ++i) {
      validate_failure(v, op["failures"][i], where + ".failures[" + std::to_string(i) + "]");
    }
  }
}

void validate_lint(Validator& v, const nlohmann::json& lint) {
  if (!v.field(lint, "ci.lint", "kernels", Want::array)) return;
  v.field(lint, "ci.lint", "passed", Want::boolean);
  for (std::size_t i = 0; i < lint["kernels"].size() && v.ok(); ++i) {
    const auto& k = lint["kernels"][i];
    std::string at = "ci.lint.kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) return v.problem(at, "should be an object");
    for (const char* key : {"name", "file"}) v.field(k, at, key, Want::string);
    v.field(k, at, "line", Want::count);
    v.field(k, at, "passed", Want::boolean);
    if (!v.field(k, at, "violations", Want::array)) continue;
    for (std::size_t j = 0; j < k["violations"].size() && v.ok(); ++j) {
      const auto& violation = k["violations"][j];
      std::string vat = at + ".violations[" + std::to_string(j) + "]";
      if (!violation.is_object()) return v.problem(vat, "should be an object");
      for (const char* key : {"check", "message", "file"}) v.field(violation, vat, key, Want::string);
      v.field(violation, vat, "line", Want::count);
    }
  }
}

void validate_cut(Validator& v, const nlohmann::json& cut) {
  for (std::size_t i = 0; i < cut.size() && v.ok(); ++i) {
    const auto& c = cut[i];
    std::string at = "cut[" + std::to_string(i) + "]";
    if (!c.is_object()) return v.problem(at, "should be an object");
    v.field(c, at, "op", Want::string);
    v.field(c, at, "seed", Want::seed);
    v.field(c, at, "case", Want::count);
    v.field(c, at, "message", Want::string);
  }
}

void validate_ci(Validator& v, const nlohmann::json& ci) {
  v.field(ci, "ci", "quick", Want::boolean);
  v.field(ci, "ci", "allow_partial", Want::boolean, false);
  if (ci.contains("shard") && !ci["shard"].is_null()) v.field(ci, "ci", "shard", Want::string);
  if (ci.contains("lint") && !ci["lint"].is_null()) {
    if (v.field(ci, "ci", "lint", Want::object)) validate_lint(v, ci["lint"]);
  }
  if (!ci.contains("baseline") || ci["baseline"].is_null()) return;
  const auto& baseline = ci["baseline"];
  if (!v.field(ci, "ci", "baseline", Want::object)) return;
  v.field(baseline, "ci.baseline", "regressions", Want::array, false);
  v.field(baseline, "ci.baseline", "warnings", Want::array, false);
  if (!baseline.contains("regressions")) return;
  for (std::size_t i = 0; i < baseline["regressions"].size() && v.ok(); ++i) {
    const auto& r = baseline["regressions"][i];
    std::string at = "ci.baseline.regressions[" + std::to_string(i) + "]";
    if (!r.is_object()) return v.problem(at, "should be an object");
    for (const char* key : {"op", "dtype", "reason"}) v.field(r, at, key, Want::string);
  }
}

}  // namespace

Expected<void> validate_result(const nlohmann::json& result, std::string_view name) {
  Validator v(name);
  if (!result.is_object()) {
    v.problem("(document)", "should be a JSON object");
    return v.result();
  }
  if (v.field(result, "", "schema_version", Want::count) && result["schema_version"] != kSchemaVersion) {
    v.problem("schema_version", "is " + result["schema_version"].dump() + " but this gpuemu reads version " +
                                    std::to_string(kSchemaVersion));
  }
  if (v.field(result, "", "tool", Want::object)) {
    v.field(result["tool"], "tool", "name", Want::string);
    v.field(result["tool"], "tool", "version", Want::string);
  }
  v.field(result, "", "command", Want::string);
  v.field(result, "", "passed", Want::boolean);
  v.field(result, "", "partial", Want::boolean);
  v.field(result, "", "seed", Want::seed);
  v.field(result, "", "config_digest", Want::string);
  v.field(result, "", "project", Want::string);
  v.field(result, "", "duration_secs", Want::number);
  if (v.field(result, "", "ops", Want::array)) {
    for (std::size_t i = 0; i < result["ops"].size() && v.ok(); ++i) {
      validate_op(v, result["ops"][i], "ops[" + std::to_string(i) + "]");
    }
  }
  if (v.ok() && v.field(result, "", "cut", Want::array, false) && result.contains("cut")) {
    validate_cut(v, result["cut"]);
  }
  if (v.ok() && result.contains("ci") && !result["ci"].is_null() && v.field(result, "", "ci", Want::object)) {
    validate_ci(v, result["ci"]);
  }
  return v.result();
}

Expected<nlohmann::json> load_result(const std::filesystem::path& path) {
  auto text = util::read_text_file(path, "the result document", {.kind = ErrorKind::io});
  if (!text) {
    return fail(ErrorKind::io,
                text.error().message + " (a `gpuemu ci run --out DIR` writes DIR/result.json)");
  }
  auto document = nlohmann::json::parse(*text, nullptr, false);
  if (document.is_discarded()) {
    return fail(ErrorKind::parse, path.string() +
                                      ": not valid JSON (truncated or not a result.json); "
                                      "regenerate it with `gpuemu ci run`");
  }
  TRY(validate_result(document, path.string()));
  return document;
}

double decode_number(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value == "Infinity") return std::numeric_limits<double>::infinity();
  if (value == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

double number_field(const nlohmann::json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? std::numeric_limits<double>::quiet_NaN() : decode_number(*it);
}

std::string op_status(const nlohmann::json& op) {
  if (auto it = op.find("status"); it != op.end() && it->is_string()) return it->get<std::string>();
  if (op.value("total", 0) == 0) return "not_run";
  return op.value("failed", 0) > 0 || op.value("errors", 0) > 0 ? "failed" : "passed";
}

bool partial_allowed(const nlohmann::json& result) {
  const auto ci = result.find("ci");
  return ci != result.end() && ci->is_object() && ci->value("allow_partial", false);
}

SourceLocation parse_source(std::string_view source) {
  SourceLocation location;
  auto colon = source.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < source.size() && colon > 0) {
    std::string_view digits = source.substr(colon + 1);
    bool numeric = digits.size() <= 9;
    for (char c : digits) numeric = numeric && c >= '0' && c <= '9';
    if (numeric) {
      location.path = std::string(source.substr(0, colon));
      location.line = std::stoi(std::string(digits));
      return location;
    }
  }
  location.path = std::string(source);
  return location;
}

std::string repo_relative(std::string_view path, std::string_view workspace) {
  std::filesystem::path p{std::string(path)};
  if (p.is_relative()) {
    std::string normal = p.lexically_normal().generic_string();
    return normal == "." ? std::string() : normal;
  }
  if (workspace.empty()) return p.lexically_normal().generic_string();
  auto relative = p.lexically_normal().lexically_relative(
      std::filesystem::path{std::string(workspace)}.lexically_normal());
  std::string text = relative.generic_string();
  if (text.empty() || text == "." || text.starts_with("..")) return p.lexically_normal().generic_string();
  return text;
}

SourceLocation op_location(const nlohmann::json& op, std::string_view workspace) {
  auto location = parse_source(op.value("source", ""));
  if (location.known()) location.path = repo_relative(location.path, workspace);
  return location;
}

}  // namespace gpuemu::report
