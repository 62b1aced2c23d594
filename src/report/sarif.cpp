// SARIF 2.1.0 (OASIS, errata 01; tests/schemas/sarif-2.1.0.json) from result.json: a rule per
// failure kind with a stable ruleId, one result per failing (op, dtype) or regression, worst first.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "report/findings.hpp"
#include "report/line_hash.hpp"
#include "report/value_text.hpp"
#include "report/writer.hpp"
#include "util/hash.hpp"
#include "util/json_text.hpp"
#include "util/result_keys.hpp"

namespace gpuemu::report {

namespace keys = util::result_keys;
namespace {

constexpr std::string_view kSchemaUri =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
// Relative URIs are resolved against the checkout root; code scanning knows this base id.
constexpr std::string_view kSourceRoot = "%SRCROOT%";
constexpr std::string_view kInformationUri = "https://github.com/skelf/gpuemu-action";

// RFC 3986 percent-encoding of a path: unreserved characters and "/" stay, the rest is encoded.
std::string uri_path(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof buffer, "%%%02X", c);
      out += buffer;
    }
  }
  return out;
}

nlohmann::json artifact_location(const std::string& path) {
  if (path.starts_with("/")) return {{"uri", "file://" + uri_path(path)}};
  return {{"uri", uri_path(path)}, {"uriBaseId", kSourceRoot}};
}

// "GPUEMU-NONFINITE-MISMATCH" -> "NonfiniteMismatch": SARIF's rule name is an identifier.
std::string rule_name(std::string_view kind_name) {
  std::string out;
  bool upper = true;
  for (char c : kind_name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

nlohmann::json rules() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& kind : failure_kinds()) {
    out.push_back({{"id", kind.rule_id},
                   {"name", rule_name(kind.name)},
                   {"shortDescription", {{"text", kind.title}}},
                   {"fullDescription", {{"text", kind.help}}},
                   {"help", {{"text", kind.help}}},
                   {"defaultConfiguration", {{"level", "error"}}},
                   {"properties", {{"tags", nlohmann::json::array({"correctness", "gpuemu"})}}}});
  }
  return out;
}

int rule_index(const FailureKindInfo* kind) {
  auto all = failure_kinds();
  return static_cast<int>(kind - all.data());
}

std::string message_text(const Finding& f) {
  std::string text = case_label(f.op, f.dtype) + ": " + std::string(f.kind->title);
  if (f.worst) {
    text += " in " + std::to_string(f.failing_cases) + " of " + std::to_string(f.total_cases) + " cases. " +
            f.headline() + " Replay: " + f.replay();
  } else {
    text += ". " + f.headline();
    if (!f.replay().empty()) text += " Replay: " + f.replay();
  }
  return text;
}

nlohmann::json result_object(const result::ResultDocument& result, const Finding& f,
                             const RenderOptions& options) {
  // An op not run fails the gate unless --allow-partial accepted it: then it is a warning.
  const bool allowed = f.not_run && result.partial_allowed();
  nlohmann::json out = {{"ruleId", f.kind->rule_id},
                        {"ruleIndex", rule_index(f.kind)},
                        {"level", allowed ? "warning" : "error"},
                        {"kind", "fail"},
                        {"message", {{"text", message_text(f)}}}};
  std::string path = f.location.known() ? f.location.path : options.config_path;
  std::string line_hash;
  if (!path.empty()) {
    nlohmann::json physical = {{"artifactLocation", artifact_location(path)}};
    if (f.location.known() && f.location.line > 0) {
      physical["region"] = {{"startLine", f.location.line}};
      // With the file at hand (under the workspace): the columns GitHub's docs list for a region, and
      // the line hash upload-sarif would compute, so code scanning matches the alert across runs.
      const std::filesystem::path file = path.starts_with("/")
                                             ? std::filesystem::path(path)
                                             : std::filesystem::path(options.workspace) / path;
      if (const auto facts =
              options.workspace.empty() ? std::nullopt : source_line_facts(file, f.location.line)) {
        physical["region"]["startColumn"] = facts->start_column;
        physical["region"]["endLine"] = f.location.line;
        physical["region"]["endColumn"] = facts->end_column;
        line_hash = facts->line_hash;
      }
    }
    nlohmann::json logical = {{"name", f.op}, {"kind", "function"}};
    nlohmann::json location = {{"physicalLocation", physical},
                               {"logicalLocations", nlohmann::json::array({logical})}};
    out["locations"] = nlohmann::json::array({location});
  }
  // Stable across runs and seeds: the same (op, dtype, kind) is the same alert in code scanning.
  out["partialFingerprints"] = {{"gpuemuFinding/v1", f.fingerprint()}};
  if (!line_hash.empty()) out["partialFingerprints"]["primaryLocationLineHash"] = line_hash;
  nlohmann::json properties = {{"op", f.op}, {"dtype", f.dtype}};
  if (f.worst) {
    properties["seed"] = std::to_string(f.worst->seed);
    properties["replay"] = f.replay();
    properties["failingCases"] = f.failing_cases;
    properties["totalCases"] = f.total_cases;
    const auto& figures = f.worst->figures;
    properties[keys::kMaxAbs] = result::json_number(figures.max_abs);
    properties[keys::kMaxRel] = result::json_number(figures.max_rel);
    properties[keys::kMaxUlp] = result::json_number(figures.max_ulp);
    properties[keys::kToleranceUsed] = result::json_number(figures.tolerance_used);
  } else if (f.regression) {
    properties["reason"] = f.regression->reason;
    // before and after as the baseline comparison wrote them; absent when the document had none.
    if (!f.regression->before.is_null()) properties["before"] = f.regression->before;
    if (!f.regression->after.is_null()) properties["after"] = f.regression->after;
  } else if (f.violation) {
    properties["replay"] = f.replay();
    for (const char* key : {"check", "limit", "actual", "from"}) {
      if (f.violation->contains(key)) properties[key] = (*f.violation)[key];
    }
  }
  out["properties"] = properties;
  return out;
}

}  // namespace

Expected<std::string> write_sarif(const result::ResultDocument& result, const RenderOptions& options) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& finding : collect_findings(result, options.workspace, options.project_root)) {
    results.push_back(result_object(result, finding, options));
  }
  nlohmann::json invocation = {{"executionSuccessful", true}};
  if (result.partial) {
    nlohmann::json notification = {
        {"level", "warning"},
        {"message", {{"text", "The run stopped early (time budget or fail-fast); not every case ran."}}}};
    invocation["toolExecutionNotifications"] = nlohmann::json::array({notification});
  }
  nlohmann::json run = {{"tool",
                         {{"driver",
                           {{"name", result.tool.name},
                            {"informationUri", kInformationUri},
                            {"version", result.tool.version},
                            {"semanticVersion", result.tool.version},
                            {"rules", rules()}}}}},
                        {"invocations", nlohmann::json::array({invocation})},
                        {"columnKind", "unicodeCodePoints"},
                        {"results", results},
                        {"properties",
                         {{"command", result.command},
                          {"seed", std::to_string(result.seed)},
                          {"configDigest", result.config_digest},
                          {"project", result.project},
                          {"partial", result.partial}}}};
  if (!options.workspace.empty() && options.workspace.starts_with("/")) {
    std::string root = "file://" + uri_path(options.workspace);
    if (!root.ends_with("/")) root += "/";
    run["originalUriBaseIds"] = {{kSourceRoot, {{"uri", root}}}};
  }
  nlohmann::json log = {
      {"$schema", kSchemaUri}, {"version", "2.1.0"}, {"runs", nlohmann::json::array({run})}};
  return util::dump_json(log) + "\n";
}

}  // namespace gpuemu::report
