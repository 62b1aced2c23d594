// Builds and checks the in-toto Statement v1 of a signed report (see statement.hpp).
// The predicate copies only measured fields of result.json; script stderr is left out.
#include "attest/statement.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <ctime>
#include <set>

#include "util/hash.hpp"
#include "util/json_number.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::attest {

namespace keys = util::result_keys;
namespace {

using nlohmann::json;

// Fields of a failure that describe what was measured and how to replay it. "stderr" and
// "worst" are not copied: a script's stderr may carry paths or secrets of the signer's machine.
constexpr std::array kFailureFields = {
    "seed",
    "kind",
    "dtype",
    "layout",
    "distribution",
    "shapes",
    "dims",
    keys::kMaxAbs,
    keys::kMaxRel,
    keys::kMaxUlp,
    "mismatches",
    "elements",
    keys::kAtol,
    keys::kToleranceUsed,
    keys::kRtol,
    "message",
    "replay",
};

enum class Kind { string, boolean, integer, measure, array, object };

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::string:
      return "a string";
    case Kind::boolean:
      return "true or false";
    case Kind::integer:
      return "an integer";
    case Kind::measure:
      return "a number (or \"NaN\", \"Infinity\", \"-Infinity\")";
    case Kind::array:
      return "an array";
    case Kind::object:
      return "an object";
  }
  return "";
}

bool has_kind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::string:
      return value.is_string();
    case Kind::boolean:
      return value.is_boolean();
    case Kind::integer:
      return value.is_number_integer();
    case Kind::measure:
      return util::read_json_number(value).has_value();
    case Kind::array:
      return value.is_array();
    case Kind::object:
      return value.is_object();
  }
  return false;
}

// Checks `object[key]` and names it by its JSON path in `doc` ("result.json: ops[0].total ...").
Expected<void> require(const json& object, std::string_view doc, const std::string& path, const char* key,
                       Kind kind) {
  std::string where = path.empty() ? key : path + "." + key;
  auto it = object.find(key);
  if (it == object.end()) {
    return fail(ErrorKind::config, fmt::format("{}: {} is missing", doc, where));
  }
  if (!has_kind(*it, kind)) {
    return fail(ErrorKind::config, fmt::format("{}: {} must be {}", doc, where, kind_name(kind)));
  }
  return {};
}

bool is_decimal(const json& value) {
  if (!value.is_string()) return false;
  const auto& s = value.get_ref<const std::string&>();
  return !s.empty() && s.size() <= 20 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The shape shared by result.json and the predicate: run fields, ops, dtypes, failures.
Expected<void> check_measurements(const json& doc, std::string_view name) {
  if (!doc.is_object()) return fail(ErrorKind::config, fmt::format("{}: expected a JSON object", name));
  TRY(require(doc, name, "", "tool", Kind::object));
  TRY(require(doc["tool"], name, "tool", "name", Kind::string));
  TRY(require(doc["tool"], name, "tool", "version", Kind::string));
  TRY(require(doc, name, "", "seed", Kind::string));
  if (!is_decimal(doc["seed"])) {
    return fail(ErrorKind::config, fmt::format("{}: seed must be a decimal string such as \"42\"", name));
  }
  TRY(require(doc, name, "", "config_digest", Kind::string));
  TRY(require(doc, name, "", "command", Kind::string));
  TRY(require(doc, name, "", "passed", Kind::boolean));
  TRY(require(doc, name, "", "partial", Kind::boolean));
  TRY(require(doc, name, "", "ops", Kind::array));
  for (std::size_t i = 0; i < doc["ops"].size(); ++i) {
    const json& op = doc["ops"][i];
    std::string at = fmt::format("ops[{}]", i);
    if (!op.is_object()) return fail(ErrorKind::config, fmt::format("{}: {} must be an object", name, at));
    TRY(require(op, name, at, "op", Kind::string));
    TRY(require(op, name, at, "source", Kind::string));
    for (const char* key : {"total", "passed", "failed", "errors"})
      TRY(require(op, name, at, key, Kind::integer));
    TRY(require(op, name, at, "dtypes", Kind::array));
    TRY(require(op, name, at, "failures", Kind::array));
    for (std::size_t d = 0; d < op["dtypes"].size(); ++d) {
      const json& dt = op["dtypes"][d];
      std::string dat = fmt::format("{}.dtypes[{}]", at, d);
      if (!dt.is_object()) return fail(ErrorKind::config, fmt::format("{}: {} must be an object", name, dat));
      TRY(require(dt, name, dat, "dtype", Kind::string));
      for (const char* key : {"total", "passed", "failed", "errors"})
        TRY(require(dt, name, dat, key, Kind::integer));
      for (const char* key : keys::kErrorStatsAndTolerance) {
        TRY(require(dt, name, dat, key, Kind::measure));
      }
    }
    for (std::size_t f = 0; f < op["failures"].size(); ++f) {
      const json& failure = op["failures"][f];
      std::string fat = fmt::format("{}.failures[{}]", at, f);
      if (!failure.is_object())
        return fail(ErrorKind::config, fmt::format("{}: {} must be an object", name, fat));
      TRY(require(failure, name, fat, "seed", Kind::string));
      if (!is_decimal(failure["seed"])) {
        return fail(ErrorKind::config, fmt::format("{}: {}.seed must be a decimal string", name, fat));
      }
      TRY(require(failure, name, fat, "kind", Kind::string));
      TRY(require(failure, name, fat, "dtype", Kind::string));
      TRY(require(failure, name, fat, "shapes", Kind::object));
      TRY(require(failure, name, fat, keys::kMaxAbs, Kind::measure));
    }
  }
  return {};
}

json measured_op(const json& op) {
  json failures = json::array();
  for (const json& failure : op["failures"]) {
    json kept = json::object();
    for (const char* key : kFailureFields) {
      if (failure.contains(key)) kept[key] = failure[key];
    }
    failures.push_back(std::move(kept));
  }
  json dtypes = json::array();
  for (const json& dt : op["dtypes"]) {
    json kept = json::object();
    for (const char* key : {"dtype", "total", "passed", "failed", "errors", keys::kMaxAbs, keys::kMaxRel,
                            keys::kMaxUlp, keys::kToleranceUsed, keys::kAtol, keys::kRtol}) {
      kept[key] = dt[key];
    }
    dtypes.push_back(std::move(kept));
  }
  return {{"op", op["op"]},         {"source", op["source"]}, {"total", op["total"]},
          {"passed", op["passed"]}, {"failed", op["failed"]}, {"errors", op["errors"]},
          {"dtypes", dtypes},       {"failures", failures}};
}

// A subject name must stay inside the artifacts directory it will be checked against.
bool is_safe_name(const std::string& name) {
  fs::path path(name);
  if (name.empty() || path.is_absolute()) return false;
  return std::none_of(path.begin(), path.end(), [](const fs::path& part) { return part == ".."; });
}

bool is_sha256_hex(const json& value) {
  if (!value.is_string()) return false;
  const auto& s = value.get_ref<const std::string&>();
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

std::string_view subject_role_name(SubjectRole role) {
  switch (role) {
    case SubjectRole::op:
      return "op";
    case SubjectRole::reference:
      return "reference";
    case SubjectRole::tool:
      return "tool";
  }
  return "op";
}

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

std::vector<SubjectFile> collect_subjects(const fs::path& root, const std::vector<std::string>& op_files,
                                          const std::vector<std::string>& reference_files,
                                          const fs::path& tool_binary) {
  std::vector<SubjectFile> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& file, SubjectRole role) {
    std::string name = fs::path(file).lexically_normal().generic_string();
    if (seen.insert(name).second) out.push_back({name, root / name, role});
  };
  for (const auto& file : op_files) add(file, SubjectRole::op);
  for (const auto& file : reference_files) add(file, SubjectRole::reference);
  out.push_back({"gpuemu", tool_binary, SubjectRole::tool});
  return out;
}

Expected<nlohmann::json> build_statement(const nlohmann::json& result,
                                         const std::vector<SubjectFile>& subjects,
                                         std::chrono::system_clock::time_point signed_at) {
  TRY(check_measurements(result, "result.json"));
  if (subjects.empty()) {
    return fail(ErrorKind::usage, "a report needs at least one subject: name the op and reference files");
  }
  json subject_list = json::array();
  for (const auto& subject : subjects) {
    if (!is_safe_name(subject.name)) {
      return fail(ErrorKind::usage, "subject name '" + subject.name +
                                        "' must be a relative path inside the project, without '..'");
    }
    auto digest = util::sha256_file_hex(subject.path);
    if (!digest) {
      return fail(ErrorKind::io, "cannot hash subject '" + subject.name + "' at '" + subject.path.string() +
                                     "': check that the file exists (op and reference paths are relative "
                                     "to --artifacts-root)");
    }
    subject_list.push_back({{"name", subject.name},
                            {"digest", {{"sha256", *digest}}},
                            {"annotations", {{"gpuemu.role", subject_role_name(subject.role)}}}});
  }
  json ops = json::array();
  for (const json& op : result["ops"]) ops.push_back(measured_op(op));
  json predicate = {{"tool", {{"name", result["tool"]["name"]}, {"version", result["tool"]["version"]}}},
                    {"command", result["command"]},
                    {"seed", result["seed"]},
                    {"config_digest", result["config_digest"]},
                    {"passed", result["passed"]},
                    {"partial", result["partial"]},
                    {"timestamp", utc_timestamp(signed_at)},
                    {"ops", ops}};
  if (result.contains("project") && result["project"].is_string()) predicate["project"] = result["project"];
  return json{{"_type", kStatementType},
              {"subject", subject_list},
              {"predicateType", kPredicateType},
              {"predicate", predicate}};
}

Expected<nlohmann::json> sign_statement(const nlohmann::json& statement, const Signer& signer) {
  std::string payload = statement.dump(-1, ' ', false, json::error_handler_t::replace);
  return sign_envelope(kPayloadType, bytes_of(payload), signer);
}

Expected<void> check_statement(const nlohmann::json& statement) {
  constexpr std::string_view doc = "statement";
  if (!statement.is_object()) return fail(ErrorKind::parse, "statement: the payload is not a JSON object");
  TRY(require(statement, doc, "", "_type", Kind::string));
  if (statement["_type"] != kStatementType) {
    return fail(ErrorKind::parse, fmt::format("statement: _type is {}, expected \"{}\"",
                                              statement["_type"].dump(), kStatementType));
  }
  TRY(require(statement, doc, "", "subject", Kind::array));
  if (statement["subject"].empty()) return fail(ErrorKind::parse, "statement: subject is empty");
  for (std::size_t i = 0; i < statement["subject"].size(); ++i) {
    const json& subject = statement["subject"][i];
    std::string at = fmt::format("subject[{}]", i);
    if (!subject.is_object()) return fail(ErrorKind::parse, "statement: " + at + " must be an object");
    TRY(require(subject, doc, at, "name", Kind::string));
    TRY(require(subject, doc, at, "digest", Kind::object));
    if (!is_sha256_hex(subject["digest"].value("sha256", json()))) {
      return fail(ErrorKind::parse, "statement: " + at + ".digest.sha256 must be 64 lowercase hex digits");
    }
  }
  TRY(require(statement, doc, "", "predicateType", Kind::string));
  if (statement["predicateType"] != kPredicateType) {
    return fail(ErrorKind::parse, fmt::format("statement: predicateType is {}, expected \"{}\"",
                                              statement["predicateType"].dump(), kPredicateType));
  }
  TRY(require(statement, doc, "", "predicate", Kind::object));
  TRY(check_measurements(statement["predicate"], "statement predicate"));
  TRY(require(statement["predicate"], doc, "predicate", "timestamp", Kind::string));
  return {};
}

}  // namespace gpuemu::attest
