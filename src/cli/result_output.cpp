// Result output on stdout (see result_output.hpp). Exactly one document, nothing before it:
// banners and progress go to stderr. text is the live renderer; other formats use the writer table.
#include "cli/result_output.hpp"

#include <filesystem>
#include <iostream>

#include "report/text.hpp"
#include "report/writer.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {

Expected<void> write_result(Context& context, const nlohmann::json& result) {
  const auto& format = context.globals.format;
  if (format == "json") {
    std::cout << util::dump_json(result) << "\n";
  } else if (format == "text") {
    std::cout << report::render_text(result);
  } else {
    report::RenderOptions options;
    if (auto config = context.config()) {
      options.workspace = (*config)->root.string();
      options.config_path = std::filesystem::relative((*config)->project_file, (*config)->root).string();
    }
    std::cout << TRY(report::render(result, format, options));
  }
  std::cout.flush();
  return {};
}

}  // namespace gpuemu::cli
