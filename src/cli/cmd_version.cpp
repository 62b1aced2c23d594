// `gpuemu version`: the tool version (also in every result document) and the protocol versions.
// With --format json it prints one JSON object.
#include <iostream>

#include "cli/command.hpp"
#include "util/json_text.hpp"

namespace gpuemu::cli {
namespace {

class VersionCommand final : public Command {
  void add_options(CLI::App&) override {}
  Expected<ExitCode> run(Context& context) override {
    if (context.globals.format == "json") {
      std::cout << util::dump_json({{"name", "gpuemu"}, {"version", GPUEMU_VERSION}}) << "\n";
    } else {
      std::cout << "gpuemu " << GPUEMU_VERSION << "\n";
    }
    return ExitCode::ok;
  }
};

}  // namespace

std::unique_ptr<Command> make_version_command() { return std::make_unique<VersionCommand>(); }

}  // namespace gpuemu::cli
