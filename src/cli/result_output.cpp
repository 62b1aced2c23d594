// Result output on stdout (see result_output.hpp). Exactly one document, nothing before it:
// banners and progress go to stderr.
#include "cli/result_output.hpp"

#include <fmt/format.h>
#include <iostream>

#include "report/text.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {

Expected<void> write_result(const Context& context, const nlohmann::json& result) {
  const auto& format = context.globals.format;
  if (format == "json") {
    std::cout << util::dump_json(result) << "\n";
  } else if (format == "text") {
    std::cout << report::render_text(result);
  } else {
    return fail(ErrorKind::usage, fmt::format("unknown --format '{}': use text or json", format));
  }
  std::cout.flush();
  return {};
}

}  // namespace gpuemu::cli
