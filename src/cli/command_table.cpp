// The command table: one CommandRow per line of cli/commands.def, whose factories are defined in
// the cli/cmd_*.cpp files. Subcommands are rows in a table, never branches of a dispatcher.
#include "cli/command.hpp"

#include <array>

namespace gpuemu::cli {

#define GPUEMU_COMMAND(factory, path, help) std::unique_ptr<Command> make_##factory##_command();
#include "cli/commands.def"
#undef GPUEMU_COMMAND

namespace {

const std::array kCommands = {
#define GPUEMU_COMMAND(factory, path, help) CommandRow{path, help, &make_##factory##_command},
#include "cli/commands.def"
#undef GPUEMU_COMMAND
};

}  // namespace

std::span<const CommandRow> command_table() {
  return kCommands;
}

}  // namespace gpuemu::cli
