// Loading result.json for the reports (docs/result-json.md); the validation itself is the typed
// reader's (result/document.hpp), so every consumer refuses a document with the same message.
#include "report/result_document.hpp"

namespace gpuemu::report {

Expected<void> validate_result(const nlohmann::json& result, std::string_view name) {
  TRY(result::from_json(result, name));
  return {};
}

Expected<result::ResultDocument> load_result(const std::filesystem::path& path) {
  return result::load_document(path);
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

std::string repo_relative(std::string_view path, std::string_view workspace, std::string_view project_root) {
  std::filesystem::path p{std::string(path)};
  if (p.is_relative() && !project_root.empty()) p = std::filesystem::path{std::string(project_root)} / p;
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

SourceLocation op_location(const result::OpEntry& op, std::string_view workspace,
                           std::string_view project_root) {
  auto location = parse_source(op.source);
  if (location.known()) location.path = repo_relative(location.path, workspace, project_root);
  return location;
}

}  // namespace gpuemu::report
