// The format table (see writer.hpp) and the one entry point that validates before rendering.
#include "report/writer.hpp"

#include <array>
#include <vector>

#include "report/text.hpp"
#include "util/json_text.hpp"
#include "util/suggest.hpp"

namespace gpuemu::report {
namespace {

Expected<std::string> write_text(const result::ResultDocument& result, const RenderOptions&) {
  return render_text(result);
}

constexpr std::array kWriters{
    WriterRow{"text", "summary.txt", "plain text, as the CLI prints it", write_text},
    WriterRow{"json", "result.json", "the result document itself (docs/result-json.md)", write_json},
    WriterRow{"junit", "junit.xml", "JUnit XML: a testsuite per op, a testcase per (op, dtype)", write_junit},
    WriterRow{"sarif", "gpuemu.sarif", "SARIF 2.1.0 for code scanning: one result per failing (op, dtype)",
              write_sarif},
    WriterRow{"markdown", "summary.md", "Markdown summary for a CI job page (under 1 MiB)", write_markdown},
};

}  // namespace

std::span<const WriterRow> writers() {
  return kWriters;
}

Expected<const WriterRow*> find_writer(std::string_view format) {
  std::vector<std::string> names;
  for (const auto& row : kWriters) {
    if (row.format == format) return &row;
    names.emplace_back(row.format);
  }
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  return fail(ErrorKind::usage, "unknown report format '" + std::string(format) + "'" +
                                    util::did_you_mean_suffix(format, names) + "; the formats are " + known);
}

Expected<std::string> render(const result::ResultDocument& result, std::string_view format,
                             const RenderOptions& options) {
  const WriterRow* row = TRY(find_writer(format));
  return row->write(result, options);
}

Expected<std::string> render(const nlohmann::json& result, std::string_view format,
                             const RenderOptions& options) {
  const WriterRow* row = TRY(find_writer(format));
  return row->write(TRY(result::from_json(result)), options);
}

Expected<std::string> write_json(const result::ResultDocument& result, const RenderOptions&) {
  return util::dump_json(result::to_json(result)) + "\n";
}

}  // namespace gpuemu::report
