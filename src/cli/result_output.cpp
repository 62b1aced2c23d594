// Result output on stdout (see result_output.hpp). Exactly one document, nothing before it:
// banners and progress go to stderr. text is the live renderer; other formats use the writer table.
#include "cli/result_output.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "report/text.hpp"
#include "report/writer.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {

namespace {

namespace fs = std::filesystem;

// The work tree of the git repository the current directory is in (the nearest folder upwards with
// a .git entry: a directory, or a file in a worktree or submodule); empty outside one.
fs::path git_root(const fs::path& start) {
  std::error_code ec;
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) return dir;
    if (dir == dir.root_path()) break;
  }
  return {};
}

}  // namespace

report::RenderOptions render_options(Context& context) {
  report::RenderOptions options;
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  // The workspace every report path is relative to (docs/ci.md, "Paths in reports"): GitHub's
  // checkout, else the git repository around the current directory, else the current directory.
  // Never gpuemu.toml's folder: with the config in a subfolder, annotations and SARIF would name
  // files that do not exist in the repository.
  const char* checkout = std::getenv("GITHUB_WORKSPACE");
  if (checkout && *checkout) {
    options.workspace = fs::absolute(checkout, ec).lexically_normal().string();
  } else if (const fs::path repo = git_root(cwd); !repo.empty()) {
    options.workspace = repo.string();
  } else {
    options.workspace = cwd.string();
  }
  while (options.workspace.size() > 1 && options.workspace.ends_with('/')) options.workspace.pop_back();
  // result.json writes paths relative to the project root; without a config, assume the current directory.
  auto config = context.config();
  options.project_root =
      config ? fs::absolute((*config)->root, ec).lexically_normal().string() : cwd.string();
  if (config) {
    options.config_path = fs::proximate((*config)->project_file, options.workspace, ec).generic_string();
  }
  return options;
}

Expected<void> write_result(Context& context, const result::ResultDocument& result) {
  const auto& format = context.globals.format;
  if (format == "json") {
    std::cout << util::dump_json(result::to_json(result)) << "\n";
  } else if (format == "text") {
    std::cout << report::render_text(result);
  } else {
    std::cout << TRY(report::render(result, format, render_options(context)));
  }
  std::cout.flush();
  return {};
}

}  // namespace gpuemu::cli
