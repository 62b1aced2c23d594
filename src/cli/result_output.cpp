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

report::RenderOptions render_options(Context& context) {
  namespace fs = std::filesystem;
  report::RenderOptions options;
  std::error_code ec;
  const char* checkout = std::getenv("GITHUB_WORKSPACE");
  auto config = context.config();
  if (checkout && *checkout) {
    options.workspace = checkout;
  } else if (config) {
    options.workspace = (*config)->root.string();
  } else {
    options.workspace = fs::current_path(ec).string();
  }
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
