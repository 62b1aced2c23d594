// Reading result.json version 1 (docs/result-json.md), the one document every report is rendered
// from: loading, structural validation with the offending path named, and decoding of its values.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "result/document.hpp"
#include "util/error.hpp"

namespace gpuemu::report {

// Checks that `result` has every field the writers rely on, with the right types: result::from_json
// without keeping the decoded document. `name` (a path or "result.json") prefixes error messages.
Expected<void> validate_result(const nlohmann::json& result, std::string_view name = "result.json");

// Reads, parses and decodes a result.json file (result::load_document); errors name the file.
Expected<result::ResultDocument> load_result(const std::filesystem::path& path);

// Where an op's code lives, from its `source` ("kernels/softmax.cu:42" or a bare path).
struct SourceLocation {
  std::string path;  // empty when the op names no source
  int line = 0;      // 0 when the source names no line
  bool known() const { return !path.empty(); }
};
SourceLocation parse_source(std::string_view source);

// `path` relative to `workspace` (a repository root) when it lies inside it, lexically. A relative
// `path` is relative to `project_root` (gpuemu.toml's folder, against which result.json writes its
// paths) when one is given, else already to the workspace (returned without a leading "./"). Paths
// outside the workspace come back absolute.
std::string repo_relative(std::string_view path, std::string_view workspace,
                          std::string_view project_root = {});

// The op source made repo-relative: what every report shows as the failure's location.
SourceLocation op_location(const result::OpEntry& op, std::string_view workspace,
                           std::string_view project_root = {});

}  // namespace gpuemu::report
