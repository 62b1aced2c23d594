// Report writers: every format is rendered from one typed result.json document, through a
// table from format name to writer (text, json, junit, sarif, markdown), so the CLI and CI share them.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "result/document.hpp"
#include "util/error.hpp"

namespace gpuemu::report {

// GitHub refuses a step summary of 1 MiB or more; the Markdown writer stays below this by default.
inline constexpr std::size_t kSummaryLimit = 1024 * 1024;

enum class JunitFlavor {
  standard,  // testcase file/line attributes when the op names its source (GitLab, pytest readers)
  strict,    // only what Jenkins xUnit's JUnit schema allows: no file/line
};

struct RenderOptions {
  JunitFlavor junit_flavor = JunitFlavor::standard;
  std::string workspace;     // repository root (%SRCROOT%); op sources under it become repo-relative
  std::string project_root;  // gpuemu.toml's folder: result.json's relative paths are relative to it
  std::string config_path;   // gpuemu.toml, repo-relative: SARIF's location when an op names no source
  std::size_t markdown_limit = kSummaryLimit;  // the Markdown output is always shorter than this
};

using WriterFunction = Expected<std::string> (*)(const result::ResultDocument& result,
                                                 const RenderOptions& options);

struct WriterRow {
  std::string_view format;     // --format name
  std::string_view file_name;  // what `ci run --out DIR` and `report merge` call the file
  std::string_view help;       // one line
  WriterFunction write;
};

std::span<const WriterRow> writers();
// The row for `format`; a usage error naming the known formats (and the nearest one) otherwise.
Expected<const WriterRow*> find_writer(std::string_view format);

// Renders `result` in `format`.
Expected<std::string> render(const result::ResultDocument& result, std::string_view format,
                             const RenderOptions& options = {});
// Decodes `result` (result::from_json, which validates) and renders it in `format`.
Expected<std::string> render(const nlohmann::json& result, std::string_view format,
                             const RenderOptions& options = {});

// The writers of the table.
Expected<std::string> write_json(const result::ResultDocument& result, const RenderOptions& options);
Expected<std::string> write_junit(const result::ResultDocument& result, const RenderOptions& options);
Expected<std::string> write_sarif(const result::ResultDocument& result, const RenderOptions& options);
Expected<std::string> write_markdown(const result::ResultDocument& result, const RenderOptions& options);

}  // namespace gpuemu::report
