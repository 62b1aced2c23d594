// `gpuemu report merge DIR... --out DIR`: joins the outputs of `ci run --shard I/N` into one
// result.json plus every report format. Exit 1 when the merged run failed, so it can gate a job.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cli/command.hpp"
#include "cli/result_output.hpp"
#include "report/merge.hpp"
#include "report/writer.hpp"
#include "result/document.hpp"
#include "util/atomic_file.hpp"

namespace gpuemu::cli {
namespace {

namespace fs = std::filesystem;

Expected<report::JunitFlavor> parse_flavor(const std::string& name) {
  if (name == "standard") return report::JunitFlavor::standard;
  if (name == "strict") return report::JunitFlavor::strict;
  return fail(ErrorKind::usage, "unknown --junit-flavor '" + name +
                                    "': use standard (file/line attributes) or strict (Jenkins xUnit)");
}

class ReportMergeCommand final : public Command {
  void add_options(CLI::App& app) override {
    app.add_option("dirs", dirs_,
                   "Shard output directories (each with the result.json of `ci run --shard I/N`)")
        ->required();
    app.add_option("--out", out_, "Directory for the merged result.json, junit.xml, gpuemu.sarif, summary.md")
        ->required();
    app.add_option("--junit-flavor", flavor_,
                   "standard, or strict for Jenkins xUnit (no file/line attributes)");
  }

  Expected<ExitCode> run(Context& context) override {
    // The same repo-relative paths as `ci run` wrote in each shard (GITHUB_WORKSPACE, else the project).
    report::RenderOptions options = render_options(context);
    options.junit_flavor = TRY(parse_flavor(flavor_));
    std::error_code ec;

    std::vector<report::ShardDocument> shards;
    for (const auto& dir : dirs_) {
      fs::path path = fs::path(dir) / "result.json";
      shards.push_back({path.string(), TRY(result::read_document_json(path))});
    }
    const auto merged = TRY(report::merge_documents(shards));

    fs::create_directories(out_, ec);
    if (ec) return fail(ErrorKind::io, "cannot create --out directory '" + out_ + "': " + ec.message());
    for (const auto& row : report::writers()) {
      std::string text = TRY(row.write(merged, options));
      TRY(util::write_file_atomically(fs::path(out_) / row.file_name, text));
    }
    context.log("merged " + std::to_string(shards.size()) + " shard(s) into " + out_);
    return merged.passed ? ExitCode::ok : ExitCode::check_failed;
  }

  std::vector<std::string> dirs_;
  std::string out_;
  std::string flavor_ = "standard";
};

}  // namespace

std::unique_ptr<Command> make_report_merge_command() {
  return std::make_unique<ReportMergeCommand>();
}

}  // namespace gpuemu::cli
