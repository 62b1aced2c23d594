// Loading result.json for the reports (docs/result-json.md); the validation itself is the typed
// reader's (result/document.hpp), so every consumer refuses a document with the same message.
#include "report/result_document.hpp"

#include <limits>

#include "result/document.hpp"
#include "util/read_file.hpp"

namespace gpuemu::report {

Expected<void> validate_result(const nlohmann::json& result, std::string_view name) {
  TRY(result::from_json(result, name));
  return {};
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
  return result::decode_number(value);
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
